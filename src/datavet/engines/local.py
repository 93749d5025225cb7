"""The default engine: stream a source batch by batch in this process, using every core.

Batches are profiled by a thread pool (pyarrow and numpy release the GIL in their kernels) and
merged in row order, so the result is the same as a serial scan. At most ``2 x workers``
batches are in flight: memory is bounded by the batch size (plus the row hashes, 24 bytes a
row, and the bounded sample), not by the file size.
"""

from __future__ import annotations

import os
from collections import deque
from concurrent.futures import ThreadPoolExecutor

from datavet.engines.progress import Progress
from datavet.scan import Profile, ScanPlan
from datavet.sources import DEFAULT_BATCH_ROWS, SchemaRestart, TabularSource


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
    restarts = 0
    while True:
        meter = Progress(f"scanning {split} ({source.name})", source.num_rows, enabled=progress)
        try:
            profile = _scan(source, plan, split, batch_rows, workers, meter)
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
    return profile


def _scan(source, plan, split, batch_rows, workers, meter) -> Profile:
    profile = Profile(split=split)
    if workers == 1:
        for offset, batch in source.batches(batch_rows):
            profile = profile.merge(Profile.of_batch(batch, offset, plan, split))
            meter.update(batch.num_rows)
        return profile
    pending: deque = deque()
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="datavet-scan") as pool:
        try:
            for offset, batch in source.batches(batch_rows):
                pending.append(pool.submit(Profile.of_batch, batch, offset, plan, split))
                while len(pending) >= 2 * workers:
                    part = pending.popleft().result()
                    profile = profile.merge(part)
                    meter.update(part.rows)
            while pending:
                part = pending.popleft().result()
                profile = profile.merge(part)
                meter.update(part.rows)
        finally:
            for fut in pending:
                fut.cancel()
    return profile
