"""Raw feature values of ``(N, F)`` tensors, kept beside the block means of the baselines'
sample: exact counts of the values people type for "unknown" (:data:`SENTINELS`: 0, -1 and
+-99, +-999, ...) per feature, and a bounded sample of raw rows (:class:`RawSample`) for inputs
wider than the baselines' features. Both merge by addition / selection, so blocks profiled in
any grouping give the same result. Pure functions of arrays."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# 0, -1 and +-9...9 with 2 to 15 nines (all exact in float64), sorted for searchsorted
SENTINELS = np.array(
    sorted({0.0, -1.0} | {s * (10.0**k - 1) for k in range(2, 16) for s in (1.0, -1.0)})
)
RAW_SAMPLE_VALUES = 1_250_000  # raw values kept per split (10 MB of float64)
MAX_RAW_ROWS = 20_000
_SEED = np.uint64(0x5E471E7A11CE5)


def _mix(z: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser on uint64 (a bijection: distinct rows, distinct priorities)."""
    z = z + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def sentinel_counts(col: np.ndarray, counts: dict | None = None) -> np.ndarray:
    """How often each of :data:`SENTINELS` occurs in ``col`` (a column of numbers), as an
    int64 array; ``counts`` is the column's exact value counts when it has them (then free)."""
    if counts is not None:
        return np.array([counts.get(float(v), 0) for v in SENTINELS], dtype=np.int64)
    out = np.zeros(len(SENTINELS), dtype=np.int64)
    with np.errstate(invalid="ignore"):
        whole = col[col == np.rint(col)]  # NaN drops out; most measured values too
    if whole.size:
        idx = np.minimum(np.searchsorted(SENTINELS, whole), len(SENTINELS) - 1)
        hit = SENTINELS[idx] == whole
        out += np.bincount(idx[hit], minlength=len(SENTINELS))
    return out


def sentinel_dict(row: np.ndarray) -> dict[float, int]:
    """One feature's row of counts -> {value: count} for the values that occur."""
    return {float(v): int(c) for v, c in zip(SENTINELS, row) if c}


def raw_rows(features: int) -> int:
    """Rows of raw values :class:`RawSample` keeps for ``features`` features per sample."""
    return min(MAX_RAW_ROWS, max(1000, RAW_SAMPLE_VALUES // max(1, features)))


@dataclass(slots=True)
class RawSample:
    """Up to ``capacity`` rows of raw feature values: the rows whose hashed index is smallest
    (a bottom-k sample, the same whatever the blocks), in row order."""

    capacity: int
    rows: np.ndarray  # int64 (k,): dataset indices
    priority: np.ndarray  # uint64 (k,)
    values: np.ndarray  # float64 (k, F)

    @classmethod
    def of(cls, x2: np.ndarray, offset: int, capacity: int) -> RawSample:
        rows = np.arange(offset, offset + len(x2), dtype=np.int64)
        return cls._keep(capacity, rows, _mix(rows.astype(np.uint64) ^ _SEED), x2)

    @classmethod
    def _keep(cls, capacity, rows, priority, values) -> RawSample:
        if len(rows) > capacity:
            sel = np.argpartition(priority, capacity - 1)[:capacity]
            sel.sort()  # rows arrive in order, so index order is row order
            rows, priority, values = rows[sel], priority[sel], values[sel]
        else:
            values = values.copy()
        return cls(capacity, rows, priority, values)

    def merge(self, other: RawSample) -> RawSample:
        rows = np.concatenate([self.rows, other.rows])
        order = np.argsort(rows, kind="stable")
        return RawSample._keep(
            self.capacity,
            rows[order],
            np.concatenate([self.priority, other.priority])[order],
            np.concatenate([self.values, other.values])[order],
        )
