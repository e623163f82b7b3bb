"""Shared machinery of the contrastive embedders: validation, augmentation, the skorch net."""

import math
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils.multiclass import check_classification_targets

from sklearn_papers.utils._sklearn_compat import (
    Interval,
    StrOptions,
    check_is_fitted,
    validate_data,
)
from sklearn_papers.utils._validation import check_sample_weight, common_constraints

__all__ = []


def _as_float32(X):
    """Cast finite X to float32, refusing values float32 cannot hold (they become inf)."""
    with np.errstate(over="ignore"):
        X32 = X.astype(np.float32, copy=False)
    if X32 is not X and not np.isfinite(X32).all():
        i, j = np.argwhere(~np.isfinite(X32))[0]
        raise ValueError(
            f"X[{i}, {j}] = {float(X[i, j])!r} is too large for float32, in which the network "
            f"computes (max {float(np.finfo(np.float32).max):.3g}); rescale X."
        )
    return X32


class _BaseEmbedder(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Encoder trained on labelled data; ``transform`` returns the encoder output.

    Subclasses set ``_model_class``, ``_criterion`` and ``_module_params(n_classes)``.
    """

    _parameter_constraints = {
        **common_constraints(),
        "encoder": [StrOptions({"mlp", "conv"}), callable],
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "augment": [StrOptions({"default"}), callable, None],
        "image_shape": [tuple, list, None],
        "norm": [StrOptions({"batch", "group", "layer"}), None],
        "num_groups": [Interval(Integral, 1, None, closed="left")],
        "weight_decay": [Interval(Real, 0, None, closed="left")],
    }

    # ------------------------------------------------------------------ validation
    def _check_params(self, n_features):
        """Rules involving several parameters or the data width."""
        if self.image_shape is not None:
            shape = tuple(self.image_shape)
            if (len(shape) not in (2, 3)
                    or not all(isinstance(s, Integral) and s >= 1 for s in shape)):
                raise ValueError(
                    f"image_shape must be (height, width) or (channels, height, width) of "
                    f"positive ints, got {self.image_shape!r}."
                )
            if math.prod(shape) != n_features:
                raise ValueError(
                    f"image_shape={shape!r} has {math.prod(shape)} pixels but X has "
                    f"{n_features} features."
                )
        elif self.encoder == "conv":
            raise ValueError("encoder='conv' needs image_shape, e.g. image_shape=(8, 8) for "
                             "load_digits.")

    def _validate_fit_data(self, X, y, sample_weight=None):
        X, y = validate_data(self, X, y, dtype=[np.float32, np.float64])
        check_classification_targets(y)
        sample_weight = check_sample_weight(sample_weight, X)
        self._check_params(X.shape[1])
        if sample_weight is not None and not np.all(sample_weight > 0):
            # a weight of 0 is the row left out: drop it before counting the classes, so
            # a class present only at weight 0 is no class (and gets no output unit)
            keep = sample_weight > 0
            X, y, sample_weight = X[keep], y[keep], sample_weight[keep]
        self.classes_, y_encoded = np.unique(y, return_inverse=True)
        if len(self.classes_) < 2:
            where = "" if sample_weight is None else " among the rows of positive sample_weight"
            raise ValueError(
                f"y has 1 class ({self.classes_.tolist()[0]!r}){where}; "
                f"{type(self).__name__} needs at least two, {self._one_class_reason}")
        return _as_float32(X), y_encoded.astype(np.int64), sample_weight

    # ------------------------------------------------------------------ training
    @staticmethod
    def _moments(X, sample_weight, axis):
        """Mean and standard deviation of X in float64 (float32 squares overflow for
        |x| > ~1e19), weighted by ``sample_weight`` (rows) when given, so that rows of
        weight 0 do not enter the statistics."""
        if sample_weight is None:
            return X.mean(axis=axis, dtype=np.float64), X.std(axis=axis, dtype=np.float64)
        X = np.asarray(X, dtype=np.float64)
        w = sample_weight if axis == 0 else np.broadcast_to(sample_weight[:, None], X.shape)
        mean = np.average(X, axis=axis, weights=w)
        var = np.average((X - mean) ** 2, axis=axis, weights=w)
        return mean, np.sqrt(var)

    def _standardization(self, X, sample_weight=None):
        if self.image_shape is not None:
            mean, std = (float(v) for v in self._moments(X, sample_weight, None))
            return mean, (std if std > 0 else 1.0)
        mean, std = self._moments(X, sample_weight, 0)
        return mean.astype(np.float32), np.where(std > 0, std, 1.0).astype(np.float32)

    def _build_augment(self, X, sample_weight=None):
        from sklearn_papers.nn._supcon import ImageAugment, TabularAugment

        if self.augment is None:
            return None
        if self.augment != "default":
            return self.augment
        if self.image_shape is not None:
            std = float(self._moments(X, sample_weight, None)[1])
            return ImageAugment(self.image_shape, scale=std or 1.0)
        mean, std = self._moments(X, sample_weight, 0)
        return TabularAugment(mean, np.where(std > 0, std, 1.0))

    @staticmethod
    def _check_augment(augment, X):
        """Call a user augmentation once on ``X[:2]`` and check that it returns a finite
        ``torch.Tensor`` of the same shape ``(B, F)`` and dtype (float32)."""
        import torch

        probe = torch.as_tensor(X[:2])
        out = augment(probe)
        expected = (f"augment must map a float32 torch.Tensor of shape (batch, n_features) "
                    f"to one of the same shape; for input {tuple(probe.shape)}")
        if not isinstance(out, torch.Tensor):
            module = type(out).__module__.split(".")[0]
            kind = type(out).__qualname__
            kind = kind if module == "builtins" else f"{module}.{kind}"
            shape = f" of shape {tuple(out.shape)}" if hasattr(out, "shape") else ""
            hint = (" (convert it with torch.as_tensor, or compute with torch)"
                    if isinstance(out, np.ndarray) else "")
            raise ValueError(
                f"{expected} it returned a {kind}{shape}, not a torch.Tensor{hint}."
            )
        if tuple(out.shape) != tuple(probe.shape):
            raise ValueError(f"{expected} it returned {tuple(out.shape)}.")
        if out.dtype != probe.dtype:
            raise ValueError(f"{expected} it returned a tensor of dtype {out.dtype}.")
        if not bool(torch.isfinite(out).all()):
            raise ValueError(f"{expected} it returned non-finite values (the rows X[:2] "
                             f"are finite).")

    def _fit_net(self, X, y, *, criterion, criterion_params, module_class, module_params,
                 sample_weight=None):
        import torch

        from sklearn_papers.nn._skorch import torch_fit
        from sklearn_papers.nn._supcon import TrainingOutputNet

        mean, std = self._standardization(X, sample_weight)
        with torch_fit(self) as run:
            augment = self._build_augment(X, sample_weight)
            if callable(self.augment):
                self._check_augment(augment, X)
            run.fit(
                module_class,
                X,
                y,
                sample_weight=sample_weight,
                criterion=criterion,
                net_class=TrainingOutputNet,
                optimizer=torch.optim.AdamW,
                first_batch_sources=self._first_batch_sources(),
                optimizer__weight_decay=self.weight_decay,
                module__n_features=X.shape[1],
                module__n_components=self.n_components,
                module__encoder=self.encoder,
                module__image_shape=self.image_shape,
                module__norm=self.norm,
                module__num_groups=self.num_groups,
                module__mean=mean,
                module__std=std,
                module__augment=augment,
                **{f"module__{k}": v for k, v in module_params.items()},
                **{f"criterion__{k}": v for k, v in criterion_params.items()},
            )
        self._n_features_out = self.n_components
        return self

    def _first_batch_sources(self):
        """What may make the loss of the first batch non-finite, before any optimiser
        step (named by the divergence check instead of the learning rate)."""
        sources = "the input X or the encoder"
        if self.augment is not None:
            sources = f"the augmentation (augment={self.augment!r}), {sources}"
        return sources

    # ------------------------------------------------------------------ inference
    def transform(self, X):
        """Encoder output (the representation) of ``X``; the training head is not used.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Same features as in ``fit``.

        Returns
        -------
        X_new : ndarray of shape (n_samples, n_components), dtype float32
            Deterministic (evaluation mode: batch norm uses its running statistics).
        """
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=[np.float32, np.float64])
        out = self.net_.forward(_as_float32(X), training=False, device="cpu")
        return out.numpy()

    def fit_transform(self, X, y=None, sample_weight=None):
        """Fit to ``(X, y)``, then return ``transform(X)``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data.
        y : array-like of shape (n_samples,)
            Class labels (required).
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weight of each sample in the training loss, as in :meth:`fit`.

        Returns
        -------
        X_new : ndarray of shape (n_samples, n_components), dtype float32
            Encoder output of the training data.
        """
        return self.fit(X, y, sample_weight=sample_weight).transform(X)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        tags.transformer_tags.preserves_dtype = ["float32"]
        return tags
