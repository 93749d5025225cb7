"""A bounded, mergeable uniform sample of rows (bottom-k sampling).

Each row gets a pseudo-random key computed from its global row position and a seed; the sample
is the ``k`` rows with the smallest keys. Because a row's key does not depend on how the table
was split, the merge of the samples of any split equals the sample of the whole, and the result
is the same on every run.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa

from datavet.scan.hashing import _splitmix

DEFAULT_SAMPLE_ROWS = 50_000


@dataclass(slots=True)
class Reservoir:
    k: int = DEFAULT_SAMPLE_ROWS
    seen: int = 0
    keys: np.ndarray = field(default_factory=lambda: np.zeros(0, np.uint64))
    positions: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    table: pa.Table | None = None

    @classmethod
    def of(
        cls, batch: pa.RecordBatch, offset: int, k: int, seed: int = 0, cut: int | None = None
    ) -> Reservoir:
        """The sample of one batch. ``cut`` (from :meth:`cut`): the largest key the final
        sample will hold; rows with larger keys are dropped at once (the merged result is the
        same, and a batch no longer copies ``k`` rows only for the merge to drop them)."""
        n = batch.num_rows
        pos = np.arange(offset, offset + n, dtype=np.int64)
        keys = _splitmix(pos.astype(np.uint64) ^ np.uint64(seed))
        if cut is not None:
            keep = np.flatnonzero(keys <= np.uint64(cut))
            if len(keep) <= k:
                table = pa.Table.from_batches([batch]).take(pa.array(keep))
                return cls(k, n, keys[keep], pos[keep], table)
        if n > k:
            keep = np.sort(np.argpartition(keys, k - 1)[:k])
            pos, keys = pos[keep], keys[keep]
            table = pa.Table.from_batches([batch]).take(pa.array(keep))
        else:
            table = pa.Table.from_batches([batch])
        return cls(k, n, keys, pos, table)

    def merge(self, other: Reservoir) -> Reservoir:
        if self.table is None:
            return other
        if other.table is None:
            return self
        keys = np.concatenate([self.keys, other.keys])
        pos = np.concatenate([self.positions, other.positions])
        table = pa.concat_tables([self.table, other.table], promote_options="permissive")
        if len(keys) <= self.k and (
            not len(self.positions)
            or not len(other.positions)
            or self.positions[-1] < other.positions[0]
        ):
            # every row stays and ``other`` follows ``self`` (positions are kept in row order):
            # the concatenation is the result, no copy (a scan merging batches in row order,
            # with the sample's cut-off known, never copies the sample it has gathered)
            return Reservoir(self.k, self.seen + other.seen, keys, pos, table)
        if len(keys) > self.k:
            keep = np.argpartition(keys, self.k - 1)[: self.k]
        else:
            keep = np.arange(len(keys))
        keep = keep[np.argsort(pos[keep], kind="stable")]  # row order, for determinism
        return Reservoir(
            self.k, self.seen + other.seen, keys[keep], pos[keep], table.take(pa.array(keep))
        )

    @staticmethod
    def cut(rows: int, k: int, seed: int = 0, chunk: int = 1 << 22) -> int | None:
        """The largest key among the ``k`` smallest of rows ``0..rows-1``: the bottom-k sample
        of those rows is exactly the rows whose key is at most this (keys are distinct: the
        hash is a bijection). None when every row is kept. Chunked, so the memory is bounded."""
        if rows <= k or k <= 0:
            return None
        best = np.zeros(0, np.uint64)
        for start in range(0, rows, chunk):
            pos = np.arange(start, min(rows, start + chunk), dtype=np.uint64)
            keys = np.concatenate([best, _splitmix(pos ^ np.uint64(seed))])
            best = np.partition(keys, k - 1)[:k] if len(keys) > k else keys
        return int(best.max())

    @property
    def is_sample(self) -> bool:
        """True when rows were left out (the sample is smaller than the split)."""
        return self.seen > len(self.keys)
