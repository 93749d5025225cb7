"""The default engine: stream a source batch by batch in this process, using every core.

:class:`LocalEngine` runs every pass of an audit here: the table scan (below), the tensor pass
(blocks of samples on up to four threads, :mod:`datavet.engines.tensors`) and the second passes
(row keys, near duplicates; the near-duplicate hashes are folded into the main scan when the
ID-like columns can be known first, see :meth:`LocalEngine.near_guess`).

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
from collections.abc import Callable, Generator, Iterable
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing
from dataclasses import replace

import numpy as np
import pyarrow as pa

from datavet.engines.base import Engine, TableNeeds, check_rows
from datavet.engines.progress import Progress
from datavet.engines.spill import HashSpill
from datavet.scan import ColumnStats, Profile, Reservoir, RowHashes, ScanPlan
from datavet.scan.columns import column_kind
from datavet.scan.idlike import MIN_DISTINCT, id_like_columns, looks_like_key_name
from datavet.sources import DEFAULT_BATCH_ROWS, SchemaRestart, TableSource, TabularSource
from datavet.sources.budget import HASHES_IN_MEMORY
from datavet.sources.parquet import ArrowIpcSource, ParquetSource

# A split with more rows than this has its row hashes written to disk during the scan, in hash
# partitions (scan/hashing.py HashSpill), and the row checks read them a few partitions at a
# time: memory stops growing with the rows. Below it they stay in memory (no files at all).
SPILL_ROWS = HASHES_IN_MEMORY  # 1,500,000 (the memory budget counts the same)


def default_workers() -> int:
    return max(1, min(8, os.cpu_count() or 1))


def ordered_map(
    function: Callable, tasks: Iterable[tuple], workers: int, *, in_flight: int, name: str
) -> Generator:
    """``function(*task)`` for every task, on ``workers`` threads, yielded in task order, with
    at most ``in_flight`` tasks submitted and not yet yielded (memory stays bounded by that many
    batches). One worker: everything on this thread."""
    if workers <= 1:
        for task in tasks:
            yield function(*task)
        return
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix=name) as pool:
        pending: deque = deque()
        try:
            for task in tasks:
                pending.append(pool.submit(function, *task))
                if len(pending) >= in_flight:
                    yield pending.popleft().result()
            while pending:
                yield pending.popleft().result()
        finally:
            for fut in pending:
                fut.cancel()


def prefetched(items: Iterable, depth: int) -> Generator:
    """``items`` produced on a thread of their own, at most ``depth`` ahead: the source decodes
    the next batches (pyarrow releases the GIL) while this thread merges the last ones. An
    exception in the producer is raised here, where the item would have come."""
    import queue
    import threading

    q: queue.Queue = queue.Queue(maxsize=max(1, depth))
    stop = threading.Event()
    done = object()

    def produce():
        try:
            for item in items:
                while not stop.is_set():
                    try:
                        q.put((None, item), timeout=0.1)
                        break
                    except queue.Full:
                        continue
                if stop.is_set():
                    return
            q.put((None, done))
        except BaseException as exc:  # handed to the consumer, raised there
            q.put((exc, None))

    thread = threading.Thread(target=produce, name="datavet-read", daemon=True)
    thread.start()
    try:
        while True:
            exc, item = q.get()
            if exc is not None:
                raise exc
            if item is done:
                return
            yield item
    finally:
        stop.set()
        while thread.is_alive():  # let a blocked producer finish its put
            try:
                q.get_nowait()
            except queue.Empty:
                thread.join(0.05)


class LocalEngine(Engine):
    """Every pass in this process, on ``workers`` threads (default: the cores, up to 8 for
    tables and 4 for tensors)."""

    name = "local"

    def profile_tables(self, sources, plan: ScanPlan, needs: TableNeeds):
        train_src, test_src = sources["train"], sources.get("test")
        # S007/S008 in the same pass when the ID-like columns can be known first
        guess = self.near_guess(train_src, test_src, plan, needs)
        train_plan = plan if guess is None else replace(plan, **guess)
        profiles = {"train": self._profile(train_src, train_plan, "train")}
        if test_src is not None:
            test_plan = train_plan
            newest = profiles["train"].columns.get((guess or {}).get("time_column"))
            if guess is not None and newest is not None:
                test_plan = replace(train_plan, time_before=(newest.time_range or (0, None))[1])
            profiles["test"] = self._profile(test_src, test_plan, "test")
        return profiles, None, guess

    def _profile(self, source, plan, split):
        return profile_source(
            source,
            plan,
            split,
            batch_rows=self.batch_rows,
            workers=self.workers,
            progress=self.progress,
        )

    def near_guess(self, train_src, test_src, plan: ScanPlan, needs: TableNeeds) -> dict | None:
        """What the scan needs to compute the near-duplicate hashes (S007) and count old test
        rows (S008) in the same pass: the columns they cover leave out the ID-like ones, so
        those are found first from the few columns that can be ID-like (text; whole numbers
        named like keys), read alone. None when S007/S008 are not needed or the source cannot
        read columns alone (CSV): then a second pass does it. :meth:`scan_tables` checks the
        guess against the full scan and falls back to the second pass if it differs."""
        if test_src is None or not needs.near:
            return None
        group = needs.group
        kinds = {f.name: column_kind(f.type) for f in train_src.schema}
        temporal = [n for n, k in kinds.items() if k == "temporal"]
        time_column = needs.time
        if time_column is None:
            time_column = temporal[0] if len(temporal) == 1 else None
        hashed = set(plan.hash_columns)
        candidates = [
            f.name
            for f in train_src.schema
            if f.name in hashed
            and f.name not in (plan.target, group)
            and (
                kinds[f.name] == "string"
                or (
                    kinds[f.name] == "numeric"
                    and looks_like_key_name(f.name)
                    and pa.types.is_integer(getattr(f.type, "value_type", f.type))
                )
            )
        ]
        if isinstance(train_src, ParquetSource):
            # a text column of fewer than MIN_DISTINCT values cannot be ID-like: told from the
            # row groups' dictionaries, without profiling (or hashing) it
            few = set(train_src.few_text_values(candidates, MIN_DISTINCT))
            candidates = [c for c in candidates if c not in few]
        stats = prescan_columns(train_src, candidates, batch_rows=self.batch_rows)
        if stats is None:
            return None
        exclude = (plan.target or "", group or "")
        ids = id_like_columns(Profile(split="train", columns=stats), exclude=exclude)
        keys = {c for c in (group, *ids) if c}
        return {
            "near_columns": tuple(
                c for c in plan.hash_columns if c not in keys and c != time_column
            ),
            "near_digits": needs.near_digits,
            "time_column": time_column,
        }

    def profile_tensors(self, train, test=None, *, sample_rows: int, max_samples=None):
        from datavet.engines import tensors

        workers = self.workers or max(1, min(tensors.MAX_WORKERS, os.cpu_count() or 1))

        def map_blocks(function, blocks):
            return ordered_map(function, blocks, workers, in_flight=workers, name="datavet-tensors")

        run = tensors.profile_tensors(
            train,
            test,
            sample_rows=sample_rows,
            batch_rows=self.batch_rows,
            map_blocks=map_blocks,
            workers=workers,
            max_samples=max_samples,
        )
        check_rows({"train": train, "test": test}, run.profiles)
        return run


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
    if profile.sample.table is not None:  # the batches' sample rows, appended without copies
        profile.sample.table = profile.sample.table.combine_chunks()
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

    workers = default_workers()  # batches profiled on every core, merged in row order
    parts = ordered_map(of, batches, workers, in_flight=2 * workers, name="datavet-prescan")
    with closing(parts):
        for part in parts:
            fold(part)
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

    batches = source.batches(batch_rows)
    if workers > 1:
        batches = prefetched(batches, workers)
    tasks = ((batch, offset) for offset, batch in batches)
    parts = ordered_map(profile_batch, tasks, workers, in_flight=2 * workers, name="datavet-scan")
    with closing(parts):
        for part in parts:
            profile = fold(profile, part)
    if spill is not None:
        if rows is not None and profile.rows != rows:
            raise _Overflow
        profile.hashes = RowHashes(spill=spill)
    elif store is not None:
        if profile.rows != rows:
            raise _Overflow
        profile.hashes = store.hashes()
    return profile
