"""MoleculeStandardizer and the ``standardize`` parameter of the molecule estimators."""

import pickle
import warnings

import numpy as np
import pytest
from sklearn.base import clone

from sklearn_papers.chem import (
    CircularFingerprint,
    GroverFeaturizer,
    GroverRegressor,
    MoleculeStandardizer,
    MPNN,
    MPNNRegressor,
    MultipleFragmentsWarning,
    NeuralFingerprint,
    NeuralFingerprintRegressor,
    RDKitDescriptors,
)

#: (charged or multi-fragment form, parent), each string as it appears in the bundled
#: Tox21 or BBBP data (checked below), except the zwitterion written by hand.
PAIRS = [
    ("CCCCCCCC(=O)[O-].CCCCCCCC(=O)[O-].[Zn+2]", "CCCCCCCC(=O)O"),  # acid salt, acid
    ("CC(=O)[O-].[Na+]", "CC(=O)O"),  # carboxylate salt, acid
    ("[NH3+]c1ccccc1", "Nc1ccccc1"),  # protonated amine, amine
    ("CN1CCN(C2=Nc3ccccc3Oc3ccc(Cl)cc32)CC1.O=C(O)CCC(=O)O",  # succinate salt, parent
     "C1=C(Cl)C=CC2=C1C(=NC3=C(O2)C=CC=C3)N4CCN(CC4)C"),
]
ZWITTERION = ("[NH3+]CC(=O)[O-]", "NCC(=O)O")  # glycine


def _bundled_smiles():
    from sklearn_papers.datasets import load_bbbp, load_tox21

    return set(load_tox21(return_X_y=True)[0]) | set(load_bbbp(return_X_y=True)[0])


def test_pairs_come_from_the_bundled_data():
    bundled = _bundled_smiles()
    for charged, parent in PAIRS:
        assert charged in bundled and parent in bundled, (charged, parent)


def test_standardizer_gives_the_parent():
    X = [c for c, _ in PAIRS] + [ZWITTERION[0]]
    out = MoleculeStandardizer().fit_transform(X)
    assert out.shape == (len(X), 1) and out.dtype == object
    expected = MoleculeStandardizer().transform([p for _, p in PAIRS] + [ZWITTERION[1]])
    np.testing.assert_array_equal(out, expected)
    assert out[-1, 0] == "NCC(=O)O"


def test_standardizer_steps_are_parameters():
    salt = ["CC(=O)[O-].[Na+]"]
    assert MoleculeStandardizer(largest_fragment=False, neutralize=False).transform(
        salt)[0, 0] == "CC(=O)[O-].[Na+]"
    assert MoleculeStandardizer(neutralize=False).transform(salt)[0, 0] == "CC(=O)[O-]"
    assert MoleculeStandardizer().transform(salt)[0, 0] == "CC(=O)O"
    # a quaternary ammonium has no neutral form: it keeps its charge
    assert MoleculeStandardizer().transform(["C[N+](C)(C)C.[Cl-]"])[0, 0] == "C[N+](C)(C)C"
    # canonical tautomer: two tautomers of 2-hydroxypyridine give one SMILES
    taut = MoleculeStandardizer(canonical_tautomer=True).transform(
        ["Oc1ccccn1", "O=c1cccc[nH]1"])
    assert taut[0, 0] == taut[1, 0]
    plain = MoleculeStandardizer().transform(["Oc1ccccn1", "O=c1cccc[nH]1"])
    assert plain[0, 0] != plain[1, 0]


def test_standardizer_invalid_entries():
    X = ["CCO", "C1CC", None, "CCN.Cl"]
    with pytest.raises(ValueError, match=r"2 of 4 .*index 1: 'C1CC'"):
        MoleculeStandardizer().transform(X)
    out = MoleculeStandardizer(errors="nan").transform(X)
    assert out[0, 0] == "CCO" and out[3, 0] == "CCN"
    assert np.isnan(out[1, 0]) and np.isnan(out[2, 0])
    # the NaN rows read as missing molecules downstream
    fp = CircularFingerprint(n_bits=64, errors="nan").transform(out)
    assert np.isnan(fp[[1, 2]]).all() and np.isfinite(fp[[0, 3]]).all()


def test_standardizer_output_names_and_pandas():
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({"mol": ["CCN.Cl", "CCO"]})
    est = MoleculeStandardizer().fit(df)
    assert list(est.get_feature_names_out()) == ["mol"]
    assert list(MoleculeStandardizer().get_feature_names_out()) == ["smiles"]
    out = MoleculeStandardizer().set_output(transform="pandas").fit_transform(df)
    assert list(out.columns) == ["mol"] and out["mol"].tolist() == ["CCN", "CCO"]


def test_mol_input_and_pickle():
    from rdkit import Chem

    est = MoleculeStandardizer()
    out = pickle.loads(pickle.dumps(est)).transform([Chem.MolFromSmiles("CCN.Cl")])
    assert out[0, 0] == "CCN"


def _small(cls):
    if cls is CircularFingerprint:
        return CircularFingerprint(n_bits=256)
    common = dict(max_epochs=2, batch_size=4, random_state=0)
    if cls in (NeuralFingerprint, NeuralFingerprintRegressor):
        return cls(fp_length=16, radius=2, conv_width=8, **common)
    if cls in (MPNN, MPNNRegressor):
        return cls(hidden_size=8, n_steps=2, edge_hidden_size=8, **common)
    return cls(hidden_size=8, n_heads=1, depth=2, pretrained=None,
               **({"ffn_hidden": 8, "head": "finetune"} if cls is GroverRegressor else {}), **common)


_TRAIN = ["CCO", "c1ccccc1", "CC(=O)O", "CCN(CC)CC", "c1ccncc1", "CC(C)O", "CCCl", "NCCO"]


@pytest.mark.parametrize("cls", [CircularFingerprint, NeuralFingerprint, MPNN,
                                 GroverFeaturizer, NeuralFingerprintRegressor,
                                 MPNNRegressor, GroverRegressor])
def test_standardize_same_features_and_predictions(cls):
    est = _small(cls).set_params(standardize=True)
    y = np.arange(len(_TRAIN), dtype=float)
    if cls is GroverFeaturizer:
        est.set_params(max_epochs=0)
    est.fit(_TRAIN, y) if hasattr(est, "predict") else est.fit(_TRAIN)
    pairs = PAIRS + [ZWITTERION]
    charged, parents = [c for c, _ in pairs], [p for _, p in pairs]
    method = est.predict if hasattr(est, "predict") else est.transform
    out_charged, out_parent = method(charged), method(parents)
    # the same molecule after standardization, so the same graph: identical rows
    np.testing.assert_array_equal(out_charged, out_parent)
    # and without standardization they differ (the check can fail)
    plain = clone(est).set_params(standardize=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MultipleFragmentsWarning)
        plain.fit(_TRAIN, y) if hasattr(plain, "predict") else plain.fit(_TRAIN)
        method = plain.predict if hasattr(plain, "predict") else plain.transform
        assert not np.array_equal(method(charged), method(parents))


def test_standardize_accepts_a_standardizer():
    fp = CircularFingerprint(n_bits=256, standardize=MoleculeStandardizer(neutralize=False))
    out = fp.transform(["CC(=O)[O-].[Na+]", "CC(=O)[O-]", "CC(=O)O"])
    np.testing.assert_array_equal(out[0], out[1])
    assert not np.array_equal(out[1], out[2])


@pytest.mark.parametrize("cls", [CircularFingerprint, NeuralFingerprint, MPNN,
                                 GroverFeaturizer])
def test_multi_fragment_warning_once_per_call(cls):
    X = ["CCO", "CCN.Cl", "c1ccccc1", "CC(=O)[O-].[Na+]"]
    est = _small(cls)
    for call in ("fit", "transform", "fit_transform"):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            getattr(est, call)(X)
        found = [w for w in caught if issubclass(w.category, MultipleFragmentsWarning)]
        assert len(found) == 1, [str(w.message) for w in caught]
        assert issubclass(found[0].category, UserWarning)
        message = str(found[0].message)
        assert "2 of 4" in message and "index 1" in message, message
    with warnings.catch_warnings():
        warnings.simplefilter("error", MultipleFragmentsWarning)
        est.transform(["CCO", "c1ccccc1"])  # single fragments: no warning
        clone(est).set_params(standardize=True).fit(X).transform(X)  # standardized: none


def test_standardize_parameter_is_validated():
    with pytest.raises((TypeError, ValueError), match="standardize"):
        CircularFingerprint(standardize="yes").transform(["CCO"])


def test_multi_fragment_warning_points_at_the_callers_line():
    from sklearn.linear_model import Ridge
    from sklearn.pipeline import make_pipeline

    for call in (lambda: CircularFingerprint().set_output(transform="pandas").transform(
                     ["CCN.Cl"]),
                 lambda: make_pipeline(CircularFingerprint(), Ridge()).fit(
                     ["CCN.Cl", "CCO"], [1.0, 2.0])):
        with pytest.warns(MultipleFragmentsWarning) as record:
            call()
        assert record[0].filename == __file__, record[0].filename


def test_a_standardized_smiles_rdkit_cannot_read_back_is_an_invalid_row():
    from rdkit import Chem

    ferrocene = "[Fe+2].c1cc[cH-]c1.c1cc[cH-]c1"
    out = MoleculeStandardizer(errors="nan").transform([ferrocene, "CCN.Cl"])
    assert out[0, 0] != out[0, 0] and out[1, 0] == "CCN"   # NaN, then the parent amine
    with pytest.raises(ValueError, match="index 0: .*cannot read back"):
        MoleculeStandardizer().transform([ferrocene])
    # every SMILES it does output is readable by the next step of a pipeline
    assert Chem.MolFromSmiles(out[1, 0]) is not None


#: Metallocenes and other organometallics, as SMILES databases write them (ionic
#: cyclopentadienyl ligands, or ligands bonded to the metal), with the verdict of
#: standardization: refused (their neutralized ligands do not kekulize) or the parent.
METALLOCENES = {
    "ferrocene": ("[Fe+2].c1cc[cH-]c1.c1cc[cH-]c1", None),
    "ferrocene, Kekule": ("C1=CC=C[CH-]1.[CH-]1C=CC=C1.[Fe+2]", None),
    "nickelocene": ("[Ni+2].c1cc[cH-]c1.c1cc[cH-]c1", None),
    "cobaltocene": ("[Co+2].c1cc[cH-]c1.c1cc[cH-]c1", None),
    "ruthenocene": ("[Ru+2].c1cc[cH-]c1.c1cc[cH-]c1", None),
    "zirconocene dichloride": ("Cl[Zr+2]Cl.c1cc[cH-]c1.c1cc[cH-]c1", None),
    "titanocene dichloride": ("[Cl-].[Cl-].[Ti+4].c1cc[cH-]c1.c1cc[cH-]c1", None),
    "acetylferrocene": ("CC(=O)[c-]1cccc1.[Fe+2].c1cc[cH-]c1", None),
    "ferrocene, bonded": ("[Fe]1234C5=C1C2=C3C45", "C1=CCC=C1"),
}


def _routes():
    """Every way a molecule gets standardized: name -> estimator with errors="nan"."""
    return {
        "MoleculeStandardizer": MoleculeStandardizer(errors="nan"),
        "CircularFingerprint": CircularFingerprint(n_bits=64, standardize=True, errors="nan"),
        "RDKitDescriptors": RDKitDescriptors(descriptors=["MolWt"], standardize=True,
                                             errors="nan"),
        "MPNN": _small(MPNN).set_params(standardize=True, errors="nan"),
        "NeuralFingerprint": _small(NeuralFingerprint).set_params(standardize=True,
                                                                  errors="nan"),
    }


@pytest.mark.parametrize("name", list(METALLOCENES))
def test_metallocenes_get_one_verdict_on_every_standardization_route(name):
    from sklearn_papers.chem import SkipInvalidMolecules

    smiles, parent = METALLOCENES[name]
    X = ["CCO", smiles, "c1ccccc1", "CCN"]
    for route, est in _routes().items():
        out = np.asarray(_fit(est, X, None).transform(X), dtype=object)
        row_nan = [all(v != v for v in np.ravel(row)) for row in out]
        assert row_nan == [False, parent is None, False, False], route
        if parent is not None and route == "MoleculeStandardizer":
            assert out[1, 0] == parent
    # SkipInvalidMolecules leaves it out whatever standardizes first
    for inner in (MoleculeStandardizer(), CircularFingerprint(n_bits=64, standardize=True)):
        wrapped = SkipInvalidMolecules(inner)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            wrapped.fit(X)
        assert wrapped.n_left_out_ == (parent is None)


@pytest.mark.parametrize("route", ["MoleculeStandardizer", "CircularFingerprint",
                                   "RDKitDescriptors", "MPNN", "NeuralFingerprint"])
def test_a_refused_metallocene_gets_the_same_message_on_every_route(route):
    smiles = METALLOCENES["ferrocene"][0]
    est = _routes()[route].set_params(errors="raise")
    with pytest.raises(ValueError) as caught:
        _fit(est, ["CCO", "CCN"], None).transform(["CCO", smiles])
    message = str(caught.value)
    assert f"index 1: {smiles!r} (standardization gave c1cccc1, which RDKit cannot read " \
           "back" in message
    # the fixes: as drawn, or the complex kept whole
    assert "standardize=False" in message and "largest_fragment=False" in message
    # largest_fragment=False keeps the metal and both rings (neutralize=False alone would
    # keep one ring anion only)
    kept = MoleculeStandardizer(largest_fragment=False, verbose=0).transform([smiles])[0, 0]
    assert kept == "[Fe+2].c1cc[cH-]c1.c1cc[cH-]c1"


#: Salts and mixtures of inorganic parts only: no organic fragment, no parent molecule
#: (RDKit's chooser would keep the largest inorganic part: "[Na+].[Cl-]" -> "Cl").
NO_PARENT = ["[Na+].[Cl-]", "[NH4+].[Cl-]", "O.O", "[Cu+2].[O-]S(=O)(=O)[O-]",
             "[Cu]I"]  # the last one becomes two fragments in cleanup (metal disconnected)
#: One inorganic species as drawn: kept (it is the molecule given, not a counter-ion).
SINGLE_INORGANIC = {"O": "O", "N": "N", "[Pt]": "[Pt]", "[Na+]": "[Na+]", "[H+]": "[H+]",
                    "[Cl-]": "Cl", "O=C=O.O": "O=C=O"}


def test_a_salt_of_inorganic_parts_only_has_no_parent():
    X = ["CCO"] + NO_PARENT + ["CC(=O)[O-].[Na+]"]
    out = MoleculeStandardizer(errors="nan").transform(X)
    assert out[0, 0] == "CCO" and out[-1, 0] == "CC(=O)O"
    assert all(v != v for v in out[1:-1, 0])  # NaN rows
    with pytest.raises(ValueError, match=r"5 of 7 .*index 1: '\[Na\+\]\.\[Cl-\]' \(no "
                                         r"organic fragment.*largest_fragment=False"):
        MoleculeStandardizer().transform(X)
    # keeping every fragment is the fix the message names
    kept = MoleculeStandardizer(largest_fragment=False).transform(["[Na+].[Cl-]"])
    assert kept[0, 0] == "[Cl-].[Na+]"
    single = MoleculeStandardizer().transform(list(SINGLE_INORGANIC))
    assert single[:, 0].tolist() == list(SINGLE_INORGANIC.values())


def test_a_metal_complex_split_by_cleanup_names_the_cause():
    # cisplatin is one molecule as drawn, not a salt: cleanup disconnects its metal
    # atom, leaving inorganic parts only; the reason says so and names cleanup=False
    X = ["CCO", "Cl[Pt](Cl)(N)N", "[Na+].[Cl-]"]
    with pytest.raises(ValueError) as info:
        MoleculeStandardizer().transform(X)
    message = str(info.value)
    complex_reason = message.split("index 1: ")[1].split("; index 2: ")[0]
    assert "cleanup disconnected its metal atoms" in complex_reason
    assert "MoleculeStandardizer(cleanup=False)" in complex_reason
    assert "a salt or mixture" not in complex_reason
    assert "a salt or mixture of inorganic parts" in message.split("index 2: ")[1]
    kept = MoleculeStandardizer(cleanup=False).transform(X[1:2])
    assert kept[0, 0] == kept[0, 0] and "." not in kept[0, 0]  # one molecule, kept


@pytest.mark.parametrize("cls", [CircularFingerprint, RDKitDescriptors, NeuralFingerprint])
def test_estimators_treat_a_salt_without_parent_as_an_invalid_molecule(cls):
    est = (RDKitDescriptors(descriptors=["MolWt"]) if cls is RDKitDescriptors
           else _small(cls))
    X = ["CCO", "[Na+].[Cl-]", "CCN.Cl", "c1ccccc1"]
    with pytest.raises(ValueError, match=r"1 of 4 .*index 1: '\[Na\+\]\.\[Cl-\]' \(no "
                                         r"organic fragment"):
        clone(est).set_params(standardize=True).fit(X).transform(X)
    out = clone(est).set_params(standardize=True, errors="nan").fit(X).transform(X)
    assert np.isnan(out[1]).all() and np.isfinite(out[[0, 2, 3]]).all()
    # as given (standardize=False) it is a molecule, named by the multi-fragment warning
    fitted = _fit(clone(est), X[:1] + X[2:], None)
    with pytest.warns(MultipleFragmentsWarning, match=r"2 of 4 .*index 1: "
                                                      r"'\[Na\+\]\.\[Cl-\]'"):
        out = fitted.transform(X)
    assert np.isfinite(out).all()


@pytest.mark.parametrize("cls", [CircularFingerprint, RDKitDescriptors, NeuralFingerprint,
                                 MPNN, GroverFeaturizer])
def test_multi_fragment_warning_counts_a_salt_without_parent(cls):
    est = (RDKitDescriptors(descriptors=["MolWt"]) if cls is RDKitDescriptors
           else _small(cls))
    if cls is GroverFeaturizer:
        est.set_params(max_epochs=0)
    X = ["CCO", "c1ccccc1", "[Na+].[Cl-]", "CCN.Cl"]
    for call in ("fit", "transform", "fit_transform"):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            getattr(est, call)(X)
        found = [str(w.message) for w in caught
                 if issubclass(w.category, MultipleFragmentsWarning)]
        assert len(found) == 1, found
        assert "2 of 4" in found[0] and "index 2: '[Na+].[Cl-]'" in found[0], found[0]


def _fit(est, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MultipleFragmentsWarning)
        return est.fit(X, y) if hasattr(est, "predict") else est.fit(X)


def _out(est, X):
    return est.predict(X) if hasattr(est, "predict") else est.transform(X)


#: Molecules whose features depend on the standardization (salt, zwitterion, amine salt).
_CHANGED_BY_STANDARDIZING = ["CC(=O)[O-].[Na+]", "[NH3+]CC(=O)[O-]", "CCN.Cl"]


@pytest.mark.parametrize("cls", [RDKitDescriptors, NeuralFingerprint, MPNN,
                                 GroverFeaturizer, NeuralFingerprintRegressor,
                                 MPNNRegressor, GroverRegressor])
def test_standardize_set_after_fit_keeps_the_value_of_fit(cls):
    est = (RDKitDescriptors(descriptors=["MolWt", "TPSA"]) if cls is RDKitDescriptors
           else _small(cls))
    if cls is GroverFeaturizer:
        est.set_params(max_epochs=0)
    y = np.arange(len(_TRAIN), dtype=float)
    _fit(est, _TRAIN, y)
    X = _CHANGED_BY_STANDARDIZING
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MultipleFragmentsWarning)
        before = _out(est, X)
    est.set_params(standardize=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MultipleFragmentsWarning)
        with pytest.warns(UserWarning, match=r"prepares molecules as in fit \(standardize="
                                             r"False in fit, standardize=True now\).*Fit it "
                                             r"again"):
            after = _out(est, X)
    np.testing.assert_array_equal(after, before)
    # a refit uses the new value (the check can fail: standardizing changes the output)
    _fit(est, _TRAIN, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        refitted = _out(est, X)
    assert not np.array_equal(refitted, before)
    # the same steps spelled another way, or a pickled model, change nothing: no warning
    est.set_params(standardize=MoleculeStandardizer())
    again = pickle.loads(pickle.dumps(est))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(_out(again, X), refitted)
    # a MoleculeStandardizer changed in place (nested set_params) is seen too
    est.set_params(standardize__neutralize=False)
    with pytest.warns(UserWarning, match=r"standardize=True in fit, standardize="
                                         r"MoleculeStandardizer\(neutralize=False\) now"):
        np.testing.assert_array_equal(_out(est, X), refitted)


def test_mpnn_keeps_explicit_hydrogens_and_descriptors_of_fit():
    y = np.arange(len(_TRAIN), dtype=float)
    est = _fit(_small(MPNNRegressor), _TRAIN, y)
    before = est.predict(_TRAIN[:3])
    est.set_params(explicit_hydrogens=True, descriptors=True)
    with pytest.warns(UserWarning, match=r"descriptors=False in fit, descriptors=True "
                                         r"now; explicit_hydrogens=False in fit, "
                                         r"explicit_hydrogens=True now"):
        np.testing.assert_array_equal(est.predict(_TRAIN[:3]), before)


def _rdkit_reference(mol, steps):
    """The standardization as RDKit's functions give it, one call per step."""
    from rdkit.Chem.MolStandardize import rdMolStandardize

    from sklearn_papers.chem._standardization import _NoParent, _no_organic_fragment

    cleanup, largest, neutralize, tautomer = steps
    if cleanup:
        mol = rdMolStandardize.Cleanup(mol)
    if largest:
        if _no_organic_fragment(mol):
            raise _NoParent("no parent")
        mol = rdMolStandardize.LargestFragmentChooser(preferOrganic=True).choose(mol)
    if neutralize:
        mol = rdMolStandardize.Uncharger().uncharge(mol)
    if tautomer:
        mol = rdMolStandardize.TautomerEnumerator().Canonicalize(mol)
    return mol


#: Inputs that take every branch of the standardization: explicit and isotopic hydrogens,
#: metals bonded to organic atoms, salts of alkali and alkaline-earth metals, zwitterions,
#: nitro groups and N-oxides to normalize, charged groups without a neutral form, the
#: uncharged groups of the normalizations (sulfoxide, N-oxide, nitro, azide and diazo
#: drawn with double and triple bonds), molecules no cleanup step changes.
_BRANCHES = ["CC(=O)O[Na]", "[2H]OC", "[H][H]", "C[N+](C)(C)C.[Cl-]", "[NH3+]CC(=O)[O-]",
             "CCN.Cl", "[Na+].[Cl-]", "O=N(=O)c1ccccc1", "C[S+](C)[O-]", "[Cu]I",
             "Cl[Pt](Cl)([NH3])[NH3]", "CCC(=O)O[Mg]OC(=O)CC", "[O-][n+]1ccccc1",
             "C=[N+]=[N-]", "CN(C)(C)=O", "[Li]CCCC", "OC(=O)c1ccccc1[O-].[K+]",
             "[Fe+2].c1cc[cH-]c1.c1cc[cH-]c1", "[Fe]1234C5=C1C2=C3C45", "C[NH2+]C.[O-]Cl",
             "CS(C)=O", "CCP(=O)=O", "O=n1ccccc1", "CN=N#N", "C=N#N", "OCC",
             "c1ccccc1.C1CC1", "C/C=C/C", "F[C@H](Cl)Br", "CC(C)(C)C"]


@pytest.mark.parametrize("steps", [(True, True, True, False), (True, False, False, False),
                                   (False, True, True, False), (True, True, False, False),
                                   (True, False, True, False), (True, True, True, True)])
def test_standardization_gives_rdkits_molecules(steps):
    from rdkit import Chem, rdBase

    from sklearn_papers.chem._standardization import _Steps
    from sklearn_papers.datasets import load_bbbp, load_moses_smiles, load_tox21

    smiles = _BRANCHES + list(load_tox21(return_X_y=True)[0][::3]) + list(
        load_bbbp(return_X_y=True)[0][::3]) + list(
        load_moses_smiles(n_samples=1000, return_X_y=True)[0])
    if steps[3]:  # the canonical tautomer is slow: a sample
        smiles = smiles[:len(_BRANCHES) + 150]
    ours = _Steps(*steps)

    def text(step, mol):
        try:
            return Chem.MolToSmiles(step(mol))
        except Exception as exc:  # noqa: BLE001 - the same refusals on both sides
            return type(exc).__name__

    with rdBase.BlockLogs():
        mols = [m for m in map(Chem.MolFromSmiles, smiles) if m is not None]
        for mol in mols:
            assert text(ours, mol) == text(lambda m: _rdkit_reference(m, steps), mol), \
                Chem.MolToSmiles(mol)
