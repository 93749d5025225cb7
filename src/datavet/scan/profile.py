"""The mergeable Profile of one split, and the per-batch step that builds it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from datavet.scan.columns import ColumnStats, dense_batch, merge_examples
from datavet.scan.groups import GroupCounts
from datavet.scan.hashing import RowHashes, fold_weights, hash_values
from datavet.scan.labels import LabelStats, label_batch
from datavet.scan.neardup import near_rows
from datavet.scan.neardup import older_rows as _older_rows
from datavet.scan.reservoir import DEFAULT_SAMPLE_ROWS, Reservoir
from datavet.scan.rowhash import hash_rows
from datavet.scan.wide import Fold, block_names, scan_block

if TYPE_CHECKING:
    from datavet.scan.tensors import TensorStats


@dataclass(frozen=True)
class ScanPlan:
    """What to compute, decided before the first batch from the schemas of all splits.

    ``hash_columns`` are the features train and test rows are compared on (the ones they share);
    ``as_number`` names columns that are numeric in one split and text in another.
    """

    target: str | None = None
    group: str | None = None  # a declared group (subject) column: rows per group are counted
    hash_columns: tuple[str, ...] = ()
    as_number: frozenset[str] = frozenset()
    sample_rows: int = DEFAULT_SAMPLE_ROWS
    seed: int = 0
    # Sample keys above this are never in the final sample (set when the number of rows is known
    # before the scan, see ``Reservoir.cut``): batches then copy only the rows that will stay.
    sample_cut: int | None = None
    # Near-duplicate hashes (S007) over these columns, computed in the same pass (None: not here)
    near_columns: tuple[str, ...] | None = None
    near_digits: int = 6
    # S008: rows of ``time_column`` older than ``time_before`` (the newest train time) are counted
    time_column: str | None = None
    time_before: int | None = None
    # Columns read but not profiled or compared: a pandas index written with the data
    skip_columns: frozenset[str] = frozenset()


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
    groups: GroupCounts | None = None
    source: str | None = None
    format: str | None = None
    tensor: TensorStats | None = None  # tensor inputs only: layout, per position, thumbnails
    older: int = 0  # rows older than ScanPlan.time_before (S008), when the scan counted them
    older_rows: tuple[int, ...] = ()  # the first of them
    # the sampler that draws a DataLoader's samples in random order (L002's hint), if any
    shuffled_by: str | None = None

    @classmethod
    def of_batch(cls, batch: pa.RecordBatch, offset: int, plan: ScanPlan, split: str) -> Profile:
        caches: dict[str, dict] = {}  # per column: what one computation leaves for the next
        columns = {}
        label = None
        dtypes = {f.name: str(f.type) for f in batch.schema}  # as stored, before dense_batch
        batch = dense_batch(batch)
        if plan.target is not None and plan.target in batch.schema.names:
            batch = label_batch(batch, plan.target)
        # S002 compares a split's rows on all its features; S001 compares splits on the
        # features they share. Hash twice only when those differ.
        features = [
            n for n in batch.schema.names if n != plan.target and n not in plan.skip_columns
        ]
        same = set(features) == set(plan.hash_columns)
        # many plain numeric columns of a short batch: computed together (scan/wide.py)
        wide = block_names(batch, features)
        block = None
        if wide:
            folds = [Fold(fold_weights(features))]
            if not same:
                folds.append(Fold(fold_weights(plan.hash_columns)))
            if plan.near_columns is not None:
                folds.append(Fold(fold_weights(plan.near_columns), True, plan.near_digits))
            counted = set(plan.near_columns) if plan.near_columns is not None else None
            block = scan_block(batch, wide, offset, folds=folds, counted=counted)
        skip = frozenset(wide)
        for i, name in enumerate(batch.schema.names):  # columns fetched only when needed
            if name in plan.skip_columns:
                continue
            if name == plan.target:
                label = LabelStats.of(name, batch.column(i), offset)
                label.dtype = dtypes[name]
            else:
                if block is not None and name in skip:
                    columns[name] = block.stats[name]
                else:
                    cache = caches.setdefault(name, {})
                    columns[name] = ColumnStats.of(name, batch.column(i), offset, cache)
                columns[name].dtype = dtypes[name]
        part = (lambda k: (block.folds[k].partial, skip)) if block is not None else (lambda k: None)
        rows = hash_rows(batch, features, plan.as_number, caches, part(0))
        shared = None
        if not same:
            shared = hash_rows(batch, list(plan.hash_columns), plan.as_number, caches, part(1))
        if plan.target is not None and plan.target in batch.schema.names:
            labels = hash_values(batch.column(plan.target))
        else:
            labels = np.zeros(batch.num_rows, np.uint64)
        near = None
        if plan.near_columns is not None:
            near_set = set(plan.near_columns)
            left_out = [c for c in plan.hash_columns if c not in near_set]
            near_block = None
            if block is not None:
                near_block = (block.folds[-1].partial, block.present, skip)
            near = near_rows(
                batch, list(plan.near_columns), plan.near_digits, caches, left_out, near_block
            )
        older, older_rows = 0, ()
        if (
            plan.time_column is not None
            and plan.time_before is not None
            and plan.time_column in batch.schema.names
        ):
            time = batch.column(plan.time_column)
            older, older_rows = _older_rows(time, plan.time_before, offset)
        del caches
        groups = None
        if plan.group is not None and plan.group in batch.schema.names:
            groups = GroupCounts.of(batch.column(plan.group), offset)
        return cls(
            split=split,
            rows=batch.num_rows,
            columns=columns,
            label=label,
            groups=groups,
            hashes=RowHashes.of(offset, rows, labels, shared, near),
            sample=Reservoir.of(
                _without(batch, plan.skip_columns),
                offset,
                plan.sample_rows,
                plan.seed,
                plan.sample_cut,
            ),
            older=older,
            older_rows=older_rows,
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
            groups=(
                self.groups.merge(other.groups)
                if self.groups is not None and other.groups is not None
                else self.groups or other.groups
            ),
            source=self.source or other.source,
            format=self.format or other.format,
            tensor=(
                self.tensor.merge(other.tensor)
                if self.tensor is not None and other.tensor is not None
                else self.tensor or other.tensor
            ),
            older=self.older + other.older,
            older_rows=merge_examples(self.older_rows, other.older_rows),
            shuffled_by=self.shuffled_by or other.shuffled_by,
        )

    @property
    def numeric_columns(self) -> list[ColumnStats]:
        return [c for c in self.columns.values() if c.kind == "numeric"]


def _without(batch: pa.RecordBatch, skip: frozenset[str]) -> pa.RecordBatch:
    """``batch`` without the columns the plan leaves out (a row index written with the data):
    the sample feeds the baselines and the rules that read rows, which must not see them."""
    drop = [n for n in batch.schema.names if n in skip]
    return batch.drop_columns(drop) if drop else batch
