"""datavet._stats against SciPy: the same p-values and ranks (the rules' verdicts and the
figures in their messages must not move when they stop importing SciPy)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sp

from datavet import _stats as st

REL = 1e-9


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
