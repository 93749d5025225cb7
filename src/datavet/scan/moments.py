"""Count, mean and M2 with Chan's parallel merge.

Never sum and sum of squares: for values with mean 1e9 and std 1 that gives variance 0 (or
negative) in float64. Chan, Golub and LeVeque (1979): merging (n_a, mean_a, M2_a) and
(n_b, mean_b, M2_b) gives n = n_a + n_b, delta = mean_b - mean_a,
mean = mean_a + delta * n_b / n, M2 = M2_a + M2_b + delta^2 * n_a * n_b / n.

M2 is kept in units of ``scale**2`` (a power of two, 1.0 unless the values are huge): for
values near 1e200 the std is a float but the sum of squares is not, and a column whose M2
overflowed would have no std at all.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

# Sums of squares above this are rescaled (float64 overflows at 1.8e308; the margin leaves room
# for the merges' sums)
_M2_MAX = 1e300
# Values all below this in magnitude have squares that lose precision (subnormal below 2e-308)
# or underflow to 0: their sum of squares is taken in units of a power of two too
_M2_MIN = 1e-280
_TINY = 1e-140


def _pow2_within(x: float) -> float:
    """A power of two in (x/2, x] for finite ``x`` > 0: dividing by it is exact."""
    return math.ldexp(0.5, math.frexp(x)[1])


@dataclass(slots=True)
class Moments:
    n: int = 0
    mean: float = 0.0
    m2: float = 0.0  # in units of scale**2
    scale: float = 1.0

    @classmethod
    def of(cls, values: np.ndarray, total: float | None = None) -> Moments:
        """Moments of finite float values (the caller has removed NaN and inf). ``total``:
        ``values.sum()`` when the caller has it (the mean is then that over n, as
        ``values.mean()`` computes it)."""
        n = int(values.size)
        if n == 0:
            return cls()
        with np.errstate(over="ignore", invalid="ignore"):  # |x| near 1e308: inf, not a warning
            mean = float(values.mean()) if total is None else total / n
            if not math.isfinite(mean):  # the sum overflowed: average scaled values instead
                scale = float(np.max(np.abs(values)))
                mean = float((values / scale).mean()) * scale
            # Two-pass: the centred sum of squares is exact enough even for a large offset.
            m2 = float(np.square(values - mean).sum())
            if _M2_MIN <= m2 < _M2_MAX:
                return cls(n, mean, m2)
            top = float(np.max(np.abs(values)))
            if m2 < _M2_MIN and not (0.0 < top < _TINY):
                return cls(n, mean, m2)  # a spread of 0 (or near it) among ordinary values
            # huge values (std near 1e150 or more), or tiny ones whose squares underflow (near
            # 1e-160 or less): the same sum in units of a power of two
            scale = _pow2_within(top)
            m2 = float(np.square(values / scale - mean / scale).sum())
        return cls(n, mean, m2, scale)

    def merge(self, other: Moments) -> Moments:
        if other.n == 0:
            return Moments(self.n, self.mean, self.m2, self.scale)
        if self.n == 0:
            return Moments(other.n, other.mean, other.m2, other.scale)
        n = self.n + other.n
        delta = other.mean - self.mean
        mean = self.mean + delta * (other.n / n)
        if not math.isfinite(mean):  # means of opposite sign near the float limit
            mean = self.mean * (self.n / n) + other.mean * (other.n / n)
        scale = max(self.scale, other.scale)
        while True:
            ra, rb = self.scale / scale, other.scale / scale  # at most 1
            d = other.mean / scale - self.mean / scale
            m2 = self.m2 * ra * ra + other.m2 * rb * rb + d * d * (self.n * other.n / n)
            if m2 < _M2_MAX or not math.isfinite(scale * 2.0**256):
                return Moments(n, mean, m2, scale)
            scale *= 2.0**256  # exact; the squared terms shrink by 2**512

    @property
    def variance(self) -> float:
        """Population variance (ddof=0, as ``numpy.std``); NaN when empty (inf when it
        overflows float64, as it does for a std above 1.3e154)."""
        if not self.n:
            return math.nan
        with np.errstate(over="ignore"):
            return float(np.float64(self.m2 / self.n) * self.scale * self.scale)

    @property
    def std(self) -> float:
        return math.sqrt(max(self.m2 / self.n, 0.0)) * self.scale if self.n else math.nan


def merge_arrays(
    n_a: np.ndarray,
    mean_a: np.ndarray,
    m2_a: np.ndarray,
    n_b: np.ndarray,
    mean_b: np.ndarray,
    m2_b: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Element-wise Chan merge of moment arrays (per position bin)."""
    n = n_a + n_b
    safe = np.where(n > 0, n, 1)
    with np.errstate(over="ignore", invalid="ignore"):  # values near 1e308: inf, not a warning
        delta = mean_b - mean_a
        mean = np.where(n > 0, mean_a + delta * (n_b / safe), 0.0)
        m2 = m2_a + m2_b + delta * delta * (n_a * n_b / safe)
    return n, mean, m2
