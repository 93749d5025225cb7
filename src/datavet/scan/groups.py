"""Rows per group (subject, patient, user...) of a declared group column, by 128-bit hash.

Kept as one entry per distinct group (its hash, its number of rows, its first row), not one per
row, so memory follows the number of groups. Merging concatenates and re-aggregates. Rows with
no group value (null, NaN: anonymous or guest rows) belong to no group; they are only counted.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from datavet._lazy import pandas as pd
from datavet.scan.hashing import column_lanes
from datavet.scan.values import dense


def _empty() -> np.ndarray:
    return np.zeros((0, 2), np.uint64)


@dataclass(slots=True)
class GroupCounts:
    keys: np.ndarray = field(default_factory=_empty)  # (g, 2) uint64 group hashes
    rows: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    first: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))  # first row
    missing: int = 0  # rows with no group value

    @classmethod
    def of(cls, arr: pa.Array, offset: int) -> GroupCounts:
        arr = dense(arr)
        has = ~np.asarray(pc.is_null(arr, nan_is_null=True).to_numpy(zero_copy_only=False), bool)
        lanes = column_lanes(arr)
        return cls._aggregate(
            np.stack(lanes, axis=1)[has],
            np.ones(int(has.sum()), np.int64),
            np.arange(offset, offset + len(arr), dtype=np.int64)[has],
            len(arr) - int(has.sum()),
        )

    @classmethod
    def _aggregate(cls, keys, rows, first, missing: int) -> GroupCounts:
        if len(keys) == 0:
            return cls(missing=missing)
        frame = pd.DataFrame({"a": keys[:, 0], "b": keys[:, 1], "rows": rows, "first": first})
        agg = frame.groupby(["a", "b"], sort=True).agg(rows=("rows", "sum"), first=("first", "min"))
        idx = agg.index.to_frame(index=False)
        return cls(
            np.stack([idx["a"].to_numpy(np.uint64), idx["b"].to_numpy(np.uint64)], axis=1),
            agg["rows"].to_numpy(np.int64),
            agg["first"].to_numpy(np.int64),
            missing,
        )

    def merge(self, other: GroupCounts) -> GroupCounts:
        return GroupCounts._aggregate(
            np.concatenate([self.keys, other.keys]),
            np.concatenate([self.rows, other.rows]),
            np.concatenate([self.first, other.first]),
            self.missing + other.missing,
        )

    def shared_with(self, other: GroupCounts) -> np.ndarray:
        """Mask over this side's groups: those the other side has too."""
        if not len(self.keys) or not len(other.keys):
            return np.zeros(len(self.keys), bool)
        mine = pd.MultiIndex.from_arrays([self.keys[:, 0], self.keys[:, 1]])
        theirs = pd.MultiIndex.from_arrays([other.keys[:, 0], other.keys[:, 1]])
        return np.asarray(mine.isin(theirs))
