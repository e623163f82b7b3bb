"""The skeleton of a torch estimator's ``fit``: device, dtype, seeding, net, fitted
attributes.

``fit`` reads validate -> :func:`torch_fit` -> fitted attributes::

    X = validate_data(self, X)
    with torch_fit(self) as run:          # device checked, seed drawn, RNG and dtype set
        run.fit(Module, X, y, sample_weight=w, module__n_features=X.shape[1])
    self.other_attribute_ = ...           # net_, loss_curve_ and n_iter_ are set

Inside the block torch's RNG is seeded from ``random_state`` (the caller's global state is
restored afterwards) and the default dtype is float32, so that what is built there (the
module, an augmentation) is reproducible and computes in float32 whatever default the
caller set. :meth:`TorchFit.fit` builds the net with :func:`build_net` (the common and
training parameters, the divergence check, progress printed only with ``verbose``), fits
it and sets ``net_``, ``loss_curve_`` and ``n_iter_``. Inference runs under
:func:`torch_inference`; a fitted estimator's method opens it with
:func:`estimator_inference` (device checked, seed drawn from ``random_state`` for the
sampling methods).
"""

import contextlib

import numpy as np
import torch

from sklearn_papers.nn._skorch._callbacks import loss_curve
from sklearn_papers.nn._skorch._device import check_device, default_dtype
from sklearn_papers.nn._skorch._factory import build_net
from sklearn_papers.utils._seeding import seed_from_random_state, torch_seeded

__all__ = ["TorchFit", "estimator_inference", "set_fitted_net", "torch_fit",
           "torch_inference"]


class TorchFit:
    """One fit of a torch estimator, as :func:`torch_fit` opens it.

    Attributes
    ----------
    estimator : estimator
        The estimator being fitted.
    device : torch.device
        Its checked ``device``.
    seed : int
        The fit's seed, drawn once from ``random_state``: it seeds torch's RNG in the
        block, the training loader's shuffling and the validation split.
    """

    def __init__(self, estimator, device, seed):
        self.estimator = estimator
        self.device = device
        self.seed = seed

    def build(self, module, **kwargs):
        """The estimator's skorch net (:func:`build_net` with this fit's seed, device and
        estimator; ``kwargs`` as :func:`build_net` takes them)."""
        return build_net(module, seed=self.seed, estimator=self.estimator,
                         device=self.device, **kwargs)

    def fit(self, module, X, y=None, *, sample_weight=None, append=False, **kwargs):
        """Build the net of ``module``, fit it on ``X``, ``y`` and set the fitted net.

        Parameters
        ----------
        module : torch.nn.Module class or instance
            The model.
        X, y
            What skorch's ``fit`` takes.
        sample_weight : ndarray of shape (n_samples,) or None, default=None
            With weights, ``X`` travels as ``{"X": X, "sample_weight": w}`` (skorch's
            recipe; the net's ``get_loss`` reads them, float32).
        append : bool, default=False
            Extend ``loss_curve_`` instead of starting it (an estimator that learns over
            several calls).
        **kwargs
            Passed to :func:`build_net`.

        Returns
        -------
        net : skorch.NeuralNet
            Fitted; also the estimator's ``net_``.
        """
        net = self.build(module, **kwargs)
        return self.fit_built(net, X, y, sample_weight=sample_weight, append=append)

    def fit_built(self, net, X, y=None, *, sample_weight=None, append=False):
        """Fit a net made by :meth:`build` and set it on the estimator (see :meth:`fit`)."""
        if sample_weight is not None:  # skorch's recipe: the weights travel with X
            X = {"X": X, "sample_weight": np.asarray(sample_weight, dtype=np.float32)}
        net.fit(X, y)
        set_fitted_net(self.estimator, net, append=append)
        return net


def set_fitted_net(estimator, net, *, append=False):
    """Set ``net_``, ``loss_curve_`` (the training loss of every epoch; extended with
    ``append``) and ``n_iter_`` (the epochs of this fit) of ``estimator``."""
    curve = loss_curve(net)
    estimator.net_ = net
    estimator.loss_curve_ = list(getattr(estimator, "loss_curve_", [])) + curve if append \
        else curve
    estimator.n_iter_ = len(curve)
    return estimator


@contextlib.contextmanager
def torch_fit(estimator, *, seed=None, device=None, random_state=None,
              dtype=torch.float32):
    """Open one fit of ``estimator``: yields a :class:`TorchFit`.

    Checks ``estimator.device`` (:func:`check_device`), draws the seed from
    ``estimator.random_state`` (:func:`seed_from_random_state`), and runs the block with
    torch's RNG seeded by it (:func:`torch_seeded`: the global RNG is restored) and the
    default dtype ``dtype`` (:func:`default_dtype`).

    Parameters
    ----------
    estimator : estimator
        With ``device`` and ``random_state`` parameters.
    seed : int or None, default=None
        A seed already drawn (an estimator that draws it once over several calls);
        None: drawn here, from ``random_state``.
    device : torch.device or None, default=None
        A device already checked; None: ``estimator.device``, checked here.
    random_state : int, RandomState instance or None, default=None
        Overrides ``estimator.random_state`` (a method's own ``random_state``).
    dtype : torch.dtype, default=torch.float32
        The default dtype inside the block (float64 only where a parameter asks).
    """
    device = check_device(estimator.device) if device is None else device
    if seed is None:
        seed = seed_from_random_state(estimator.random_state if random_state is None
                                      else random_state)
    with default_dtype(dtype), torch_seeded(seed, device):
        yield TorchFit(estimator, device, seed)


@contextlib.contextmanager
def torch_inference(seed=None, device="cpu", dtype=torch.float32):
    """Context of a fitted torch estimator's inference: the default dtype ``dtype``
    (:func:`default_dtype`), so that tensors made inside the network match its weights
    whatever default the caller set, and, with a ``seed``, torch's RNG seeded by it
    (:func:`torch_seeded`: sampling methods; the global RNG is restored).

    Parameters
    ----------
    seed : int or None, default=None
        None: torch's RNG is not touched (deterministic inference).
    device : str or torch.device, default="cpu"
        With a CUDA device and a ``seed``, its RNG is seeded too.
    dtype : torch.dtype, default=torch.float32
        The default dtype inside the block.
    """
    with default_dtype(dtype):
        if seed is None:
            yield
        else:
            with torch_seeded(seed, device):
                yield


@contextlib.contextmanager
def estimator_inference(estimator, *, seeded=False, dtype=torch.float32):
    """The preamble of a fitted torch estimator's inference method: yields its checked
    ``device`` inside :func:`torch_inference`.

    Parameters
    ----------
    estimator : fitted estimator
        With ``device`` and (``seeded``) ``random_state`` parameters.
    seeded : bool, default=False
        Seed torch's RNG in the block from ``estimator.random_state``
        (:func:`seed_from_random_state`; sampling methods, which then give the same draws
        at every call); False leaves it untouched (deterministic inference).
    dtype : torch.dtype, default=torch.float32
        The default dtype inside the block.

    Raises
    ------
    ValueError
        If ``estimator.device`` is not a usable device (:func:`check_device`).
    """
    device = check_device(estimator.device)
    seed = seed_from_random_state(estimator.random_state) if seeded else None
    with torch_inference(seed, device, dtype):
        yield device
