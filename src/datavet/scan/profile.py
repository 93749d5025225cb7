"""The mergeable Profile of one split, and the per-batch step that builds it."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa

from datavet.scan.columns import ColumnStats
from datavet.scan.hashing import RowHashes, hash_rows, hash_values
from datavet.scan.labels import LabelStats
from datavet.scan.reservoir import DEFAULT_SAMPLE_ROWS, Reservoir


@dataclass(frozen=True)
class ScanPlan:
    """What to compute, decided before the first batch from the schemas of all splits.

    ``hash_columns`` are the features train and test rows are compared on (the ones they share);
    ``as_number`` names columns that are numeric in one split and text in another.
    """

    target: str | None = None
    hash_columns: tuple[str, ...] = ()
    as_number: frozenset[str] = frozenset()
    sample_rows: int = DEFAULT_SAMPLE_ROWS
    seed: int = 0


@dataclass
class Profile:
    """Everything the auditors know about one split. ``a.merge(b)`` is associative, so a file
    streamed batch by batch, or partitions profiled on different machines, give one Profile."""

    split: str
    rows: int = 0
    columns: dict[str, ColumnStats] = field(default_factory=dict)
    label: LabelStats | None = None
    hashes: RowHashes = field(default_factory=RowHashes)
    sample: Reservoir = field(default_factory=Reservoir)
    source: str | None = None
    format: str | None = None

    @classmethod
    def of_batch(cls, batch: pa.RecordBatch, offset: int, plan: ScanPlan, split: str) -> Profile:
        columns = {}
        label = None
        for name, arr in zip(batch.schema.names, batch.columns):
            if name == plan.target:
                label = LabelStats.of(name, arr, offset)
            else:
                columns[name] = ColumnStats.of(name, arr, offset)
        # S002 compares a split's rows on all its features; S001 compares splits on the
        # features they share. Hash twice only when those differ.
        features = [n for n in batch.schema.names if n != plan.target]
        rows = hash_rows(batch, features, plan.as_number)
        shared = None
        if set(features) != set(plan.hash_columns):
            shared = hash_rows(batch, list(plan.hash_columns), plan.as_number)
        if plan.target is not None and plan.target in batch.schema.names:
            labels = hash_values(batch.column(plan.target))
        else:
            labels = np.zeros(batch.num_rows, np.uint64)
        return cls(
            split=split,
            rows=batch.num_rows,
            columns=columns,
            label=label,
            hashes=RowHashes.of(offset, rows, labels, shared),
            sample=Reservoir.of(batch, offset, plan.sample_rows, plan.seed),
        )

    def merge(self, other: Profile) -> Profile:
        if self.rows == 0 and not self.columns:
            return other
        if other.rows == 0 and not other.columns:
            return self
        columns = {
            name: (stats.merge(other.columns[name]) if name in other.columns else stats)
            for name, stats in self.columns.items()
        }
        for name, stats in other.columns.items():
            columns.setdefault(name, stats)
        if self.label is not None and other.label is not None:
            label = self.label.merge(other.label)
        else:
            label = self.label or other.label
        return Profile(
            split=self.split,
            rows=self.rows + other.rows,
            columns=columns,
            label=label,
            hashes=self.hashes.merge(other.hashes),
            sample=self.sample.merge(other.sample),
            source=self.source or other.source,
            format=self.format or other.format,
        )

    @property
    def numeric_columns(self) -> list[ColumnStats]:
        return [c for c in self.columns.values() if c.kind == "numeric"]
