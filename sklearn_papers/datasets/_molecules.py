"""Loaders for the bundled molecular datasets (SMILES with measured or computed targets).

The files sit in ``datasets/data/*.csv.gz`` and their descriptions (source, licence, units,
citation, caveats) in ``datasets/descr/*.rst``; see ``shared/data/molecules/PROVENANCE.md``
of the project for how they were obtained and verified. Row order is the file's order: the
Duvenaud et al. (2015) protocol splits the files into contiguous folds.
"""

import gzip
from numbers import Integral
from importlib import resources

import numpy as np
import pandas as pd
from sklearn.utils import Bunch

from sklearn_papers.utils._sklearn_compat import Interval, InvalidParameterError, validate_params

__all__ = [
    "load_bbbp",
    "load_cep",
    "load_delaney",
    "load_freesolv",
    "load_malaria",
    "load_moleculeace",
    "load_moses_smiles",
    "load_tox21",
    "MOLECULEACE_TARGETS",
]

_DATA = "sklearn_papers.datasets.data"
_DESCR = "sklearn_papers.datasets.descr"


def _read_csv(filename, **kwargs):
    with resources.files(_DATA).joinpath(filename).open("rb") as raw:
        with gzip.open(raw, "rt", encoding="utf-8") as fh:
            return pd.read_csv(fh, **kwargs)


def _descr(name):
    return resources.files(_DESCR).joinpath(f"{name}.rst").read_text(encoding="utf-8")


def _load(*, filename, descr, smiles_column, target_columns, target_names, return_X_y,
          as_frame, n_rows=None):
    """Read one bundled file and build the scikit-learn style return value."""
    frame = _read_csv(filename, nrows=n_rows)
    smiles = frame[smiles_column].astype(str).str.strip()
    out = pd.DataFrame({"smiles": smiles})
    for col, name in zip(target_columns, target_names):
        out[name] = frame[col].astype(float)
    data = out["smiles"].to_numpy(dtype=object)
    if target_names:
        target = out[target_names[0]] if len(target_names) == 1 else out[target_names]
    else:
        target = None
    if as_frame:
        X = out["smiles"]
        y = target
    else:
        X = data
        y = None if target is None else target.to_numpy(dtype=np.float64)
    if return_X_y:
        return X, y
    return Bunch(
        data=X,
        target=y,
        frame=out if as_frame else None,
        target_names=list(target_names),
        feature_names=["smiles"],
        DESCR=_descr(descr),
    )


_COMMON = {"return_X_y": ["boolean"], "as_frame": ["boolean"]}

_DOC_RETURNS = """
    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        Dictionary-like object with attributes:

        data : ndarray of shape (n_samples,), dtype=object, or pandas Series
            SMILES strings, in file order (surrounding whitespace stripped).
        target : {target_shape}
            {target_desc}
        frame : DataFrame or None
            ``smiles`` plus the target column(s) when ``as_frame=True``.
        target_names : list of str
            Names of the target column(s).
        feature_names : list of str
            ``["smiles"]``.
        DESCR : str
            Source, licence, units, citation and caveats.

    (data, target) : tuple if ``return_X_y`` is True
        The SMILES array and the target, as described above.
"""


def _doc(target_shape, target_desc):
    return _DOC_RETURNS.format(target_shape=target_shape, target_desc=target_desc)


@validate_params(_COMMON, prefer_skip_nested_validation=True)
def load_delaney(*, return_X_y=False, as_frame=False):
    """Load the Delaney (ESOL) aqueous solubility data set (regression).

    1128 molecules with measured log10 solubility in mol/L (Delaney 2004), as processed by
    Duvenaud et al. (2015) for their main table ("solubility"). Only SMILES and the
    measured value are returned: the file's ESOL-predicted and descriptor columns are left
    out, as in the paper's setting.

    Parameters
    ----------
    return_X_y : bool, default=False
        If True, return ``(data, target)`` instead of a Bunch.
    as_frame : bool, default=False
        If True, ``data`` is a pandas Series and ``target`` a Series, and ``frame`` is
        filled.
    {returns}
    Examples
    --------
    >>> from sklearn_papers.datasets import load_delaney
    >>> X, y = load_delaney(return_X_y=True)
    >>> X.shape, y.shape
    ((1128,), (1128,))
    """
    return _load(
        filename="delaney.csv.gz",
        descr="delaney",
        smiles_column="smiles",
        target_columns=["measured log solubility in mols per litre"],
        target_names=["log_solubility"],
        return_X_y=return_X_y,
        as_frame=as_frame,
    )


@validate_params(_COMMON, prefer_skip_nested_validation=True)
def load_malaria(*, return_X_y=False, as_frame=False):
    """Load the malaria (P. falciparum) activity data set of Duvenaud et al. (2015).

    9999 molecules; the target is the natural log of EC50 in micromolar (Gamo et al. 2010,
    via ChEMBL-NTD), as in the authors' processed file.

    Parameters
    ----------
    return_X_y : bool, default=False
        If True, return ``(data, target)`` instead of a Bunch.
    as_frame : bool, default=False
        If True, return pandas objects and fill ``frame``.
    {returns}
    Examples
    --------
    >>> from sklearn_papers.datasets import load_malaria
    >>> X, y = load_malaria(return_X_y=True)
    >>> X.shape
    (9999,)
    """
    return _load(
        filename="malaria.csv.gz",
        descr="malaria",
        smiles_column="smiles",
        target_columns=["activity"],
        target_names=["log_ec50_um"],
        return_X_y=return_X_y,
        as_frame=as_frame,
    )


@validate_params(
    {**_COMMON, "n_samples": [Interval(Integral, 1, None, closed="left"), None]},
    prefer_skip_nested_validation=True,
)
def load_cep(*, n_samples=None, return_X_y=False, as_frame=False):
    """Load the Harvard Clean Energy Project photovoltaic efficiency data set.

    29978 molecules with DFT-derived power-conversion efficiency in percent (Hachmann et
    al. 2011), as processed by Duvenaud et al. (2015); the paper used the first 20,000
    rows (``n_samples=20000``).

    Parameters
    ----------
    n_samples : int, default=None
        Read only the first ``n_samples`` rows (file order). None reads all 29978.
    return_X_y : bool, default=False
        If True, return ``(data, target)`` instead of a Bunch.
    as_frame : bool, default=False
        If True, return pandas objects and fill ``frame``.
    {returns}
    Examples
    --------
    >>> from sklearn_papers.datasets import load_cep
    >>> X, y = load_cep(n_samples=20000, return_X_y=True)
    >>> X.shape
    (20000,)
    """
    return _load(
        filename="cep.csv.gz",
        descr="cep",
        smiles_column="smiles",
        target_columns=["PCE"],
        target_names=["pce_percent"],
        return_X_y=return_X_y,
        as_frame=as_frame,
        n_rows=n_samples,
    )


@validate_params(_COMMON, prefer_skip_nested_validation=True)
def load_freesolv(*, return_X_y=False, as_frame=False):
    """Load the FreeSolv hydration free energy data set (regression).

    642 molecules with experimental hydration free energy in kcal/mol (Mobley & Guthrie
    2014), as shipped with GROVER (Rong et al. 2020) and MoleculeNet.

    Parameters
    ----------
    return_X_y : bool, default=False
        If True, return ``(data, target)`` instead of a Bunch.
    as_frame : bool, default=False
        If True, return pandas objects and fill ``frame``.
    {returns}
    Examples
    --------
    >>> from sklearn_papers.datasets import load_freesolv
    >>> X, y = load_freesolv(return_X_y=True)
    >>> X.shape
    (642,)
    """
    return _load(
        filename="freesolv.csv.gz",
        descr="freesolv",
        smiles_column="smiles",
        target_columns=["freesolv"],
        target_names=["hydration_free_energy_kcal_mol"],
        return_X_y=return_X_y,
        as_frame=as_frame,
    )


@validate_params(_COMMON, prefer_skip_nested_validation=True)
def load_bbbp(*, return_X_y=False, as_frame=False):
    """Load the blood-brain barrier penetration data set (binary classification).

    2039 molecules; the target is 1 for penetrating (Martins et al. 2012, MoleculeNet
    BBBP). The set holds duplicates (only 1975 unique canonical SMILES, 10 duplicate groups
    with conflicting labels) and 105 multi-fragment SMILES: group duplicates before
    cross-validation.

    Parameters
    ----------
    return_X_y : bool, default=False
        If True, return ``(data, target)`` instead of a Bunch.
    as_frame : bool, default=False
        If True, return pandas objects and fill ``frame``.
    {returns}
    Examples
    --------
    >>> from sklearn_papers.datasets import load_bbbp
    >>> X, y = load_bbbp(return_X_y=True)
    >>> X.shape, sorted(set(y.tolist()))
    ((2039,), [0.0, 1.0])
    """
    return _load(
        filename="bbbp.csv.gz",
        descr="bbbp",
        smiles_column="smiles",
        target_columns=["p_np"],
        target_names=["p_np"],
        return_X_y=return_X_y,
        as_frame=as_frame,
    )


TOX21_TASKS = [
    "NR-AR", "NR-AR-LBD", "NR-AhR", "NR-Aromatase", "NR-ER", "NR-ER-LBD",
    "NR-PPAR-gamma", "SR-ARE", "SR-ATAD5", "SR-HSE", "SR-MMP", "SR-p53",
]


@validate_params(_COMMON, prefer_skip_nested_validation=True)
def load_tox21(*, return_X_y=False, as_frame=False):
    """Load the Tox21 toxicity data set (12 binary tasks with missing labels).

    7831 molecules, 12 assay outcomes (1 = active). Missing labels are NaN. Eight SMILES
    with hypervalent aluminium (e.g. ``CC(=O)O[AlH3](O)O``) do not parse in current RDKit:
    featurize with ``errors="nan"`` or drop them.

    Parameters
    ----------
    return_X_y : bool, default=False
        If True, return ``(data, target)`` instead of a Bunch.
    as_frame : bool, default=False
        If True, return pandas objects and fill ``frame``.
    {returns}
    Examples
    --------
    >>> from sklearn_papers.datasets import load_tox21
    >>> X, Y = load_tox21(return_X_y=True)
    >>> Y.shape
    (7831, 12)
    """
    return _load(
        filename="tox21.csv.gz",
        descr="tox21",
        smiles_column="smiles",
        target_columns=TOX21_TASKS,
        target_names=TOX21_TASKS,
        return_X_y=return_X_y,
        as_frame=as_frame,
    )


@validate_params(
    {**_COMMON, "n_samples": [Interval(Integral, 1, None, closed="left"), None]},
    prefer_skip_nested_validation=True,
)
def load_moses_smiles(*, n_samples=None, return_X_y=False, as_frame=False):
    """Load the MOSES test split: 176,074 unlabeled lead-like molecules.

    Meant for self-supervised pretraining (e.g. GROVER). It has no target: ``target`` is
    None and ``return_X_y=True`` returns ``(data, None)``.

    Parameters
    ----------
    n_samples : int, default=None
        Read only the first ``n_samples`` rows. None reads all.
    return_X_y : bool, default=False
        If True, return ``(data, None)`` instead of a Bunch.
    as_frame : bool, default=False
        If True, ``data`` is a pandas Series and ``frame`` is filled.

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        With ``data`` (ndarray of shape (n_samples,), dtype=object, SMILES), ``target``
        (None), ``frame``, ``target_names`` (empty), ``feature_names`` and ``DESCR``.
    (data, None) : tuple if ``return_X_y`` is True
        The SMILES array and None.

    Examples
    --------
    >>> from sklearn_papers.datasets import load_moses_smiles
    >>> X, _ = load_moses_smiles(n_samples=1000, return_X_y=True)
    >>> X.shape
    (1000,)
    """
    return _load(
        filename="moses_test.csv.gz",
        descr="moses",
        smiles_column="SMILES",
        target_columns=[],
        target_names=[],
        return_X_y=return_X_y,
        as_frame=as_frame,
        n_rows=n_samples,
    )


#: The MoleculeACE targets bundled with :func:`load_moleculeace` (ChEMBL target id and the
#: measured quantity).
MOLECULEACE_TARGETS = (
    "CHEMBL1862_Ki", "CHEMBL2047_EC50", "CHEMBL2147_Ki", "CHEMBL228_Ki", "CHEMBL231_Ki",
    "CHEMBL233_Ki", "CHEMBL236_Ki", "CHEMBL237_EC50", "CHEMBL238_Ki", "CHEMBL4792_Ki",
)


def _check_moleculeace_target(target):
    """``target`` if it is one of ``MOLECULEACE_TARGETS``; an error that names the
    bundled target it was probably meant to be (other case, spaces) otherwise."""
    if not isinstance(target, str):
        raise InvalidParameterError(
            f"The 'target' parameter of load_moleculeace must be a str among "
            f"MOLECULEACE_TARGETS, got {target!r} of type {type(target).__name__}.")
    if target in MOLECULEACE_TARGETS:
        return str(target)
    near = [t for t in MOLECULEACE_TARGETS if t.lower() == target.strip().lower()]
    hint = f" Did you mean {near[0]!r}?" if near else ""
    raise InvalidParameterError(
        f"The 'target' parameter of load_moleculeace must be one of MOLECULEACE_TARGETS "
        f"({', '.join(MOLECULEACE_TARGETS)}), got {target!r}.{hint}")


@validate_params(
    {"target": "no_validation", **_COMMON},
    prefer_skip_nested_validation=True,
)
def load_moleculeace(target, *, return_X_y=False, as_frame=False):
    """Load one MoleculeACE bioactivity set: potency on one target, with activity cliffs.

    MoleculeACE (van Tilborg, Alenicheva & Grisoni 2022) curated ChEMBL potencies (Ki or
    EC50) on 30 targets, with a fixed train/test split and activity-cliff labels; ten of
    them are bundled (``MOLECULEACE_TARGETS``). The target is -log10 of the potency in
    nM, so higher is more potent (2670 nM gives -3.43). A molecule is a cliff molecule
    when it forms an activity cliff with another molecule of the set: similar structure,
    potencies more than 10 times apart. The benchmark's metrics are the RMSE on the test
    molecules and the RMSE on the test molecules with ``cliff`` True.

    Parameters
    ----------
    target : str
        One of ``MOLECULEACE_TARGETS``, e.g. ``"CHEMBL2047_EC50"``.
    return_X_y : bool, default=False
        If True, return ``(data, target)`` instead of a Bunch (no split, no cliffs).
    as_frame : bool, default=False
        If True, ``data`` and ``target`` are pandas Series and ``frame`` is filled.

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        Dictionary-like object with attributes:

        data : ndarray of shape (n_samples,), dtype=object, or pandas Series
            SMILES strings, in file order.
        target : ndarray of shape (n_samples,), dtype=float64, or pandas Series
            -log10(potency / nM), potency the mean measured Ki or EC50.
        potency_nm : ndarray of shape (n_samples,), dtype=float64
            The mean measured Ki or EC50 in nM.
        cliff : ndarray of shape (n_samples,), dtype=bool
            True for a molecule that is part of an activity cliff.
        train_indices, test_indices : ndarray of int64
            The benchmark's split (about 80/20, stratified on ``cliff``), as row indices.
        frame : DataFrame or None
            ``smiles``, ``neg_log10_potency_nm``, ``potency_nm``, ``cliff`` and
            ``split`` (``"train"`` or ``"test"``) when ``as_frame=True``.
        target_names : list of str
            ``["neg_log10_potency_nm"]``.
        feature_names : list of str
            ``["smiles"]``.
        DESCR : str
            Source, licence, units, citation and caveats.

    (data, target) : tuple if ``return_X_y`` is True
        The SMILES array and the target, as described above.

    Raises
    ------
    sklearn.utils._param_validation.InvalidParameterError
        If ``target`` is not one of ``MOLECULEACE_TARGETS`` (a ``ValueError``; the
        message names the bundled target of another case or with spaces), or
        ``return_X_y`` or ``as_frame`` is not a bool.

    References
    ----------
    .. [1] D. van Tilborg, A. Alenicheva, F. Grisoni, "Exposing the Limitations of
       Molecular Machine Learning with Activity Cliffs", J. Chem. Inf. Model. 62,
       5938-5951 (2022). doi:10.1021/acs.jcim.2c01073

    Examples
    --------
    >>> from sklearn_papers.datasets import load_moleculeace
    >>> data = load_moleculeace("CHEMBL2047_EC50")
    >>> data.data.shape, data.train_indices.shape, data.test_indices.shape
    ((631,), (503,), (128,))
    >>> int(data.cliff[data.test_indices].sum())
    50
    """
    target = _check_moleculeace_target(target)
    frame = _read_csv(f"moleculeace_{target}.csv.gz")
    out = pd.DataFrame({
        "smiles": frame["smiles"].astype(str).str.strip(),
        "neg_log10_potency_nm": frame["y"].astype(float),
        "potency_nm": frame["exp_mean [nM]"].astype(float),
        "cliff": frame["cliff_mol"].astype(bool),
        "split": frame["split"].astype(str),
    })
    X = out["smiles"] if as_frame else out["smiles"].to_numpy(dtype=object)
    y = (out["neg_log10_potency_nm"] if as_frame
         else out["neg_log10_potency_nm"].to_numpy(dtype=np.float64))
    if return_X_y:
        return X, y
    test = (out["split"] == "test").to_numpy()
    return Bunch(
        data=X,
        target=y,
        potency_nm=out["potency_nm"].to_numpy(dtype=np.float64),
        cliff=out["cliff"].to_numpy(dtype=bool),
        train_indices=np.flatnonzero(~test).astype(np.int64),
        test_indices=np.flatnonzero(test).astype(np.int64),
        frame=out if as_frame else None,
        target_names=["neg_log10_potency_nm"],
        feature_names=["smiles"],
        DESCR=_descr("moleculeace").replace("{target}", target),
    )


for _func, _shape, _desc in [
    (load_delaney, "ndarray of shape (1128,), dtype=float64", "log10 solubility in mol/L."),
    (load_malaria, "ndarray of shape (9999,), dtype=float64", "ln(EC50 / uM)."),
    (load_cep, "ndarray of shape (n_samples,), dtype=float64",
     "Power-conversion efficiency in percent."),
    (load_freesolv, "ndarray of shape (642,), dtype=float64",
     "Hydration free energy in kcal/mol."),
    (load_bbbp, "ndarray of shape (2039,), dtype=float64", "1.0 penetrating, 0.0 not."),
    (load_tox21, "ndarray of shape (7831, 12), dtype=float64",
     "1.0 active, 0.0 inactive, NaN missing, one column per task."),
]:
    _func.__doc__ = _func.__doc__.replace("{returns}", _doc(_shape, _desc))
