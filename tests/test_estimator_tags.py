"""Every public estimator's tags tell the truth, checked against what the estimator does.

scikit-learn's tools read the tags (``get_tags``) to decide what to pass an estimator: whether
``fit`` needs ``y`` (``target_tags.required``), whether it is a classifier or a regressor, and
what ``X`` may be (``input_tags``). Each claim is checked by calling the estimator.
"""

import inspect
import warnings

import numpy as np
import pytest
from sklearn.base import clone, is_classifier, is_regressor
from sklearn.utils import get_tags

from sklearn_papers.utils.discovery import all_estimators
from tests._estimators import CUSTOM, CUSTOM_DATA, MOLECULE, NUMERIC

_CLASSES = dict(all_estimators())
_SMILES = ["CCO", "CCN", "c1ccccc1", "CC(=O)O", "CCCl", "C1CCCCC1", "CCOC", "OCCO"]

# What X may be, by estimator: the registry says which family of inputs each one takes.
_IMAGES_OR_ROWS = {"DeePSiMAutoencoder", "FeatureInverter"}  # (n, H, W[, C]) or flat rows


def _input_kind(name):
    if name in NUMERIC:
        return "rows or images" if name in _IMAGES_OR_ROWS else "rows"
    if name in MOLECULE:
        return "molecules"
    if _CLASSES[name].__module__.startswith("sklearn_papers.rl"):
        return "environments"
    return "images"


# input tags each kind must have (True) or must not have (False)
_EXPECTED_INPUT_TAGS = {
    "rows": {"two_d_array": True, "three_d_array": False, "string": False},
    "rows or images": {"two_d_array": True, "three_d_array": True, "string": False},
    "molecules": {"one_d_array": True, "string": True, "two_d_array": False,
                  "three_d_array": False},
    "images": {"three_d_array": True, "two_d_array": False, "string": False},
    "environments": {"one_d_array": False, "two_d_array": False, "three_d_array": False,
                     "string": False, "sparse": False},
}


def _estimator(name):
    params = {**NUMERIC, **MOLECULE, **CUSTOM}[name]
    return _CLASSES[name](**params)


def _fit_data(name):
    """``(X_args, y)``: the tiny input ``fit`` takes, and a target (None if none)."""
    if name in NUMERIC:
        rng = np.random.RandomState(0)
        if name == "LogPartitionEstimator":
            return (None,), None
        if name in _IMAGES_OR_ROWS:
            return (rng.rand(16, 4, 4),), None
        return (rng.rand(24, 4),), np.arange(24) % 3
    if name in MOLECULE:
        return (_SMILES,), np.arange(8) % 2
    args, _ = CUSTOM_DATA[name]()["fit"]
    return args[:1], (args[1] if len(args) > 1 else None)


_NAMES = sorted({**NUMERIC, **MOLECULE, **CUSTOM})


@pytest.mark.parametrize("name", _NAMES)
def test_get_tags_without_warning(name):
    estimator = _estimator(name)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        get_tags(estimator)
        get_tags(clone(estimator))


@pytest.mark.parametrize("name", _NAMES)
def test_classifier_and_regressor_names_match_their_type(name):
    estimator = _estimator(name)
    if name.endswith("Classifier"):
        assert is_classifier(estimator) and not is_regressor(estimator)
        assert get_tags(estimator).classifier_tags is not None
    if name.endswith("Regressor"):
        assert is_regressor(estimator) and not is_classifier(estimator)
        assert get_tags(estimator).regressor_tags is not None
    if is_classifier(estimator) or is_regressor(estimator):
        assert get_tags(estimator).target_tags.required, (
            f"{name} is a supervised estimator whose tags say fit needs no y")


@pytest.mark.parametrize("name", _NAMES)
def test_target_required_exactly_where_fit_refuses_y_none(name):
    estimator = _estimator(name)
    required = get_tags(estimator).target_tags.required
    args, _ = _fit_data(name)
    takes_y = "y" in inspect.signature(estimator.fit).parameters
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if required:
            assert takes_y, f"{name}: target_tags.required is True but fit has no y"
            with pytest.raises((ValueError, TypeError), match=r"\by\b"):
                clone(estimator).fit(*args, y=None)
        elif takes_y:
            clone(estimator).fit(*args, y=None)
        else:
            clone(estimator).fit(*args)


@pytest.mark.parametrize("name", _NAMES)
def test_input_tags_say_what_x_may_be(name):
    kind = _input_kind(name)
    tags = get_tags(_estimator(name)).input_tags
    wrong = {tag: getattr(tags, tag) for tag, value in _EXPECTED_INPUT_TAGS[kind].items()
             if getattr(tags, tag) != value}
    assert not wrong, f"{name} takes {kind}, but its input tags say {wrong}"


_OTHER_INPUTS = {
    "rows": {"molecules": np.array(_SMILES, dtype=object).reshape(-1, 2),
             "3-D array": np.random.RandomState(0).rand(8, 4, 4)},
    "rows or images": {"molecules": np.array(_SMILES, dtype=object).reshape(-1, 2)},
    "molecules": {"2-D array": np.random.RandomState(0).rand(8, 3)},
    "images": {"2-D array": np.random.RandomState(0).rand(8, 16),
               "molecules": _SMILES},
    "environments": {"2-D array": np.random.RandomState(0).rand(8, 3),
                     "molecules": _SMILES},
}


@pytest.mark.parametrize("name", [n for n in _NAMES if n != "LogPartitionEstimator"])
def test_estimators_refuse_inputs_their_tags_exclude(name):
    """What the input tags exclude is refused with a ValueError or TypeError, before any
    training (LogPartitionEstimator takes no X in fit: its target is the energy)."""
    estimator = _estimator(name)
    _, y = _fit_data(name)
    for X in _OTHER_INPUTS[_input_kind(name)].values():
        kwargs = {} if y is None or not get_tags(estimator).target_tags.required else {
            "y": y[:len(X)] if isinstance(y, np.ndarray) else y}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises((ValueError, TypeError)):
                clone(estimator).fit(X, **kwargs)


@pytest.mark.parametrize("name", sorted(_IMAGES_OR_ROWS))
def test_image_estimators_take_image_batches_and_rows_alike(name):
    """``three_d_array``: a batch of (H, W) images fits as its flattened rows do."""
    images, _ = _fit_data(name)
    a = clone(_estimator(name)).fit(images[0]).transform(images[0])
    b = clone(_estimator(name)).set_params(image_shape=(4, 4)).fit(
        images[0].reshape(len(images[0]), -1)).transform(images[0].reshape(len(images[0]),
                                                                            -1))
    np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
