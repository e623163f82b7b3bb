"""Every public estimator's docstring links its user-guide page and its paper page."""

import re
from pathlib import Path

import pytest

from sklearn_papers.utils.discovery import all_estimators

DOCS = Path(__file__).resolve().parents[1] / "docs"

#: estimator name -> (user-guide page, paper page or None): paths under docs/, no ".rst"
DOC_LINKS = {
    "CircularFingerprint": ("molecules", "papers/duvenaud_ecfp"),
    "NeuralFingerprint": ("molecules", "papers/duvenaud_neural_fingerprint"),
    "NeuralFingerprintRegressor": ("molecules", "papers/duvenaud_neural_fingerprint"),
    "NeuralFingerprintClassifier": ("molecules", "papers/duvenaud_neural_fingerprint"),
    "MPNN": ("molecules", "papers/gilmer_mpnn"),
    "MPNNRegressor": ("molecules", "papers/gilmer_mpnn"),
    "MPNNClassifier": ("molecules", "papers/gilmer_mpnn"),
    "GroverFeaturizer": ("molecules", "papers/rong_grover"),
    "GroverRegressor": ("molecules", "papers/rong_grover"),
    "GroverClassifier": ("molecules", "papers/rong_grover"),
    "MoleculeStandardizer": ("user_guide/molecules_own_data", None),
    "SkipInvalidMolecules": ("user_guide/molecules_own_data", None),
    "RDKitDescriptors": ("user_guide/molecules_own_data", None),
    "NMF": ("user_guide/decomposition", "papers/lee_seung_nmf"),
    "BetaVAE": ("user_guide/decomposition", "papers/disentanglement"),
    "SupConEmbedder": ("user_guide/contrastive", "papers/khosla_supcon"),
    "CrossEntropyEmbedder": ("user_guide/contrastive", "papers/khosla_supcon"),
    "LogPartitionEstimator": ("user_guide/estimation", "papers/luo_sumo"),
    "SUMOVAE": ("user_guide/estimation", "papers/luo_sumo"),
    "DeePSiMAutoencoder": ("user_guide/generative", "papers/dosovitskiy_deepsim"),
    "FeatureInverter": ("user_guide/generative", "papers/dosovitskiy_deepsim"),
    "InstanceSegmenter": ("user_guide/images", "papers/milioto_instance_segmentation"),
    "MaskRCNN": ("user_guide/images", "papers/he_mask_rcnn"),
    "LearnedPolicyGradient": ("user_guide/environments", "papers/oh_lpg"),
    "A2C": ("user_guide/environments", "papers/oh_lpg"),
    "ProgressiveNetworkClassifier": ("continual", "papers/rusu_progressive"),
    "GenerativeReplayClassifier": ("continual", "papers/farquhar_vger"),
}

ESTIMATORS = dict(all_estimators())


def test_every_public_estimator_has_its_pages():
    assert set(DOC_LINKS) == set(ESTIMATORS)
    for guide, paper in DOC_LINKS.values():
        for page in (guide, paper):
            assert page is None or (DOCS / f"{page}.rst").is_file(), page


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_docstring_links_user_guide_and_paper(name):
    guide, paper = DOC_LINKS[name]
    doc = re.sub(r"\s+", " ", ESTIMATORS[name].__doc__)
    expected = f"Read more in the :doc:`user guide </{guide}>`"
    if paper is not None:
        expected += f" and on the :doc:`paper page </{paper}>`"
    assert expected + "." in doc, f"{name}'s docstring should say: {expected}."
