"""The 128-bit hash of each row of a batch: the column hashes of ``scan/hashing.py`` combined,
with many plain numeric columns folded at once by the wide-table scan (``scan/wide.py``)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from datavet.scan.hashing import column_lanes, combine_lanes, fold_weights
from datavet.scan.wide import Fold, block_names, scan_block


def hash_rows(
    batch: pa.RecordBatch,
    columns: list[str],
    as_number: frozenset[str],
    caches: dict[str, dict] | None = None,
    block=None,
) -> np.ndarray:
    """An (n, 2) uint64 array: the 128-bit hash of each row over ``columns`` (a missing column
    hashes as all-missing). ``caches``: per column name, as in :func:`column_lanes`.
    ``block``: (the (2, n) weighted lane sum, the columns it covers) when the caller already
    folded some columns (``scan/wide.py``); else many plain numeric columns are folded here
    at once."""
    caches = {} if caches is None else caches
    if block is None:
        names = block_names(batch, columns)
        if names:
            fold = Fold(fold_weights(columns))
            scan_block(batch, names, 0, stats=False, folds=[fold])
            block = (fold.partial, frozenset(names))
    partial, skip = block if block is not None else (None, frozenset())
    return combine_lanes(
        batch.num_rows,
        lambda name: column_lanes(
            batch.column(name), name in as_number, caches.setdefault(name, {})
        ),
        columns,
        set(batch.schema.names),
        partial,
        skip,
    )
