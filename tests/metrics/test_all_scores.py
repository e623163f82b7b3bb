"""_all_scores: each named score is the score function's, with the settings passed on."""

import numpy as np
from sklearn.decomposition import PCA
from sklearn.tree import DecisionTreeClassifier

from sklearn_papers import metrics
from sklearn_papers.datasets import Shapes
from sklearn_papers.metrics._scorer import _all_scores


def test_every_score_is_the_metric_with_the_given_settings():
    data = Shapes(16, n_scales=2, n_orientations=2, n_positions=3)
    factors = data.sample_factors(300, random_state=0)
    X = data.sample_observations_from_factors(factors)
    pca = PCA(4, random_state=0).fit(X)
    tree = DecisionTreeClassifier(max_depth=3, random_state=0)
    scores = _all_scores(data, pca, X, factors, n_train=40, n_eval=20,
                         n_variance_estimate=100, estimator=tree, random_state=5)
    Z = pca.transform(X)
    expected = {
        "BetaVAE": metrics.beta_vae_score(data, pca, n_train=40, n_eval=20, random_state=5),
        "FactorVAE": metrics.factor_vae_score(data, pca, n_train=40, n_eval=20,
                                              n_variance_estimate=100, random_state=5),
        "MIG": metrics.mutual_info_gap(factors, Z),
        "DCI-D": metrics.dci(factors, Z, estimator=tree, random_state=5)["disentanglement"],
        "SAP": metrics.sap_score(factors, Z, random_state=5),
        "Modularity": metrics.modularity_explicitness(factors, Z,
                                                      random_state=5)["modularity"],
        "IRS": metrics.irs(factors, Z),
    }
    assert list(scores) == list(expected)
    np.testing.assert_allclose([scores[k] for k in expected], list(expected.values()))
    # a different seed changes the sampled scores
    other = _all_scores(data, pca, X, factors, n_train=40, n_eval=20,
                        n_variance_estimate=100, estimator=tree, random_state=6)
    assert other["MIG"] == scores["MIG"]
    assert any(other[k] != scores[k] for k in ("BetaVAE", "FactorVAE", "SAP"))
