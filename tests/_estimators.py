"""The one registry of estimator instances for the common tests.

Every public estimator (see ``sklearn_papers.utils.discovery.all_estimators``) must appear in
exactly one of the two dicts below; ``test_common.py`` fails otherwise.

* ``NUMERIC``: estimators taking numeric ``X``; they run scikit-learn's full
  ``parametrize_with_checks``.
* ``MOLECULE``: estimators taking SMILES / RDKit Mol ``X``. scikit-learn's data-driven checks
  cannot feed them molecules, so they run the data-free API checks plus our molecule checks
  (``sklearn_papers.utils.estimator_checks``).

Parameters are small, fast settings. ``EXPECTED_FAILED_CHECKS`` lists known failures of
scikit-learn checks, each with a written reason.
"""

# class name -> dict of constructor parameters (small and fast)
NUMERIC = {}

# class name -> dict of constructor parameters (small and fast)
MOLECULE = {}

# class name -> {check name: reason}
EXPECTED_FAILED_CHECKS = {}
