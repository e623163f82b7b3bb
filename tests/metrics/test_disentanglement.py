"""Disentanglement scores: oracles, perfect/rotated/random codes, dead latents, code sizes."""

import warnings

import numpy as np
import pytest
import scipy.stats
from sklearn.decomposition import PCA
from sklearn.ensemble import GradientBoostingClassifier
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.metrics import mutual_info_score, roc_auc_score
from sklearn.model_selection import GridSearchCV, cross_validate, train_test_split
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer
from sklearn.svm import LinearSVC
from sklearn.tree import DecisionTreeClassifier

from sklearn_papers.metrics import (
    beta_vae_score,
    dci,
    factor_vae_score,
    irs,
    make_disentanglement_scorer,
    modularity_explicitness,
    mutual_info_gap,
    sap_score,
)
from sklearn_papers.utils._sklearn_compat import InvalidParameterError

N = 1500
SIZES = (4, 4, 3)


def _factors(seed, n=N, sizes=SIZES):
    rng = np.random.RandomState(seed)
    return np.column_stack([rng.randint(s, size=n) for s in sizes])


def _perfect(factors):
    """Factors permuted and rescaled: a perfect code."""
    return factors[:, [2, 0, 1]] * np.array([1.0, 3.0, 0.5]) + 0.0


def _rotated(factors):
    """Codes of factors 0 and 1 rotated by 45 degrees (factor 2 left alone)."""
    c, s = np.cos(np.pi / 4), np.sin(np.pi / 4)
    f = factors.astype(float)
    return np.column_stack([c * f[:, 0] - s * f[:, 1], s * f[:, 0] + c * f[:, 1], f[:, 2]])


def _with_dead(codes, seed=0):
    """Append a constant column and a 1e-13-noise column (dead latents)."""
    rng = np.random.RandomState(seed)
    return np.column_stack([codes, np.full(len(codes), 3.0), 1e-13 * rng.normal(size=len(codes))])


def _partial(factors, seed):
    """Codes that are noisy mixtures of the factors: every score strictly between 0 and 1."""
    rng = np.random.RandomState(seed)
    mix = np.array([[1.0, 0.3, 0.0], [0.0, 1.0, 0.6], [0.5, 0.0, 1.0], [0.2, 0.2, 0.2]])
    return factors @ mix.T + rng.normal(scale=0.7, size=(len(factors), 4))


def _split(n, random_state, test_size=1 / 3):
    seed = np.random.RandomState(random_state).randint(np.iinfo(np.int32).max)
    return train_test_split(np.arange(n), test_size=test_size, random_state=seed)


FAST_TREE = DecisionTreeClassifier(max_depth=6, random_state=0)

SAMPLE_METRICS = {
    "mig": lambda f, z: mutual_info_gap(f, z),
    "dci_d": lambda f, z: dci(f, z, estimator=FAST_TREE, random_state=0)["disentanglement"],
    "dci_c": lambda f, z: dci(f, z, estimator=FAST_TREE, random_state=0)["completeness"],
    "dci_i": lambda f, z: dci(f, z, estimator=FAST_TREE, random_state=0)["informativeness"],
    "sap": lambda f, z: sap_score(f, z, random_state=0),
    "sap_continuous": lambda f, z: sap_score(f, z, continuous_factors=True),
    "modularity": lambda f, z: modularity_explicitness(f, z, random_state=0)["modularity"],
    "explicitness": lambda f, z: modularity_explicitness(f, z, random_state=0)["explicitness"],
    "irs": lambda f, z: irs(f, z),
}


# ----------------------------------------------------------------------------- naive oracles
def naive_discretize(codes, n_bins=20):
    out = np.zeros(codes.shape, dtype=int)
    for i in range(codes.shape[1]):
        out[:, i] = np.digitize(codes[:, i], np.histogram(codes[:, i], n_bins)[1][:-1])
    return out


def naive_mi(codes, factors):
    d = naive_discretize(codes)
    return np.array([[mutual_info_score(factors[:, j], d[:, i]) for j in range(factors.shape[1])]
                     for i in range(codes.shape[1])])


def naive_mig(factors, codes):
    m = naive_mi(codes, factors)
    h = np.array([mutual_info_score(factors[:, j], factors[:, j])
                  for j in range(factors.shape[1])])
    s = np.sort(m, axis=0)[::-1]
    return np.mean((s[0] - s[1]) / h)


def naive_dci(factors, codes, estimator, random_state):
    train, test = _split(len(codes), random_state)
    nc, nf = codes.shape[1], factors.shape[1]
    r = np.zeros((nc, nf))
    acc = []
    for j in range(nf):
        model = estimator.fit(codes[train], factors[train, j])
        r[:, j] = np.abs(model.feature_importances_)
        acc.append(np.mean(model.predict(codes[test]) == factors[test, j]))
    d_code = 1 - scipy.stats.entropy(r.T + 1e-11, base=nf)
    c_fac = 1 - scipy.stats.entropy(r + 1e-11, base=nc)
    return {"disentanglement": np.sum(d_code * r.sum(1) / r.sum()),
            "completeness": np.sum(c_fac * r.sum(0) / r.sum()),
            "informativeness": np.mean(acc)}


def naive_sap(factors, codes, random_state):
    train, test = _split(len(codes), random_state)
    s = np.zeros((codes.shape[1], factors.shape[1]))
    for i in range(codes.shape[1]):
        for j in range(factors.shape[1]):
            clf = LinearSVC(C=0.01, class_weight="balanced")
            clf.fit(codes[train, i][:, None], factors[train, j])
            s[i, j] = np.mean(clf.predict(codes[test, i][:, None]) == factors[test, j])
    srt = np.sort(s, axis=0)
    return np.mean(srt[-1] - srt[-2])


def naive_sap_continuous(factors, codes):
    s = np.zeros((codes.shape[1], factors.shape[1]))
    for i in range(codes.shape[1]):
        for j in range(factors.shape[1]):
            cov = np.cov(codes[:, i], factors[:, j], ddof=1)
            s[i, j] = cov[0, 1] ** 2 / cov[0, 0] / cov[1, 1]
    srt = np.sort(s, axis=0)
    return np.mean(srt[-1] - srt[-2])


def naive_modularity_explicitness(factors, codes, random_state):
    sq = naive_mi(codes, factors) ** 2
    mod = []
    for i in range(sq.shape[0]):
        top = sq[i].max()
        mod.append(1 - (sq[i].sum() - top) / (top * (sq.shape[1] - 1)) if top > 0 else 0.0)
    train, test = _split(len(codes), random_state)
    mu, sd = codes[train].mean(0), codes[train].std(0)
    aucs = []
    for j in range(factors.shape[1]):
        clf = LogisticRegression(max_iter=1000).fit((codes[train] - mu) / sd, factors[train, j])
        proba = clf.predict_proba((codes[test] - mu) / sd)
        onehot = (factors[test, j][:, None] == clf.classes_[None, :]).astype(int)
        aucs.append(roc_auc_score(onehot, proba, average="macro"))
    return {"modularity": np.mean(mod), "explicitness": np.mean(aucs)}


def naive_irs(factors, codes, q=0.99):
    nl, nf = codes.shape[1], factors.shape[1]
    scores, weights = [], []
    for i in range(nl):
        z = codes[:, i]
        max_dev = np.max(np.abs(z - z.mean()))
        best = -np.inf
        for j in range(nf):
            devs = []
            for v in np.unique(factors[:, j]):
                g = z[factors[:, j] == v]
                devs.append(np.percentile(np.abs(g - g.mean()), 100 * q))
            best = max(best, 1 - np.mean(devs) / max_dev)
        scores.append(best)
        weights.append(max_dev)
    return np.average(scores, weights=weights)


class FactorsAsObservations:
    """Toy ground-truth dataset whose observations are the factor values (deterministic)."""

    def __init__(self, sizes=SIZES):
        self.factor_sizes = tuple(sizes)

    def sample_factors(self, n, random_state):
        return np.column_stack([random_state.randint(s, size=n) for s in self.factor_sizes])

    def sample_observations_from_factors(self, factors, random_state):
        return factors.astype(float)


def naive_beta_vae(ds, rep, batch, n_train, n_eval, seed):
    rng = np.random.RandomState(seed)

    def points(n):
        x, y = [], []
        for _ in range(n):
            k = rng.randint(len(ds.factor_sizes))
            f1, f2 = ds.sample_factors(batch, rng), ds.sample_factors(batch, rng)
            f2[:, k] = f1[:, k]
            z1 = rep(ds.sample_observations_from_factors(f1, rng))
            z2 = rep(ds.sample_observations_from_factors(f2, rng))
            x.append(np.mean(np.abs(z1 - z2), axis=0))
            y.append(k)
        return np.array(x), np.array(y)

    xt, yt = points(n_train)
    xe, ye = points(n_eval)
    return LogisticRegression().fit(xt, yt).score(xe, ye)


def naive_factor_vae(ds, rep, batch, n_train, n_eval, n_var, tol, seed):
    rng = np.random.RandomState(seed)
    var = np.var(rep(ds.sample_observations_from_factors(ds.sample_factors(n_var, rng), rng)),
                 axis=0, ddof=1)
    std = np.sqrt(var)
    active = (std > 0) & (std > tol * std.max())

    def votes(n):
        v = np.zeros((len(ds.factor_sizes), var.size))
        for _ in range(n):
            k = rng.randint(len(ds.factor_sizes))
            f = ds.sample_factors(batch, rng)
            f[:, k] = f[0, k]
            local = np.var(rep(ds.sample_observations_from_factors(f, rng)), axis=0, ddof=1)
            ratio = np.full(var.size, np.inf)
            ratio[active] = local[active] / var[active]
            v[k, np.argmin(ratio)] += 1
        return v

    classifier = np.argmax(votes(n_train), axis=0)
    ev = votes(n_eval)
    return sum(ev[classifier[i], i] for i in np.flatnonzero(active)) / ev.sum()


# ----------------------------------------------------------------------------- oracle tests
@pytest.mark.parametrize("seed", [0, 1])
def test_mig_equals_naive_per_pair_implementation(seed):
    f = _factors(seed)
    z = _partial(f, seed)
    assert mutual_info_gap(f, z) == pytest.approx(naive_mig(f, z), rel=1e-10, abs=1e-12)


def test_dci_equals_naive_implementation():
    f = _factors(1)
    z = _partial(f, 1)
    ours = dci(f, z, estimator=FAST_TREE, random_state=3)
    ref = naive_dci(f, z, FAST_TREE, random_state=3)
    for key in ref:
        assert ours[key] == pytest.approx(ref[key], rel=1e-9), key


def test_sap_equals_naive_implementation_both_variants():
    f = _factors(2)
    z = _partial(f, 2)
    assert sap_score(f, z, random_state=5) == pytest.approx(naive_sap(f, z, 5), rel=1e-9)
    assert sap_score(f, z, continuous_factors=True) == pytest.approx(
        naive_sap_continuous(f, z), rel=1e-9)


def test_modularity_explicitness_equal_naive_implementation():
    f = _factors(3)
    z = _partial(f, 3)
    ours = modularity_explicitness(f, z, random_state=4)
    ref = naive_modularity_explicitness(f, z, random_state=4)
    for key in ref:
        assert ours[key] == pytest.approx(ref[key], rel=1e-9), key


def test_irs_equals_naive_implementation():
    f = _factors(4)
    z = _partial(f, 4)
    assert irs(f, z) == pytest.approx(naive_irs(f, z), rel=1e-9)


def test_interventional_scores_equal_naive_per_point_loops():
    ds = FactorsAsObservations()
    rng = np.random.RandomState(0)
    mix = rng.normal(size=(3, 4))

    def rep(x):
        return x @ mix + 0.3 * np.sin(3 * x[:, :1])

    ours = beta_vae_score(ds, rep, batch_size=8, n_train=60, n_eval=40, random_state=7)
    assert ours == pytest.approx(naive_beta_vae(ds, rep, 8, 60, 40, seed=7))
    ours = factor_vae_score(ds, rep, batch_size=8, n_train=60, n_eval=40,
                            n_variance_estimate=300, random_state=7)
    assert ours == pytest.approx(naive_factor_vae(ds, rep, 8, 60, 40, 300, 0.05, seed=7))


def test_factor_vae_oracle_with_a_collapsed_dimension():
    ds = FactorsAsObservations()

    def rep(x):
        return np.column_stack([x[:, 1], np.zeros(len(x)), x[:, 0] + 0.5 * x[:, 2], x[:, 2]])

    ours = factor_vae_score(ds, rep, batch_size=8, n_train=60, n_eval=40,
                            n_variance_estimate=300, random_state=1)
    assert ours == pytest.approx(naive_factor_vae(ds, rep, 8, 60, 40, 300, 0.05, seed=1))


# ----------------------------------------------------------------------------- sanity
@pytest.mark.parametrize("name", ["mig", "dci_d", "dci_c", "modularity", "irs",
                                  "sap_continuous"])
def test_perfect_code_scores_near_one_and_rotation_scores_lower(name):
    f = _factors(0)
    metric = SAMPLE_METRICS[name]
    perfect = metric(f, np.column_stack([_perfect(f), 1e-9 * np.arange(N) % 1e-8]))
    rotated = metric(f, _rotated(f))
    assert perfect > 0.95
    if name != "irs":  # IRS rewards robustness, not axis alignment; rotation costs less
        assert rotated < perfect - 0.2
    else:
        assert rotated < perfect - 0.05


@pytest.mark.parametrize("name", ["mig", "dci_d", "dci_c", "sap", "sap_continuous"])
def test_random_codes_score_near_zero(name, global_random_seed):
    f = _factors(global_random_seed)
    z = np.random.RandomState(global_random_seed + 1).normal(size=(N, 3))
    assert SAMPLE_METRICS[name](f, z) < 0.1


def test_informativeness_and_explicitness_separate_perfect_from_random():
    f = _factors(5)
    z = np.random.RandomState(5).normal(size=(N, 3))
    assert SAMPLE_METRICS["dci_i"](f, _perfect(f)) > 0.99
    assert SAMPLE_METRICS["dci_i"](f, z) < 0.45
    assert SAMPLE_METRICS["explicitness"](f, _perfect(f)) > 0.9
    assert abs(SAMPLE_METRICS["explicitness"](f, z) - 0.5) < 0.06


def test_sap_discrete_has_a_low_ceiling_for_perfect_multivalued_codes():
    """Documented: even a perfect code cannot reach 1 on the discrete (SVM accuracy) SAP."""
    f = _factors(6, n=3000, sizes=(5, 5))
    z = f[:, ::-1] + 0.0
    discrete = sap_score(f, z, random_state=0)
    assert 0.2 < discrete < 0.6
    assert sap_score(f, z, continuous_factors=True) > 0.99


def test_mig_discretisation_per_code_is_scale_free_and_fixed_range_is_not():
    f = _factors(7)
    z = _perfect(f)
    assert mutual_info_gap(f, 1e-3 * z) == pytest.approx(mutual_info_gap(f, z))
    fixed = mutual_info_gap(f, 1e-3 * z, bin_range=(-1.0, 1.0))
    assert fixed < 0.5  # all codes collapse into one or two bins of the fixed edges
    assert mutual_info_gap(f, z, bin_range=(-0.5, 9.5)) > 0.95  # codes span [0, 9]


def test_interventional_scores_perfect_near_one_rotation_lower():
    ds = FactorsAsObservations()

    def perfect(x):
        return np.column_stack([_perfect(x), 1e-9 * x[:, 0]])

    kw = dict(batch_size=16, n_train=300, n_eval=200, random_state=0)
    bv_p = beta_vae_score(ds, perfect, **kw)
    bv_r = beta_vae_score(ds, _rotated, **kw)
    fv_p = factor_vae_score(ds, perfect, n_variance_estimate=2000, **kw)
    fv_r = factor_vae_score(ds, _rotated, n_variance_estimate=2000, **kw)
    assert bv_p > 0.95 and fv_p > 0.95
    assert bv_r < bv_p - 0.2
    assert fv_r < fv_p - 0.2


def test_interventional_scores_accept_a_fitted_transformer():
    ds = FactorsAsObservations()
    X = ds.sample_observations_from_factors(ds.sample_factors(500, np.random.RandomState(0)),
                                            None)
    pca = PCA(n_components=3).fit(X)
    s = factor_vae_score(ds, pca, batch_size=8, n_train=30, n_eval=30,
                         n_variance_estimate=200, random_state=0)
    assert 0.0 <= s <= 1.0


# -------------------------------------------------------------------- dead latents
def test_mig_with_a_constant_factor_equals_mig_of_the_others():
    f = _factors(8)
    f3 = np.column_stack([f[:, 0], np.full(N, 2), f[:, 1:]])
    z = _partial(f, 8)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        value = mutual_info_gap(f3, z)
    assert len(caught) == 1 and "constant factor" in str(caught[0].message)
    assert np.isfinite(value) and 0 <= value <= 1
    assert value == pytest.approx(mutual_info_gap(f, z))


def test_mig_single_factor_single_code_is_finite():
    f = _factors(9)[:, :1]
    assert mutual_info_gap(f, f + 0.0) == pytest.approx(1.0, abs=1e-12)
    z = np.random.RandomState(0).normal(size=(N, 1))
    assert 0 <= mutual_info_gap(f, z) < 0.05


@pytest.mark.parametrize("name", sorted(SAMPLE_METRICS))
def test_dead_latents_change_no_sample_based_score(name):
    f = _factors(10)
    z = _partial(f, 10)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        base = SAMPLE_METRICS[name](f, z)
        dead = SAMPLE_METRICS[name](f, _with_dead(z))
    assert np.isfinite(dead) and 0 <= dead <= 1
    assert abs(dead - base) <= 0.05


def test_dead_latents_change_no_interventional_score():
    ds = FactorsAsObservations()
    mix = np.random.RandomState(1).normal(size=(3, 3))

    def rep(x):
        return x @ mix

    def rep_dead(x):
        return _with_dead(x @ mix)

    kw = dict(batch_size=16, n_train=200, n_eval=200, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for score, extra in [(beta_vae_score, {}),
                             (factor_vae_score, {"n_variance_estimate": 1000})]:
            base = score(ds, rep, **kw, **extra)
            dead = score(ds, rep_dead, **kw, **extra)
            assert np.isfinite(dead) and 0 <= dead <= 1
            assert abs(dead - base) <= 0.05, score.__name__


def test_factor_vae_zero_variance_dimension_does_not_capture_votes():
    ds = FactorsAsObservations()

    def rep(x):
        return np.column_stack([np.zeros(len(x)), _perfect(x)])

    s = factor_vae_score(ds, rep, batch_size=16, n_train=200, n_eval=200,
                         n_variance_estimate=1000, random_state=0)
    assert s > 0.95


@pytest.mark.parametrize("name", sorted(SAMPLE_METRICS))
def test_nan_codes_and_constant_factors_raise_clear_errors(name):
    f = _factors(11)
    z = _partial(f, 11)
    z[5, 1] = np.nan
    with pytest.raises(ValueError, match="codes"):
        SAMPLE_METRICS[name](f, z)
    with pytest.raises(ValueError, match="factors are constant"):
        SAMPLE_METRICS[name](np.zeros((N, 2)), _partial(f, 11))


#: disentanglement_lib's value for a fully collapsed (constant) representation
COLLAPSED_FLOOR = {"mig": 0.0, "dci_d": 0.0, "dci_c": 0.0, "sap": 0.0, "sap_continuous": 0.0,
                   "modularity": 0.0, "explicitness": 0.5, "irs": 0.0,
                   # the classifiers predict each factor's most frequent training value
                   "dci_i": float(np.mean([1 / s for s in SIZES]))}


@pytest.mark.parametrize("name", sorted(SAMPLE_METRICS))
@pytest.mark.parametrize("value", [0.0, -3.5])
def test_collapsed_codes_give_the_floor_score_with_a_warning(name, value):
    f = _factors(11)
    with pytest.warns(UserWarning, match="every code dimension is constant") as record:
        score = SAMPLE_METRICS[name](f, np.full((N, 3), value))
    assert any("floor" in str(w.message) for w in record)
    tol = 0.03 if name == "dci_i" else 0.0  # a held-out majority-class accuracy
    assert abs(score - COLLAPSED_FLOOR[name]) <= tol
    if name not in ("explicitness", "dci_i"):  # ranked below any informative code
        assert score < SAMPLE_METRICS[name](f, _partial(f, 11))


def test_interventional_scores_of_collapsed_codes_are_the_floor():
    ds = FactorsAsObservations()
    kw = dict(batch_size=4, n_train=30, n_eval=60, random_state=0)
    with pytest.warns(UserWarning, match="every code dimension is constant"):
        assert factor_vae_score(ds, lambda x: np.zeros((len(x), 2)), n_variance_estimate=50,
                                **kw) == 0.0
    with pytest.warns(UserWarning, match="every code dimension is constant"):
        floor = beta_vae_score(ds, lambda x: np.ones((len(x), 2)), **kw)
    # three factors drawn uniformly: the most frequent training one is right ~1/3 of the time
    assert abs(floor - 1 / 3) < 0.2
    assert floor < beta_vae_score(ds, lambda x: x, **kw)


def test_interventional_scores_reject_nan_codes_and_constant_factors():
    ds = FactorsAsObservations()
    kw = dict(batch_size=4, n_train=5, n_eval=5, random_state=0)
    with pytest.raises(ValueError, match="NaN"):
        beta_vae_score(ds, lambda x: np.full((len(x), 2), np.nan), **kw)
    with pytest.raises(ValueError, match="constant"):
        beta_vae_score(FactorsAsObservations((1, 1)), lambda x: x, **kw)


# ------------------------------------------------------------------------ code size
@pytest.mark.parametrize("name", sorted(SAMPLE_METRICS))
@pytest.mark.parametrize("n_codes", [5, 1])
def test_code_size_differs_from_number_of_factors(name, n_codes):
    f = _factors(12, sizes=(4, 3))
    rng = np.random.RandomState(12)
    z = np.column_stack([f + 0.1 * rng.normal(size=f.shape), rng.normal(size=(N, 3))])
    value = SAMPLE_METRICS[name](f, z[:, :n_codes])
    assert np.isfinite(value) and 0 <= value <= 1


@pytest.mark.parametrize("n_codes", [5, 1])
def test_interventional_code_size_differs_from_number_of_factors(n_codes):
    ds = FactorsAsObservations((4, 3))
    noise = np.random.RandomState(0)

    def rep(x):
        return np.column_stack([x, noise.normal(size=(len(x), 3))])[:, :n_codes]

    kw = dict(batch_size=8, n_train=60, n_eval=60, random_state=0)
    for value in [beta_vae_score(ds, rep, **kw),
                  factor_vae_score(ds, rep, n_variance_estimate=300, **kw)]:
        assert np.isfinite(value) and 0 <= value <= 1


# ----------------------------------------------------------------------------- validation
def test_invalid_parameters_raise():
    f = _factors(13)
    with pytest.raises(InvalidParameterError, match="n_bins"):
        mutual_info_gap(f, f, n_bins=1)
    with pytest.raises(ValueError, match="bin_range"):
        mutual_info_gap(f, f, bin_range=(1.0, 0.0))
    with pytest.raises(ValueError, match="same number of rows|inconsistent"):
        mutual_info_gap(f, f[:-1])
    with pytest.raises(ValueError, match="feature_importances_ nor coef_"):
        dci(f, f + 0.0, estimator=KNeighborsClassifier(), random_state=0)


def test_default_dci_uses_gradient_boosting_and_is_reproducible():
    f = _factors(14, n=150)
    z = _partial(f, 14)[:, :3]
    a = dci(f, z, random_state=0)
    b = dci(f, z, random_state=0)
    assert a == b
    ref = naive_dci(f, z, GradientBoostingClassifier(
        random_state=np.random.RandomState(0).randint(np.iinfo(np.int32).max)), 0)
    assert a["disentanglement"] == pytest.approx(ref["disentanglement"], rel=1e-9)


# ----------------------------------------------------------------------------- scorers
def test_scorer_in_cross_validate_and_grid_search_with_factor_matrix():
    f = _factors(15)
    rng = np.random.RandomState(15)
    X = np.column_stack([f @ rng.normal(size=(3, 3)), 0.01 * rng.normal(size=(N, 3))])
    res = cross_validate(PCA(n_components=3), X, f, cv=3,
                         scoring={"mig": make_disentanglement_scorer("mutual_info_gap"),
                                  "dci_c": make_disentanglement_scorer(
                                      "dci", key="completeness", estimator=FAST_TREE,
                                      random_state=0)})
    assert np.all((res["test_mig"] >= 0) & (res["test_mig"] <= 1))
    assert np.all(np.isfinite(res["test_dci_c"]))
    # the identity-on-factors candidate must beat PCA's rotation on MIG
    pipe = make_pipeline(FunctionTransformer())
    grid = GridSearchCV(pipe, {"functiontransformer__func": [None, _first_three]},
                        scoring=make_disentanglement_scorer("mutual_info_gap"), cv=3)
    grid.fit(np.column_stack([f, X]), f)
    assert grid.best_params_["functiontransformer__func"] is _first_three


def _first_three(X):
    return X[:, :3]


def test_scorer_interventional_and_errors():
    ds = FactorsAsObservations()
    X = ds.sample_observations_from_factors(ds.sample_factors(300, np.random.RandomState(0)),
                                            None)
    pipe = make_pipeline(FunctionTransformer()).fit(X)
    scorer = make_disentanglement_scorer("factor_vae_score", dataset=ds, batch_size=8,
                                         n_train=30, n_eval=30, n_variance_estimate=200,
                                         random_state=0)
    assert scorer(pipe, X, None) == pytest.approx(1.0)
    assert "factor_vae_score" in repr(scorer)
    with pytest.raises(ValueError, match="dataset"):
        make_disentanglement_scorer("beta_vae_score")
    with pytest.raises(ValueError, match="key"):
        make_disentanglement_scorer("dci", key="modularity")
    with pytest.raises(ValueError, match="key must be None"):
        make_disentanglement_scorer("mutual_info_gap", key="x")
    with pytest.raises(InvalidParameterError):
        make_disentanglement_scorer("not_a_metric")
    with pytest.raises(ValueError, match="factor matrix"):
        make_disentanglement_scorer("irs")(pipe, X, None)


# ----------------------------------------------------------------------------- continuous factors
def test_irs_bins_continuous_factors_like_the_reference_and_random_codes_score_low():
    rng = np.random.RandomState(0)
    # the adversarial cases: continuous factors, or a factor unique per sample
    assert irs(rng.randn(200, 2), rng.randn(200, 2)) < 0.7
    assert irs(np.arange(200), rng.randn(200, 3)) < 0.7
    # the reference bins every factor into 20 histogram bins: same as binning first
    f = rng.rand(2000, 2)
    z = np.column_stack([f[:, 1] + 0.05 * rng.normal(size=2000), rng.normal(size=2000)])
    assert irs(f, z) == pytest.approx(naive_irs(naive_discretize(f), z), rel=1e-9)
    assert irs(f, z, n_bins=5) == pytest.approx(naive_irs(naive_discretize(f, 5), z), rel=1e-9)
    assert irs(f, f[:, ::-1] * 3.0) > 0.9 > 0.5 > irs(f, rng.normal(size=(2000, 2)))


def test_irs_takes_discrete_factors_with_at_most_n_bins_values_as_given():
    f = _factors(4, sizes=(4, 4, 3))
    f = f * np.array([1.0, 10.0, 100.0]) ** f  # unevenly spaced values: never merged
    z = _partial(_factors(4), 4)
    assert irs(f, z) == pytest.approx(naive_irs(f, z), rel=1e-12)
    assert irs(f, z, n_bins=None) == irs(f, z)


def test_irs_rejects_factors_still_unique_per_sample():
    with pytest.raises(ValueError, match=r"factors column 0 has 2 distinct values for 2 "
                                         r"samples.*KBinsDiscretizer"):
        irs([[0, 0], [1, 1]], [[0.0, 1.0], [1.0, 0.0]])
    rng = np.random.RandomState(0)
    with pytest.raises(ValueError, match="factors column 1.*irs"):
        irs(np.column_stack([rng.randint(3, size=100), rng.randn(100)]), rng.randn(100, 2),
            n_bins=None)


@pytest.mark.parametrize("name", ["mig", "dci_d", "sap", "modularity", "explicitness"])
def test_discrete_factor_scores_reject_continuous_or_unique_factors(name):
    rng = np.random.RandomState(1)
    z = rng.normal(size=(300, 3))
    f = np.column_stack([rng.randint(3, size=300), rng.normal(size=300)])
    with pytest.raises(ValueError, match=r"factors column 1 has 300 distinct values for 300 "
                                         r"samples.*KBinsDiscretizer"):
        SAMPLE_METRICS[name](f, z)
    with pytest.raises(ValueError, match="factors column 0"):
        SAMPLE_METRICS[name](np.arange(300), z)


def test_continuous_sap_still_takes_continuous_factors():
    rng = np.random.RandomState(2)
    f = rng.normal(size=(500, 2))
    assert sap_score(f, f[:, ::-1] * 2.0, continuous_factors=True) > 0.99


@pytest.mark.parametrize("score", ["dci", "modularity"])
def test_single_factor_trivial_scores_warn(score):
    rng = np.random.RandomState(3)
    f = rng.randint(3, size=(300, 1))
    z = rng.normal(size=(300, 3))  # random codes: the trivial score is 1 all the same
    with pytest.warns(UserWarning, match="single factor"):
        if score == "dci":
            value = dci(f, z, estimator=FAST_TREE, random_state=0)["disentanglement"]
        else:
            value = modularity_explicitness(f, z, random_state=0)["modularity"]
    assert value == pytest.approx(1.0)


# ----------------------------------------------------------------------------- scorer kwargs
def test_scorer_checks_keyword_names_when_made():
    with pytest.raises(TypeError, match=r"'n_binz'.*\['n_bins', 'bin_range', 'collapse_tol'\]"):
        make_disentanglement_scorer("mutual_info_gap", n_binz=3)
    with pytest.raises(TypeError, match="scorer supplies"):
        make_disentanglement_scorer("irs", codes=np.ones((3, 2)))
    with pytest.raises(TypeError, match="'n_bins'"):
        make_disentanglement_scorer("dci", n_bins=20)
    with pytest.raises(TypeError, match="representation"):
        make_disentanglement_scorer("beta_vae_score", dataset=FactorsAsObservations(),
                                    representation=None)


def test_scorer_checks_keyword_values_when_made():
    with pytest.raises(ValueError, match="'n_bins' parameter of mutual_info_gap"):
        make_disentanglement_scorer("mutual_info_gap", n_bins=1)
    with pytest.raises(ValueError, match="'test_size' parameter of dci"):
        make_disentanglement_scorer("dci", test_size=2.0)
    with pytest.raises(ValueError, match="bin_range"):
        make_disentanglement_scorer("modularity_explicitness", bin_range=(1.0, 0.0))
    with pytest.raises(ValueError, match="classifier"):
        make_disentanglement_scorer("dci", estimator=LinearRegression())
    with pytest.raises(ValueError, match="'batch_size' parameter of factor_vae_score"):
        make_disentanglement_scorer("factor_vae_score", dataset=FactorsAsObservations(),
                                    batch_size=1)
    with pytest.raises(TypeError, match="factor_sizes"):
        make_disentanglement_scorer("beta_vae_score", dataset=_NoFactorSizes())
    # valid ones still work, and irs takes its new n_bins
    assert "n_bins=None" in repr(make_disentanglement_scorer("irs", n_bins=None))


def test_scorer_with_a_valid_keyword_scores_in_cross_validate():
    f = _factors(16, n=300)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = cross_validate(FunctionTransformer(), f + 0.0, f, cv=3,
                             scoring=make_disentanglement_scorer("mutual_info_gap", n_bins=5))
    assert np.all(res["test_score"] > 0.9)


# ----------------------------------------------------------------------------- interventional input
class _NoFactorSizes:
    def sample_factors(self, n, random_state):
        return np.zeros((n, 2), dtype=int)

    def sample_observations_from_factors(self, factors, random_state):
        return factors.astype(float)


class _OneDFactors(FactorsAsObservations):
    def sample_factors(self, n, random_state):
        return random_state.randint(3, size=n)


class _ShortObservations(FactorsAsObservations):
    def sample_observations_from_factors(self, factors, random_state):
        return factors[:1].astype(float)


_GROWING = {"calls": 0}


def _growing_width(x):
    _GROWING["calls"] += 1
    return np.tile(x, (1, 1 + _GROWING["calls"] % 2))


BAD_REPRESENTATIONS = {
    "one row": (lambda x: x.mean(axis=0, keepdims=True), ValueError,
                r"one row per observation.*returned shape \(1, 3\)"),
    "3-D": (lambda x: x[:, :, None] * np.ones(2), ValueError, r"returned shape \(\d+, 3, 2\)"),
    "None": (lambda x: None, TypeError, "returned None"),
    "strings": (lambda x: np.full(len(x), "a"), TypeError, "not a numeric array"),
    "no codes": (lambda x: np.zeros((len(x), 0)), ValueError, r"returned shape \(\d+, 0\)"),
    "width changes": (_growing_width, ValueError, "must not change between calls"),
}


@pytest.mark.parametrize("case", sorted(BAD_REPRESENTATIONS))
@pytest.mark.parametrize("score", [beta_vae_score, factor_vae_score])
def test_interventional_scores_name_malformed_representations(score, case):
    rep, error, match = BAD_REPRESENTATIONS[case]
    extra = {"n_variance_estimate": 40} if score is factor_vae_score else {}
    with pytest.raises(error, match=match):
        score(FactorsAsObservations(), rep, batch_size=4, n_train=20, n_eval=20,
              random_state=0, **extra)


@pytest.mark.parametrize("score", [beta_vae_score, factor_vae_score])
def test_interventional_scores_check_the_dataset_interface(score):
    extra = {"n_variance_estimate": 40} if score is factor_vae_score else {}
    kw = dict(batch_size=4, n_train=5, n_eval=5, random_state=0, **extra)
    with pytest.raises(TypeError, match="no factor_sizes attribute"):
        score(_NoFactorSizes(), lambda x: x, **kw)
    with pytest.raises(ValueError, match=r"sample_factors\(\d+, random_state\) must return .*"
                                         r"shape \(\d+, 3\).*returned shape \(\d+,\)"):
        score(_OneDFactors(), lambda x: x, **kw)
    with pytest.raises(ValueError, match="one row per factor vector"):
        score(_ShortObservations(), lambda x: x, **kw)
    with pytest.raises(ValueError, match=r"factor_sizes must all be >= 1"):
        score(FactorsAsObservations((3, 0)), lambda x: x, **kw)


# ----------------------------------------------------------------------------- extreme scales
@pytest.mark.parametrize("scale", [1e300, 1e-300])
@pytest.mark.parametrize("name", ["mig", "dci_d", "dci_c", "dci_i", "modularity",
                                  "explicitness", "irs", "sap_continuous"])
def test_scale_free_scores_hold_at_extreme_code_scales(name, scale):
    f = _factors(17)
    z = _with_dead(_partial(f, 17))  # the dead latents must still be dropped
    assert SAMPLE_METRICS[name](f, scale * z) == pytest.approx(
        SAMPLE_METRICS[name](f, z), rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("scale", [1e300, 1e-300])
def test_discrete_sap_is_finite_at_extreme_code_scales(scale):
    f = _factors(18)
    value = sap_score(f, scale * _partial(f, 18), random_state=0)
    assert np.isfinite(value) and 0 <= value <= 1


@pytest.mark.parametrize("scale", [1e300, 1e-300])
def test_interventional_scores_at_extreme_code_scales(scale):
    ds = FactorsAsObservations()
    kw = dict(batch_size=8, n_train=60, n_eval=40, random_state=7)
    fv = factor_vae_score(ds, lambda x: scale * _rotated(x), n_variance_estimate=300, **kw)
    assert fv == factor_vae_score(ds, _rotated, n_variance_estimate=300, **kw)
    # BetaVAE's regularised logistic regression depends on the codes' scale (as in the
    # reference), so only check that extreme codes are scored, not the value
    bv = beta_vae_score(ds, lambda x: scale * _perfect(x), **kw)
    assert np.isfinite(bv) and 0 <= bv <= 1


# ----------------------------------------------------------------------------- dci estimator
def test_dci_rejects_a_regressor_and_takes_a_linear_classifier():
    f = _factors(19, n=300)
    with pytest.raises(ValueError, match="needs a classifier.*LinearRegression, a regressor"):
        dci(f, f + 0.0, estimator=LinearRegression(), random_state=0)
    s = dci(f, _perfect(f), estimator=LogisticRegression(max_iter=500), random_state=0)
    assert s["informativeness"] > 0.9


def test_text_factors_get_a_clear_error():
    from sklearn_papers.metrics import mutual_info_gap

    factors = np.array([["0", "x"], ["1", "y"]] * 10)
    codes = np.random.RandomState(0).rand(20, 3)
    with pytest.raises(ValueError, match="factors must hold numbers; it holds 'x'"):
        mutual_info_gap(factors, codes)


def test_disentanglement_scorer_names_an_estimator_without_transform():
    rng = np.random.RandomState(0)
    X, factors = rng.rand(20, 3), rng.randint(0, 3, size=(20, 2))
    with pytest.raises(TypeError, match="LinearRegression has no transform method"):
        make_disentanglement_scorer("mutual_info_gap")(LinearRegression().fit(X, factors),
                                                       X, factors)
