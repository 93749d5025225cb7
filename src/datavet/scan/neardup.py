"""Near-duplicate row hashes: rows equal after normalisation.

Floats are rounded to ``digits`` significant digits, text is case-folded with surrounding and
repeated white space removed, and ID-like or declared columns are left out; the rest is hashed
like exact rows (128 bits, name order, NaN equals NaN). Rows that differ by 1e-9 relative noise
hash alike (except, rarely, a value that sits right on a rounding boundary).

The ID-like columns must be known before hashing. The local engine finds them first from the
only columns that can be ID-like (text, whole numbers named like keys), read alone, and then
computes the near hashes in the main scan (``ScanPlan.near_columns``, ``NearRows.of``); where a
source cannot read columns alone (CSV), or with the Dask engine, :func:`near_pass` streams the
data a second time.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from datavet.scan.columns import as_float, column_kind, dense
from datavet.scan.hashing import (
    RowHashes,
    _numeric_lanes,
    _take_lanes,
    _text_lanes,
    column_lanes,
    combine_lanes,
    float_values,
    hash_rows,
    string_values,
)

DIGITS = 6


def round_significant(x: np.ndarray, digits: int) -> np.ndarray:
    """``x`` rounded to ``digits`` significant digits (a new array; inf and NaN unchanged,
    -0.0 as 0.0). In place on scratch arrays: this runs on every float of every row."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        scale = np.abs(x)
        np.log10(scale, out=scale)
        np.floor(scale, out=scale)  # the magnitude
        scale[~np.isfinite(scale)] = 0
        np.subtract(digits - 1, scale, out=scale)
        np.power(10.0, scale, out=scale)
        out = np.multiply(x, scale)
        np.round(out, out=out)
        np.divide(out, scale, out=out)
    bad = ~np.isfinite(out)
    out[bad] = x[bad]  # inf stays inf, NaN stays NaN
    out += 0.0
    return out


def near_lanes(arr: pa.Array, digits: int, cache: dict | None = None) -> list[np.ndarray]:
    """The two hash lanes of one column after normalisation. ``cache``: the batch's other
    computations over this column (``hashing.column_lanes``); text is normalised and hashed
    once per distinct value."""
    arr = dense(arr)
    kind = column_kind(arr.type)
    if kind == "numeric" and pa.types.is_floating(arr.type):
        return _numeric_lanes(round_significant(float_values(arr, cache), digits))
    if kind == "string":
        enc = string_values(arr, cache)
        folded = pc.utf8_lower(enc.dictionary)
        folded = pc.utf8_trim_whitespace(folded)
        folded = pc.replace_substring_regex(folded, r"\s+", " ")
        values = folded.to_numpy(zero_copy_only=False).astype(object)
        return _take_lanes(_text_lanes(values, np.zeros(len(values), bool)), enc.codes)
    return column_lanes(arr, cache=cache)


def near_rows(
    batch: pa.RecordBatch, columns: list[str], digits: int, caches: dict | None = None
) -> np.ndarray:
    caches = {} if caches is None else caches
    return combine_lanes(
        batch.num_rows,
        lambda name: near_lanes(batch.column(name), digits, caches.setdefault(name, {})),
        columns,
        set(batch.schema.names),
    )


def older_rows(arr: pa.Array, before: int, offset: int) -> tuple[int, tuple[int, ...]]:
    """Rows of a date/time column older than ``before``: their number and the first five."""
    arr = dense(arr)
    if not (
        pa.types.is_temporal(arr.type)
        or pa.types.is_integer(arr.type)
        or pa.types.is_floating(arr.type)
    ):
        return 0, ()  # test holds this column as another type (text): S004 reports that
    t = as_float(arr)
    hit = np.flatnonzero(t < before)
    return len(hit), tuple((hit[:5] + offset).tolist())


@dataclass
class NearRows:
    pos: np.ndarray
    near: np.ndarray  # (n, 2)
    exact: np.ndarray  # (n, 2) over the shared features, as in S001
    older: int = 0  # rows whose time is before the threshold (time-order leakage)
    time_examples: tuple[int, ...] = ()

    @classmethod
    def of(cls, hashes: RowHashes, older: int = 0, time_examples=()) -> NearRows:
        """From a scan that computed the near hashes itself (no second pass): the exact hashes
        are the scan's hashes over the shared features, S001's."""
        hashes.consolidate()
        pos, exact, _ = hashes.arrays(shared=True)
        near = hashes.near()
        if near is None:
            raise ValueError("the scan did not compute near-duplicate hashes")
        return cls(pos, near, exact, older, tuple(time_examples)[:5])


def near_pass(
    source,
    *,
    columns: list[str],
    exact_columns: list[str],
    as_number: frozenset[str],
    digits: int = DIGITS,
    time_column: str | None = None,
    time_before: int | None = None,
    batch_rows: int = 65_536,
) -> NearRows:
    """Stream ``source`` once more for near-duplicate hashes (and rows older than a time)."""
    pos, near, exact = [], [], []
    older, examples = 0, []
    for offset, batch in source.batches(batch_rows):
        pos.append(np.arange(offset, offset + batch.num_rows, dtype=np.int64))
        near.append(near_rows(batch, columns, digits))
        exact.append(hash_rows(batch, exact_columns, as_number))
        if (
            time_column is not None
            and time_before is not None
            and time_column in batch.schema.names
        ):
            n_older, first = older_rows(batch.column(time_column), time_before, offset)
            older += n_older
            examples.extend(first)
    if not pos:
        z = np.zeros((0, 2), np.uint64)
        return NearRows(np.zeros(0, np.int64), z, z)
    return NearRows(
        np.concatenate(pos), np.concatenate(near), np.concatenate(exact), older, tuple(examples[:5])
    )
