"""Shared machinery of the DeePSiM estimators: image input, comparators, weights, the net."""

import copy
import math
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator

from sklearn_papers.utils._sklearn_compat import (
    HasMethods,
    Interval,
    StrOptions,
    check_is_fitted,
    validate_data,
)
from sklearn_papers.utils._tensors import tensors_to_numpy
from sklearn_papers.utils._validation import common_constraints

__all__ = []

#: Epochs, learning rate and batch size of the ``comparator="auto"`` classifier.
AUTO_COMPARATOR_EPOCHS = 15
AUTO_COMPARATOR_LR = 1e-3
AUTO_COMPARATOR_BATCH = 64

_EVAL_BATCH = 512


class _BaseDeePSiM(BaseEstimator):
    """Image handling, comparator resolution and training shared by the DeePSiM estimators."""

    _parameter_constraints = {
        **common_constraints(),
        "comparator": [StrOptions({"auto"}), HasMethods(["fit", "transform"]),
                       HasMethods(["forward", "parameters"])],
        "comparator_layer": [str, None],
        "lambda_img": [Interval(Real, 0, None, closed="left")],
        "lambda_feat": [Interval(Real, 0, None, closed="left")],
        "lambda_adv": [Interval(Real, 0, None, closed="left")],
        "image_shape": [tuple, list, None],
        "channels": [Interval(Integral, 1, None, closed="left")],
        "pause_ratio": [Interval(Real, 0, None, closed="left")],
    }

    # ------------------------------------------------------------------ input
    def _image_shape_for(self, n_features):
        """``(H, W, C)`` of flat rows of ``n_features`` pixels (see ``image_shape``)."""
        if self.image_shape is not None:
            shape = tuple(self.image_shape)
            if (len(shape) not in (2, 3) or not all(
                    isinstance(s, Integral) and not isinstance(s, bool) and s >= 1
                    for s in shape)):
                raise ValueError(f"image_shape must be (height, width) or (height, width, "
                                 f"channels) of positive ints, got {self.image_shape!r}.")
            shape = tuple(int(s) for s in shape)
            shape = (*shape, 1) if len(shape) == 2 else shape
            if math.prod(shape) != n_features:
                raise ValueError(f"image_shape={tuple(self.image_shape)!r} has "
                                 f"{math.prod(shape)} pixels but X has {n_features} "
                                 "features per row.")
            return shape
        side = math.isqrt(n_features)
        if side * side == n_features and side > 1:
            return (side, side, 1)
        return (1, n_features, 1)

    def _validate_images(self, X, *, reset, name="X"):
        """Images ``(n, H, W[, C])`` or flat rows -> float rows ``(n, F)`` (float32/float64
        kept), with a clear error naming the shape or the first non-finite pixel."""
        X = tensors_to_numpy(X, name)
        nd_shape, ndim = None, 2
        if isinstance(X, np.ndarray):
            given = X.ndim
        elif isinstance(X, (list, tuple)):
            given = np.asarray(X).ndim
        else:  # DataFrames, sparse matrices, other array-likes: validate_data decides
            given = 2
        if given in (3, 4):
            X = np.asarray(X)
            ndim = X.ndim
            nd_shape = (*X.shape[1:], 1) if ndim == 3 else tuple(X.shape[1:])
            if reset and self.image_shape is not None:
                expected = self._image_shape_for(math.prod(nd_shape))
                if expected != nd_shape:
                    raise ValueError(f"{name} has images of shape {X.shape[1:]} but "
                                     f"image_shape={tuple(self.image_shape)!r}.")
            if not reset and nd_shape != self.image_shape_:
                raise ValueError(
                    f"{name} has images of shape {X.shape[1:]}, but this "
                    f"{type(self).__name__} was fitted on images of (height, width, "
                    f"channels) = {self.image_shape_}.")
            X = X.reshape(X.shape[0], -1)
        elif given > 4:
            raise ValueError(f"{name} must be flat rows (n, F) or images (n, H, W) or "
                             f"(n, H, W, C); got an array of shape {np.shape(X)}.")
        X = validate_data(self, X, reset=reset, dtype=[np.float64, np.float32],
                          ensure_all_finite=False)
        shape = (nd_shape if nd_shape is not None else
                 self._image_shape_for(X.shape[1]) if reset else self.image_shape_)
        bad = ~np.isfinite(X)
        if bad.any():
            i, j = np.argwhere(bad)[0]
            h, w, c = np.unravel_index(j, shape)
            raise ValueError(
                f"{name} contains NaN or infinity: {name}[{i}] is {float(X[i, j])!r} at "
                f"pixel (row {h}, column {w}, channel {c}) (flat feature {j}); pixels "
                "must be finite.")
        if reset:
            self.image_shape_ = tuple(int(s) for s in shape)
            self._input_ndim = ndim
        return X

    def _format_images(self, rows):
        """Rows ``(n, F)`` -> the layout of the training input (rows, or images)."""
        h, w, c = self.image_shape_
        if self._input_ndim == 3:
            return rows.reshape(rows.shape[0], h, w)
        if self._input_ndim == 4:
            return rows.reshape(rows.shape[0], h, w, c)
        return rows

    @staticmethod
    def _check_weights(sample_weight, X):
        """Validated weights, or None when all equal; rows of weight 0 are dropped by the
        caller (``keep``), so that such a row is exactly as if left out."""
        from sklearn.utils.validation import _check_sample_weight

        if sample_weight is None:
            return None, np.ones(X.shape[0], dtype=bool)
        w = _check_sample_weight(tensors_to_numpy(sample_weight, "sample_weight"), X, dtype=np.float64, ensure_non_negative=True)
        keep = w > 0
        if not keep.any():
            raise ValueError("sample_weight is 0 for every sample; at least one must be > 0.")
        w = w[keep]
        if np.all(w == w[0]):
            return None, keep
        return (w / w.mean()).astype(np.float32), keep

    # ------------------------------------------------------------------ comparator
    def _resolve_comparator(self, rows, y, weights, seed, device, *, train_auto=True):
        """The comparator as ``(module, layer, description)``: a private copy of a torch
        module mapping rows in the data's units to features. ``train_auto=False``: an
        ``"auto"`` comparator is not trained (its features are not used)."""
        import torch

        from sklearn_papers.nn._deepsim import ComparatorCNN

        comparator, layer = self.comparator, self.comparator_layer
        if isinstance(comparator, str):  # "auto"
            shape = self.image_shape_
            std = float(rows.std(dtype=np.float64))
            n_classes = 0
            y_enc = None
            if y is not None and train_auto:
                from sklearn.utils.multiclass import check_classification_targets

                y = np.asarray(y)
                if y.ndim != 1 or y.shape[0] != rows.shape[0]:
                    raise ValueError(f"y must be 1-D class labels with one per image "
                                     f"({rows.shape[0]}), got shape {y.shape}.")
                check_classification_targets(y)
                classes, y_enc = np.unique(y, return_inverse=True)
                n_classes = len(classes)
                if n_classes < 2:
                    raise ValueError(
                        f"y has 1 class ({classes.tolist()[0]!r}) among the rows of positive "
                        f"weight; comparator='auto' is trained as a classifier of y and "
                        "needs at least two, since with one class its cross-entropy is zero "
                        "and it learns nothing. Pass y=None (a comparator of frozen random "
                        "weights) or labels of several classes.")
            module = ComparatorCNN(shape, n_classes=max(n_classes, 0),
                                   mean=float(rows.mean(dtype=np.float64)),
                                   std=std if std > 0 else 1.0)
            if y_enc is not None:
                _train_classifier(module, rows, y_enc, weights, seed, device,
                                  estimator=self)
            layer = self._auto_layer if layer is None else layer
            kind = (f"auto CNN classifier ({n_classes} classes, {AUTO_COMPARATOR_EPOCHS} "
                    "epochs)" if y_enc is not None else "auto CNN, frozen random weights")
            if not train_auto:
                kind = "auto CNN, frozen random weights (unused: lambda_feat=0)"
            return module, layer, kind
        if isinstance(comparator, torch.nn.Module):
            return copy.deepcopy(comparator).to("cpu"), layer, type(comparator).__name__
        check_is_fitted(comparator)
        net = getattr(comparator, "net_", None)
        module = getattr(net, "module_", None)
        if not isinstance(module, torch.nn.Module):
            raise TypeError(f"comparator {type(comparator).__name__} has no torch module "
                            "(net_.module_); pass a fitted torch estimator of "
                            "sklearn_papers (e.g. SupConEmbedder) or a torch.nn.Module.")
        n_in = getattr(comparator, "n_features_in_", rows.shape[1])
        if n_in != rows.shape[1]:
            raise ValueError(f"comparator {type(comparator).__name__} was fitted on "
                             f"{n_in} features but the images have {rows.shape[1]} pixels.")
        return copy.deepcopy(module).to("cpu"), layer, f"fitted {type(comparator).__name__}"

    def _frozen_comparator(self, module, layer, offset, scale, rows01):
        """Wrap and probe the comparator on two rows (clear error if it cannot take them)."""
        import torch

        from sklearn_papers.nn._deepsim import FrozenComparator

        frozen = FrozenComparator(module, layer, offset=offset, scale=scale)
        probe = torch.as_tensor(rows01[:2])
        try:
            with torch.no_grad():
                out = frozen(probe)
        except Exception as exc:  # noqa: BLE001 - re-raised with context
            raise ValueError(
                f"the comparator ({type(module).__name__}) failed on a batch of flat image "
                f"rows of shape {tuple(probe.shape)} (float32, the data's units): {exc}"
            ) from exc
        if not bool(torch.isfinite(out).all()):
            raise ValueError("the comparator returned non-finite features for finite images.")
        return frozen

    # ------------------------------------------------------------------ training
    def _train(self, run, *, model, loss, inputs, real01, condition, weights, lambda_kl=0.0):
        """Calibrate the loss and train ``model`` (and the loss's discriminator) with skorch,
        in the fit ``run`` (:func:`~sklearn_papers.nn._skorch.torch_fit`)."""
        import torch
        from skorch.callbacks import PassthroughScoring

        from sklearn_papers.nn._deepsim import DeePSiMNet

        real_t = torch.as_tensor(real01)
        w_t = None if weights is None else torch.as_tensor(weights)
        loss.calibrate(real_t, sample_weight=w_t)
        with torch.no_grad():
            feats = torch.cat([loss.comparator(real_t[i:i + _EVAL_BATCH])
                               for i in range(0, real_t.shape[0], _EVAL_BATCH)])
        data = {"inputs": np.ascontiguousarray(inputs, dtype=np.float32),
                "real": np.ascontiguousarray(real01, dtype=np.float32),
                "real_features": feats.numpy()}
        if condition is not None:
            data["condition"] = np.ascontiguousarray(condition, dtype=np.float32)
        if weights is not None:
            data["sample_weight"] = weights
        callbacks = [(f"{k}_term", PassthroughScoring(name=k, on_train=True))
                     for k in ("img", "feat", "adv", "d_loss")]
        net = run.fit(
            model, data, None, criterion=loss, net_class=DeePSiMNet, callbacks=callbacks,
            optimizer__betas=(0.9, 0.999), lambda_kl=float(lambda_kl),
            pause_ratio=float(self.pause_ratio))
        net.module_.eval()

    def _run_batches(self, fn, array, width):
        """Apply ``fn`` (tensor -> tensor) in evaluation batches; float32 numpy out."""
        import torch

        device = next(self.net_.module_.parameters()).device
        out = []
        with torch.no_grad():
            for start in range(0, array.shape[0], _EVAL_BATCH):
                batch = torch.tensor(array[start:start + _EVAL_BATCH], dtype=torch.float32,
                                     device=device)
                out.append(fn(batch).cpu().numpy())
        return np.concatenate(out) if out else np.empty((0, width), np.float32)

    def _prepare_fit_data(self, X, y, sample_weight):
        """Validate ``X`` (and ``y``'s length), drop zero-weight rows, set ``data_offset_`` /
        ``data_scale_`` and return ``X, y, weights, rows`` (float32) and ``rows01`` (unit scale)."""
        from sklearn.utils import check_consistent_length

        if self.lambda_img == 0 and self.lambda_feat == 0 and self.lambda_adv == 0:
            raise ValueError("lambda_img, lambda_feat and lambda_adv are all 0: the generator "
                             "would train on no image loss at all; set at least one > 0.")
        X = self._validate_images(X, reset=True)
        if y is not None:
            check_consistent_length(X, y)
        weights, keep = self._check_weights(sample_weight, X)
        X = X[keep]
        y = None if y is None else np.asarray(tensors_to_numpy(y, "y"))[keep]
        rows = np.asarray(X, dtype=np.float32)
        lo, hi = float(rows.min()), float(rows.max())
        self.data_offset_, self.data_scale_ = lo, (hi - lo if hi > lo else 1.0)
        # the training range in X's own precision: generated images never leave it
        self._data_range = (float(np.min(X)), float(np.max(X)))
        return X, y, weights, rows, self._to_unit(rows)

    def _to_unit(self, rows):
        return ((rows - self.data_offset_) / self.data_scale_).astype(np.float32)

    def _from_unit(self, rows01, dtype):
        """Generator output -> data units in ``dtype``, within the training range.

        The generator's output is linear, so it can overshoot ``[0, 1]``; it is clipped
        there, mapped back in float64, and clipped to the training ``[min, max]`` (a single
        value when every training pixel is the same, where ``data_scale_`` is 1 and the
        unit scale alone would allow ``[min, min + 1]``), with bounds rounded inwards when
        ``dtype`` is coarser than the training data.
        """
        dtype = np.dtype(dtype)
        lo, hi = self._data_range
        out = np.clip(rows01, 0.0, 1.0).astype(np.float64) * self.data_scale_ + self.data_offset_
        lo_t, hi_t = dtype.type(lo), dtype.type(hi)
        if float(lo_t) < lo:  # compared as Python floats: numpy would round lo to dtype
            lo_t = np.nextafter(lo_t, dtype.type(np.inf))
        if float(hi_t) > hi:
            hi_t = np.nextafter(hi_t, dtype.type(-np.inf))
        if lo_t > hi_t:  # one value, not representable in dtype: the nearest one
            lo_t = hi_t = dtype.type(lo)
        return np.clip(out.astype(dtype), lo_t, hi_t)


def _train_classifier(module, rows, y_enc, weights, seed, device, epochs=None,
                      estimator=None):
    """Train the ``"auto"`` comparator as a classifier (weighted cross-entropy, Adam) for
    ``epochs`` passes (default ``AUTO_COMPARATOR_EPOCHS``), through skorch
    (:class:`~sklearn_papers.nn._deepsim.ComparatorNet`, with the divergence check naming
    ``estimator``), on the CPU."""
    import torch

    from sklearn_papers.nn._deepsim import ComparatorNet
    from sklearn_papers.nn._skorch import PassBatchLoader, build_net, spawn_seeds, torch_seeded

    data = {"X": np.ascontiguousarray(rows, dtype=np.float32)}
    if weights is not None:
        data["sample_weight"] = np.asarray(weights)
    order_seed, torch_seed = spawn_seeds(seed, 2)
    with torch_seeded(torch_seed, "cpu"):
        net = build_net(
            module, seed=order_seed, estimator=estimator, net_class=ComparatorNet,
            max_epochs=AUTO_COMPARATOR_EPOCHS if epochs is None else int(epochs),
            lr=AUTO_COMPARATOR_LR, batch_size=AUTO_COMPARATOR_BATCH, device="cpu", verbose=0,
            optimizer__foreach=None,  # Adam's default kernel: a small CNN
            iterator_train=PassBatchLoader,
            iterator_train__generator=torch.Generator().manual_seed(order_seed))
        net.fit(data, np.asarray(y_enc, dtype=np.int64))
    module.eval()
    return module


def _fit_comparator(X, y, image_shape, seed, epochs):
    """A ``ComparatorCNN`` of ``comparator="auto"``'s architecture trained on ``(X, y)``, to
    share as the fixed comparator of several fits (each fit would otherwise train its own).

    ``X`` are float rows of ``H * W`` pixels, ``y`` class labels, ``image_shape`` ``(H, W)``;
    the initial weights come from ``seed`` too. Returns the module (eval mode) and the
    sorted classes its logits index.
    """
    from sklearn_papers.nn._deepsim import ComparatorCNN
    from sklearn_papers.nn._skorch import torch_seeded

    classes, y_enc = np.unique(y, return_inverse=True)
    rows = np.ascontiguousarray(X, dtype=np.float32)
    with torch_seeded(seed, "cpu"):  # the initial weights too, whatever ran before
        module = ComparatorCNN((*image_shape, 1), n_classes=len(classes),
                               mean=float(rows.mean()), std=float(rows.std()) or 1.0)
    _train_classifier(module, rows, y_enc, None, seed, "cpu", epochs=epochs)
    return module, classes


def _comparator_accuracy(module, classes, X, y):
    """Accuracy (%) of a comparator classifier's argmax logits on the rows ``X``."""
    import torch

    with torch.no_grad():
        pred = module(torch.as_tensor(np.ascontiguousarray(X, dtype=np.float32))).argmax(1)
    return 100 * float((classes[pred.numpy()] == np.asarray(y)).mean())


def _comparator_features(module, layer, rows):
    """Features of ``rows`` at ``layer`` of a comparator (a copy: ``module`` is left as it
    is), as a float32 array of shape (n_rows, n_features)."""
    import torch

    from sklearn_papers.nn import FrozenComparator

    frozen = FrozenComparator(copy.deepcopy(module), layer)
    with torch.no_grad():
        return frozen(torch.as_tensor(np.ascontiguousarray(rows, dtype=np.float32))).numpy()
