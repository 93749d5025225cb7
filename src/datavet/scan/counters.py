"""Value counts that are exact while small and a Misra-Gries sketch beyond that.

Exact up to ``capacity`` distinct values. Past it the counter keeps ``capacity`` counters and
every kept count is an underestimate by at most ``total / (capacity + 1)``: a value that covers
99% of rows is always kept, and its count is off by at most 0.1% at the default capacity.
Merging two sketches (Agarwal et al., 2012) keeps that bound, so it works across batches and
across Dask partitions.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from dataclasses import dataclass, field

import numpy as np

CAPACITY = 1024


def py_list(values) -> list:
    """An Arrow array as Python values. Valid Arrow can hold dates and times that Python's
    ``datetime`` cannot (``date32`` beyond year 9999): those come back as Arrow's own text."""
    try:
        return values.to_pylist()
    except (OverflowError, ValueError):
        import pyarrow as pa

        return values.cast(pa.string()).to_pylist()


@dataclass(slots=True)
class ValueCounter:
    capacity: int = CAPACITY
    counts: dict[Hashable, int] = field(default_factory=dict)
    total: int = 0
    exact: bool = True

    @classmethod
    def from_counts(cls, values, counts: np.ndarray, capacity: int = CAPACITY) -> ValueCounter:
        """From distinct ``values`` (a list or an Arrow array) and their ``counts``."""
        counts = np.asarray(counts, dtype=np.int64)
        total = int(counts.sum())
        if len(counts) <= capacity:
            values = values if isinstance(values, list) else py_list(values)
            return cls(capacity, dict(zip(values, counts.tolist())), total, True)
        keep = np.argpartition(-counts, capacity)[: capacity + 1]
        sub = counts[keep]
        floor = int(np.min(sub))  # the (capacity + 1)-th largest count
        above = sub > floor
        keep, sub = keep[above], sub[above]
        picked = (
            [values[i] for i in keep.tolist()]
            if isinstance(values, list)
            else (py_list(values.take(keep)))
        )
        kept = dict(zip(picked, (sub - floor).tolist()))
        return cls(capacity, kept, total, False)

    def merge(self, other: ValueCounter) -> ValueCounter:
        merged = dict(self.counts)
        for key, count in other.counts.items():
            merged[key] = merged.get(key, 0) + count
        exact = self.exact and other.exact
        if len(merged) > self.capacity:
            exact = False
            ranked = sorted(merged.values(), reverse=True)
            floor = ranked[self.capacity]
            merged = {k: c - floor for k, c in merged.items() if c > floor}
        return ValueCounter(self.capacity, merged, self.total + other.total, exact)

    @property
    def n_distinct(self) -> int | None:
        """Distinct values, or None when there were more than ``capacity``."""
        return len(self.counts) if self.exact else None

    def most_common(self, k: int | None = None) -> list[tuple[Hashable, int]]:
        items = sorted(self.counts.items(), key=lambda kv: (-kv[1], _order_key(kv[0])))
        return items if k is None else items[:k]

    def keys(self) -> Iterable[Hashable]:
        return self.counts.keys()


def _order_key(value: Hashable) -> tuple[int, str]:
    return (0, f"{value:024.6f}") if isinstance(value, (int, float)) else (1, str(value))
