"""Parameters that estimators share are documented alike in each of them.

Every docstring writes its parameters out in full, as scikit-learn's do; this test holds the
copies of a shared parameter to one text (type, default and description, white space
aside) with scikit-learn's ``assert_docstring_consistency``, so that editing one copy
without the others fails here.
"""

import pytest
from sklearn.utils._testing import assert_docstring_consistency

from sklearn_papers.utils.discovery import all_estimators

_CLASSES = dict(all_estimators())

_GRAPH = ["GroverClassifier", "GroverFeaturizer", "GroverRegressor", "MPNN", "MPNNClassifier",
          "MPNNRegressor", "NeuralFingerprint", "NeuralFingerprintClassifier",
          "NeuralFingerprintRegressor"]
_TRAINING = ["early_stopping", "validation_fraction"]

#: group -> (estimators, the parameters they document alike)
GROUPS = {
    "molecule input of the graph estimators": (
        _GRAPH, ["graph_cache", "n_jobs", "standardize"]),
    # GroverFeaturizer joins the descriptors by default; the trained models do not
    "descriptors of the trained graph models": (
        [name for name in _GRAPH if name != "GroverFeaturizer"], ["descriptors"]),
    "MPNN": (
        ["MPNN", "MPNNClassifier", "MPNNRegressor"],
        ["batch_size", "device", "edge_hidden_size", "errors", "explicit_hydrogens",
         "hidden_size", "lr", "lr_schedule", "max_epochs", "message", "n_iter_no_change",
         "n_steps", "random_state", "readout", "set2set_steps", "verbose", *_TRAINING]),
    "neural fingerprint": (
        ["NeuralFingerprint", "NeuralFingerprintClassifier", "NeuralFingerprintRegressor"],
        ["even_batches", "lr_schedule", "n_iter_no_change", "verbose", *_TRAINING]),
    "GROVER fine-tuning": (
        ["GroverClassifier", "GroverRegressor"],
        ["batch_size", "depth", "device", "dist_coef", "dropout", "errors", "ffn_hidden",
         "hidden_size", "lr", "n_heads", "n_iter_no_change", "n_layers", "pretrained",
         "random_state", "readout", "verbose", *_TRAINING]),
    "contrastive embedders": (
        ["CrossEntropyEmbedder", "SupConEmbedder"],
        ["device", "lr", "max_epochs", "n_components", "random_state", "verbose",
         "weight_decay"]),
    "DeePSiM": (
        ["DeePSiMAutoencoder", "FeatureInverter"],
        ["batch_size", "device", "lambda_feat", "lambda_img", "max_epochs"]),
    "continual classifiers": (
        ["GenerativeReplayClassifier", "ProgressiveNetworkClassifier"], ["device"]),
    "segmentation": (["InstanceSegmenter", "MaskRCNN"], ["device", "verbose"]),
}


@pytest.mark.parametrize("group", sorted(GROUPS))
def test_shared_parameters_are_documented_alike(group):
    pytest.importorskip("numpydoc")
    names, params = GROUPS[group]
    assert_docstring_consistency([_CLASSES[n] for n in names], include_params=params)


def test_groups_name_registered_estimators_and_their_parameters():
    for group, (names, params) in GROUPS.items():
        for name in names:
            missing = set(params) - set(_CLASSES[name]().get_params())
            assert not missing, f"{group}: {name} has no parameter {sorted(missing)}"
