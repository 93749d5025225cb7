"""The default engine: stream a source batch by batch in this process, using every core.

Batches are profiled by a thread pool (pyarrow and numpy release the GIL in their kernels) and
merged in row order, so the result is the same as a serial scan. At most ``2 x workers``
batches are in flight: memory is bounded by the batch size (plus the row hashes, 24 bytes a
row, 40 with the near-duplicate hashes, and the bounded sample), not by the file size. When the
number of rows is known up front (Parquet, Arrow files, tables), the sample's cut-off key is
computed first, so a batch copies only the sample rows that will stay.
"""

from __future__ import annotations

import os
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

import numpy as np

from datavet.engines.progress import Progress
from datavet.scan import ColumnStats, Profile, Reservoir, RowHashes, ScanPlan
from datavet.scan.hashing import HashSpill
from datavet.sources import DEFAULT_BATCH_ROWS, SchemaRestart, TableSource, TabularSource
from datavet.sources.parquet import ArrowIpcSource, ParquetSource

# A split with more rows than this has its row hashes written to disk during the scan, in hash
# partitions (scan/hashing.py HashSpill), and the row checks read them a few partitions at a
# time: memory stops growing with the rows. Below it they stay in memory (no files at all).
SPILL_ROWS = 500_000


def default_workers() -> int:
    return max(1, min(8, os.cpu_count() or 1))


def profile_source(
    source: TabularSource,
    plan: ScanPlan,
    split: str,
    *,
    batch_rows: int = DEFAULT_BATCH_ROWS,
    workers: int | None = None,
    progress: bool | None = None,
) -> Profile:
    """Fold every batch of ``source`` into one Profile."""
    workers = default_workers() if workers is None else max(1, workers)
    if plan.sample_cut is None and _exact_rows(source) is not None:
        plan = replace(plan, sample_cut=Reservoir.cut(source.num_rows, plan.sample_rows, plan.seed))
    restarts = 0
    while True:
        meter = Progress(f"scanning {split} ({source.name})", source.num_rows, enabled=progress)
        try:
            profile = _scan(source, plan, split, batch_rows, workers, meter)
            if plan.sample_cut is not None and profile.sample.seen != source.num_rows:
                raise _Overflow
        except _Overflow:
            # the footer's row count was wrong: the sample's cut-off and the hash arrays sized
            # by it may be too; scan again without them
            plan = replace(plan, sample_cut=None)
            continue
        except SchemaRestart:
            # A CSV column held a value its inferred type could not: the source widened that
            # column (int -> float -> string); start again so every row is read with one type.
            restarts += 1
            if restarts > 2 * len(source.schema) + 1:  # each column widens at most twice
                raise
            continue
        finally:
            meter.close()
        break
    profile.source = source.name
    profile.format = source.format
    profile.hashes.consolidate()  # one array per field: no copies when the row checks read them
    release_memory()
    return profile


def release_memory() -> None:
    """Hand the heap memory freed by the scan's batches back to the system (glibc keeps it in
    per-thread arenas otherwise, and it counts in the peak RSS of what comes next)."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # not glibc: nothing to do
        pass


def _exact_rows(source: TabularSource) -> int | None:
    """The number of rows, when the source knows it exactly before reading."""
    if isinstance(source, (ParquetSource, TableSource)) or (
        isinstance(source, ArrowIpcSource) and not source.stream
    ):
        return source.num_rows
    return None


def _column_batches(source: TabularSource, columns: list[str], batch_rows: int):
    """(offset, batch of ``columns`` only), or None when the source cannot read columns alone
    (CSV: every byte has to be parsed anyway)."""
    if isinstance(source, ParquetSource):
        return source.column_batches(columns, batch_rows)
    if isinstance(source, TableSource) or (
        isinstance(source, ArrowIpcSource) and not source.stream
    ):
        return ((o, b.select(columns)) for o, b in source.batches(batch_rows))
    return None


def prescan_columns(
    source: TabularSource, columns: list[str], *, batch_rows: int = DEFAULT_BATCH_ROWS
) -> dict[str, ColumnStats] | None:
    """The statistics of a few columns, read alone (a Parquet column is read by itself): what
    must be known before the main scan (which text columns are ID-like, so the near-duplicate
    hashes can be computed in the same pass). None when the source cannot read columns alone."""
    if not columns:
        return {}
    batches = _column_batches(source, columns, batch_rows)
    if batches is None:
        return None
    stats: dict[str, ColumnStats] = {}

    def of(offset, batch):
        return [ColumnStats.of(n, a, offset) for n, a in zip(batch.schema.names, batch.columns)]

    def fold(parts):
        for part in parts:
            stats[part.name] = stats[part.name].merge(part) if part.name in stats else part

    workers = default_workers()
    if workers == 1:
        for offset, batch in batches:
            fold(of(offset, batch))
        return stats
    pending: deque = deque()  # batches profiled on every core, merged in row order
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="datavet-prescan") as pool:
        try:
            for offset, batch in batches:
                pending.append(pool.submit(of, offset, batch))
                while len(pending) >= 2 * workers:
                    fold(pending.popleft().result())
            while pending:
                fold(pending.popleft().result())
        finally:
            for fut in pending:
                fut.cancel()
    return stats


class _Overflow(Exception):
    """The source held more rows than its metadata said."""


class _HashStore:
    """The split's row hashes written in place into arrays of the final size (the number of
    rows is known up front): no list of per-batch chunks to concatenate at the end, and no
    heap fragmented by thousands of freed 1 MB chunks."""

    def __init__(self, rows: int):
        self.rows = rows
        self.fields: list[np.ndarray | None] | None = None

    def take(self, part: Profile) -> None:
        """Move ``part``'s hashes into the store (``part.hashes`` is emptied)."""
        for offset, *arrays in part.hashes.chunks:
            if self.fields is None:
                self.fields = [
                    None if a is None else np.empty((self.rows, *a.shape[1:]), a.dtype)
                    for a in arrays
                ]
            n = len(arrays[0])
            if offset + n > self.rows:
                raise _Overflow
            for field, a in zip(self.fields, arrays):
                if field is not None:
                    field[offset : offset + n] = a
        part.hashes = RowHashes()

    def hashes(self) -> RowHashes:
        if self.fields is None:
            return RowHashes()
        return RowHashes([(0, *self.fields)])


def _scan(source, plan, split, batch_rows, workers, meter) -> Profile:
    profile = Profile(split=split)
    rows = _exact_rows(source)
    spill = HashSpill() if rows is not None and rows > SPILL_ROWS else None
    store = None
    if spill is None and rows is not None and plan.sample_cut is not None:
        store = _HashStore(rows)

    def profile_batch(batch, offset: int) -> Profile:
        """One batch's Profile; its hashes written out here, in the worker, when spilling."""
        part = Profile.of_batch(batch, offset, plan, split)
        if spill is not None:
            for chunk in part.hashes.chunks:
                spill.add(*chunk)
            part.hashes = RowHashes()
        return part

    def fold(profile: Profile, part: Profile) -> Profile:
        nonlocal spill
        if spill is not None:
            for chunk in part.hashes.chunks:  # computed before the spill began
                spill.add(*chunk)
            part.hashes = RowHashes()
        elif store is not None:
            store.take(part)
        meter.update(part.rows)
        profile = profile.merge(part)
        if spill is None and store is None and profile.rows > SPILL_ROWS:
            # more rows than the source could say up front (a CSV): spill from here on
            spill = HashSpill()
            for chunk in profile.hashes.chunks:
                spill.add(*chunk)
            profile.hashes = RowHashes()
        return profile

    if workers == 1:
        for offset, batch in source.batches(batch_rows):
            profile = fold(profile, profile_batch(batch, offset))
    else:
        pending: deque = deque()
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="datavet-scan") as pool:
            try:
                for offset, batch in source.batches(batch_rows):
                    pending.append(pool.submit(profile_batch, batch, offset))
                    while len(pending) >= 2 * workers:
                        profile = fold(profile, pending.popleft().result())
                while pending:
                    profile = fold(profile, pending.popleft().result())
            finally:
                for fut in pending:
                    fut.cancel()
    if spill is not None:
        if rows is not None and profile.rows != rows:
            raise _Overflow
        profile.hashes = RowHashes(spill=spill)
    elif store is not None:
        if profile.rows != rows:
            raise _Overflow
        profile.hashes = store.hashes()
    return profile
