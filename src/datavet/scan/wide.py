"""Many plain numeric columns of one short batch, computed together.

A table of 3 rows and 200,000 columns has as many cells as one of 600,000 rows and one column,
but profiled a column at a time it costs 200,000 rounds of per-column Python (type checks,
Arrow to NumPy, a dozen small NumPy calls, a value count, the hash lanes): minutes instead of
seconds. Here the batch's integer, float and boolean columns are stacked into a 2-D float64
block, one slice of columns at a time (:data:`BLOCK_CELLS` cells, so memory stays at one batch),
and every statistic, value count, distinct-value sketch and hash lane is computed over the whole
block in NumPy. The results are exactly those of :meth:`ColumnStats.of`, ``column_lanes`` and
``near_lanes`` column by column (``tests/scan/test_wide.py`` compares them):

- moments: each column's finite values, in row order, as one contiguous row of a 2-D array
  reduced along its last axis (NumPy sums each row exactly as it sums a 1-D array);
- value counts: a stable sort along each row (equal values keep row order, so a group's first
  element is the value's first appearance), listed in order of first appearance;
- row hashes: ``combine_lanes`` folds columns in name order with a multiply-add, which is
  ``seed * M**m + sum(lane_p * M**(m - 1 - p))`` modulo 2**64: each column's lanes are weighted
  by their power of the multiplier and summed over the block.

Taller batches (:data:`MAX_ROWS` rows and more) and other column types go column by column:
their per-column cost is already small beside their cells.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from datavet.scan.columns import (
    MAX_EXAMPLES,
    SCREEN_MIN_ROWS,
    ColumnStats,
    _count_numbers,
    as_float,
)
from datavet.scan.counters import CAPACITY, ValueCounter
from datavet.scan.hashmix import _MISSING, _SEEDS, _U, _splitmix_inplace
from datavet.scan.kmv import KMV, K
from datavet.scan.moments import Moments

MIN_COLUMNS = 16  # fewer plain numeric columns than this: column by column
MAX_ROWS = SCREEN_MIN_ROWS  # batches this tall or taller: column by column
BLOCK_CELLS = 1 << 20  # cells of one slice of the block (8 MB of float64)

_PLAIN = {
    pa.int8(),
    pa.int16(),
    pa.int32(),
    pa.int64(),
    pa.uint8(),
    pa.uint16(),
    pa.uint32(),
    pa.uint64(),
    pa.float32(),
    pa.float64(),
    pa.bool_(),
}
_KINDS = {t: ("bool" if t == pa.bool_() else "numeric") for t in _PLAIN}
_INTEGER = {t for t in _PLAIN if pa.types.is_integer(t)}
_FLOATING = {pa.float32(), pa.float64()}


def _plain(t: pa.DataType) -> bool:
    try:
        return t in _PLAIN
    except TypeError:  # an unhashable (extension) type
        return False


def block_names(batch: pa.RecordBatch, candidates) -> list[str]:
    """The columns of ``candidates`` (in batch order) the block computes, or [] when the batch
    is better profiled column by column (too few such columns, or too many rows)."""
    n = batch.num_rows
    if n == 0 or n >= MAX_ROWS:
        return []
    wanted = candidates if isinstance(candidates, (set, frozenset)) else set(candidates)
    out = [
        f.name
        for i, f in enumerate(batch.schema)
        if f.name in wanted and _plain(f.type) and not _wide_ints(batch.column(i))
    ]
    return out if len(out) >= MIN_COLUMNS else []


def _wide_ints(arr: pa.Array) -> bool:
    """A 64-bit integer column with values beyond 2**53, which float64 would merge: profiled
    column by column (``values.wide_ints``), not in the float block."""
    if not (pa.types.is_int64(arr.type) or pa.types.is_uint64(arr.type)) or not len(arr):
        return False
    lo, hi = pc.min_max(arr).values()
    return (lo.is_valid and lo.as_py() <= -(2**53)) or (hi.is_valid and hi.as_py() >= 2**53)


@dataclass
class Fold:
    """One row hash the block contributes to: ``weights`` (column -> its multiplier power, see
    ``hashing.fold_weights``), with near-duplicate lanes (floats rounded) when ``near``."""

    weights: dict[str, int]
    near: bool = False
    digits: int = 6
    partial: np.ndarray | None = None  # (2, n) uint64: the block's weighted lane sums


@dataclass
class Block:
    names: list[str]
    stats: dict[str, ColumnStats] = field(default_factory=dict)
    folds: list[Fold] = field(default_factory=list)
    present: np.ndarray | None = None  # (n,) uint64: values present per row, over ``counted``


def scan_block(
    batch: pa.RecordBatch,
    names: list[str],
    offset: int,
    *,
    stats: bool = True,
    folds: list[Fold] = (),
    counted: frozenset[str] | set[str] | None = None,
) -> Block:
    """Statistics of the ``names`` columns (when ``stats``), each fold's weighted lane sums,
    and the number of non-missing values per row over the block columns in ``counted``."""
    n = batch.num_rows
    folds = list(folds)
    for f in folds:
        f.partial = np.zeros((2, n), _U)
    block = Block(list(names), folds=folds)
    if counted is not None:
        block.present = np.zeros(n, _U)
    step = max(1, BLOCK_CELLS // max(n, 1))
    index = {name: i for i, name in enumerate(batch.schema.names)}
    for start in range(0, len(names), step):
        chunk = names[start : start + step]
        arrays = [batch.column(index[name]) for name in chunk]
        x = _floats(arrays, n)
        nan = np.isnan(x)
        if stats:
            block.stats.update(_stats(chunk, arrays, x, nan, offset))
        if counted is not None:
            use = np.array([name in counted for name in chunk], bool)
            if use.any():
                block.present += (~nan[use]).sum(axis=0, dtype=_U)
        if folds:
            exact = None
            for f in folds:
                w = np.array([f.weights.get(name, 0) for name in chunk], dtype=_U)
                if not w.any():
                    continue
                if f.near:
                    floating = np.array([a.type in _FLOATING for a in arrays], bool)
                    lanes = _lanes(_near_values(x, floating, f.digits), nan)
                else:
                    if exact is None:
                        exact = _lanes(x, nan)
                    lanes = exact
                for j in range(2):
                    f.partial[j] += (lanes[j] * w[:, None]).sum(axis=0, dtype=_U)
    return block


def _floats(arrays: list[pa.Array], n: int) -> np.ndarray:
    """(columns, rows) float64, as ``as_float`` reads each column (missing as NaN, -0.0 as 0.0)."""
    x = np.empty((len(arrays), n))
    for i, arr in enumerate(arrays):
        if arr.null_count and arr.type == pa.bool_():
            x[i] = as_float(arr)
        else:
            x[i] = arr.to_numpy(zero_copy_only=False)  # integers with nulls: float64, NaN
    with np.errstate(invalid="ignore"):
        x += 0.0
    return x


def _lanes(x: np.ndarray, nan: np.ndarray) -> list[np.ndarray]:
    """``hashing._numeric_lanes`` of every element of ``x`` (any shape)."""
    bits = x.view(_U)
    out = []
    for seed, token in zip(_SEEDS, _MISSING):
        h = np.bitwise_xor(bits, seed)
        h += _U(0x9E3779B97F4A7C15)
        h = _splitmix_inplace(h)
        h[nan] = token
        out.append(h)
    return out


def _near_values(x: np.ndarray, floating: np.ndarray, digits: int) -> np.ndarray:
    """Float columns rounded as ``neardup.near_lanes`` rounds them; the others unchanged."""
    from datavet.scan.rounding import round_significant

    if not floating.any():
        return x
    out = x.copy()
    out[floating] = round_significant(x[floating], digits)
    return out


def _stats(
    names: list[str], arrays: list[pa.Array], x: np.ndarray, nan: np.ndarray, offset: int
) -> dict[str, ColumnStats]:
    m, n = x.shape
    pinf = np.isposinf(x)
    ninf = np.isneginf(x)
    ok = np.isfinite(x)
    missing = nan.sum(axis=1).tolist()
    posinf = pinf.sum(axis=1).tolist()
    neginf = ninf.sum(axis=1).tolist()
    nfin = ok.sum(axis=1)
    lo = np.where(ok, x, np.inf).min(axis=1).tolist()
    hi = np.where(ok, x, -np.inf).max(axis=1).tolist()
    moments = _moments(x, ok, nfin)
    missing_rows = _first_rows(nan, offset)
    inf_rows = _first_rows(pinf | ninf, offset)
    values, keys = _values(names, arrays, x, nan, offset)
    out = {}
    for i, name in enumerate(names):
        t = arrays[i].type
        out[name] = ColumnStats(
            name=name,
            dtype=str(t),
            kind=_KINDS[t],
            rows=n,
            missing=missing[i],
            posinf=posinf[i],
            neginf=neginf[i],
            finite=moments[i],
            min=lo[i],
            max=hi[i],
            values=values[i],
            missing_rows=missing_rows.get(i, ()),
            inf_rows=inf_rows.get(i, ()),
            keys=keys.get(i),
        )
    return out


def _moments(x: np.ndarray, ok: np.ndarray, nfin: np.ndarray) -> list[Moments]:
    """``Moments.of(column[finite])`` for every row of ``x``: rows with the same number of
    finite values are compacted into one 2-D array and reduced along its rows."""
    m, n = x.shape
    out: list[Moments] = [Moments()] * m
    for k in np.unique(nfin).tolist():
        if k == 0:
            continue
        rows = np.flatnonzero(nfin == k)
        vals = x[rows] if k == n else x[rows][ok[rows]].reshape(len(rows), k)
        with np.errstate(over="ignore", invalid="ignore"):
            mean = vals.sum(axis=1) / k
            m2 = np.square(vals - mean[:, None]).sum(axis=1)
        good = np.isfinite(mean)
        for i, (r, mu, s2) in enumerate(zip(rows.tolist(), mean.tolist(), m2.tolist())):
            out[r] = Moments(k, mu, s2) if good[i] else Moments.of(vals[i])
    return out


def _first_rows(mask: np.ndarray, offset: int) -> dict[int, tuple[int, ...]]:
    """Per row of ``mask`` with a True: the first MAX_EXAMPLES positions (plus ``offset``)."""
    counts = mask.sum(axis=1)
    if not counts.any():
        return {}
    rows, cols = np.nonzero(mask)  # row-major: by block row, then position
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    cols = (cols + offset).tolist()
    return {
        i: tuple(cols[s : s + min(c, MAX_EXAMPLES)])
        for i, s, c in zip(range(len(counts)), starts.tolist(), counts.tolist())
        if c
    }


def _values(
    names: list[str], arrays: list[pa.Array], x: np.ndarray, nan: np.ndarray, offset: int
) -> tuple[list[ValueCounter], dict[int, KMV]]:
    """Per row: the ValueCounter of its non-NaN values in order of first appearance (as
    ``pyarrow.compute.value_counts`` lists them), and for integer columns the KMV sketch of
    their hashes (distinct values have distinct hashes: the sketch is the smallest hashes of
    the distinct values)."""
    m, n = x.shape
    order = np.argsort(x, axis=1, kind="stable")  # NaN last
    s = np.take_along_axis(x, order, axis=1)
    valid = ~np.isnan(s)
    start = valid.copy()
    start[:, 1:] &= s[:, 1:] != s[:, :-1]
    row, pos = np.nonzero(start)  # one per distinct value, by row then value
    n_valid = valid.sum(axis=1)
    # a group runs to the next group's start, or to the row's last valid value
    flat = row * n + pos
    ends = np.empty_like(flat)
    ends[:-1] = flat[1:]
    last = np.r_[row[1:] != row[:-1], True] if len(row) else np.zeros(0, bool)
    ends[last] = row[last] * n + n_valid[row[last]]
    counts = ends - flat
    first = order[row, pos]
    rank = np.lexsort((first, row))  # by row, then first appearance
    distinct = np.bincount(row, minlength=m)
    bounds = np.concatenate([[0], np.cumsum(distinct)]).tolist()
    vals_sorted = s[row, pos]
    vals = vals_sorted[rank].tolist()
    cnts = counts[rank].tolist()
    totals = (n - nan.sum(axis=1)).tolist()
    out: list[ValueCounter] = []
    for i in range(m):
        a, b = bounds[i], bounds[i + 1]
        if b - a > CAPACITY:
            out.append(_count_numbers(_present(x[i], nan[i], arrays[i]), offset))
            continue
        keys = vals[a:b]
        if arrays[i].type == pa.bool_():
            keys = [bool(v) for v in keys]
        out.append(ValueCounter(CAPACITY, dict(zip(keys, cnts[a:b])), totals[i], True))
    sketches: dict[int, KMV] = {}
    ints = [i for i, arr in enumerate(arrays) if arr.type in _INTEGER]
    if ints:
        hashed = _lanes(vals_sorted, np.zeros(len(vals_sorted), bool))[0]
        by = np.lexsort((hashed, row))  # by row, then hash
        hashed = hashed[by]
        for i in ints:
            a, b = bounds[i], bounds[i + 1]
            sketches[i] = KMV(K, hashed[a : min(b, a + K)].copy()) if b > a else KMV()
    return out, sketches


def _present(x: np.ndarray, nan: np.ndarray, arr: pa.Array) -> np.ndarray:
    present = x[~nan]
    return present.astype(bool) if arr.type == pa.bool_() else present
