"""Torch tensors wherever the package takes arrays: the numpy result, or a clear refusal.

Every public function of the families listed in ``_MODULES`` (read from their ``__all__``, so
a new function must get an entry here) and every registered estimator's ``fit``,
``predict``, ``transform``, ``score``, ... is called once with numpy arrays and again with
the same values as torch tensors: without autograd history, with it (a float tensor that
requires grad, times 1), and on CUDA when a GPU is present. The answers must be equal, and
numpy arrays, never tensors.
"""

import functools
import importlib
import inspect
import warnings

import numpy as np
import pytest
import torch
from numpy.testing import assert_allclose
from sklearn.base import clone

from sklearn_papers.utils.discovery import all_estimators
from tests._estimators import CUSTOM, CUSTOM_DATA, MOLECULE, NUMERIC

_VARIANTS = ["plain", "grad"] + (["cuda"] if torch.cuda.is_available() else [])


def to_tensors(value, variant):
    """``value`` with every numpy array (inside lists, tuples and dicts too) a tensor."""
    if isinstance(value, np.ndarray) and value.dtype.kind in "biuf":
        tensor = torch.from_numpy(value.copy())
        if variant == "cuda":
            return tensor.cuda()
        if variant == "grad" and value.dtype.kind == "f":
            return tensor.requires_grad_(True) * 1  # autograd history (a MulBackward node)
        return tensor
    if type(value) in (list, tuple):
        return type(value)(to_tensors(item, variant) for item in value)
    if type(value) is dict:
        return {key: to_tensors(item, variant) for key, item in value.items()}
    return value


def assert_same_answer(got, expected, where):
    """Equal answers, with numpy (never torch) in the tensor call's answer."""
    assert not isinstance(got, torch.Tensor) or isinstance(expected, torch.Tensor), (
        f"{where} returned a torch tensor for tensor input but numpy for numpy input")
    if isinstance(expected, torch.Tensor):
        expected, got = expected.detach().cpu().numpy(), got.detach().cpu().numpy()
    if isinstance(expected, dict):
        assert set(got) == set(expected), where
        for key in expected:
            assert_same_answer(got[key], expected[key], f"{where}[{key!r}]")
    elif isinstance(expected, (list, tuple)) or inspect.isgenerator(expected):
        got, expected = list(got), list(expected)
        assert len(got) == len(expected), where
        for i, (g, e) in enumerate(zip(got, expected)):
            assert_same_answer(g, e, f"{where}[{i}]")
    elif isinstance(expected, (np.ndarray, float, int, np.number)) and not isinstance(
            expected, bool):
        expected = np.asarray(expected)
        got = np.asarray(got)
        assert got.shape == expected.shape, where
        if expected.dtype.kind in "fc":
            assert_allclose(got, expected, rtol=1e-5, atol=1e-7, equal_nan=True,
                            err_msg=where)
        else:
            np.testing.assert_array_equal(got, expected, err_msg=where)
    elif hasattr(expected, "keys") and hasattr(expected, "values"):  # Bunch
        assert_same_answer(dict(got), dict(expected), where)
    else:
        assert got == expected or type(got) is type(expected), where


# --------------------------------------------------------------------------------------
# Public functions

_MODULES = ["metrics", "datasets", "chem", "vision", "nn", "estimation", "rl"]


def _disentanglement_data():
    rng = np.random.RandomState(0)
    factors = rng.randint(0, 3, size=(60, 3))
    codes = np.column_stack([factors + 0.3 * rng.randn(60, 3), rng.randn(60)])
    return factors, codes


def _maps():
    from sklearn_papers.datasets import make_scenes

    d = make_scenes(3, image_size=16, n_classes=2, max_objects=2, random_state=0)
    return d


def _detections(scenes):
    """Each image's true instances as detections (masks, scores, labels)."""
    out = []
    for inst, lab in zip(scenes.instance_maps, scenes.labels):
        ids = np.arange(1, int(inst.max()) + 1)
        out.append({"masks": inst[None] == ids[:, None, None],
                    "scores": np.linspace(0.9, 0.6, len(ids)),
                    "labels": np.asarray(lab)[: len(ids)]})
    return out


def _boxes():
    rng = np.random.RandomState(0)
    corners = rng.uniform(0, 10, size=(5, 2))
    return np.hstack([corners, corners + rng.uniform(1, 5, size=(5, 2))])


def _tiny_representation(x):
    """A fixed linear torch encoder of flattened observations, as users pass one."""
    x = torch.as_tensor(x, dtype=torch.float32).reshape(len(x), -1)
    weight = torch.linspace(-1, 1, x.shape[1] * 4).reshape(x.shape[1], 4)
    return x @ weight.requires_grad_(True)


def _numpy_representation(x):
    return _tiny_representation(x).detach().numpy()


class _Codes:
    """A fitted "transformer" whose transform is the identity (tensors stay tensors)."""

    def transform(self, X):
        return X

    def predict_proba(self, X):
        return X


def _case_metrics():
    from sklearn_papers.datasets import Shapes

    factors, codes = _disentanglement_data()
    scenes = _maps()
    rng = np.random.RandomState(0)
    y_multi = rng.randint(0, 2, size=(20, 2)).astype(float)
    y_multi[::5, 0] = np.nan
    boxes = _boxes()
    dataset = Shapes(image_size=16, n_positions=4)
    small = {"batch_size": 4, "n_train": 20, "n_eval": 10, "random_state": 0}
    return {
        "mutual_info_gap": ((factors, codes), {}),
        "dci": ((factors, codes), {"random_state": 0}),
        "sap_score": ((factors, codes), {"random_state": 0}),
        "irs": ((factors, codes), {}),
        "modularity_explicitness": ((factors, codes), {"random_state": 0}),
        "factor_probe_accuracy": ((codes[:40], factors[:40], codes[40:], factors[40:]),
                                  {"n_per_value": 5, "random_state": 0}),
        # tensors in, from the representation: compared with the same encoder returning numpy
        "beta_vae_score": ((dataset, _tiny_representation), small),
        "factor_vae_score": ((dataset, _tiny_representation),
                             {**small, "n_variance_estimate": 50}),
        "factor_step_distances": ((dataset, _tiny_representation, dataset.
                                   sample_observations_from_factors(
                                       dataset.sample_factors(8, 0), 0)),
                                  {"n_pairs": 10, "random_state": 0}),
        "box_iou": ((boxes, boxes[::-1] + 0.5), {}),
        "box_average_precision": (([boxes, boxes[:2]], [boxes + 0.2, boxes[:3]]),
                                  {"pred_scores": [np.linspace(1, 0.1, 5),
                                                   np.array([0.9, 0.5, 0.1])]}),
        "detection_box_average_precision": (
            (scenes.boxes, scenes.labels,
             [dict(d, boxes=b) for d, b in zip(_detections(scenes), scenes.boxes)]), {}),
        "matched_mask_iou": ((scenes.instance_maps, scenes.instance_maps[::-1]), {}),
        "symmetric_best_dice": ((scenes.instance_maps, scenes.instance_maps[::-1]), {}),
        "mask_average_precision": ((scenes.instance_maps, scenes.instance_maps[::-1]), {}),
        "semantic_mean_iou": ((scenes.semantic_maps, scenes.semantic_maps[::-1]), {}),
        "other_class_share": ((scenes.semantic_maps, scenes.boxes, scenes.labels), {}),
        "instance_best_iou": ((scenes.instance_maps, scenes.labels, _detections(scenes)), {}),
        "boundary_f_score": ((scenes.instance_maps, scenes.instance_maps[::-1]), {}),
        "image_sharpness": ((scenes.images[..., 0].astype(np.float64) / 255,), {}),
        "minmax_distances": ((rng.rand(6, 5), rng.rand(4, 5)), {}),
        "nearest_tanimoto_similarity": ((rng.rand(6, 5) > 0.5, rng.rand(4, 5) > 0.5), {}),
        "sample_quality": ((rng.rand(12, 4), rng.rand(15, 4), rng.rand(10, 4)), {}),
        "classifier_two_sample_score": ((rng.rand(12, 4), rng.rand(10, 4)),
                                        {"random_state": 0}),
        "backward_transfer": ((rng.rand(5), rng.rand(5)), {}),
        "sharpness_measures": ((scenes.images[..., 0].astype(np.float64)[::-1] / 255,
                                scenes.images[..., 0].astype(np.float64) / 255), {}),
        "masked_roc_auc_score": ((y_multi, rng.rand(20, 2)), {}),
        "masked_roc_auc_scorer": ((_Codes(), rng.rand(20, 2), y_multi), {}),
    }


def _case_datasets():
    from sklearn_papers.datasets import Shapes

    dataset = Shapes(image_size=16, n_positions=4)
    factors = dataset.sample_factors(5, random_state=0)
    return {
        "Shapes.factor_values": (dataset.factor_values, (factors,), {}),
        "Shapes.sample_observations_from_factors": (
            dataset.sample_observations_from_factors, (factors,), {"random_state": 0}),
    }


def _case_chem():
    from sklearn_papers.chem import ScaffoldKFold, ScaffoldSplit

    smiles = ["CCO", "c1ccccc1", "c1ccccc1C", "C1CCCCC1", "C1CCCCC1O", "CCN"]
    y = np.array([0.1, 1.0, 2.0, 3.0, 4.0, 5.0])
    return {
        "ScaffoldSplit.split": (ScaffoldSplit(test_size=0.3).split, (smiles, y), {}),
        "ScaffoldKFold.split": (ScaffoldKFold(n_splits=2).split, (smiles, y), {}),
    }


def _case_vision():
    scenes = _maps()
    return {"plot_instances": ((scenes.images[0], scenes.instance_maps[0]), {})}


def _case_nn():
    rng = np.random.RandomState(0)
    boxes = _boxes().astype(np.float32)
    scores = rng.rand(5).astype(np.float32)
    features = rng.rand(1, 2, 8, 8).astype(np.float32)
    rois = np.array([[0, 1, 1, 5, 5], [0, 2, 0, 7, 6]], dtype=np.float32)
    embeddings = rng.randn(6, 3).astype(np.float32)
    return {
        "nms": ((boxes, scores, 0.3), {}),
        "batched_nms": ((boxes, scores, np.array([0, 1, 0, 1, 0]), 0.3), {}),
        "roi_align": ((features, rois, (2, 2)), {}),
        "roi_pool": ((features, rois, (2, 2)), {}),
        "supcon_loss": (((embeddings / np.linalg.norm(embeddings, axis=1, keepdims=True)
                          ).reshape(6, 1, 3), np.array([0, 0, 1, 1, 2, 2])), {}),
    }


def _case_estimation():
    rng = np.random.RandomState(0)
    log_w = rng.randn(4, 6)
    return {
        "elbo": ((log_w,), {}),
        "iwae": ((log_w,), {}),
        "iwae_cumulative": ((log_w,), {}),
        "sumo": ((log_w, np.array([1, 2, 3, 5])), {}),
        "truncation_survival": ((np.array([1, 2, 50, 90]),), {}),
    }


def _case_rl():
    from sklearn_papers.rl import A2C

    envs, _ = CUSTOM_DATA["A2C"]()["fit"]
    cases = {}
    for kind, cls in [("tabular", "TabularAgent"), ("mlp", "MLPAgent")]:
        agent = A2C(**CUSTOM["A2C"], agent=kind).fit(*envs).agents_[0]
        assert type(agent).__name__ == cls
        for method in ["predict", "predict_proba", "predict_values"]:
            cases[f"{cls}.{method}"] = (getattr(agent, method), (np.array([0, 1, 2]),), {})
    return cases


_CASES = {"metrics": _case_metrics, "datasets": _case_datasets, "chem": _case_chem,
          "vision": _case_vision, "nn": _case_nn, "estimation": _case_estimation,
          "rl": _case_rl}

# Functions of the nn and estimation families compute on tensors by design: they are checked
# with tensors with autograd history against the same tensors without it.
_TENSOR_NATIVE = {"nn", "estimation"}

# Public names that take no array, with the reason (everything else must have a case above).
_NO_ARRAY = {
    "metrics": {
        "make_disentanglement_scorer": "takes a metric name; its scorer is checked in "
                                       "test_scorers_take_tensors",
        "make_segmentation_scorer": "takes a metric name; its scorers take what the "
                                    "segmentation metrics take",
    },
    "datasets": {
        **{name: "loads a bundled data set: no array argument"
           for name in ["load_bbbp", "load_cep", "load_delaney", "load_freesolv",
                        "load_malaria", "load_moleculeace", "load_moses_smiles",
                        "load_tox21"]},
        "MOLECULEACE_TARGETS": "a tuple of the bundled targets' names",
        "load_coco_instances": "takes file paths",
        "make_scenes": "generates data from sizes and a seed",
        "make_shapes": "generates data from sizes and a seed",
        "Shapes.sample_factors": "takes a count and a seed",
    },
    "chem": {
        "check_molecules": "takes molecules (SMILES or RDKit Mol), which a tensor cannot "
                           "hold: test_molecule_functions_refuse_tensors",
        "murcko_scaffolds": "takes molecules: test_molecule_functions_refuse_tensors",
        "load_grover_checkpoint": "takes a file path",
        "grover_context_coverage": "takes molecules: test_molecule_functions_refuse_tensors",
        "valid_rows_scorer": "takes a scoring name; the scorer it returns is checked in "
                             "test_valid_rows_scorer_takes_tensors",
        "GraphCache.clear": "takes no argument",
        "ScaffoldSplit.get_n_splits": "returns n_splits",
        "ScaffoldKFold.get_n_splits": "returns n_splits",
        "ScaffoldSplit.get_params": "no array argument",
        "ScaffoldKFold.get_params": "no array argument",
        "ScaffoldSplit.get_metadata_routing": "no array argument",
        "ScaffoldKFold.get_metadata_routing": "no array argument",
    },
    "vision": {},
    "nn": {},  # its classes are torch.nn.Modules (see _public_callables)
    "estimation": {
        "sumo_sampled": "takes a function of a count (its log-weights, tensors by design)",
        "sample_truncation": "takes a count and a torch.Generator",
        "truncation_mean": "takes the distribution's parameters (numbers)",
    },
    "rl": {
        **{name: "a gymnasium environment or batch of them: fit and score take it, and a "
                 "tensor cannot be one"
           for name in ["BatchedChain", "BatchedGridWorld", "DelayedChain", "GridWorld",
                        "GymEnvBatch", "SlipperyActions"]},
        **{name: "makes environments from sizes and a seed"
           for name in ["make_batch", "make_grid_world", "sample_grid_worlds",
                        "widened_grid_world"]},
        "evaluate_policy": "takes an agent and an environment",
        "q_learning": "takes an environment",
    },
}


def _public_callables(family):
    """Public functions of ``family`` and the public methods (``Class.method``) of its
    classes that are neither estimators (see the estimator tests below), warnings, torch
    modules (tensors by design) nor environments (named by their class)."""
    from gymnasium import Env
    from sklearn.base import BaseEstimator

    module = importlib.import_module(f"sklearn_papers.{family}")
    names = []
    for name in module.__all__:
        obj = getattr(module, name)
        if not inspect.isclass(obj):
            names.append(name)
        elif issubclass(obj, (torch.nn.Module, Warning, BaseEstimator)):
            continue
        elif issubclass(obj, Env) or name.startswith(("Batched", "GymEnv")):
            names.append(name)
        else:
            names.extend(f"{name}.{m}" for m, _ in inspect.getmembers(obj, inspect.isfunction)
                         if not m.startswith("_"))
    return names


@pytest.mark.parametrize("family", _MODULES)
def test_every_public_function_has_a_tensor_case(family):
    cases, reasons = _CASES[family](), _NO_ARRAY[family]
    missing = [n for n in _public_callables(family) if n not in cases and n not in reasons]
    assert not missing, (f"public callables of sklearn_papers.{family} without a tensor "
                         f"case or a written reason in tests/test_tensor_inputs.py: {missing}")
    stale = sorted((set(cases) | set(reasons)) - set(_public_callables(family)))
    assert not stale, f"tests/test_tensor_inputs.py names non-public callables: {stale}"


_CASES = {family: functools.lru_cache(maxsize=None)(build) for family, build in _CASES.items()}


def _function_cases():
    params = []
    for family in _MODULES:
        for name in sorted(_CASES[family]()):
            for variant in _VARIANTS:
                params.append(pytest.param(family, name, variant,
                                           id=f"{family}.{name}-{variant}"))
    return params


def _resolve(family, name, case):
    if len(case) == 3:
        return case
    module = importlib.import_module(f"sklearn_papers.{family}")
    return (getattr(module, name), *case)


@pytest.mark.parametrize("family, name, variant", _function_cases())
def test_public_function_takes_tensors(family, name, variant):
    function, args, kwargs = _resolve(family, name, _CASES[family]()[name])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if family in _TENSOR_NATIVE:
            expected = function(*to_tensors(args, "plain"), **to_tensors(kwargs, "plain"))
        elif name in ("beta_vae_score", "factor_vae_score", "factor_step_distances"):
            expected = function(args[0], _numpy_representation, *args[2:], **kwargs)
        else:
            expected = function(*args, **kwargs)
        got = function(*to_tensors(args, variant), **to_tensors(kwargs, variant))
    if family == "vision":  # an Axes: compare what was drawn
        expected, got = _drawn(expected), _drawn(got)
    assert_same_answer(got, expected, f"{family}.{name}")


def _drawn(ax):
    import matplotlib.pyplot as plt

    arrays = [np.asarray(image.get_array()) for image in ax.get_images()]
    plt.close(ax.figure)
    return arrays


@pytest.mark.parametrize("metric, kwargs", [("mutual_info_gap", {}),
                                            ("dci", {"random_state": 0}),
                                            ("sap_score", {"random_state": 0})])
def test_scorers_take_tensors(metric, kwargs):
    from sklearn_papers.metrics import make_disentanglement_scorer

    factors, codes = _disentanglement_data()
    scorer = make_disentanglement_scorer(metric, **kwargs)
    expected = scorer(_Codes(), codes, factors)
    for variant in _VARIANTS:
        got = scorer(_Codes(), to_tensors(codes, variant), to_tensors(factors, variant))
        assert_same_answer(got, expected, metric)


@pytest.mark.parametrize("function", ["check_molecules", "murcko_scaffolds",
                                      "grover_context_coverage"])
def test_molecule_functions_refuse_tensors(function):
    """A tensor cannot hold molecules: a clear error naming X, not a crash inside RDKit."""
    from sklearn_papers import chem

    with pytest.raises((TypeError, ValueError), match=r"\bX\b"):
        getattr(chem, function)(torch.arange(3.0))


# --------------------------------------------------------------------------------------
# Estimators

_CLASSES = dict(all_estimators())


def _numeric_data(name, estimator):
    from sklearn.utils import get_tags

    rng = np.random.RandomState(0)
    X = rng.rand(24, 4)
    y = np.arange(24) % 3
    if name == "LogPartitionEstimator":
        X = rng.randn(24, 2)
    fit_kwargs = {}
    if "sample_weight" in inspect.signature(estimator.fit).parameters:
        fit_kwargs["sample_weight"] = np.linspace(0.5, 1.5, 24)
    takes_y = get_tags(estimator).target_tags.required
    return {"fit": ((X, y) if takes_y else (X,), fit_kwargs),
            "methods": {method: ((X, y) if method == "score" and takes_y else (X,), {})
                        for method in ["predict", "predict_proba", "predict_log_proba",
                                       "decision_function", "transform", "score_samples",
                                       "score"]
                        if hasattr(estimator, method)}}


_SMILES = ["CCO", "CCN", "c1ccccc1", "CC(=O)O", "CCCl", "C1CCCCC1", "CCOC", "OCCO"]


def _molecule_data(name, estimator):
    from sklearn.base import is_classifier

    y = (np.arange(8) % 2) if is_classifier(estimator) else np.linspace(-1, 1, 8)
    fit_kwargs = {}
    if "sample_weight" in inspect.signature(estimator.fit).parameters:
        fit_kwargs["sample_weight"] = np.linspace(0.5, 1.5, 8)
    methods = {method: ((_SMILES, y) if method == "score" else (_SMILES,), {})
               for method in ["predict", "predict_proba", "transform", "score"]
               if hasattr(estimator, method)}
    return {"fit": ((_SMILES, y), fit_kwargs), "methods": methods}


def _estimator_cases():
    params = []
    for name in sorted(NUMERIC):
        params.append(pytest.param(name, NUMERIC[name], id=name))
    for name in sorted(MOLECULE):
        params.append(pytest.param(name, MOLECULE[name], id=name))
    for name in sorted(CUSTOM):
        if not _takes_environments(name):
            params.append(pytest.param(name, CUSTOM[name], id=name))
    return params


def _takes_environments(name):
    return _CLASSES[name].__module__.startswith("sklearn_papers.rl")


def _data(name, estimator):
    if name in NUMERIC:
        return _numeric_data(name, estimator)
    if name in MOLECULE:
        return _molecule_data(name, estimator)
    return CUSTOM_DATA[name]()


def _call_all(estimator, data, variant):
    """Fit on ``data`` (as tensors unless ``variant`` is None), then call every method,
    ``inverse_transform`` on the codes of ``transform``, and ``partial_fit``."""
    convert = (lambda v: v) if variant is None else (lambda v: to_tensors(v, variant))
    fit_args, fit_kwargs = data["fit"]
    estimator.fit(*convert(fit_args), **convert(fit_kwargs))
    out = {}
    for method, (args, kwargs) in sorted(data["methods"].items()):
        out[method] = getattr(estimator, method)(*convert(args), **convert(kwargs))
    if hasattr(estimator, "inverse_transform") and "transform" in out:
        codes = estimator.transform(*data["methods"]["transform"][0])
        out["inverse_transform"] = estimator.inverse_transform(convert(codes))
    if hasattr(estimator, "partial_fit"):
        estimator.partial_fit(*convert(fit_args), **convert(fit_kwargs))
        out["partial_fit, then predict"] = estimator.predict(*convert(fit_args[:1]))
    return out


@pytest.mark.parametrize("name, params", _estimator_cases())
def test_estimator_takes_tensors(name, params):
    estimator = _CLASSES[name](**params)
    data = _data(name, estimator)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = _call_all(clone(estimator), data, None)
        # fit on tensors with autograd history; every method on them too (on the GPU when
        # there is one, else on the CPU without history)
        for variant in ["grad", _VARIANTS[-1] if "cuda" in _VARIANTS else "plain"]:
            got = _call_all(clone(estimator), data, variant)
            for method in expected:
                assert_same_answer(got[method], expected[method],
                                   f"{name}.{method} ({variant} tensors)")


@pytest.mark.parametrize("name", sorted(MOLECULE) + sorted(
    n for n in CUSTOM if _takes_environments(n)))
def test_estimators_of_molecules_and_environments_refuse_tensor_x(name):
    """A tensor cannot hold molecules nor be an environment: a TypeError naming X (or
    ``environments[0]``), in fit and in the fitted estimator's methods."""
    registry = MOLECULE if name in MOLECULE else CUSTOM
    estimator = _CLASSES[name](**registry[name])
    x = torch.zeros(4, 3, requires_grad=True) * 1
    pattern = r"\bX\b" if name in MOLECULE else r"environments\[0\]"
    with pytest.raises(TypeError, match=pattern):
        estimator.fit(x, np.arange(4.0)) if name in MOLECULE else estimator.fit(x)
    data = _data(name, estimator)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        estimator.fit(*data["fit"][0], **data["fit"][1])
    for method, (args, kwargs) in data["methods"].items():
        if method == "train_agent":  # takes one environment: checked by its own tests
            continue
        with pytest.raises(TypeError, match=pattern):
            getattr(estimator, method)(x, *args[1:], **kwargs)


def test_valid_rows_scorer_takes_tensors():
    import torch
    from sklearn.linear_model import Ridge
    from sklearn.pipeline import make_pipeline

    from sklearn_papers.chem import CircularFingerprint, SkipInvalidMolecules, valid_rows_scorer

    X = ["CCO", "CCN", "CCC", "not a molecule", "c1ccccc1", "CCCl"]
    y = np.arange(6.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = SkipInvalidMolecules(make_pipeline(CircularFingerprint(n_bits=64),
                                                   Ridge())).fit(X, y)
        scorer = valid_rows_scorer("neg_root_mean_squared_error")
        expected = scorer(model, X, y)
        assert np.isfinite(expected)
        for tensor in (torch.tensor(y), torch.tensor(y, requires_grad=True)):
            assert scorer(model, X, tensor) == pytest.approx(expected)
