"""The few SciPy statistics the rules use, in NumPy and ``math``, without importing SciPy.

``import scipy.stats`` costs about 0.7 s (more than a whole audit of a small file), while the
rules on a small table need a rank transform, a few tail probabilities and one exact
hypergeometric test. These functions take SciPy's arguments and give its results (the tests
compare them with SciPy's to 1e-9 relative); the hypergeometric tails fall back on SciPy
when the exact sum would be large.

- ``rankdata`` (average ranks), ``spearmanr`` (``.statistic`` only);
- ``binomtest`` (``.pvalue``), ``chi2_contingency`` (no continuity correction),
  ``t.sf``, ``norm.sf``, ``chi2.sf``;
- ``hypergeom.cdf`` / ``hypergeom.sf`` with scalar population and successes.
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np

_TINY = 1e-300
_EPS = 1e-16
_MAX_TERMS = 100_000


# -- ranks ---------------------------------------------------------------------------------


def _rank1(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x)
    n = len(x)
    if n == 0:
        return np.empty(0)
    if x.dtype.kind == "f" and np.isnan(x).any():
        return np.full(n, np.nan)  # SciPy's default (nan_policy="propagate")
    order = np.argsort(x, kind="mergesort")
    xs = x[order]
    starts = np.r_[True, xs[1:] != xs[:-1]]
    group = np.cumsum(starts) - 1
    bounds = np.r_[np.flatnonzero(starts), n]
    average = 0.5 * (bounds[:-1] + bounds[1:] - 1) + 1.0
    out = np.empty(n)
    out[order] = average[group]
    return out


def rankdata(a, axis: int | None = None) -> np.ndarray:
    """Average ranks (1-based; ties share the mean of their ranks), as ``scipy.stats.rankdata``."""
    a = np.asarray(a)
    if axis is None:
        return _rank1(a.ravel())
    return np.apply_along_axis(_rank1, axis, a)


def spearmanr(a, b) -> SimpleNamespace:
    """Spearman's rank correlation of two 1-D samples (``.statistic``; NaN when either is
    constant)."""
    ra, rb = _rank1(np.asarray(a).ravel()), _rank1(np.asarray(b).ravel())
    ra, rb = ra - ra.mean(), rb - rb.mean()
    denom = math.sqrt(float(ra @ ra) * float(rb @ rb))
    rho = float(ra @ rb) / denom if denom > 0 else math.nan
    rho = max(-1.0, min(1.0, rho)) if rho == rho else rho
    return SimpleNamespace(statistic=rho, correlation=rho)


# -- special functions ---------------------------------------------------------------------


def _gamma_series(a: float, x: float) -> float:
    """Regularised lower incomplete gamma P(a, x) by its series (x < a + 1)."""
    term = total = 1.0 / a
    ap = a
    for _ in range(_MAX_TERMS):
        ap += 1.0
        term *= x / ap
        total += term
        if abs(term) < abs(total) * _EPS:
            break
    return total * math.exp(-x + a * math.log(x) - math.lgamma(a))


def _gamma_fraction(a: float, x: float) -> float:
    """Regularised upper incomplete gamma Q(a, x) by its continued fraction (x >= a + 1)."""
    b = x + 1.0 - a
    c = 1.0 / _TINY
    d = 1.0 / b
    h = d
    for i in range(1, _MAX_TERMS):
        an = -i * (i - a)
        b += 2.0
        d = an * d + b
        d = _TINY if abs(d) < _TINY else d
        c = b + an / c
        c = _TINY if abs(c) < _TINY else c
        d = 1.0 / d
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < _EPS:
            break
    return math.exp(-x + a * math.log(x) - math.lgamma(a)) * h


def gammaincc(a: float, x: float) -> float:
    """Regularised upper incomplete gamma function Q(a, x)."""
    if x <= 0:
        return 1.0
    if math.isinf(x):
        return 0.0
    if x < a + 1.0:
        return max(0.0, 1.0 - _gamma_series(a, x))
    return _gamma_fraction(a, x)


def _beta_fraction(a: float, b: float, x: float) -> float:
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c = 1.0
    d = 1.0 - qab * x / qap
    d = _TINY if abs(d) < _TINY else d
    d = 1.0 / d
    h = d
    for m in range(1, _MAX_TERMS):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = _TINY if abs(d) < _TINY else d
        c = 1.0 + aa / c
        c = _TINY if abs(c) < _TINY else c
        d = 1.0 / d
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = _TINY if abs(d) < _TINY else d
        c = 1.0 + aa / c
        c = _TINY if abs(c) < _TINY else c
        d = 1.0 / d
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < _EPS:
            break
    return h


def betainc(a: float, b: float, x: float) -> float:
    """Regularised incomplete beta function I_x(a, b)."""
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    log_front = (
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(log_front) * _beta_fraction(a, b, x) / a
    return max(0.0, 1.0 - math.exp(log_front) * _beta_fraction(b, a, 1.0 - x) / b)


def _betaincc(a: float, b: float, x: float) -> float:
    """1 - I_x(a, b), computed without cancellation in the upper tail."""
    return betainc(b, a, 1.0 - x)


# -- distributions -------------------------------------------------------------------------


class _Norm:
    @staticmethod
    def sf(z):
        z = np.asarray(z, dtype=float)
        out = 0.5 * np.vectorize(math.erfc, otypes=[float])(z / math.sqrt(2.0))
        return float(out) if out.ndim == 0 else out


class _StudentT:
    @staticmethod
    def sf(t: float, df: float) -> float:
        t, df = float(t), float(df)
        if math.isnan(t) or math.isnan(df):
            return math.nan
        if math.isinf(t):
            return 0.0 if t > 0 else 1.0
        tail = 0.5 * betainc(df / 2.0, 0.5, df / (df + t * t))
        return tail if t > 0 else 1.0 - tail


class _Chi2:
    @staticmethod
    def sf(x: float, dof: float) -> float:
        return gammaincc(dof / 2.0, float(x) / 2.0)


norm = _Norm()
t = _StudentT()
chi2 = _Chi2()


EXACT_SIGN_TEST = 20_000  # up to this many trials, p = 1/2: integer arithmetic


def _comb_sum(n: int, lo: int, hi: int) -> int:
    """sum(comb(n, i) for i in lo..hi), one binomial coefficient from the last (the shorter
    side summed: the whole row sums to 2**n)."""
    if hi - lo + 1 > (n + 1) // 2 + 1:
        rest = (_comb_sum(n, 0, lo - 1) if lo > 0 else 0) + (
            _comb_sum(n, hi + 1, n) if hi < n else 0
        )
        return 2**n - rest
    c = math.comb(n, lo)
    total = 0
    for i in range(lo, hi + 1):
        total += c
        c = c * (n - i) // (i + 1)
    return total


def binomtest(k: int, n: int, p: float = 0.5, alternative: str = "greater") -> SimpleNamespace:
    """The exact binomial test's p-value (``alternative`` "greater" or "less")."""
    if p == 0.5 and 0 <= k <= n <= EXACT_SIGN_TEST:  # the sign test: an exact sum, rounded once
        lo, hi = (k, n) if alternative == "greater" else (0, k)
        value = _comb_sum(n, lo, hi) / 2**n
        return SimpleNamespace(pvalue=min(1.0, value), statistic=k / n if n else math.nan)
    if alternative == "greater":  # P(X >= k) = I_p(k, n - k + 1)
        value = 1.0 if k <= 0 else betainc(k, n - k + 1, p)
    elif alternative == "less":  # P(X <= k) = I_{1-p}(n - k, k + 1)
        value = 1.0 if k >= n else betainc(n - k, k + 1, 1.0 - p)
    else:
        raise ValueError(f"alternative {alternative!r} is not supported here")
    return SimpleNamespace(pvalue=min(1.0, value), statistic=k / n if n else math.nan)


def chi2_contingency(observed, correction: bool = False):
    """Pearson's chi-squared test of independence on a 2-D table: (statistic, p-value, dof,
    expected), as ``scipy.stats.chi2_contingency(observed, correction=False)``."""
    if correction:
        raise ValueError("only correction=False is supported here")
    observed = np.asarray(observed, dtype=float)
    if observed.ndim != 2:
        raise ValueError("a 2-D table is expected")
    total = observed.sum()
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0)) / total
    if np.any(expected == 0):
        raise ValueError(
            "The internally computed table of expected frequencies has a zero element at "
            f"{tuple(np.argwhere(expected == 0)[0])}."
        )
    dof = expected.size - sum(expected.shape) + expected.ndim - 1
    if dof == 0:
        return 0.0, 1.0, 0, expected
    stat = float(((observed - expected) ** 2 / expected).sum())
    return stat, chi2.sf(stat, dof), dof, expected


# -- the hypergeometric distribution -------------------------------------------------------

MAX_HYPERGEOM_CELLS = 4_000_000  # queries x support summed exactly; past it, SciPy's


def _log_factorials(m: int) -> np.ndarray:
    return np.array([math.lgamma(i + 1.0) for i in range(m + 1)])


class _Hypergeom:
    """``scipy.stats.hypergeom`` for a population of ``M`` with ``n`` successes, ``N`` drawn
    (``M`` and ``n`` scalars; ``x`` and ``N`` arrays)."""

    def _tail(self, x, M, n, N, lower: bool) -> np.ndarray:
        x = np.asarray(x, dtype=np.int64)
        N = np.broadcast_to(np.asarray(N, dtype=np.int64), x.shape)
        M, n = int(M), int(n)
        support = min(n, int(N.max(initial=0))) + 1
        if x.size * support > MAX_HYPERGEOM_CELLS or M > 1_000_000:
            from scipy import stats

            return stats.hypergeom.cdf(x, M, n, N) if lower else stats.hypergeom.sf(x, M, n, N)
        lf = _log_factorials(M)
        flat_x, flat_n = x.ravel(), N.ravel()
        out = np.empty(flat_x.size)
        i = np.arange(support)
        chunk = max(1, MAX_HYPERGEOM_CELLS // (4 * support))
        for start in range(0, flat_x.size, chunk):
            xs, ns = flat_x[start : start + chunk, None], flat_n[start : start + chunk, None]
            lo, hi = np.maximum(0, ns - (M - n)), np.minimum(n, ns)
            valid = (i >= lo) & (i <= hi)
            ii = np.where(valid, i, lo)
            logp = (
                lf[n]
                - lf[ii]
                - lf[n - ii]
                + lf[M - n]
                - lf[ns - ii]
                - lf[M - n - ns + ii]
                - (lf[M] - lf[ns] - lf[M - ns])
            )
            take = valid & ((i <= xs) if lower else (i > xs))
            out[start : start + chunk] = np.where(take, np.exp(logp), 0.0).sum(axis=1)
        return np.minimum(out, 1.0).reshape(x.shape)

    def cdf(self, x, M, n, N):
        """P(X <= x)."""
        return self._tail(x, M, n, N, lower=True)

    def sf(self, x, M, n, N):
        """P(X > x)."""
        return self._tail(x, M, n, N, lower=False)


hypergeom = _Hypergeom()
