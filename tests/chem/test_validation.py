"""The molecule validation module: containers, invalid entries, messages, RDKit logs."""

import pickle

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from rdkit import Chem

from sklearn_papers.chem import check_molecules
from sklearn_papers.chem._parse import InvalidMolecule, as_molecule_array, parse_molecules
from sklearn_papers.chem._report import raise_or_mask

SMILES = ["CCO", "c1ccccc1", "CC(=O)O"]


@pytest.mark.parametrize(
    "container",
    [
        SMILES,
        tuple(SMILES),
        np.array(SMILES, dtype=object),
        np.array(SMILES),  # unicode dtype
        np.array(SMILES, dtype=object).reshape(-1, 1),
        pd.Series(SMILES, index=[10, 20, 30]),
        pd.DataFrame({"smiles": SMILES}),
        [[s] for s in SMILES],
    ],
    ids=["list", "tuple", "object-1d", "str-1d", "object-2d", "series", "dataframe",
         "nested-list"],
)
def test_containers_give_the_same_1d_object_array(container):
    values = as_molecule_array(container)
    assert values.dtype == object and values.shape == (3,)
    assert values.tolist() == SMILES


def test_dataframe_header_is_never_parsed_as_a_molecule():
    mols, valid = check_molecules(pd.DataFrame({"smiles": ["CCO"]}))
    assert len(mols) == 1 and valid.all()


def test_bare_string_is_refused_not_split():
    with pytest.raises(ValueError, match=r"single str 'CCO'.*Wrap it in a list"):
        as_molecule_array("CCO")
    with pytest.raises(ValueError, match="single Mol"):
        as_molecule_array(Chem.MolFromSmiles("CCO"))


@pytest.mark.parametrize(
    "X, match",
    [
        (pd.DataFrame({"a": ["C"], "b": ["O"]}), "DataFrame with 2 columns"),
        (np.array([["C", "O"]], dtype=object), r"shape \(1, 2\)"),
        (np.empty((1, 1, 1), dtype=object), r"shape \(1, 1, 1\)"),
        (np.array("CCO", dtype=object), "0-d array"),
        ([], "0 sample"),
        ([["C", "O"]], "row 0 has 2 entries"),
    ],
)
def test_wrong_shapes_raise_value_error(X, match):
    with pytest.raises(ValueError, match=match):
        as_molecule_array(X)


def test_sparse_and_non_iterables_raise_type_error():
    with pytest.raises(TypeError, match="sparse"):
        as_molecule_array(sp.csr_matrix(np.ones((2, 1))))
    with pytest.raises(TypeError, match="array-like"):
        as_molecule_array(3)


def test_mol_objects_are_passed_through():
    mol = Chem.MolFromSmiles("CCO")
    mols, invalid = parse_molecules(np.array([mol, "CC"], dtype=object))
    assert mols[0] is mol and mols[1].GetNumAtoms() == 2 and invalid == []


@pytest.mark.parametrize(
    "value, reason",
    [
        ("C1CC", "unclosed ring"),
        ("CC(C", "open parentheses"),
        ("CC(C)(C)(C)(C)C", "Explicit valence for atom # 1 C"),
        ("c1cccc1", "kekulize"),
        ("", "empty SMILES string"),
        ("   ", "empty SMILES string"),
        (None, "missing value"),
        (float("nan"), "missing value"),
        (pd.NA, "missing value"),
        (3.5, "not a SMILES string or RDKit Mol (got float)"),
        (b"CCO", "bytes, not a SMILES string: decode the column first"),
        (np.bytes_(b"CCO"), "bytes, not a SMILES string: decode the column first"),
        (Chem.Mol(), "no atoms"),
    ],
)
def test_invalid_entries_get_rdkit_or_our_reason(value, reason):
    values = np.empty(2, dtype=object)
    values[:] = ["CCO", value]
    mols, invalid = parse_molecules(values)
    assert mols[1] is None and mols[0] is not None
    assert len(invalid) == 1 and invalid[0].index == 1
    assert reason in invalid[0].reason


def test_error_message_names_count_index_value_and_reason():
    X = ["CCO"] + ["C1CC"] * 7
    with pytest.raises(ValueError) as info:
        check_molecules(X, input_name="X_test")
    msg = str(info.value)
    assert msg.startswith("7 of 8 molecule(s) in X_test are invalid: index 1: 'C1CC' (")
    assert "unclosed ring" in msg and "index 5:" in msg and "index 6:" not in msg
    assert "and 2 more" in msg and "errors='nan'" in msg
    assert "NoneType" not in msg and "Boost" not in msg


def test_nan_mode_keeps_rows_in_place():
    mols, valid = check_molecules(["CCO", None, "C1CC", "O"], errors="nan")
    np.testing.assert_array_equal(valid, [True, False, False, True])
    assert mols[1] is None and mols[2] is None and mols[3].GetNumAtoms() == 1


def test_raise_or_mask_returns_the_valid_mask():
    invalid = [InvalidMolecule(2, "x", "bad")]
    np.testing.assert_array_equal(raise_or_mask(invalid, 4, errors="nan"),
                                  [True, True, False, True])
    np.testing.assert_array_equal(raise_or_mask([], 2), [True, True])


def test_rdkit_logs_do_not_leak_to_the_console(capfd):
    with pytest.raises(ValueError, match="valence"):
        check_molecules(["CCO", "CC(C)(C)(C)(C)C", "C1CC", "c1cccc1"])
    out, err = capfd.readouterr()
    assert out == "" and err == "", f"leaked: {out!r} {err!r}"


def test_invalid_molecule_pickles():
    # Joblib workers send these back to the main process.
    entry = InvalidMolecule(3, "C1CC", "unclosed ring")
    loaded = pickle.loads(pickle.dumps(entry))
    assert loaded == entry and type(loaded) is InvalidMolecule
    assert (loaded.index, loaded.value, loaded.reason) == (3, "C1CC", "unclosed ring")


def test_unsanitized_mol_is_sanitized_on_a_copy():
    # MolFromSmiles(..., sanitize=False) objects made CircularFingerprint fail inside
    # RDKit (a C++ pre-condition violation printed to the console).
    mol = Chem.MolFromSmiles("c1ccccc1", sanitize=False)
    mols, invalid = parse_molecules(np.array([mol], dtype=object))
    assert invalid == [] and mols[0] is not mol
    assert Chem.MolToSmiles(mols[0]) == Chem.MolToSmiles(Chem.MolFromSmiles("c1ccccc1"))
    assert mol.NeedsUpdatePropertyCache()  # the caller's object is left alone


@pytest.mark.parametrize("smiles", ["c1ccccc1O", "C[C@H](N)C(=O)[O-].[Na+]", "F/C=C/F"])
def test_explicit_hydrogen_atoms_are_removed_on_a_copy_as_from_smiles(smiles):
    # Chem.AddHs molecules (conformer pipelines, SDF files read with removeHs=False) gave
    # other ECFP bits than their SMILES.
    ref = Chem.MolFromSmiles(smiles)
    with_h = Chem.AddHs(ref)
    n_atoms = with_h.GetNumAtoms()
    mols, invalid = parse_molecules(np.array([with_h], dtype=object))
    assert invalid == [] and mols[0] is not with_h
    assert mols[0].GetNumAtoms() == ref.GetNumAtoms()
    assert Chem.MolToSmiles(mols[0]) == Chem.MolToSmiles(ref)
    assert with_h.GetNumAtoms() == n_atoms  # the caller's object is left alone


def test_hydrogens_that_smiles_keep_stay_atoms():
    # MolFromSmiles keeps isotopic hydrogens and H2: so does a Mol input.
    for smiles in ["[2H]C([2H])O", "[H][H]"]:
        mol = Chem.MolFromSmiles(smiles)
        got = parse_molecules(np.array([Chem.AddHs(mol)], dtype=object))[0][0]
        assert got.GetNumAtoms() == mol.GetNumAtoms()
        assert Chem.MolToSmiles(got) == Chem.MolToSmiles(mol)


@pytest.mark.parametrize(
    "smiles, reason",
    [("C(C)(C)(C)(C)C", "Explicit valence for atom # 0 C, 5"), ("c1cccc1", "kekulize")],
)
def test_unsanitizable_mol_is_reported_with_rdkit_reason(smiles, reason):
    mol = Chem.MolFromSmiles(smiles, sanitize=False)
    with pytest.raises(ValueError, match=rf"index 1: <rdkit Mol> \(unsanitized Mol fails "
                                         rf"sanitization: .*{reason}"):
        check_molecules(["CCO", mol])


def test_unknown_errors_policy_is_refused():
    with pytest.raises(ValueError, match="errors must be 'raise' or 'nan', got 'ignore'"):
        check_molecules(SMILES, errors="ignore")


def test_mol_with_property_cache_but_no_ring_perception_is_sanitized_like_smiles():
    from rdkit import Chem

    from sklearn_papers.chem import CircularFingerprint

    mol = Chem.MolFromSmiles("c1ccccc1O", sanitize=False)
    mol.UpdatePropertyCache(False)  # property cache set, rings never perceived
    fp = CircularFingerprint(n_bits=256)
    np.testing.assert_array_equal(fp.fit_transform([mol]), fp.transform(["c1ccccc1O"]))


@pytest.mark.parametrize("smiles", ["CC O", "CCO ethanol", "CCO\nCCN", "C\tC"])
def test_whitespace_inside_smiles_is_invalid_not_truncated(smiles):
    # RDKit reads "CC O" as ethane (the rest is a name): a silent wrong molecule
    from sklearn_papers.chem import CircularFingerprint

    with pytest.raises(ValueError, match=r"index 1: .*whitespace inside the SMILES"):
        CircularFingerprint(n_bits=8).fit_transform(["CCO", smiles])
    _, valid = check_molecules([" CCO", "CCO\n", smiles], errors="nan")
    assert valid.tolist() == [True, True, False]


def test_parse_error_reason_has_no_dangling_colon():
    # RDKit's second parse-error line points at the SMILES printed on the next
    # (dropped) line; the reason keeps the position without the dangling colon.
    with pytest.raises(ValueError) as info:
        check_molecules(["CCO", "CC(=O)Nc1ccc(O)cc1)"])
    message = str(info.value)
    assert "index 1" in message
    assert "position 19:" not in message
    assert "extra close parentheses" in message
