"""datavet._stats.hypergeom: exact tails at any population size, without SciPy.

The judge is a 45-digit reference (Python's ``decimal``: Stirling's series for the log-factorials,
exact rational ratios between neighbouring terms). SciPy agrees with it to ~1e-15 up to a
population of about 100,000; past that SciPy (Boost's Lanczos path) is itself off by up to
~1e-7, so there it is compared at that looser tolerance.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from decimal import Decimal, localcontext
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs
from scipy import stats as sp

from datavet import _stats as st
from datavet.auditors import positional_label_drift as l002

REL = 1e-12  # against the reference
TINY = 1e-300  # below it a tail may underflow
SCIPY_EXACT_M = 100_000  # up to here SciPy's tails are exact to ~1e-15
SCIPY_REL = 1e-6  # past it, SciPy's own error (~1e-8 seen at M = 2e8) with room

# -- the reference ---------------------------------------------------------------------------

_PREC = 45
_PI = Decimal("3.14159265358979323846264338327950288419716939937510582")
_BERNOULLI = [  # B_2, B_4, ..., B_20
    Fraction(1, 6),
    Fraction(-1, 30),
    Fraction(1, 42),
    Fraction(-1, 30),
    Fraction(5, 66),
    Fraction(-691, 2730),
    Fraction(7, 6),
    Fraction(-3617, 510),
    Fraction(43867, 798),
    Fraction(-174611, 330),
]


def _log_factorial(k: int) -> Decimal:
    if k < 40:
        return Decimal(math.factorial(k)).ln()
    K = Decimal(k)  # Stirling's series; the next term is below 1e-33 at k = 40
    s = (K + Decimal("0.5")) * K.ln() - K + (2 * _PI).ln() / 2
    for j, b in enumerate(_BERNOULLI, start=1):
        s += Decimal(b.numerator) / (
            Decimal(b.denominator) * 2 * j * (2 * j - 1) * K ** (2 * j - 1)
        )
    return s


def _log_comb(a: int, b: int) -> Decimal:
    return _log_factorial(a) - _log_factorial(b) - _log_factorial(a - b)


def _ref_sum(a: int, M: int, n: int, N: int, step: int) -> Decimal:
    """sum of P(X = i) from i = a on, going down (step -1) or up (+1), to 1e-35 relative."""
    lo, hi = max(0, N - (M - n)), min(n, N)
    term = (_log_comb(n, a) + _log_comb(M - n, N - a) - _log_comb(M, N)).exp()
    total, i = term, a
    while lo < i if step < 0 else i < hi:
        if step < 0:
            term *= Decimal(i * (M - n - N + i)) / Decimal((n - i + 1) * (N - i + 1))
        else:
            term *= Decimal((n - i) * (N - i)) / Decimal((i + 1) * (M - n - N + i + 1))
        i += step
        total += term
        if term < total * Decimal("1e-35"):
            break  # log-concave: what follows is smaller still, and shrinking faster
    return total


def ref_cdf(x: int, M: int, n: int, N: int) -> float:
    """P(X <= x), from the side whose sum is not near 1."""
    lo, hi = max(0, N - (M - n)), min(n, N)
    if x < lo:
        return 0.0
    if x >= hi:
        return 1.0
    with localcontext() as ctx:
        ctx.prec = _PREC
        if x <= (n + 1) * (N + 1) // (M + 2):  # at or below the mode: terms fall going down
            return float(_ref_sum(x, M, n, N, -1))
        return float(1 - _ref_sum(x + 1, M, n, N, +1))


def ref_sf(x: int, M: int, n: int, N: int) -> float:
    """P(X > x)."""
    lo, hi = max(0, N - (M - n)), min(n, N)
    if x < lo:
        return 1.0
    if x >= hi:
        return 0.0
    with localcontext() as ctx:
        ctx.prec = _PREC
        if x + 1 > (n + 1) * (N + 1) // (M + 2):
            return float(_ref_sum(x + 1, M, n, N, +1))
        return float(1 - _ref_sum(x, M, n, N, -1))


def close(ours, ref, rel=REL) -> bool:
    return abs(ours - ref) <= max(rel * abs(ref), TINY)


def test_the_reference_is_exact_on_small_populations():
    for M, n, N in ((30, 12, 17), (200, 150, 60), (1000, 10, 990)):
        lo, hi = max(0, N - (M - n)), min(n, N)
        whole = math.comb(M, N)
        for x in range(lo, hi + 1):
            below = sum(math.comb(n, i) * math.comb(M - n, N - i) for i in range(lo, x + 1))
            assert close(ref_cdf(x, M, n, N), float(Fraction(below, whole)), rel=1e-15)
            assert close(ref_sf(x, M, n, N), float(Fraction(whole - below, whole)), rel=1e-15)


# -- against the reference and SciPy ---------------------------------------------------------


def _queries(M: int, n: int, N: int) -> np.ndarray:
    """x at the support's edges, the mode, and 1 to 40 standard deviations either side."""
    lo, hi = max(0, N - (M - n)), min(n, N)
    mean = n * N / M
    sd = math.sqrt(N * (n / M) * (1 - n / M) * (M - N) / max(M - 1, 1))
    mode = (n + 1) * (N + 1) // (M + 2)
    xs = {lo - 1, lo, lo + 1, hi - 1, hi, mode - 1, mode, mode + 1}
    xs |= {round(mean + z * sd) for z in (-40, -30, -12, -5, -1, 1, 5, 12, 30, 40)}
    return np.array(sorted(x for x in xs if lo - 1 <= x <= hi))


def _cases():
    for M in (10, 57, 1000, 100_000, 1_200_000, 10_000_000, 120_000_000, 200_000_000):
        for n in sorted({1, 3, round(0.03 * M), M // 2, M - 2}):
            for N in sorted({2, round(0.37 * M), M - 1}):
                if 0 < n < M and 0 < N < M:
                    yield M, n, N


@pytest.mark.parametrize(("M", "n", "N"), list(_cases()))
def test_tails_against_the_reference_and_scipy(M, n, N):
    x = _queries(M, n, N)
    cdf, sf = st.hypergeom.cdf(x, M, n, N), st.hypergeom.sf(x, M, n, N)
    for i, xi in enumerate(x.tolist()):
        assert close(cdf[i], ref_cdf(xi, M, n, N)), (xi, cdf[i], ref_cdf(xi, M, n, N))
        assert close(sf[i], ref_sf(xi, M, n, N)), (xi, sf[i], ref_sf(xi, M, n, N))
    if M > 1_200_000 and n != round(0.03 * M):
        return  # SciPy takes ~0.4 s a call here: one case of each size is enough
    rel = REL if M <= SCIPY_EXACT_M else SCIPY_REL
    assert np.allclose(cdf, sp.hypergeom.cdf(x, M, n, N), rtol=rel, atol=TINY)
    assert np.allclose(sf, sp.hypergeom.sf(x, M, n, N), rtol=rel, atol=TINY)


@pytest.mark.parametrize(("M", "n", "N"), [(10**10, 17, 9 * 10**9), (10**10, 3 * 10**6, 4 * 10**9)])
def test_populations_whose_products_overflow_an_int64(M, n, N):
    x = _queries(M, n, N)
    cdf, sf = st.hypergeom.cdf(x, M, n, N), st.hypergeom.sf(x, M, n, N)
    for i, xi in enumerate(x.tolist()):
        assert close(cdf[i], ref_cdf(xi, M, n, N)) and close(sf[i], ref_sf(xi, M, n, N)), xi


def test_every_case_of_a_small_population_matches_scipy():
    M = 40
    n, N, x = (
        a.ravel() for a in np.meshgrid(np.arange(M + 1), np.arange(M + 1), np.arange(-1, M + 2))
    )
    for k in range(M + 1):
        at = n == k
        for ours, theirs in (
            (st.hypergeom.cdf(x[at], M, k, N[at]), sp.hypergeom.cdf(x[at], M, k, N[at])),
            (st.hypergeom.sf(x[at], M, k, N[at]), sp.hypergeom.sf(x[at], M, k, N[at])),
        ):
            assert np.allclose(ours, theirs, rtol=REL, atol=TINY)


def test_far_tails_underflow_to_zero_not_to_garbage():
    M, n, N = 200_000_000, 100_000_000, 100_000_000  # sd ~ 3,536
    x = np.array([0, 1, 40_000_000, 49_000_000])  # the last: ~283 sd below the mean
    assert np.all(st.hypergeom.cdf(x, M, n, N) <= TINY)
    assert np.all(st.hypergeom.sf(x, M, n, N) == 1.0)
    assert st.hypergeom.cdf(49_960_000, M, n, N) == pytest.approx(
        ref_cdf(49_960_000, M, n, N), rel=REL
    )  # ~11 sd: 1e-29


def test_scalars_give_floats():
    assert isinstance(st.hypergeom.cdf(3, 20, 7, 12), float)
    assert st.hypergeom.cdf(3, 20, 7, 12) == pytest.approx(ref_cdf(3, 20, 7, 12), rel=REL)
    assert st.hypergeom.sf(-1, 20, 7, 12) == 1.0 and st.hypergeom.cdf(12, 20, 7, 12) == 1.0


# -- as L002 calls it ------------------------------------------------------------------------


def _positions(rows: int, share: float, shift: float = 0.0, seed: int = 0) -> np.ndarray:
    """A (1024, 2) table of label counts per position bin; the first 5% of bins carry the
    class at ``share + shift``."""
    rng = np.random.default_rng(seed)
    sizes = np.full(1024, rows // 1024)
    sizes[: rows % 1024] += 1
    rate = np.full(1024, share)
    rate[:51] += shift
    k = rng.binomial(sizes, rate)
    return np.stack([k, sizes - k], axis=1).astype(np.float64)


def test_boundary_queries_with_varying_draws():
    table = _positions(1_200_000, 0.03, shift=0.004)
    M, n = int(table.sum()), int(table[:, 0].sum())
    x = np.cumsum(table[:, 0])[:-1]  # class rows before each boundary
    N = np.cumsum(table.sum(axis=1))[:-1]  # rows before each boundary
    lower, upper = st.hypergeom.tails(x, M, n, N)
    assert np.array_equal(lower, st.hypergeom.cdf(x, M, n, N))
    assert np.array_equal(upper, st.hypergeom.sf(x - 1, M, n, N))
    assert np.allclose(lower, sp.hypergeom.cdf(x, M, n, N), rtol=SCIPY_REL, atol=TINY)
    assert np.allclose(upper, sp.hypergeom.sf(x - 1, M, n, N), rtol=SCIPY_REL, atol=TINY)
    for b in (0, 1, 25, 50, 51, 300, 700, 1021, int(np.argmin(np.minimum(lower, upper)))):
        xb, Nb = int(x[b]), int(N[b])
        assert close(lower[b], ref_cdf(xb, M, n, Nb)), b
        assert close(upper[b], ref_sf(xb - 1, M, n, Nb)), b


def test_the_window_is_a_few_tens_of_sd_not_the_support(monkeypatch):
    M, n = 200_000_000, 6_000_000
    N = np.linspace(1_000_000, M - 1_000_000, 1023).round().astype(np.int64)
    x = np.round(n * N / M).astype(np.int64)  # at the mean: the widest windows
    cells = []
    blocks = st._Draws._blocks

    def counted(self, a, owner, block, log_head, work):
        cells.append(owner.size * st._BLOCK)
        return blocks(self, a, owner, block, log_head, work)

    monkeypatch.setattr(st._Draws, "_blocks", counted)
    st.hypergeom.tails(x, M, n, N)
    sd = np.sqrt(N * (n / M) * (1 - n / M) * (M - N) / (M - 1))
    assert sum(cells) <= np.sum(12 * sd + 2 * st._BLOCK)  # the support: min(n, N) ~ 6e6 each


def _mode(M, n, N):
    return (n + 1) * (N + 1) // (M + 2)


@pytest.mark.parametrize(
    ("M", "n", "N", "below_mode"),
    [
        (1000, 300, 500, 0),
        (120_000_000, 3_600_000, 50_000_000, 0),
        (120_000_000, 3_600_000, 50_000_000, 3_800),  # ~3 sd below
        (200_000_000, 100_000_000, 100_000_000, 0),  # sd ~ 3,536: the widest here
        (100_000_000, 2_000, 1_000_000, 0),  # mean 20: a Poisson-like skew
        (100_000_000, 2_000, 99_000_000, 0),  # its mirror, as an upper tail is summed
    ],
)
def test_what_a_window_leaves_out_is_below_the_drop(monkeypatch, M, n, N, below_mode):
    a = _mode(M, n, N) - below_mode
    blocks = []
    spy = st._Draws._blocks

    def seen(self, a_, owner, block, log_head, work):
        blocks.extend(block.tolist())
        return spy(self, a_, owner, block, log_head, work)

    monkeypatch.setattr(st._Draws, "_blocks", seen)
    st._Draws(M, n, np.array([N])).lower_sums(np.array([a]))
    width = (max(blocks) + 1) * st._BLOCK
    lo = max(0, N - (M - n))
    with localcontext() as ctx:
        ctx.prec = _PREC
        term, rest, i = Decimal(1), Decimal(0), a  # P(X = i) / P(X = a)
        while i > lo:
            term *= Decimal(i * (M - n - N + i)) / Decimal((n - i + 1) * (N - i + 1))
            i -= 1
            if i < a - width + 1:
                rest += term
                if term < rest * Decimal("1e-30"):
                    break
    assert rest <= Decimal(st._TAIL_DROP)
    assert width <= 16 * math.sqrt(N * (n / M) * (1 - n / M) * (M - N) / (M - 1)) + st._BLOCK


def test_a_short_first_window_is_grown_until_the_rest_is_negligible(monkeypatch):
    M, n, N = 120_000_000, 3_600_000, 50_000_000
    x = np.array([1_499_000, 1_500_000, 1_501_000, 1_502_000])  # sd ~ 1,280 around 1.5e6
    want = [ref_cdf(int(v), M, n, N) for v in x]
    monkeypatch.setattr(st, "_LOG_DROP", 0.0)  # first windows of ~2 sd: far too short
    got = st.hypergeom.cdf(x, M, n, N)
    assert all(close(g, w) for g, w in zip(got, want))


def test_chunks_and_batches_do_not_change_the_sums(monkeypatch):
    table = _positions(1_200_000, 0.03, shift=0.004)
    M, n = int(table.sum()), int(table[:, 0].sum())
    x, N = np.cumsum(table[:, 0])[:-1], np.cumsum(table.sum(axis=1))[:-1]
    whole = st.hypergeom.tails(x, M, n, N)
    monkeypatch.setattr(st, "_BATCH_BLOCKS", 5)  # a few queries a batch
    monkeypatch.setattr(st, "_CELLS", 3 * st._BLOCK)  # three blocks a chunk
    for ours, want in zip(st.hypergeom.tails(x, M, n, N), whole):
        assert np.allclose(ours, want, rtol=1e-15, atol=0)


# -- properties ------------------------------------------------------------------------------


@hs.composite
def _draws(draw):
    M = int(10 ** draw(hs.floats(0.5, math.log10(2e8))))
    n = draw(hs.integers(1, M - 1))
    N = draw(hs.integers(1, M - 1))
    lo, hi = max(0, N - (M - n)), min(n, N)
    if draw(hs.booleans()):
        x = draw(hs.integers(lo - 1, hi))
    else:  # near the mean, out to 45 sd
        sd = math.sqrt(N * (n / M) * (1 - n / M) * (M - N) / max(M - 1, 1))
        x = min(hi, max(lo - 1, round(n * N / M + draw(hs.floats(-45, 45)) * sd)))
    return M, n, N, x


@settings(max_examples=60, deadline=None)
@given(_draws())
def test_any_tail_matches_the_reference(case):
    M, n, N, x = case
    assert close(st.hypergeom.cdf(x, M, n, N), ref_cdf(x, M, n, N))
    assert close(st.hypergeom.sf(x, M, n, N), ref_sf(x, M, n, N))


@settings(max_examples=100, deadline=None)
@given(_draws())
def test_symmetries(case):
    M, n, N, x = case
    cdf, sf = st.hypergeom.cdf(x, M, n, N), st.hypergeom.sf(x, M, n, N)
    assert abs(cdf + sf - 1.0) <= 3e-14  # each tail to ~1.4e-14 (running products of 64)
    assert close(st.hypergeom.cdf(x, M, N, n), cdf)  # drawn and class swap roles
    assert close(st.hypergeom.sf(n - x - 1, M, n, M - N), cdf)  # the class rows left undrawn
    lower, upper = st.hypergeom.tails(x, M, n, N)
    assert lower == cdf and upper == st.hypergeom.sf(x - 1, M, n, N)


# -- a 1M-row boundary scan: no SciPy, SciPy's p-value ---------------------------------------

_SCAN = """
import json, sys
import numpy as np
from datavet.auditors.positional_label_drift import boundary_scan
r = boundary_scan(np.load(sys.argv[1]))
scipy = sorted(m for m in sys.modules if m.startswith("scipy"))
print(json.dumps({"p": r.p_value, "boundary": r.boundary, "cls": r.cls, "scipy": scipy}))
"""


def test_a_million_row_boundary_scan_imports_no_scipy_and_gives_its_p_value(tmp_path, monkeypatch):
    import os
    from pathlib import Path
    from types import SimpleNamespace

    table = _positions(1_200_000, 0.03, shift=0.004)
    np.save(tmp_path / "table.npy", table)
    root = Path(__file__).resolve().parents[1]
    path = os.pathsep.join([str(root / "src"), os.environ.get("PYTHONPATH", "")])
    proc = subprocess.run(
        [sys.executable, "-c", _SCAN, str(tmp_path / "table.npy")],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": path},
        cwd=root,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout)
    assert got["scipy"] == []
    assert 1e-12 < got["p"] < 1e-3  # a real finding, not a p-value clipped to 0 or 1

    scipy_tails = SimpleNamespace(
        tails=lambda x, M, n, N: (sp.hypergeom.cdf(x, M, n, N), sp.hypergeom.sf(x - 1, M, n, N))
    )
    monkeypatch.setattr(st, "hypergeom", scipy_tails)
    want = l002.boundary_scan(table)
    assert (got["boundary"], got["cls"]) == (want.boundary, want.cls)
    assert got["p"] == pytest.approx(want.p_value, rel=SCIPY_REL)
    # and to 1e-12 with the reference: the smallest two-sided p, Bonferroni-corrected
    M, n = int(table.sum()), int(table[:, 0].sum())
    b = got["boundary"] - 1
    xb, Nb = int(table[: b + 1, 0].sum()), int(table[: b + 1].sum())
    p = 2 * min(ref_cdf(xb, M, n, Nb), ref_sf(xb - 1, M, n, Nb)) * 1023
    assert got["p"] == pytest.approx(p, rel=REL)
