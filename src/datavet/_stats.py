"""The few SciPy statistics the rules use, in NumPy and ``math``, without importing SciPy.

``import scipy.stats`` costs about 0.7 s (more than a whole audit of a small file), while the
rules on a small table need a rank transform, a few tail probabilities, one exact
hypergeometric test and the two-sample Kolmogorov-Smirnov test. These functions take SciPy's
arguments and give its results (the tests compare them with SciPy's to 1e-9 relative); the
hypergeometric tails are exact at any size (closer than SciPy's own past a population of about
100,000).

- ``rankdata`` (average ranks), ``spearmanr`` (``.statistic`` only);
- ``binomtest`` (``.pvalue``), ``chi2_contingency`` (no continuity correction),
  ``t.sf``, ``norm.sf``, ``chi2.sf``;
- ``hypergeom.cdf`` / ``.sf`` / ``.tails`` (both at once) with scalar population and successes;
- ``ks_2samp`` (two-sided, method="auto"; ported from SciPy), ``ks_statistic`` (its D
  alone) and the distributions it needs, ``smirnov`` (``scipy.special.smirnov``) and
  ``kstwo_sf`` (``scipy.stats.kstwo.sf``).
"""

from __future__ import annotations

import math
import warnings
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
    # any sort: tied values all get their group's average rank, whatever order they sort in
    # (NumPy's default sort is about 6x a stable one on 50,000 floats)
    order = np.argsort(x)
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
#
# P(X = i) = C(n, i) C(M - n, N - i) / C(M, N): M rows, n of them in a class, N drawn.
#
# One probability: Loader's saddle-point form, as R's dhyper and Boost compute it. With p = N/M,
# P(X = i) = b(i; n, p) b(N - i; M - n, p) / b(N; M, p) (b the binomial pmf; the powers of p and
# 1 - p cancel for any p), and
#     log b(x; k, p) = S(x, k) - bd0(x, kp) - bd0(k - x, k(1 - p)),
#     S(x, k) = stirlerr(k) - stirlerr(x) - stirlerr(k - x) - log(2 pi x (k - x) / k) / 2,
#     bd0(x, m) = x log(x / m) + m - x >= 0,
# stirlerr(k) = log k! - (k + 1/2) log k + k - log sqrt(2 pi) (a table, then its series). No
# term of size log M! is subtracted from another, so the error of a log-probability is a few
# ulps of its own size, whatever M. The one delicate input is the deviation x - kp: rounding kp
# to a double would move bd0 by (kp - x) eps, 1e-11 at M = 2e8. All four deviations here are
# +-(i - nN/M), taken exactly from the integers: i - floor(nN/M) - (nN mod M)/M.
#
# A tail: the pmf is log-concave. r(i) = P(X = i - 1) / P(X = i)
#     = i (M - n - N + i) / ((n - i + 1)(N - i + 1))
# grows with i over the support (numerator up, denominator down) and is <= 1 exactly when
# i <= mode = floor((n + 1)(N + 1) / (M + 2)). So from an anchor a <= mode the terms
# P(X = a - k) fall as k grows, each step by a ratio no larger than the one before. If a window
# of L terms ends at a term t, the next ratio being r < 1, everything beyond it sums to at most
# t (r + r^2 + ...) = t r / (1 - r), the later ratios being smaller still. That bound is
# computed for every query, and a window is widened until it is below _TAIL_DROP (1e-20) of the
# anchor term, the largest: 1e4 times below the rounding of the sum, so the sum is exact to
# rounding. The first width is the normal shape's (sigma^2 = N (n/M)(1 - n/M)(M - N)/(M - 1): a
# term k below an anchor d below the mean is about exp(-(k^2 + 2kd) / (2 sigma^2)) of it), at
# most ~10 sigma; a skewed tail that needs more is widened by a quarter at a time. The cost is
# queries x (a few tens of sigma), never queries x support.
# P(X <= x) is summed down from x when x <= mode, else it is 1 - P(X >= x + 1), with P(X >= x)
# summed up from x as P(Y <= n - x) of Y = n - X (the class rows left undrawn: hypergeometric
# with M - N drawn). The sum computed is never the one near 1, and it gives P(X >= x) as well.
# Within a window the terms are running products of r over blocks of _BLOCK cells, each block
# started from its own saddle-point value: at most ~2 ulps a cell, 1.4e-14 at the block's end.

_SFERR = np.array(
    [
        0.0,  # unused
        0.08106146679532725821967,
        0.04134069595540929409382,
        0.02767792568499833914879,
        0.02079067210376509311152,
        0.01664469118982119216319,
        0.01387612882307074799875,
        0.01189670994589177009506,
        0.01041126526197209649748,
        0.009255462182712732917729,
        0.008330563433362871256469,
        0.007573675487951840794972,
        0.006942840107209529865664,
        0.00640899418800420706844,
        0.005951370112758847735624,
        0.005554733551962801371039,
    ]
)  # stirlerr(k), k = 0..15
_S0, _S1, _S2, _S3, _S4 = 1 / 12, 1 / 360, 1 / 1260, 1 / 1680, 1 / 1188
_2PI = 2 * math.pi
_INT64_EXACT = 3_000_000_000  # up to this M, products of two counts (+1) fit an int64
_BLOCK = 64  # cells per running product
_CELLS = 1 << 18  # cells of a window chunk (~2 MB an array)
_BATCH_BLOCKS = 1 << 16  # blocks listed at once (~0.5 MB an array)
_TAIL_DROP = 1e-20  # what a window may leave out, relative to its largest term
_LOG_DROP = -math.log(_TAIL_DROP)
_STEPS = np.arange(_BLOCK, dtype=float)[:, None]


def _stirlerr(k: np.ndarray) -> np.ndarray:
    """log(k!) - (k + 1/2) log k + k - log sqrt(2 pi) for integer-valued k >= 1."""
    kk = k * k
    out = (_S0 - (_S1 - (_S2 - (_S3 - _S4 / kk) / kk) / kk) / kk) / k
    small = k <= 15
    if small.any():
        out[small] = _SFERR[k[small].astype(np.int64)]
    return out


def _bd0(x: np.ndarray, m: np.ndarray, d: np.ndarray) -> np.ndarray:
    """x log(x/m) + m - x for x >= 0, m > 0, with d = x - m given to full precision."""
    out = m.copy()  # x = 0
    v = d / (x + m)
    near = (x > 0) & (np.abs(v) < 0.5)
    far = (x > 0) & ~near
    if far.any():  # |x/m - 1| large: no cancellation worth the name (< 2.5x)
        xf = x[far]
        out[far] = xf * np.log(xf / m[far]) - d[far]
    if near.any():
        # x log((1 + v)/(1 - v)) - d = d v + 2 x (v^3/3 + v^5/5 + ...): the first term is
        # the whole size, the rest no more than |v| of it.
        vn, xn = v[near], x[near]
        total = d[near] * vn
        term = 2.0 * xn * vn
        v2 = vn * vn
        vmax = float(np.sqrt(v2.max()))
        steps = 0 if vmax == 0 else math.ceil((54 * math.log(2) / -math.log(vmax) + 1) / 2)
        for j in range(1, steps + 1):
            term *= v2
            total += term / (2 * j + 1)
        out[near] = total
    return out


def _stirling_part(x: np.ndarray, k) -> np.ndarray:
    """S(x, k) of log b(x; k, p) (0 at x = 0 and x = k, where b is p^k or (1 - p)^k)."""
    k = np.broadcast_to(np.asarray(k, dtype=float), x.shape)
    out = np.zeros(x.shape)
    inner = (x > 0) & (x < k)
    xi, ki = x[inner], k[inner]
    out[inner] = (
        _stirlerr(ki)
        - _stirlerr(xi)
        - _stirlerr(ki - xi)
        - 0.5 * np.log(_2PI * xi * (ki - xi) / ki)  # k - x exact: no 1 - x/k to round
    )
    return out


def _over_m(a, b, M: int):
    """a * b / M as its floor (int64) and its fraction (float), exactly for any M."""
    if M <= _INT64_EXACT:
        q, r = np.divmod(np.asarray(a, dtype=np.int64) * np.asarray(b, dtype=np.int64), M)
        return q, r / M
    prod = np.asarray(a, dtype=object) * np.asarray(b, dtype=object)  # Python integers
    return (prod // M).astype(np.int64), ((prod % M) / M).astype(float)


class _Draws:
    """What the log-probabilities of Hypergeom(M, n, N) share, for an array of N."""

    def __init__(self, M: int, n: int, N: np.ndarray):
        self.M, self.n = M, n
        self.N = N.astype(float)
        self.lo = np.maximum(0, N - (M - n)).astype(float)
        self.q1, self.f1 = _over_m(n, N, M)  # n N / M, the mean
        self.m1 = self.q1 + self.f1
        self.m1c = np.add(*_over_m(n, M - N, M))  # the three other means of bd0
        self.m2 = np.add(*_over_m(M - n, N, M))
        self.m2c = np.add(*_over_m(M - n, M - N, M))
        Nf = self.N
        self.log_norm = (  # log b(N; M, N/M): its bd0 terms are 0
            _stirlerr(np.full(Nf.shape, float(M)))
            - _stirlerr(Nf)
            - _stirlerr(M - Nf)
            - 0.5 * np.log(_2PI * Nf * (M - Nf) / M)
        )
        p = n / M
        self.var = Nf * p * (1 - p) * (M - Nf) / max(M - 1, 1)

    def log_pmf(self, i: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """log P(X = i) for i (int64, within the support) of the queries ``rows``."""
        M, n = self.M, self.n
        shape = i.shape
        rows = np.broadcast_to(rows, shape).ravel()
        i = i.ravel()
        d = (i - self.q1[rows]) - self.f1[rows]  # i - nN/M
        x, N = i.astype(float), self.N[rows]
        out = (
            _stirling_part(x, n)
            - _bd0(x, self.m1[rows], d)
            - _bd0(n - x, self.m1c[rows], -d)
            + _stirling_part(N - x, M - n)
            - _bd0(N - x, self.m2[rows], -d)
            - _bd0(M - n - N + x, self.m2c[rows], d)
            - self.log_norm[rows]
        )
        return out.reshape(shape)

    def lower_sums(self, a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """For anchors a <= the mode (one per query): log P(X = a) and
        P(X <= a) / P(X = a)."""
        queries = np.arange(a.size)
        log_head = self.log_pmf(a, queries)
        af = a.astype(float)
        delta = np.maximum(0.0, self.m1 - af)
        # the rest is bounded by t / (1 - r), 1 / (1 - r) ~ sigma^2 / k <= sigma at the end
        drop = _LOG_DROP + 1.0 + 0.5 * np.log1p(self.var)
        guess = np.sqrt(delta * delta + 2 * drop * self.var) - delta
        cap = np.ceil((af - self.lo + 1) / _BLOCK).astype(np.int64)  # blocks to the support's end
        target = np.minimum(np.ceil((guess + 1) / _BLOCK).astype(np.int64), cap)
        done = np.zeros(a.size, dtype=np.int64)
        rel = np.zeros(a.size)
        pending = queries
        step = _CELLS // _BLOCK
        work = np.empty((3, _BLOCK, 0))  # reused across chunks: no page faults
        while pending.size:
            counts = target[pending] - done[pending]
            ends = np.cumsum(counts)
            take = max(1, int(np.searchsorted(ends, _BATCH_BLOCKS, side="right")))
            batch, pending = pending[:take], pending[take:]
            counts, ends = counts[:take], ends[:take]
            owner = np.repeat(batch, counts)
            if work.shape[2] < min(step, owner.size):
                work = np.empty((3, _BLOCK, min(step, owner.size)))
            block = np.arange(ends[-1]) - np.repeat(ends - counts, counts) + done[owner]
            sums, lasts = np.empty(owner.size), np.empty(owner.size)
            for s in range(0, owner.size, step):
                part = slice(s, s + step)
                sums[part], lasts[part] = self._blocks(a, owner[part], block[part], log_head, work)
            rel += np.bincount(owner, weights=sums, minlength=a.size)
            done[batch] = target[batch]
            # What a window leaves out: from its last term t on, each ratio is at most the
            # next one r < 1 (log-concavity), so the rest is at most t r / (1 - r).
            w = af[batch] - done[batch] * _BLOCK + 1.0  # r(w) leads to the first one out
            beyond = w - 1.0 >= self.lo[batch]
            N = self.N[batch]
            w = np.where(beyond, w, 1.0)
            r = (w * (w + (self.M - self.n - N))) / ((self.n + 1.0 - w) * (N + 1.0 - w))
            last = lasts[ends - 1]
            short = batch[beyond & (last * r > _TAIL_DROP * (1.0 - r))]
            target[short] = np.minimum(target[short] + 1 + target[short] // 4, cap[short])
            pending = np.concatenate([pending, short])
        return log_head, rel

    def _blocks(self, a, owner, block, log_head, work) -> tuple[np.ndarray, np.ndarray]:
        """Blocks of _BLOCK terms, block b of query q holding P(X = a_q - b _BLOCK - j),
        j < _BLOCK, relative to P(X = a_q): each block's sum and its last term."""
        M, n = self.M, self.n
        lo, N = self.lo[owner], self.N[owner]
        start = a[owner] - block * _BLOCK  # within the support (blocks stop at its end)
        w, cells, den = (buf[:, : owner.size] for buf in work)
        # The ratio into cell j is r(w) = w (w + M - n - N) / ((n + 1 - w)(N + 1 - w)),
        # w = start - j + 1. Below the support w is held at lo, where r = 0 (lo = 0, or
        # M - n - N + lo = 0), and so are the terms after it.
        np.subtract((start + 1.0)[None, :], _STEPS, out=w)
        if (start - (_BLOCK - 1) < lo).any():
            np.maximum(w, lo[None, :], out=w)
        np.add(w, (M - n - N)[None, :], out=cells)
        cells *= w
        np.subtract(n + 1.0, w, out=den)
        np.subtract((N + 1.0)[None, :], w, out=w)
        den *= w
        with np.errstate(divide="ignore", invalid="ignore"):  # row 0 is overwritten
            cells /= den
        # row 0: each block starts from its own saddle-point value
        head = np.ones(owner.size)
        later = block > 0
        if later.any():
            head[later] = np.exp(self.log_pmf(start[later], owner[later]) - log_head[owner[later]])
        cells[0] = head
        for j in range(1, _BLOCK):
            np.multiply(cells[j], cells[j - 1], out=cells[j])
        return cells.sum(axis=0), cells[-1].copy()


def _as_counts(v) -> np.ndarray:
    v = np.asarray(v)
    if v.dtype.kind == "f":
        v = np.floor(v)
    return v.astype(np.int64)


class _Hypergeom:
    """``scipy.stats.hypergeom`` for a population of ``M`` with ``n`` successes, ``N`` drawn
    (``M`` and ``n`` scalars; ``x`` and ``N`` arrays): each tail summed over a window of
    its anchor (see above), exact at any size."""

    def tails(self, x, M, n, N) -> tuple[np.ndarray, np.ndarray]:
        """(P(X <= x), P(X >= x)), from one sum a query."""
        x, N = np.broadcast_arrays(_as_counts(x), _as_counts(N))
        M, n = int(M), int(n)
        shape = x.shape
        x, N = x.ravel(), N.ravel()
        le, ge = np.full(x.size, np.nan), np.full(x.size, np.nan)
        valid = (M >= 0) & (0 <= n) & (n <= M) & (N >= 0) & (N <= M)
        lo, hi = np.maximum(0, N - (M - n)), np.minimum(n, N)
        below, above = valid & (x < lo), valid & (x > hi)
        le[below], ge[below] = 0.0, 1.0
        le[above], ge[above] = 1.0, 0.0
        point = valid & (x >= lo) & (x <= hi) & (lo == hi)
        le[point], ge[point] = 1.0, 1.0
        calc = np.flatnonzero(valid & (x >= lo) & (x <= hi) & (lo < hi))
        if calc.size:
            xs, Ns = x[calc], N[calc]
            mode = _over_m(n + 1, Ns + 1, M + 2)[0]
            down = xs <= mode
            # P(X >= x) = P(Y <= n - x), Y = n - X ~ Hypergeom(M, n, M - N)
            draws = _Draws(M, n, np.where(down, Ns, M - Ns))
            log_head, rel = draws.lower_sums(np.where(down, xs, n - xs))
            total = np.exp(log_head + np.log(rel))
            rest = np.exp(log_head) * (rel - 1.0)  # the sum without its anchor term
            le[calc] = np.where(down, total, 1.0 - rest)
            ge[calc] = np.where(down, 1.0 - rest, total)
        le, ge = np.clip(le, 0.0, 1.0).reshape(shape), np.clip(ge, 0.0, 1.0).reshape(shape)
        return (float(le), float(ge)) if le.ndim == 0 else (le, ge)

    def cdf(self, x, M, n, N):
        """P(X <= x)."""
        return self.tails(x, M, n, N)[0]

    def sf(self, x, M, n, N):
        """P(X > x)."""
        return self.tails(_as_counts(x) + 1, M, n, N)[1]


hypergeom = _Hypergeom()


# -- the two-sample Kolmogorov-Smirnov test ------------------------------------------------
#
# ``ks_2samp`` below is ported from SciPy (``scipy/stats/_stats_py.py``: ks_2samp,
# _attempt_exact_2kssamp, _compute_prob_outside_square; ``_stats_pythran.py``:
# _compute_outer_prob_inside_method; ``_ksstats.py``: _kolmogn and its three methods;
# ``xsf/cephes/kolmogorov.h``: smirnov), SciPy 1.17, BSD-3-Clause licence, (c) the SciPy
# developers. Two-sided, method="auto" only.

KS_EXACT_MAX_N = 10_000  # SciPy's method="auto": the exact null distribution up to this size


def ks_2samp(data1, data2, *, warn: bool = True) -> SimpleNamespace:
    """The two-sided two-sample Kolmogorov-Smirnov test, ported from SciPy: the same
    ``.statistic`` (D, the largest gap between the two empirical CDFs) and ``.pvalue`` as
    ``scipy.stats.ks_2samp(data1, data2)`` (method="auto").

    The p-value is exact (Hodges' lattice-path count) when neither sample has more than
    10,000 values, and otherwise the one-sample distribution of D at the effective size
    ``n1 * n2 / (n1 + n2)``. When the exact count fails (it can round past 1 for a tiny D),
    it warns (unless ``warn=False``: no ``warnings.catch_warnings`` needed, which is not
    thread-safe) and uses the latter, as SciPy does. A NaN in either sample, or an empty
    sample, gives NaN for both (SciPy's nan_policy="propagate"; SciPy also warns on an empty
    one).
    """
    found = _ks_d(data1, data2)
    if found is None:
        return SimpleNamespace(statistic=math.nan, pvalue=math.nan)
    d, n1, n2 = found
    p = math.nan
    exact = max(n1, n2) <= KS_EXACT_MAX_N
    if exact:
        exact, d, p = _ks_exact(n1, n2, d)
        if not exact and warn:
            warnings.warn(
                "ks_2samp: Exact calculation unsuccessful. Switching to method=asymp.",
                RuntimeWarning,
                stacklevel=2,
            )
    if not exact:
        m, n = sorted([float(n1), float(n2)], reverse=True)
        p = kstwo_sf(d, round(m * n / (m + n)))
    return SimpleNamespace(statistic=d, pvalue=_clip01(p))


def ks_statistic(data1, data2) -> float:
    """``ks_2samp(data1, data2).statistic`` without the p-value: D, on the lattice of
    multiples of 1/lcm(n1, n2) where the p-value would be exact (as SciPy rounds it)."""
    found = _ks_d(data1, data2)
    if found is None:
        return math.nan
    d, n1, n2 = found
    if max(n1, n2) <= KS_EXACT_MAX_N:
        lcm = (n1 // math.gcd(n1, n2)) * n2
        d = round(d * lcm) / lcm
    return d


def _ks_d(data1, data2) -> tuple[float, int, int] | None:
    """(D, n1, n2), or None when a sample is empty or holds a NaN."""
    x = np.sort(np.asarray(data1).ravel())
    y = np.sort(np.asarray(data2).ravel())
    n1, n2 = len(x), len(y)
    if not n1 or not n2 or _nan_last(x) or _nan_last(y):  # sorted: a NaN sorts last
        return None
    # SciPy's D: at every value v of either sample, #(x <= v) / n1 - #(y <= v) / n2 (two
    # searchsorted calls). The same counts from one merge of the two sorted samples (a stable
    # sort of two sorted runs is a merge), read at the last of each run of equal values:
    # the same numbers, the same maximum, in about 30% less time.
    both = np.concatenate([x, y])
    order = np.argsort(both, kind="stable")
    merged = both[order]
    in_x = np.cumsum(order < n1)
    in_y = np.arange(1, n1 + n2 + 1) - in_x
    last = np.empty(n1 + n2, bool)
    last[:-1] = merged[1:] != merged[:-1]
    last[-1] = True
    gaps = in_x[last] / n1 - in_y[last] / n2
    below, above = float(np.clip(-gaps.min(), 0, 1)), float(gaps.max())
    return (below if below > above else above), n1, n2


def _nan_last(x: np.ndarray) -> bool:
    return x.dtype.kind in "fc" and bool(np.isnan(x[-1]))


def _clip01(p: float) -> float:
    return float(min(1.0, max(0.0, p))) if p == p else math.nan


def _ks_exact(n1: int, n2: int, d: float) -> tuple[bool, float, float]:
    """(success, D rounded to a multiple of 1/lcm(n1, n2), P(D' >= D)) by counting lattice
    paths (Hodges 1958, after Drion, Gnedenko and Korolyuk). Ported from SciPy's
    ``_attempt_exact_2kssamp`` (two-sided)."""
    g = math.gcd(n1, n2)
    lcm = (n1 // g) * n2
    h = round(d * lcm)
    d = h / lcm
    if h == 0:
        return True, d, 1.0
    p = _ks_outside_square(n1, h) if n1 == n2 else _ks_outside_band(n1, n2, g, h)
    if not 0 <= p <= 1:
        return False, d, math.nan
    return True, d, p


def _ks_outside_square(n: int, h: int) -> float:
    """P(D >= h/n) for two samples of n values: the reflection sum
    2 * sum_k (-1)^(k+1) C(2n, n - k h) / C(2n, n), each term divided by C(2n, n) and nested
    Horner-like, P = 2 A0 (1 - A1 (1 - A2 (...))), so that nothing cancels. Ported from
    SciPy's ``_compute_prob_outside_square``."""
    total = 0.0
    k = n // h
    while k >= 0:
        ratio = 1.0
        for j in range(h):
            ratio = (n - k * h - j) * ratio / (n + k * h + j + 1)
        total = ratio * (1.0 - total)
        k -= 1
    return 2 * total


def _ks_outside_band(m: int, n: int, g: int, h: int) -> float:
    """The share of the lattice paths from (0, 0) to (m, n) that leave the band
    |i n/g - j m/g| < h (Hodges' inside method, with Viehmann's (2021) recursion for the
    complement so that a small p-value keeps its digits): u(i, j), the share of the paths to
    (i, j) that have left the band, is 1 outside it, and inside
    u(i, j) = (i u(i-1, j) + j u(i, j-1)) / (i + j).

    Ported from SciPy's ``_compute_outer_prob_inside_method``, which sweeps the columns one
    cell at a time in compiled code; here the anti-diagonals i + j = s are swept, each as one
    NumPy step (every cell on one depends only on the one before), with the same arithmetic
    per cell: the same result to the last bit."""
    if m < n:
        m, n = n, m
    mg, ng = m // g, n // g
    width = mg + ng
    # u[i + 1] = u(i, s - i) on diagonal s; u[0] pads i = -1. Two buffers, for s and s - 1:
    # a position holds 1 unless the band covered it on that buffer's last diagonal.
    cur, last = np.ones(m + 2), np.ones(m + 2)
    last[1] = 0.0  # (0, 0): no path has left yet
    los = [0, 0]  # the band's first i on the diagonals the two buffers hold
    i_up = np.arange(m + 1, dtype=float)
    j_down = np.arange(m + n, -1, -1, dtype=float)  # j_down[m + n - s + i] = s - i
    tmp = np.empty(m + 1)
    for s in range(1, m + n + 1):
        # the cells of the diagonal inside the band, |ng i - mg (s - i)| < h; lo and hi only grow
        lo = max((mg * s - h) // width + 1, s - n, 0)
        hi = min(-(-(mg * s + h) // width) - 1, s, m)
        if lo > hi:
            return 1.0  # every path crosses this diagonal outside the band
        stale = los[s % 2]
        if lo > stale:
            cur[stale + 1 : lo + 1] = 1.0  # left the band since this buffer's diagonal
        out = cur[lo + 1 : hi + 2]
        k = m + n - s
        np.multiply(last[lo : hi + 1], i_up[lo : hi + 1], out=out)  # i u(i-1, j)
        np.multiply(last[lo + 1 : hi + 2], j_down[k + lo : k + hi + 1], out=tmp[: hi - lo + 1])
        out += tmp[: hi - lo + 1]  # + j u(i, j-1)
        out /= s
        los[s % 2] = lo
        cur, last = last, cur
    return float(last[m + 1])


# -- the one-sample Kolmogorov distribution: P(D_n >= x), as scipy.stats.kstwo.sf(x, n) -----
#
# Simard & L'Ecuyer (2011), "Computing the two-sided Kolmogorov-Smirnov distribution", choose
# by n and n x^2 among: Ruben-Gambino's closed forms at the ends, 2 * smirnov(n, x) (exact for
# x >= 1/2, where the one-sided events are disjoint, and close to exact far in the tail),
# Durbin's matrix (1968) as Marsaglia, Tsang & Wang (2003) compute it, Pomeranz's recursion
# (1974) and the Pelz-Good (1976) asymptotic series.

_EP128 = np.ldexp(np.longdouble(1), 128)  # SciPy scales by 2**128 in long double
_EM128 = np.ldexp(np.longdouble(1), -128)
_STIRLING_COEFFS = [  # B_2j / (2j (2j - 1)), j = 8 .. 1
    -2.955065359477124183e-2,
    6.4102564102564102564e-3,
    -1.9175269175269175269e-3,
    8.4175084175084175084e-4,
    -5.952380952380952381e-4,
    7.9365079365079365079e-4,
    -2.7777777777777777778e-3,
    8.3333333333333333333e-2,
]


def kstwo_sf(x: float, n: float) -> float:
    """P(D_n >= x) for the two-sided one-sample statistic D_n (``scipy.stats.kstwo.sf``, its
    support checks and then SciPy's ``_kolmogn(n, x, cdf=False)``, ported from SciPy)."""
    if x != x or n != n or n < 1 or n != int(n):
        return math.nan
    n = int(n)
    if x <= 0.5 / n:  # below the support
        return 1.0
    if x >= 1.0:
        return 0.0
    t = n * x
    if t <= 1.0:  # Ruben-Gambino, 1/(2n) < x <= 1/n: P(D_n <= x) = n!/n^n (2t - 1)^n
        if n <= 140:
            cdf = float(np.prod(np.arange(1, n + 1) * (1.0 / n) * (2 * t - 1)))
        else:
            cdf = math.exp(_log_nfactorial_div_n_pow_n(n) + n * math.log(2 * t - 1))
        return _clip01(1.0 - cdf)
    if t >= n - 1:  # Ruben-Gambino, x >= 1 - 1/n
        return _clip01(2 * (1.0 - x) ** n)
    if x >= 0.5:
        return _clip01(2 * smirnov(n, x))
    nxsquared = t * x
    if n <= 140:
        if nxsquared <= 0.754693:
            return _clip01(1.0 - _kolmogn_dmtw(n, x))
        if nxsquared <= 4:
            return _clip01(1.0 - _kolmogn_pomeranz(n, x))
        return _clip01(2 * smirnov(n, x))  # Miller's approximation
    if nxsquared >= 370.0:
        return 0.0
    if nxsquared >= 2.2:
        return _clip01(2 * smirnov(n, x))
    if n <= 100_000 and n * x**1.5 <= 1.4:
        return _clip01(1.0 - _kolmogn_dmtw(n, x))
    return _clip01(1.0 - _kolmogn_pelz_good(n, x))


def _log_nfactorial_div_n_pow_n(n: int) -> float:
    """log(n! / n^n) by Stirling's series, n log n taken out first so that nothing cancels
    (ported from SciPy's ``_log_nfactorial_div_n_pow_n``)."""
    rn = 1.0 / n
    return float(
        np.log(n) / 2 - n + math.log(2 * math.pi) / 2 + rn * np.polyval(_STIRLING_COEFFS, rn / n)
    )


def _kolmogn_dmtw(n: int, d: float) -> float:
    """P(D_n <= d) by Durbin's matrix: with d = (k - h)/n, the (k, k) entry of n!/n^n H^n for
    an m x m matrix H, m = 2k - 1, powered by squaring and rescaled by 2**128 as it grows
    (Marsaglia, Tsang & Wang 2003). Ported from SciPy's ``_kolmogn_DMTW``."""
    if d >= 1.0:
        return 1.0
    nd = n * d
    if nd <= 0.5:
        return 0.0
    k = int(np.ceil(nd))
    h = k - nd
    m = 2 * k - 1
    H = np.zeros([m, m])
    # v is the first column (and, reversed, the last row): v[j] = (1 - h^(j+1)) / (j+1)!
    intm = np.arange(1, m + 1)
    v = 1.0 - h**intm
    w = np.empty(m)
    fac = 1.0
    for j in intm:
        w[j - 1] = fac
        fac /= j  # may underflow: harmless
        v[j - 1] *= fac
    tt = max(2 * h - 1.0, 0) ** m - 2 * h**m
    v[-1] = (1.0 + tt) * fac
    for i in range(1, m):
        H[i - 1 :, i] = w[: m - i + 1]
    H[:, 0] = v
    H[-1, :] = np.flip(v, axis=0)

    Hpwr = np.eye(m)
    nn = n
    expnt = 0  # the power-of-two scale of Hpwr
    Hexpnt = 0  # and of H
    while nn > 0:
        if nn % 2:
            Hpwr = np.matmul(Hpwr, H)
            expnt += Hexpnt
        H = np.matmul(H, H)
        Hexpnt *= 2
        if np.abs(H[k - 1, k - 1]) > _EP128:
            H /= _EP128
            Hexpnt += 128
        nn = nn // 2
    p = Hpwr[k - 1, k - 1]
    for i in range(1, n + 1):  # times n!/n^n
        p = i * p / n
        if np.abs(p) < _EM128:
            p *= _EP128
            expnt -= 128
    if expnt != 0:
        p = np.ldexp(p, expnt)
    return _clip01(float(p))


def _pomeranz_j1j2(i: int, n: int, ll: int, ceilf: int, roundf: int) -> tuple[int, int]:
    """The first and last non-zero entries of row i of Pomeranz's recursion (ported from
    SciPy's ``_pomeranz_compute_j1j2``)."""
    if i == 0:
        j1, j2 = -ll - ceilf - 1, ll + ceilf - 1
    else:
        ip1div2, ip1mod2 = divmod(i + 1, 2)
        if ip1mod2 == 0:  # i odd
            if ip1div2 == n + 1:
                j1, j2 = n - ll - ceilf - 1, n + ll + ceilf - 1
            else:
                j1, j2 = ip1div2 - 1 - ll - roundf - 1, ip1div2 + ll - 1 + ceilf - 1
        else:
            j1, j2 = ip1div2 - 1 - ll - 1, ip1div2 + ll + roundf - 1
    return max(j1 + 2, 0), min(j2, n)


def _kolmogn_pomeranz(n: int, x: float) -> float:
    """P(D_n <= x) by Pomeranz's recursion (1974): 2n + 1 rows, each the convolution of the
    last with a few Poisson-like weights, only their non-zero stretch kept, rescaled by
    2**128 against underflow; the answer is n! times the last entry. Ported from SciPy's
    ``_kolmogn_Pomeranz``."""
    t = n * x
    ll = int(np.floor(t))
    f = 1.0 * (t - ll)  # the fractional part of t
    g = min(f, 1.0 - f)
    ceilf = 1 if f > 0 else 0
    roundf = 1 if f > 0.5 else 0
    npwrs = 2 * (ll + 1)
    gpower = np.empty(npwrs)  # (g/n)^m / m!
    twogpower = np.empty(npwrs)  # (2g/n)^m / m!
    onem2gpower = np.empty(npwrs)  # ((1 - 2g)/n)^m / m!
    gpower[0] = twogpower[0] = onem2gpower[0] = 1.0
    expnt = 0
    g_over_n, two_g_over_n, one_minus_two_g_over_n = g / n, 2 * g / n, (1 - 2 * g) / n
    for m in range(1, npwrs):
        gpower[m] = gpower[m - 1] * g_over_n / m
        twogpower[m] = twogpower[m - 1] * two_g_over_n / m
        onem2gpower[m] = onem2gpower[m - 1] * one_minus_two_g_over_n / m

    V0 = np.zeros([npwrs])
    V1 = np.zeros([npwrs])
    V1[0] = 1
    V0s, V1s = 0, 0  # where the two rows start
    j1, j2 = _pomeranz_j1j2(0, n, ll, ceilf, roundf)
    for i in range(1, 2 * n + 2):
        k1 = j1
        V0, V1 = V1, V0
        V0s, V1s = V1s, V0s
        V1.fill(0.0)
        j1, j2 = _pomeranz_j1j2(i, n, ll, ceilf, roundf)
        if i == 1 or i == 2 * n + 1:
            pwrs = gpower
        else:
            pwrs = twogpower if i % 2 else onem2gpower
        ln2 = j2 - k1 + 1
        if ln2 > 0:
            conv = np.convolve(V0[k1 - V0s : k1 - V0s + ln2], pwrs[:ln2])
            conv_start = j1 - k1
            conv_len = j2 - j1 + 1
            V1[:conv_len] = conv[conv_start : conv_start + conv_len]
            if 0 < np.max(V1) < _EM128:
                V1 *= _EP128
                expnt -= 128
            V1s = V0s + j1 - k1
    ans = V1[n - V1s]
    for m in range(1, n + 1):  # times n!
        if np.abs(ans) > _EP128:
            ans *= _EM128
            expnt += 128
        ans *= m
    if expnt != 0:
        ans = np.ldexp(ans, expnt)
    return _clip01(float(ans))


def _kolmogn_pelz_good(n: int, x: float) -> float:
    """P(D_n <= x) by the Pelz-Good (1976) series: Li-Chien's and Korolyuk's expansion
    K0(z) + K1(z)/sqrt(n) + K2(z)/n + K3(z)/n^1.5, z = x sqrt(n), rewritten through Jacobi's
    theta functions for small z. Ported from SciPy's ``_kolmogn_PelzGood``."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    z = np.sqrt(n) * x
    zsquared, zthree, zfour, zsix = z**2, z**3, z**4, z**6
    qlog = -(math.pi**2) / 8 / zsquared
    if qlog < -708:  # z below ~0.0417
        return 0.0
    q = np.exp(qlog)
    pi2, pi4, pi6 = math.pi**2, math.pi**4, math.pi**6
    k1a = -zsquared
    k1b = pi2 / 4
    k2a = 6 * zsix + 2 * zfour
    k2b = (2 * zfour - 5 * zsquared) * pi2 / 4
    k2c = pi4 * (1 - 2 * zsquared) / 16
    k3d = pi6 * (5 - 30 * zsquared) / 64
    k3c = pi4 * (-60 * zsquared + 212 * zfour) / 16
    k3b = pi2 * (135 * zfour - 96 * zsix) / 4
    k3a = -30 * zsix - 90 * z**8

    K0to3 = np.zeros(4)
    # sum c_i q^(i^2) over odd i, Horner-like
    maxk = int(np.ceil(16 * z / np.pi))
    for k in range(maxk, 0, -1):
        m = 2 * k - 1
        msquared, mfour, msix = m**2, m**4, m**6
        qpower = np.power(q, 8 * k)
        coeffs = np.array(
            [
                1.0,
                k1a + k1b * msquared,
                k2a + k2b * msquared + k2c * mfour,
                k3a + k3b * msquared + k3c * mfour + k3d * msix,
            ]
        )
        K0to3 *= qpower
        K0to3 += coeffs
    K0to3 *= q
    K0to3 *= np.sqrt(2 * np.pi)
    K0to3 /= np.array([z, 6 * zfour, 72 * z**7, 6480 * z**10])
    # the sums over every integer k: K2 (pi^2 k^2) q^(k^2), K3 (3 pi^2 k^2 z^2 - pi^4 k^4) q^(k^2)
    q = np.exp(-pi2 / 2 / zsquared)
    ks = np.arange(maxk, 0, -1)
    ksquared = ks**2
    sqrt3z = np.sqrt(3) * z
    kspi = np.pi * ks
    qpwers = q**ksquared
    k2extra = np.sum(ksquared * qpwers)
    k2extra *= pi2 * np.sqrt(2 * np.pi) / (-36 * zthree)
    K0to3[2] += k2extra
    k3extra = np.sum((sqrt3z + kspi) * (sqrt3z - kspi) * ksquared * qpwers)
    k3extra *= pi2 * np.sqrt(2 * np.pi) / (216 * zsix)
    K0to3[3] += k3extra
    K0to3 /= np.power(n * 1.0, np.arange(len(K0to3)) / 2.0)
    return float(sum(K0to3))


# -- the one-sided statistic: P(D_n+ >= x), as scipy.special.smirnov(n, x) ------------------

_MINLOG = -7.08396418532264106224e2  # log(2**-1022)
SMIRNOV_MAX_COMPUTE_N = 1_000_000  # SciPy's: past it, an asymptotic formula
_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)
# stirlerr(k) = log(k!) - (k + 1/2) log k + k - log sqrt(2 pi), exactly enough from lgamma for
# small k, from Stirling's series above 15 (Loader 2000)
_STIRLERR_SMALL = np.array(
    [0.0]
    + [math.lgamma(k + 1.0) - (k + 0.5) * math.log(k) + k - _LOG_SQRT_2PI for k in range(1, 16)]
)


def _stirlerr(k: np.ndarray) -> np.ndarray:
    """Stirling's error log(k!) - log(sqrt(2 pi k) (k/e)^k) for integers k >= 1 (floats)."""
    big = np.maximum(k, 16.0)
    kk = big * big
    series = (1 / 12 - (1 / 360 - (1 / 1260 - (1 / 1680 - (1 / 1188) / kk) / kk) / kk) / kk) / big
    return np.where(k > 15, series, _STIRLERR_SMALL[np.minimum(k, 15).astype(np.intp)])


def smirnov(n: int, x: float) -> float:
    """P(D_n+ >= x), the one-sided one-sample Kolmogorov-Smirnov survival function
    (``scipy.special.smirnov``), ported from SciPy's ``xsf/cephes/kolmogorov.h`` (Birnbaum &
    Tingey's 1951 sum; van Mulbregt 2018)::

        P = sum_{v=0}^{floor(n(1-x))} C(n, v) x (x + v/n)^(v-1) (1 - x - v/n)^(n-v)

    SciPy sums it in double-double arithmetic; here each term is summed from its logarithm,
    written (Loader's saddle-point form of C(n, v) a^v (1-a)^(n-v), a = v/n) so that no large
    logarithms cancel: a term carries a relative error of about (n + v) * 1e-16. SciPy sums
    the few terms past floor(n(1-x)) instead (1 minus their sum) for x <= 0.5/sqrt(n); this
    sums the lower ones always, the same value. Same special cases: x <= 1/n and
    x >= 1 - 1/n in closed form, 0 where it underflows, SciPy's asymptotic formula past
    n = 10^6."""
    if not (n > 0 and 0.0 <= x <= 1.0):
        return math.nan
    if n == 1:
        return 1.0 - x
    if x == 0.0:
        return 1.0
    if x == 1.0:
        return 0.0
    num, den = x.as_integer_ratio()  # n x = n num / den exactly: its floor and fraction
    nxfl, rem = divmod(n * num, den)
    alpha, nx = rem / den, n * num / den
    if nxfl == 0 or (nxfl == 1 and alpha == 0):  # x <= 1/n: P(D_n+ < x) = x (1 + x)^(n-1)
        return 1.0 - x * math.exp((n - 1) * math.log1p(x))
    if -2 * n * x * x < _MINLOG:
        return 0.0
    if nxfl >= n - 1:  # x >= 1 - 1/n
        return math.exp(n * math.log1p(-x))
    if n > SMIRNOV_MAX_COMPUTE_N:  # p ~ exp(-(6nx + 1)^2 / 18n)
        logp = -((6.0 * n * x + 1) ** 2) / 18.0 / n
        return math.exp(logp) if logp < -math.log(2) else 1.0 + math.expm1(logp)
    # v = 0: (1 - x)^n; then v = 1 .. n - nxfl - 1 (1 - x - v/n > 0)
    v = np.arange(1, n - nxfl, dtype=float)
    rest = n - v  # n - v, and n - v - n x to full precision:
    gap = (rest - nxfl) - alpha
    ratio = gap / rest  # (1 - x - v/n) / (1 - v/n)
    with np.errstate(divide="ignore"):
        down = np.where(ratio > 0.5, np.log1p(-(nx / rest)), np.log(ratio))
    log_terms = (
        _stirlerr(np.array([float(n)]))[0]
        - _stirlerr(v)
        - _stirlerr(rest)
        + 0.5 * np.log(n / (2 * math.pi * v * rest))
        - np.log1p(v / nx)  # log(x / (x + v/n))
        + v * np.log1p(nx / v)  # v log((x + v/n) / (v/n))
        + rest * down
    )
    return float(math.exp(n * math.log1p(-x)) + np.exp(log_terms).sum())
