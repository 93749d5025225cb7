"""The default engine: stream a source batch by batch in this process.

Memory is bounded by the batch size (plus the row hashes, 24 bytes a row, and the sample), not by
the file size.
"""

from __future__ import annotations

from datavet.scan import Profile, ScanPlan
from datavet.sources import DEFAULT_BATCH_ROWS, SchemaRestart, TabularSource


def profile_source(
    source: TabularSource, plan: ScanPlan, split: str, *, batch_rows: int = DEFAULT_BATCH_ROWS
) -> Profile:
    """Fold every batch of ``source`` into one Profile."""
    restarts = 0
    while True:
        profile = Profile(split=split)
        try:
            for offset, batch in source.batches(batch_rows):
                profile = profile.merge(Profile.of_batch(batch, offset, plan, split))
        except SchemaRestart:
            # A CSV column held a value its inferred type could not: the source widened that
            # column (int -> float -> string); start again so every row is read with one type.
            restarts += 1
            if restarts > 2 * len(source.schema) + 1:  # each column widens at most twice
                raise
            continue
        break
    profile.source = source.name
    profile.format = source.format
    return profile
