"""datavet._stats against SciPy: the same p-values and ranks (the rules' verdicts and the
figures in their messages must not move when they stop importing SciPy)."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs
from scipy import stats as sp

from datavet import _stats as st

SRC = Path(__file__).resolve().parents[1] / "src"

REL = 1e-9


def _ks_d_by_searchsorted(x, y):
    """D as SciPy computes it: at every value of either sample, the two empirical CDFs."""
    x, y = np.sort(x), np.sort(y)
    both = np.concatenate([x, y])
    gaps = np.searchsorted(x, both, side="right") / len(x)
    gaps = gaps - np.searchsorted(y, both, side="right") / len(y)
    below, above = float(np.clip(-gaps.min(), 0, 1)), float(gaps.max())
    return below if below > above else above


def test_ks_d_from_one_merge_is_the_searchsorted_d_exactly():
    """_ks_d reads the CDFs off one merge of the sorted samples: the same D, to the bit, with
    ties within and across the samples, infinities, and constant samples."""
    rng = np.random.default_rng(7)
    for k in range(400):
        n1, n2 = int(rng.integers(1, 300)), int(rng.integers(1, 300))
        if k % 4 == 0:
            x, y = rng.normal(size=n1), rng.normal(rng.normal(), 1, n2)
        elif k % 4 == 1:
            x, y = rng.integers(0, 5, n1).astype(float), rng.integers(0, 6, n2).astype(float)
        elif k % 4 == 2:
            x, y = rng.normal(size=n1).round(1), np.r_[rng.normal(size=n2).round(1), np.inf]
        else:
            x, y = np.full(n1, 3.0), np.r_[np.full(n2, 3.0), -np.inf, -0.0]
        d, m1, m2 = st._ks_d(x, y)
        assert (d, m1, m2) == (_ks_d_by_searchsorted(x, y), len(x), len(y))


def test_rankdata_is_scipys_exactly_with_many_ties():
    """Ranks come from NumPy's default (unstable) sort: tied values must still each get their
    group's average rank, exactly as SciPy gives it."""
    rng = np.random.default_rng(3)
    for k in range(60):
        n = int(rng.integers(1, 3000))
        if k % 2:
            x = rng.integers(0, int(rng.integers(1, 50)), n).astype(float)
        else:
            x = rng.normal(size=n).round(int(rng.integers(0, 3)))
        assert np.array_equal(st.rankdata(x), sp.rankdata(x))
        m = x[: n - n % 3].reshape(-1, 3)
        assert np.array_equal(st.rankdata(m, axis=0), sp.rankdata(m, axis=0))


def test_rankdata_and_spearman():
    rng = np.random.default_rng(0)
    for x in (rng.normal(size=50), rng.integers(0, 5, 200).astype(float), np.array([3.0])):
        assert np.allclose(st.rankdata(x), sp.rankdata(x))
    m = rng.integers(0, 4, (30, 3)).astype(float)
    assert np.allclose(st.rankdata(m, axis=0), sp.rankdata(m, axis=0))
    a, b = rng.normal(size=80), rng.integers(0, 6, 80)
    assert st.spearmanr(a, b).statistic == pytest.approx(sp.spearmanr(a, b).statistic, rel=REL)
    assert np.isnan(st.spearmanr(a, np.ones(80)).statistic)


@pytest.mark.parametrize(
    ("k", "n"), [(0, 10), (5, 10), (9, 10), (60, 100), (700, 1000), (5200, 10_000), (3, 3)]
)
def test_binomtest(k, n):
    for alt in ("greater", "less"):
        want = sp.binomtest(k, n, 0.5, alternative=alt).pvalue
        assert st.binomtest(k, n, 0.5, alternative=alt).pvalue == pytest.approx(want, rel=REL)


@pytest.mark.parametrize("df", [1, 2.5, 7, 30, 1000, 1e6])
def test_t_chi2_norm_tails(df):
    # a million degrees of freedom: log-gamma of 5e5 carries ~1e-9 of rounding
    rel = REL if df < 1e5 else 1e-8
    for x in (0.0, 0.3, 1.0, 2.5, 6.0, 15.0, -1.7):
        assert st.t.sf(x, df) == pytest.approx(sp.t.sf(x, df), rel=rel, abs=1e-300)
    for x in (0.0, 0.5, df / 2, df, 2 * df + 10, 5 * df + 50):
        assert st.chi2.sf(x, df) == pytest.approx(sp.chi2.sf(x, df), rel=REL, abs=1e-300)
    z = np.array([-3.0, 0.0, 1.0, 4.0, 9.0])
    assert np.allclose(st.norm.sf(z), sp.norm.sf(z), rtol=REL, atol=0)


def test_chi2_contingency():
    rng = np.random.default_rng(1)
    for shape in ((2, 2), (2, 5), (8, 3), (1, 4)):
        table = rng.integers(1, 50, shape)
        ours, theirs = st.chi2_contingency(table), sp.chi2_contingency(table, correction=False)
        assert ours[0] == pytest.approx(theirs[0], rel=REL, abs=1e-12)
        assert ours[1] == pytest.approx(theirs[1], rel=REL)
        assert ours[2] == theirs[2] and np.allclose(ours[3], theirs[3])
    with pytest.raises(ValueError):
        st.chi2_contingency([[0, 0], [1, 2]])


def test_hypergeom_tails():
    total, k = 400, 190
    draws = np.arange(1, 400)
    x = np.minimum(draws, k) // 2 + np.arange(399) % 7
    x = np.minimum(x, np.minimum(draws, k))
    for ours, theirs in (
        (st.hypergeom.cdf(x, total, k, draws), sp.hypergeom.cdf(x, total, k, draws)),
        (st.hypergeom.sf(x - 1, total, k, draws), sp.hypergeom.sf(x - 1, total, k, draws)),
    ):
        assert np.allclose(ours, theirs, rtol=1e-9, atol=1e-300)
    # far tails: the same to 1e-9 relative, not rounded to 0 or 1
    assert st.hypergeom.cdf([0], 400, 200, [100])[0] == pytest.approx(
        sp.hypergeom.cdf(0, 400, 200, 100), rel=1e-9
    )


@pytest.mark.parametrize(
    ("total", "k"),
    [(2_000_000, 1_000_000), (1_500_000, 30_000), (1_200_000, 1_190_000), (5_000, 7)],
)
def test_hypergeom_tails_of_a_large_population(total, k):
    """Large populations (no SciPy): the same as SciPy's to 1e-9 in the bulk and far into both
    tails (SciPy's own figures carry a few 1e-10 of error at two million)."""
    rng = np.random.default_rng(total + k)
    draws = rng.integers(0, total + 1, 400)
    lo, hi = np.maximum(0, draws - (total - k)), np.minimum(k, draws)
    mean = draws * k / total
    sd = np.sqrt(draws * (k / total) * (1 - k / total) * (total - draws) / max(total - 1, 1))
    spread = (lo + (hi - lo) * rng.uniform(size=400)).astype(np.int64)  # anywhere: 1e-300 tails
    near = np.clip(np.round(mean + rng.normal(0, 4, 400) * sd), lo - 1, hi + 1).astype(np.int64)
    for x in (spread, near):
        ours_cdf = st.hypergeom.cdf(x, total, k, draws)
        ours_sf = st.hypergeom.sf(x, total, k, draws)
        assert np.allclose(ours_cdf, sp.hypergeom.cdf(x, total, k, draws), rtol=REL, atol=1e-300)
        assert np.allclose(ours_sf, sp.hypergeom.sf(x, total, k, draws), rtol=REL, atol=1e-300)
    big = 2_000_000
    assert st.hypergeom.cdf([999_000], big, big // 2, [big // 2])[0] == pytest.approx(
        sp.hypergeom.cdf(999_000, big, big // 2, big // 2), rel=REL
    )


def test_hypergeom_of_a_large_population_imports_no_scipy():
    """The positional label-drift scan of a table of over a million rows (its hypergeometric
    tails) in a fresh interpreter: SciPy never loads."""
    code = (
        "import sys\n"
        "import numpy as np\n"
        "from datavet import _stats as st\n"
        "x, draws = np.array([500, 600_000]), np.array([1_000, 1_200_000])\n"
        "st.hypergeom.cdf(x, 2_000_000, 1_000_000, draws)\n"
        "st.hypergeom.sf(x - 1, 2_000_000, 1_000_000, draws)\n"
        "from datavet.auditors.positional_label_drift import boundary_scan\n"
        "table = np.random.default_rng(0).multinomial(12_000, [0.5, 0.5], size=100)\n"
        "assert boundary_scan(table) is not None\n"
        "assert not [m for m in sys.modules if m.startswith('scipy')]\n"
        "print('clean')\n"
    )
    assert _fresh(code) == "clean"


# -- the two-sample Kolmogorov-Smirnov test ------------------------------------------------


def ks_regime(n1: int, n2: int, d: float) -> str:
    """Which of SciPy's methods gives ks_2samp's p-value for these sizes and this D (as
    ``ks_2samp`` and ``_kolmogn`` choose: the tests below check that each one is reached)."""
    if max(n1, n2) <= st.KS_EXACT_MAX_N:
        return "exact-square" if n1 == n2 else "exact-band"
    m, k = sorted([n1, n2], reverse=True)
    return kstwo_regime(round(m * k / (m + k)), d)


def kstwo_regime(n: int, x: float) -> str:
    t = n * x
    if x <= 0.5 / n:
        return "below-support"
    if x >= 1:
        return "x=1"
    if t <= 1:
        return "ruben-gambino-low" + ("-small-n" if n <= 140 else "")
    if t >= n - 1:
        return "ruben-gambino-high"
    if x >= 0.5:
        return "smirnov-x>=0.5"
    nxsquared = t * x
    if n <= 140:
        if nxsquared <= 0.754693:
            return "durbin-small-n"
        return "pomeranz" if nxsquared <= 4 else "smirnov-small-n"
    if nxsquared >= 370:
        return "zero"
    if nxsquared >= 2.2:
        return "smirnov" + ("-asymptotic" if n > st.SMIRNOV_MAX_COMPUTE_N else "")
    return "durbin" if n <= 100_000 and n * x**1.5 <= 1.4 else "pelz-good"


def _ks_warnings(caught) -> list[str]:
    return [str(w.message) for w in caught if "ks_2samp" in str(w.message)]


def assert_same_ks(x, y):
    """Ours and SciPy's: the statistic exactly, the p-value to 1e-9 relative (1e-300 absolute
    where it underflows), and the same warning when the exact count fails."""
    with warnings.catch_warnings(record=True) as ours_warned:
        warnings.simplefilter("always")
        ours = st.ks_2samp(x, y)
    with warnings.catch_warnings(record=True) as theirs_warned:
        warnings.simplefilter("always")
        theirs = sp.ks_2samp(x, y)
    assert _ks_warnings(ours_warned) == _ks_warnings(theirs_warned)
    if np.isnan(theirs.statistic):
        assert np.isnan(ours.statistic) and np.isnan(ours.pvalue)
        assert np.isnan(st.ks_statistic(x, y))
        return ours
    assert ours.statistic == theirs.statistic == st.ks_statistic(x, y)
    assert ours.pvalue == pytest.approx(float(theirs.pvalue), rel=REL, abs=1e-300)
    return ours


def _ks_pair(n1: int, n2: int, shift: float) -> tuple[np.ndarray, np.ndarray]:
    """Two evenly spread samples, the second moved by ``shift``: D is about ``shift``."""
    return np.linspace(0, 1, n1), np.linspace(0, 1, n2) + shift


def _exact_cases() -> dict[str, tuple[np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(7)
    ties = rng.integers(0, 6, 400).astype(float)
    return {
        "equal sizes": (rng.normal(size=50), rng.normal(0.5, size=50)),
        "unequal sizes, gcd 15": (rng.normal(size=60), rng.normal(0.3, size=45)),
        "coprime sizes": (rng.normal(size=97), rng.normal(0.2, size=89)),
        "300 vs 200": (rng.normal(size=300), rng.normal(0.1, size=200)),
        "ties": (ties[:230], ties[230:] + (ties[230:] > 3)),
        "ties, equal sizes": (ties[:200], np.minimum(ties[200:] + 1, 5)),
        "identical samples (D = 0)": (ties[:100], ties[:100].copy()),
        "disjoint (D = 1)": (np.arange(40.0), np.arange(40.0) + 100),
        "tiny p": (rng.normal(size=400), rng.normal(3, size=300)),
        "one value each": (np.array([1.0]), np.array([2.0])),
        "10,000 vs 2": (np.linspace(0, 1, 10_000), np.array([0.2, 0.9])),
        "10,000 vs 9,999": (np.linspace(0, 1, 10_000), np.linspace(0, 1, 9_999) + 0.02),
    }


@pytest.mark.parametrize("case", list(_exact_cases()))
def test_ks_2samp_exact(case):
    x, y = _exact_cases()[case]
    assert ks_regime(len(x), len(y), 0.5).startswith("exact")
    assert_same_ks(x, y)


def test_ks_2samp_exact_count_that_rounds_past_one_falls_back_with_scipys_warning():
    # two samples of 5, D = 1/5: the reflection sum comes to 1 + 2e-16
    x, y = np.arange(1.0, 6.0), np.arange(1.0, 6.0) + 0.5
    with pytest.warns(RuntimeWarning, match="Exact calculation unsuccessful"):
        ours = st.ks_2samp(x, y)
    with pytest.warns(RuntimeWarning, match="Exact calculation unsuccessful"):
        theirs = sp.ks_2samp(x, y)
    assert (ours.statistic, ours.pvalue) == (theirs.statistic, pytest.approx(theirs.pvalue))
    assert ours.pvalue == pytest.approx(st.kstwo_sf(0.2, 2), rel=REL)


# (n1, n2, shift): two linspace samples whose D lands in each of _kolmogn's methods
ASYMP_CASES = {
    "below-support": (12_000, 12_000, 0.0),
    "ruben-gambino-low-small-n": (10_001, 100, 0.0),
    "ruben-gambino-low": (20_000, 12_000, 0.0),
    "ruben-gambino-high": (10_001, 50, 0.99),
    "x=1": (10_001, 50, 3.0),
    "smirnov-x>=0.5": (10_001, 50, 0.7),
    "durbin-small-n": (10_001, 50, 0.08),
    "pomeranz": (10_001, 50, 0.2),
    "smirnov-small-n": (10_001, 50, 0.4),
    "zero": (10_001, 5_000, 0.35),
    "smirnov": (10_001, 5_000, 0.1),
    "durbin": (10_001, 5_000, 0.002),
    "pelz-good": (10_001, 5_000, 0.01),
    "pelz-good, n > 100,000": (300_000, 300_000, 0.003),
}


@pytest.mark.parametrize("regime", list(ASYMP_CASES))
def test_ks_2samp_asymptotic_in_each_regime(regime):
    n1, n2, shift = ASYMP_CASES[regime]
    x, y = _ks_pair(n1, n2, shift)
    ours = assert_same_ks(x, y)
    assert ks_regime(n1, n2, ours.statistic) == regime.split(",")[0]


# (n, x) for the one-sample distribution itself, past what a test builds samples for
KSTWO_CASES = [
    (1, 0.7, "ruben-gambino-low-small-n"),
    (3, 0.8, "ruben-gambino-high"),
    (140, 0.05, "durbin-small-n"),
    (140, 0.1, "pomeranz"),
    (140, 0.3, "smirnov-small-n"),
    (141, 0.005, "ruben-gambino-low"),
    (141, 0.6, "smirnov-x>=0.5"),
    (5_000, 0.3, "zero"),
    (100_000, 0.005, "smirnov"),
    (100_000, 0.0005, "durbin"),
    (100_001, 0.0005, "pelz-good"),
    (2_000_000, 0.0015, "smirnov-asymptotic"),
    (2_000_000, 0.0005, "pelz-good"),
]


@pytest.mark.parametrize(("n", "x", "regime"), KSTWO_CASES)
def test_kstwo_sf_in_each_regime(n, x, regime):
    assert kstwo_regime(n, x) == regime
    assert st.kstwo_sf(x, n) == pytest.approx(sp.kstwo.sf(x, n), rel=REL, abs=1e-300)


@pytest.mark.parametrize("n", [2, 3, 10, 141, 1_000, 25_000, 200_000, 1_000_000, 1_000_001])
def test_smirnov(n):
    from scipy import special

    if 200_000 <= n <= 1_000_000:  # SciPy's sum takes ~1 s a call here: a few points
        xs = np.array([1e-6, 0.001, 0.0015, 0.6]) if n < 1_000_000 else np.array([0.0015])
    else:
        near = np.linspace(0, min(1.0, 4 / np.sqrt(n)), 21)  # where the tail is not yet 0
        xs = np.r_[np.linspace(0, 1, 41), near, 1 / n, 1 - 1 / n]
    for x in xs:
        want = special.smirnov(n, x)
        assert st.smirnov(n, float(x)) == pytest.approx(want, rel=REL, abs=1e-300), x


def test_ks_2samp_nan_and_empty_give_nan_as_scipy():
    for x, y in (([1.0, np.nan, 2.0], [1.0, 2.0, 3.0]), ([1.0, 2.0], [np.nan])):
        ours = st.ks_2samp(x, y)
        assert np.isnan(ours.statistic) and np.isnan(ours.pvalue)
        assert np.isnan(sp.ks_2samp(x, y).pvalue)
    ours = st.ks_2samp([1.0, 2.0], [])
    assert np.isnan(ours.statistic) and np.isnan(ours.pvalue)


@settings(max_examples=150, deadline=None)
@given(
    x=hs.lists(hs.integers(0, 12), min_size=1, max_size=150),
    y=hs.lists(hs.integers(0, 12), min_size=1, max_size=150),
    spread=hs.booleans(),
)
def test_ks_2samp_exact_matches_scipy(x, y, spread):
    """Small samples with ties (or, spread, without): the exact method, equal or unequal
    sizes, every D."""
    a, b = np.array(x, float), np.array(y, float)
    if spread:
        a, b = a + np.arange(len(a)) / 1e3, b + np.arange(len(b)) / 1e3
    assert_same_ks(a, b)


@settings(max_examples=60, deadline=None)
@given(n=hs.integers(1, 400), data=hs.data())
def test_ks_2samp_exact_equal_sizes_matches_scipy(n, data):
    seed = data.draw(hs.integers(0, 2**32 - 1))
    shift = data.draw(hs.floats(0, 2))
    rng = np.random.default_rng(seed)
    assert_same_ks(rng.normal(size=n), np.round(rng.normal(shift, size=n), 1))


@settings(max_examples=40, deadline=None)
@given(
    n1=hs.integers(10_001, 14_000),
    n2=hs.integers(1, 3_000),
    shift=hs.floats(0, 1.5),
    seed=hs.integers(0, 2**32 - 1),
)
def test_ks_2samp_asymptotic_matches_scipy(n1, n2, shift, seed):
    rng = np.random.default_rng(seed)
    assert_same_ks(rng.normal(size=n1), rng.normal(shift, size=n2))


@settings(max_examples=200, deadline=None)
@given(
    n=hs.one_of(hs.integers(1, 3_000), hs.sampled_from([50_000, 100_000, 100_001, 2_000_000])),
    x=hs.floats(0, 1),
)
def test_kstwo_sf_matches_scipy(n, x):
    assert st.kstwo_sf(x, n) == pytest.approx(sp.kstwo.sf(x, n), rel=REL, abs=1e-300)


def test_ks_2samp_imports_no_scipy_in_any_regime(tmp_path):
    """Every method ks_2samp can take, run in a fresh interpreter: SciPy never loads."""
    samples = {f"exact {k}": v for k, v in _exact_cases().items()}
    samples.update({k: _ks_pair(*v) for k, v in ASYMP_CASES.items()})
    samples["fallback"] = (np.arange(1.0, 6.0), np.arange(1.0, 6.0) + 0.5)
    arrays = {}
    for i, (x, y) in enumerate(samples.values()):
        arrays[f"x{i}"], arrays[f"y{i}"] = x, y
    np.savez(tmp_path / "cases.npz", **arrays)
    code = (
        "import sys, warnings\n"
        "import numpy as np\n"
        "from datavet import _stats as st\n"
        f"cases = np.load({str(tmp_path / 'cases.npz')!r})\n"
        f"for i in range({len(samples)}):\n"
        "    with warnings.catch_warnings():\n"
        "        warnings.simplefilter('ignore')\n"
        "        st.ks_2samp(cases[f'x{i}'], cases[f'y{i}'])\n"
        "    assert not [m for m in sys.modules if m.startswith('scipy')], i\n"
        f"for n, x, _ in {KSTWO_CASES!r}:\n"
        "    st.kstwo_sf(x, n)\n"
        "    assert not [m for m in sys.modules if m.startswith('scipy')], (n, x)\n"
        "print('clean')\n"
    )
    assert _fresh(code) == "clean"


def _fresh(code: str) -> str:
    """What ``code`` prints in a fresh interpreter (this one has SciPy loaded)."""
    path = os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")])
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": path},
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_ks_2samp_warn_false_keeps_the_fallback_quiet():
    x, y = np.arange(1.0, 6.0), np.arange(1.0, 6.0) + 0.5
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        quiet = st.ks_2samp(x, y, warn=False)
    with pytest.warns(RuntimeWarning):
        loud = st.ks_2samp(x, y)
    assert (quiet.statistic, quiet.pvalue) == (loud.statistic, loud.pvalue)
