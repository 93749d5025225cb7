"""Count, mean and M2 with Chan's parallel merge.

Never sum and sum of squares: for values with mean 1e9 and std 1 that gives variance 0 (or
negative) in float64. Chan, Golub and LeVeque (1979): merging (n_a, mean_a, M2_a) and
(n_b, mean_b, M2_b) gives n = n_a + n_b, delta = mean_b - mean_a,
mean = mean_a + delta * n_b / n, M2 = M2_a + M2_b + delta^2 * n_a * n_b / n.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


@dataclass(slots=True)
class Moments:
    n: int = 0
    mean: float = 0.0
    m2: float = 0.0

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
        return cls(n, mean, m2)

    def merge(self, other: Moments) -> Moments:
        if other.n == 0:
            return Moments(self.n, self.mean, self.m2)
        if self.n == 0:
            return Moments(other.n, other.mean, other.m2)
        n = self.n + other.n
        delta = other.mean - self.mean
        mean = self.mean + delta * (other.n / n)
        m2 = self.m2 + other.m2 + delta * delta * (self.n * other.n / n)
        return Moments(n, mean, m2)

    @property
    def variance(self) -> float:
        """Population variance (ddof=0, as ``numpy.std``); NaN when empty."""
        return self.m2 / self.n if self.n else math.nan

    @property
    def std(self) -> float:
        return math.sqrt(max(self.variance, 0.0)) if self.n else math.nan


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
    delta = mean_b - mean_a
    mean = np.where(n > 0, mean_a + delta * (n_b / safe), 0.0)
    m2 = m2_a + m2_b + delta * delta * (n_a * n_b / safe)
    return n, mean, m2
