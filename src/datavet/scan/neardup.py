"""Near-duplicate row hashes: rows equal after normalisation.

Floats are rounded to ``digits`` significant digits, text is case-folded with surrounding and
repeated white space removed, and ID-like or declared columns are left out; the rest is hashed
like exact rows (128 bits, name order, NaN equals NaN). Rows that differ by 1e-9 relative noise
hash alike (except, rarely, a value that sits right on a rounding boundary).

The ID-like columns must be known before hashing. The local engine finds them first from the
only columns that can be ID-like (text, whole numbers named like keys), read alone, and then
computes the near hashes in the main scan (``ScanPlan.near_columns``, ``NearRows.of``); where a
source cannot read columns alone (CSV), or with the Dask engine, the engine streams the data a
second time through :func:`near_batch` and joins the parts with :func:`fold_near`.
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
    column_lanes,
    combine_lanes,
    float_values,
    fold_weights,
    string_values,
    value_lanes,
)
from datavet.scan.rounding import round_significant
from datavet.scan.rowhash import hash_rows

DIGITS = 6


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
        return _take_lanes(value_lanes(folded), enc.codes)
    return column_lanes(arr, cache=cache)


FINGERPRINTED = 32  # compared columns with a per-row fingerprint of the exact value


def near_rows(
    batch: pa.RecordBatch,
    columns: list[str],
    digits: int,
    caches: dict | None = None,
    left_out: list[str] | None = None,
    block=None,
) -> np.ndarray:
    """The (n, 2) near hashes of ``columns``; with ``left_out`` (the shared columns the near
    hash leaves out: ID-like, group, time), the (n, w) uint64 rows that :func:`unpack` reads:
    the near hash, how many compared values each row has, each left-out column's normalised
    hash and value, and one byte per compared column (the first 32 by name) fingerprinting
    its exact value, so a near copy can be checked column by column.

    ``block``: (the (2, n) weighted near-lane sum, the (n,) present values per row, the columns
    they cover) when the caller computed them (``scan/wide.py``); else many plain numeric
    columns are computed here at once."""
    from datavet.scan.wide import Fold, block_names, scan_block

    caches = {} if caches is None else caches
    names = set(batch.schema.names)
    if block is None:
        wide = block_names(batch, columns)
        if wide:
            fold = Fold(fold_weights(columns), near=True, digits=digits)
            found = scan_block(batch, wide, 0, stats=False, folds=[fold], counted=set(columns))
            block = (fold.partial, found.present, frozenset(wide))
    partial, present, skip = block if block is not None else (None, None, frozenset())
    near = combine_lanes(
        batch.num_rows,
        lambda name: near_lanes(batch.column(name), digits, caches.setdefault(name, {})),
        columns,
        names,
        partial,
        skip,
    )
    if left_out is None:
        return near
    n = batch.num_rows
    left = sorted(left_out)
    shown = sorted(columns)[:FINGERPRINTED]
    filled = np.zeros(n, np.uint64) if present is None else present.copy()
    for name in columns:
        if name in names and name not in skip:
            filled += _present(batch.column(name), caches.setdefault(name, {}))
    head = (
        filled | (np.uint64(len(left)) << np.uint64(32)) | (np.uint64(len(shown)) << np.uint64(48))
    )
    lanes = np.zeros((n, len(left)), np.uint64)
    values = np.full((n, len(left)), np.nan)
    for k, name in enumerate(left):
        if name not in names:
            continue
        arr = dense(batch.column(name))
        lanes[:, k] = near_lanes(arr, digits, caches.setdefault(name, {}))[0]
        if column_kind(arr.type) in ("numeric", "bool", "temporal"):
            values[:, k] = as_float(arr)
    prints = np.zeros((n, -(-len(shown) // 8) * 8), np.uint8)
    for k, name in enumerate(shown):
        if name in names:
            cache = caches.setdefault(name, {})
            if "print" not in cache:  # the row hash did not hash it (another split's column)
                column_lanes(batch.column(name), cache=cache)
            prints[:, k] = cache["print"]
    return np.ascontiguousarray(
        np.hstack([near, head[:, None], lanes, values.view(np.uint64), prints.view(np.uint64)])
    )


def _present(arr: pa.Array, cache: dict | None = None) -> np.ndarray:
    """1 where a value is there (not null, not NaN), else 0. ``cache``: the batch's other
    computations over this column (a float column's values as float64, null as NaN)."""
    arr = dense(arr)
    if pa.types.is_floating(arr.type):
        return (~np.isnan(float_values(arr, cache))).astype(np.uint64)
    if not arr.null_count:
        return np.ones(len(arr), np.uint64)
    ok = ~np.asarray(arr.is_null().to_numpy(zero_copy_only=False), dtype=bool)
    return ok.astype(np.uint64)


@dataclass
class NearDetail:
    """Per-row detail of the near hashes (see :func:`near_rows`)."""

    filled: np.ndarray  # (n,) compared values present in the row
    lanes: np.ndarray  # (n, k) normalised hashes of the left-out columns, in name order
    values: np.ndarray  # (n, k) their values as numbers (NaN for text)
    prints: np.ndarray  # (n, m) exact-value fingerprints of the first m compared columns


def unpack(rows: np.ndarray) -> tuple[np.ndarray, NearDetail | None]:
    """(the (n, 2) near hashes, the per-row detail or None when it was not computed).

    Views into ``rows``, not copies: the split's packed rows stay alive with its profile
    anyway, the near hashes are read once (S007 matches lane 0 first) and the detail only at
    the few matched rows; copying them was fresh memory (page faults) for nothing."""
    if rows.ndim != 2 or rows.shape[1] <= 2:
        return rows, None
    rows = np.ascontiguousarray(rows)  # a row's words side by side, so they can be viewed
    head = rows[:, 2]
    k = int(head[0] >> np.uint64(32) & np.uint64(0xFFFF)) if len(rows) else 0
    m = int(head[0] >> np.uint64(48)) if len(rows) else 0
    width = -(-m // 8)
    prints = rows[:, 3 + 2 * k : 3 + 2 * k + width].view(np.uint8)
    return rows[:, :2], NearDetail(
        filled=(head & np.uint64(0xFFFFFFFF)).astype(np.int64),
        lanes=rows[:, 3 : 3 + k],
        values=rows[:, 3 + k : 3 + 2 * k].view(np.float64),
        prints=prints[:, :m],
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
    detail: NearDetail | None = None  # per-row detail for checking a near copy column by column

    def __post_init__(self) -> None:
        if self.detail is None:
            self.near, self.detail = unpack(self.near)

    @classmethod
    def of(
        cls, hashes: RowHashes, older: int = 0, time_examples=(), against=None, keep=None
    ) -> NearRows:
        """From a scan that computed the near hashes itself (no second pass): the exact hashes
        are the scan's hashes over the shared features, S001's.

        ``against``: the other split's near hashes (first lane), when only rows that can match
        one of them are wanted (a spilled train split is read back slice by slice and keeps
        just those rows: the first equal of a test row's near hash is among them, and so is
        any exact copy, whose near hash is equal too)."""
        if hashes.spill is not None:
            import pandas as pd

            keep_pos, keep_near, keep_exact = [], [], []
            for start, near, exact in hashes.spill.near_slices():
                pos = np.arange(start, start + len(near), dtype=np.int64)
                mask = None
                if against is not None:
                    mask = pd.Series(near[:, 0]).isin(against).to_numpy()
                if keep is not None:
                    mask = keep(near[:, 0]) if mask is None else mask & keep(near[:, 0])
                if mask is not None:
                    idx = np.flatnonzero(mask)
                    pos, near, exact = pos[idx], near[idx], exact[idx]
                keep_pos.append(pos)
                keep_near.append(near)
                keep_exact.append(exact)
            if not keep_pos:
                raise ValueError("the scan did not compute near-duplicate hashes")
            return cls(
                np.concatenate(keep_pos),
                np.concatenate(keep_near),
                np.concatenate(keep_exact),
                older,
                tuple(time_examples)[:5],
            )
        hashes.consolidate()
        pos, exact, _ = hashes.arrays(shared=True)
        near = hashes.near()
        if near is None:
            raise ValueError("the scan did not compute near-duplicate hashes")
        return cls(pos, near, exact, older, tuple(time_examples)[:5])


_BIT = np.array([1 << k for k in range(8)], np.uint8)


def near_pair(train, test) -> dict[str, NearRows]:
    """Both splits' ``NearRows`` from the scan's hashes (profiles ``train`` and ``test``).

    When a split's hashes were spilled to disk, only rows that can take part in a near match
    are read back: test rows whose near hash may occur in train (a bitmap of the train near
    hashes' top bits, built in one streaming read), then train rows whose near hash occurs in
    those test rows. S007 finds the same rows: a match's first equal, and any exact copy
    (equal near hash too), are among the rows kept."""
    th, xh = train.hashes, test.hashes
    if th.spill is None and xh.spill is None:
        return {
            "train": NearRows.of(th, 0, train.older_rows),
            "test": NearRows.of(xh, test.older, test.older_rows),
        }
    keep = None
    if th.spill is not None:
        # a bitmap of 16 bits per train row, at most 2**30 bits (128 MB)
        bits = int(min(30, max(16, np.ceil(np.log2(max(th.spill.rows, 1) * 16)))))
        shift = np.uint64(64 - bits)
        seen = np.zeros(1 << (bits - 3), np.uint8)
        for _, near, _ in th.spill.near_slices():
            at = near[:, 0] >> shift
            np.bitwise_or.at(seen, (at >> np.uint64(3)).astype(np.int64), _BIT[at & np.uint64(7)])

        def keep(lane):
            at = lane >> shift
            return (seen[(at >> np.uint64(3)).astype(np.int64)] & _BIT[at & np.uint64(7)]) != 0

    out = {"test": NearRows.of(xh, test.older, test.older_rows, keep=keep)}
    out["train"] = NearRows.of(th, 0, train.older_rows, against=out["test"].near[:, 0])
    return out


@dataclass
class NearPart:
    """The near-duplicate hashes of one batch (see :func:`near_batch`); :func:`fold_near` joins
    a split's parts, in row order, into its :class:`NearRows`."""

    pos: np.ndarray
    near: np.ndarray  # packed as :func:`near_rows` returns it (detail included)
    exact: np.ndarray
    older: int = 0
    time_examples: tuple[int, ...] = ()


def near_batch(
    batch: pa.RecordBatch,
    offset: int,
    *,
    columns: list[str],
    exact_columns: list[str],
    as_number: frozenset[str],
    digits: int = DIGITS,
    time_column: str | None = None,
    time_before: int | None = None,
) -> NearPart:
    """One batch's near-duplicate hashes (and rows older than ``time_before``), for a second
    pass over a split (the engine streams the batches; see ``engines``)."""
    left_out = [c for c in exact_columns if c not in set(columns)]
    older, examples = 0, ()
    if time_column is not None and time_before is not None and time_column in batch.schema.names:
        older, examples = older_rows(batch.column(time_column), time_before, offset)
    return NearPart(
        np.arange(offset, offset + batch.num_rows, dtype=np.int64),
        near_rows(batch, columns, digits, left_out=left_out),
        hash_rows(batch, exact_columns, as_number),
        older,
        examples,
    )


def fold_near(parts: list[NearPart]) -> NearRows:
    """A split's :class:`NearRows` from its batches' parts, in row order."""
    if not parts:
        z = np.zeros((0, 2), np.uint64)
        return NearRows(np.zeros(0, np.int64), z, z, detail=None)
    examples = [e for p in parts for e in p.time_examples]
    return NearRows(
        np.concatenate([p.pos for p in parts]),
        np.concatenate([p.near for p in parts]),
        np.concatenate([p.exact for p in parts]),
        sum(p.older for p in parts),
        tuple(examples[:5]),
    )
