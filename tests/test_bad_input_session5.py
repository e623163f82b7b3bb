"""Bad input found by the session-5 adversarial probe: each raises a clear error naming it."""

import numpy as np
import pytest

from sklearn_papers.datasets import make_scenes
from sklearn_papers.vision import InstanceSegmenter, MaskRCNN


@pytest.fixture(scope="module")
def scenes():
    return make_scenes(2, image_size=16, max_objects=2, random_state=0)


@pytest.mark.parametrize("cls", [InstanceSegmenter, MaskRCNN])
def test_complex_images_are_refused_not_cast(cls, scenes):
    # numpy would cast them to real with only a ComplexWarning, dropping the imaginary part
    with pytest.raises(TypeError, match="real numeric array.*complex"):
        cls(max_epochs=1).fit(scenes.images + 1j, scenes.instance_maps)


@pytest.mark.parametrize("cls", [InstanceSegmenter, MaskRCNN])
def test_ragged_image_list_names_the_odd_map(cls, scenes):
    # images of different sizes are accepted; a map whose size differs from its image's
    # is named
    X = [scenes.images[0], scenes.images[1], scenes.images[1][:8]]
    y = [scenes.instance_maps[0], scenes.instance_maps[1], scenes.instance_maps[1]]
    with pytest.raises(ValueError, match=r"y\[2\] has shape \(16, 16\) but its image is "
                                         r"\(8, 16\)"):
        cls(max_epochs=1).fit(X, y)


@pytest.mark.parametrize("smiles", ["CC O", "CCO ethanol", "CCO\nCCN", "C\tC"])
def test_whitespace_inside_smiles_is_invalid_not_truncated(smiles):
    # RDKit reads "CC O" as ethane (the rest is a name): a silent wrong molecule
    from sklearn_papers.chem import CircularFingerprint, check_molecules

    with pytest.raises(ValueError, match=r"index 1: .*whitespace inside the SMILES"):
        CircularFingerprint(n_bits=8).fit_transform(["CCO", smiles])
    _, valid = check_molecules([" CCO", "CCO\n", smiles], errors="nan")
    assert valid.tolist() == [True, True, False]


@pytest.mark.parametrize("name", ["DeePSiMAutoencoder", "FeatureInverter"])
def test_deepsim_all_loss_weights_zero_is_refused(name):
    from sklearn_papers import generative

    est = getattr(generative, name)(lambda_img=0, lambda_feat=0, lambda_adv=0, max_epochs=1)
    with pytest.raises(ValueError, match="lambda_img, lambda_feat and lambda_adv are all 0"):
        est.fit(np.random.RandomState(0).rand(8, 64))


def test_disentanglement_scorer_names_an_estimator_without_transform():
    from sklearn.linear_model import LinearRegression

    from sklearn_papers.metrics import make_disentanglement_scorer

    rng = np.random.RandomState(0)
    X, factors = rng.rand(20, 3), rng.randint(0, 3, size=(20, 2))
    with pytest.raises(TypeError, match="LinearRegression has no transform method"):
        make_disentanglement_scorer("mutual_info_gap")(LinearRegression().fit(X, factors),
                                                       X, factors)


@pytest.mark.parametrize("name, kwargs, hint", [
    ("GroverRegressor", dict(hidden_size=8, n_heads=2, depth=1, ffn_hidden=0, pretrained=None),
     "Class labels belong"),
    ("NeuralFingerprintRegressor", dict(), "Class labels belong"),
    ("MPNN", dict(hidden_size=4, n_steps=1, set2set_steps=1, edge_hidden_size=4),
     r"MPNN\(max_epochs=0\)"),
])
def test_text_regression_targets_name_the_estimator_used(name, kwargs, hint):
    import sklearn_papers.chem as chem

    est = getattr(chem, name)(max_epochs=1, batch_size=4, random_state=0, **kwargs)
    with pytest.raises(ValueError, match=rf"y must hold numbers: {name} .*'p'.*{hint}") as e:
        est.fit(["CCO", "CCN", "c1ccccc1", "CC(=O)O"], ["p", "n", "p", "n"])
    others = {"NeuralFingerprint", "MPNN", "Grover"} - {n for n in
                                                       ("NeuralFingerprint", "MPNN", "Grover")
                                                       if name.startswith(n)}
    assert not any(o in str(e.value) for o in others)
