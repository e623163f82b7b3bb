"""Every public estimator's docstring links its user-guide page and its paper page."""

import re
from pathlib import Path

import pytest

from sklearn_papers.utils.discovery import all_estimators

DOCS = Path(__file__).resolve().parents[1] / "docs"

#: estimator name -> (user-guide page, paper page or None): paths under docs/, no ".rst"
DOC_LINKS = {
    "CircularFingerprint": ("molecules", "papers/ecfp"),
    "NeuralFingerprint": ("molecules", "papers/duvenaud"),
    "NeuralFingerprintRegressor": ("molecules", "papers/duvenaud"),
    "NeuralFingerprintClassifier": ("molecules", "papers/duvenaud"),
    "MPNN": ("molecules", "papers/gilmer"),
    "MPNNRegressor": ("molecules", "papers/gilmer"),
    "MPNNClassifier": ("molecules", "papers/gilmer"),
    "GroverFeaturizer": ("molecules", "papers/grover"),
    "GroverRegressor": ("molecules", "papers/grover"),
    "GroverClassifier": ("molecules", "papers/grover"),
    "MoleculeStandardizer": ("user_guide/molecules_own_data", None),
    "SkipInvalidMolecules": ("user_guide/molecules_own_data", None),
    "RDKitDescriptors": ("user_guide/molecules_own_data", None),
    "NMF": ("user_guide/decomposition", "papers/lee_seung"),
    "BetaVAE": ("user_guide/decomposition", "papers/disentanglement"),
    "SupConEmbedder": ("user_guide/contrastive", "papers/supcon"),
    "CrossEntropyEmbedder": ("user_guide/contrastive", "papers/supcon"),
    "LogPartitionEstimator": ("user_guide/estimation", "papers/sumo"),
    "SUMOVAE": ("user_guide/estimation", "papers/sumo"),
    "DeePSiMAutoencoder": ("user_guide/generative", "papers/deepsim"),
    "FeatureInverter": ("user_guide/generative", "papers/deepsim"),
    "InstanceSegmenter": ("user_guide/images", "papers/instance_segmentation"),
    "MaskRCNN": ("user_guide/images", "papers/mask_rcnn"),
    "LearnedPolicyGradient": ("user_guide/environments", "papers/lpg"),
    "A2C": ("user_guide/environments", "papers/lpg"),
    "ProgressiveNetworkClassifier": ("continual", "papers/continual_progressive"),
    "GenerativeReplayClassifier": ("continual", "papers/continual_replay"),
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
