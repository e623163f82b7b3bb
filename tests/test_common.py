"""Every public estimator in one common test (scikit-learn's checks, plus ours for molecules)."""

import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from sklearn_papers.utils.discovery import all_estimators
from tests._estimators import CUSTOM, EXPECTED_FAILED_CHECKS, MOLECULE, NUMERIC

_CLASSES = dict(all_estimators())


def _instances(registry):
    return [_CLASSES[name](**params) for name, params in sorted(registry.items())]


def test_every_public_estimator_is_registered_once():
    registered = set(NUMERIC) | set(MOLECULE) | set(CUSTOM)
    n_entries = len(NUMERIC) + len(MOLECULE) + len(CUSTOM)
    assert len(registered) == n_entries, "an estimator is registered twice"
    missing = sorted(set(_CLASSES) - registered)
    assert not missing, f"public estimators missing from tests/_estimators.py: {missing}"
    stale = sorted(registered - set(_CLASSES))
    assert not stale, f"tests/_estimators.py names non-public estimators: {stale}"


def _expected_failed_checks(estimator):
    return EXPECTED_FAILED_CHECKS.get(type(estimator).__name__, {})


if NUMERIC:

    @parametrize_with_checks(
        _instances(NUMERIC), expected_failed_checks=_expected_failed_checks
    )
    def test_sklearn_compatible_estimator(estimator, check):
        check(estimator)


if MOLECULE:
    from sklearn_papers.chem.estimator_checks import molecule_estimator_checks

    _MOLECULE_CASES = [
        pytest.param(est, check, id=f"{type(est).__name__}-{check_name}")
        for est in _instances(MOLECULE)
        for check_name, check in molecule_estimator_checks(est)
    ]

    @pytest.mark.parametrize("estimator, check", _MOLECULE_CASES)
    def test_molecule_estimator(estimator, check):
        check(estimator)


if CUSTOM:
    from sklearn_papers.chem.estimator_checks import _SKLEARN_API_CHECKS

    _CUSTOM_CASES = [
        pytest.param(est, check, id=f"{type(est).__name__}-{check.__name__}")
        for est in _instances(CUSTOM)
        for check in _SKLEARN_API_CHECKS
    ]

    @pytest.mark.parametrize("estimator, check", _CUSTOM_CASES)
    def test_custom_input_estimator_api(estimator, check):
        check(type(estimator).__name__, estimator)
