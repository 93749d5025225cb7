"""Vector columns: a table column whose every value is a list of numbers (an embedding).

Arrow ``list``, ``large_list``, ``list_view`` and ``fixed_size_list`` of numbers (and the
``fixed_shape_tensor`` extension, stored as one), as Parquet and Arrow files hold them and as
pandas columns of NumPy arrays or lists become. Such a column is read the way a tensor input is:
one sample per row, one *dimension* per element index.

The column's :class:`~datavet.scan.columns.ColumnStats` counts rows, as for every column:
``missing`` is the rows that are null or hold a NaN (or null) element, ``posinf``/``neginf``
the rows holding an infinite element, each with the first rows; the moments, min and max are
over all finite elements (as a tensor channel's). :class:`VectorStats` adds what rows cannot
say: element counts, the element indices (dimensions) the NaN and infinities sit in, the
smallest and largest value per dimension (which dimensions never change, with
:class:`~datavet.scan.tensors.PositionStats`, the tensors' own), per-dimension moments and
the vector lengths (how many rows have each length, with the first rows, so vectors of
different lengths can be named). Everything merges, batch by batch and across Dask partitions.

An empty vector of floating-point numbers holds no value at all: it counts as a null row (an
embedding with nothing in it breaks ``np.stack`` as a missing one does). Lists of integers (token
or category IDs) may be empty and may differ in length: that is how sequences are.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from datavet.scan.moments import Moments, merge_arrays
from datavet.scan.values import is_vector_type  # noqa: F401 (re-exported)

MAX_DIMS = 1 << 16  # per-dimension statistics up to this vector length
MAX_PADDED = 1 << 24  # ragged vectors: per-dimension statistics while padding stays this small
MAX_ELEMENT_EXAMPLES = 5
MAX_LENGTHS = 32  # distinct vector lengths counted (rows and first rows per length)
CHUNK_ELEMENTS = 1 << 20  # a batch's vectors are read this many elements at a time (8 MB)


def row_slices(arr: pa.Array, max_elements: int | None = None) -> list[tuple[int, int]]:
    """(start, length) row ranges of a vector column holding about ``max_elements`` elements
    each (one row more when a single vector is longer), so the float64 copies, masks and hash
    words of a wide embedding batch stay small whatever the batch size."""
    max_elements = max_elements or CHUNK_ELEMENTS
    lengths = _lengths(arr)
    total = int(lengths.sum())
    if total <= max_elements:
        return [(0, len(arr))]
    ends = np.cumsum(lengths)
    out, start = [], 0
    while start < len(arr):
        base = int(ends[start - 1]) if start else 0
        stop = int(np.searchsorted(ends, base + max_elements, side="right"))
        stop = max(stop, start + 1)
        out.append((start, stop - start))
        start = stop
    return out


def _pad(a: np.ndarray, length: int, fill) -> np.ndarray:
    if len(a) >= length:
        return a
    return np.concatenate([a, np.full(length - len(a), fill, dtype=a.dtype)])


@dataclass(slots=True)
class VectorStats:
    """What a vector column adds to its ColumnStats (see the module docstring)."""

    value_type: str  # the elements' type ("float", "double", "int64", ...)
    min_len: int = 0  # over non-null rows
    max_len: int = 0
    elements: int = 0  # elements of non-null rows
    nan_values: int = 0  # NaN or null elements
    posinf_values: int = 0
    neginf_values: int = 0
    null_rows: int = 0  # rows with no vector: null, or an empty vector of floats
    empty_rows: int = 0  # of which empty vectors of floats
    # vector length -> (rows, first rows) over non-null rows (empty vectors included), for at
    # most MAX_LENGTHS lengths (the shortest and longest kept); ``more_lengths``: others seen
    lengths: dict[int, tuple[int, tuple[int, ...]]] = field(default_factory=dict)
    more_lengths: bool = False
    nan_at: tuple[tuple[int, int], ...] = ()  # first (row, element index) holding NaN
    inf_at: tuple[tuple[int, int], ...] = ()
    integral: bool = True  # every finite element is a whole number
    # per dimension (None past MAX_DIMS, or for very ragged vectors):
    dim_nan: np.ndarray | None = None  # NaN elements per dimension
    dim_inf: np.ndarray | None = None
    dim_present: np.ndarray | None = None  # non-NaN elements per dimension
    dim_lo: np.ndarray | None = None  # smallest and largest non-NaN value (inf included)
    dim_hi: np.ndarray | None = None
    dim_n: np.ndarray | None = None  # moments of finite values per dimension
    dim_mean: np.ndarray | None = None
    dim_m2: np.ndarray | None = None
    tracked: bool = True  # per-dimension arrays were kept in every batch

    @property
    def dim(self) -> int | None:
        """The vector length when every row has the same one."""
        return self.max_len if self.min_len == self.max_len and self.elements else None

    @property
    def floating(self) -> bool:
        """The elements are floating-point numbers (an embedding, not IDs)."""
        return self.value_type.startswith(("float", "double", "halffloat", "decimal"))

    @property
    def inf_values(self) -> int:
        return self.posinf_values + self.neginf_values

    def merge(self, other: VectorStats) -> VectorStats:
        a, b = (self, other) if self.elements or self.null_rows else (other, self)
        have_a = a.elements > 0
        have_b = b.elements > 0
        tracked = a.tracked and b.tracked
        out = VectorStats(
            value_type=a.value_type,
            min_len=min(a.min_len, b.min_len)
            if have_a and have_b
            else (a.min_len if have_a else b.min_len),
            max_len=max(a.max_len, b.max_len),
            elements=a.elements + b.elements,
            nan_values=a.nan_values + b.nan_values,
            posinf_values=a.posinf_values + b.posinf_values,
            neginf_values=a.neginf_values + b.neginf_values,
            null_rows=a.null_rows + b.null_rows,
            empty_rows=a.empty_rows + b.empty_rows,
            more_lengths=a.more_lengths or b.more_lengths,
            nan_at=tuple(sorted(set(a.nan_at) | set(b.nan_at))[:MAX_ELEMENT_EXAMPLES]),
            inf_at=tuple(sorted(set(a.inf_at) | set(b.inf_at))[:MAX_ELEMENT_EXAMPLES]),
            integral=a.integral and b.integral,
            tracked=tracked,
        )
        out.lengths, more = _merge_lengths(a.lengths, b.lengths)
        out.more_lengths = out.more_lengths or more
        if tracked and a.dim_present is not None and b.dim_present is not None:
            d = max(len(a.dim_present), len(b.dim_present))
            out.dim_nan = _pad(a.dim_nan, d, 0) + _pad(b.dim_nan, d, 0)
            out.dim_inf = _pad(a.dim_inf, d, 0) + _pad(b.dim_inf, d, 0)
            out.dim_present = _pad(a.dim_present, d, 0) + _pad(b.dim_present, d, 0)
            out.dim_lo = np.fmin(_pad(a.dim_lo, d, np.nan), _pad(b.dim_lo, d, np.nan))
            out.dim_hi = np.fmax(_pad(a.dim_hi, d, np.nan), _pad(b.dim_hi, d, np.nan))
            out.dim_n, out.dim_mean, out.dim_m2 = merge_arrays(
                _pad(a.dim_n, d, 0),
                _pad(a.dim_mean, d, 0.0),
                _pad(a.dim_m2, d, 0.0),
                _pad(b.dim_n, d, 0),
                _pad(b.dim_mean, d, 0.0),
                _pad(b.dim_m2, d, 0.0),
            )
        elif tracked and (a.dim_present is not None or b.dim_present is not None):
            src = a if a.dim_present is not None else b
            for name in ("dim_nan", "dim_inf", "dim_present", "dim_lo", "dim_hi"):
                setattr(out, name, getattr(src, name))
            out.dim_n, out.dim_mean, out.dim_m2 = src.dim_n, src.dim_mean, src.dim_m2
        else:
            out.tracked = False
        return out

    def constant_dims(self) -> np.ndarray | None:
        """Indices of dimensions holding one value in every row (NaN aside); None when the
        per-dimension statistics were not kept."""
        if self.dim_present is None:
            return None
        from datavet.scan.tensors import PositionStats

        stats = PositionStats(self.dim_present, self.dim_lo, self.dim_hi)
        # only dimensions every vector has (ragged rows: a tail seen in a few rows is no signal)
        return np.flatnonzero(stats.constant[: self.min_len])

    def dims_holding(self, counts: np.ndarray | None, k: int = 6) -> list[tuple[int, int]]:
        """(dimension, count) of the dimensions with the most of ``counts``, most first."""
        if counts is None or not counts.any():
            return []
        idx = np.flatnonzero(counts)
        order = idx[np.argsort(-counts[idx], kind="stable")][:k]
        return [(int(i), int(counts[i])) for i in order]

    def where(self, which: str) -> str:
        """Where the NaN (``which="nan"``) or infinite (``"inf"``) elements sit, in words:
        "at (row 5, element 3), (row 17, element 3); 2 NaN elements of 1,600, all in element 3"."""
        at = self.nan_at if which == "nan" else self.inf_at
        total = self.nan_values if which == "nan" else self.inf_values
        counts = self.dim_nan if which == "nan" else self.dim_inf
        word = "NaN" if which == "nan" else "infinite"
        if not total:
            return ""
        shown = ", ".join(f"(row {r}, element {e})" for r, e in at)
        more = f" (+{total - len(at):,} more)" if total > len(at) else ""
        text = f"at {shown}{more}; {total:,} {word} element{'s' if total != 1 else ''} of " + (
            f"{self.elements:,}"
        )
        dims = self.dims_holding(counts)
        if dims:
            n_dims = int(np.count_nonzero(counts))
            if n_dims == 1:
                text += f", all in element {dims[0][0]}"
            elif n_dims <= len(dims):
                text += ", in elements " + ", ".join(f"{d} ({c:,})" for d, c in dims)
            else:
                text += f", in {n_dims:,} of the {len(counts):,} dimensions, most in element " + (
                    ", ".join(f"{d} ({c:,})" for d, c in dims[:3])
                )
        return text

    def per_dim(self) -> list[tuple[float, float]] | None:
        """(mean, std) of each dimension's finite values, when kept."""
        if self.dim_n is None:
            return None
        out = []
        for n, mean, m2 in zip(self.dim_n, self.dim_mean, self.dim_m2):
            out.append((float(mean), math.sqrt(max(float(m2) / n, 0.0))) if n else (math.nan, 0.0))
        return out

    def summary(self) -> dict:
        """Element-level figures for the report (``count``, ``nan`` and ``inf`` count elements)."""
        const = self.constant_dims()
        return {
            "count": self.elements - self.nan_values,
            "nan": self.nan_values,
            "inf": self.inf_values,
            "dim": self.dim,
            "min_length": self.min_len if self.elements or self.null_rows else None,
            "max_length": self.max_len if self.elements or self.null_rows else None,
            "value_type": self.value_type,
            "null_rows": self.null_rows,
            "empty_rows": self.empty_rows,
            "constant_dims": None if const is None else len(const),
        }


def _merge_lengths(a: dict, b: dict) -> tuple[dict, bool]:
    """Two length tables as one (rows added, first rows merged); past MAX_LENGTHS lengths the
    shortest and longest are kept, and True says some were dropped."""
    out = dict(a)
    for length, (count, rows) in b.items():
        if length in out:
            have, first = out[length]
            out[length] = (
                have + count,
                tuple(sorted(set(first) | set(rows))[:MAX_ELEMENT_EXAMPLES]),
            )
        else:
            out[length] = (count, rows)
    if len(out) <= MAX_LENGTHS:
        return out, False
    keys = sorted(out)
    keep = keys[: MAX_LENGTHS // 2] + keys[-(MAX_LENGTHS // 2) :]
    return {k: out[k] for k in keep}, True


def _length_table(lengths: np.ndarray, null_rows: np.ndarray, offset: int) -> tuple[dict, bool]:
    """Rows and first rows (dataset positions) per length of the non-null vectors; True when
    more than MAX_LENGTHS lengths were seen (then the shortest and longest are kept)."""
    nulls = bool(null_rows.any())
    lens = lengths[~null_rows] if nulls else lengths
    if not len(lens):
        return {}, False
    if lens.min() == lens.max():
        first = int(np.argmin(null_rows)) if nulls else 0
        return {int(lens[0]): (len(lens), (first + offset,))}, False
    at = (np.flatnonzero(~null_rows) if nulls else np.arange(len(lengths))) + offset
    values, counts = np.unique(lens, return_counts=True)
    more = len(values) > MAX_LENGTHS
    if more:
        keep = np.r_[: MAX_LENGTHS // 2, len(values) - MAX_LENGTHS // 2 : len(values)]
        values, counts = values[keep], counts[keep]
    table = {}
    for v, c in zip(values.tolist(), counts.tolist(), strict=True):
        first = at[np.flatnonzero(lens == v)[:MAX_ELEMENT_EXAMPLES]]
        table[int(v)] = (int(c), tuple(first.tolist()))
    return table, more


def length_note(column: str, split: str, vs: VectorStats) -> str | None:
    """A note for a vector column of floats whose vectors differ in length (empty ones
    included): such vectors cannot be stacked into one tensor, and only the dimensions every
    vector has are compared. None for lists of integers (token or category IDs are sequences,
    of any length) and for columns of one length."""
    if not vs.floating or len(vs.lengths) < 2:
        return None
    usual, (count, _) = max(vs.lengths.items(), key=lambda kv: (kv[1][0], kv[0]))
    lo, hi = min(vs.lengths), max(vs.lengths)
    odd = sorted(
        (row, length) for length, (_, rows) in vs.lengths.items() if length != usual for row in rows
    )
    others = sum(c for length, (c, _) in vs.lengths.items() if length != usual)
    shown = ", ".join(
        f"{row} ({length:,} element{'s' if length != 1 else ''})"
        for row, length in odd[:MAX_ELEMENT_EXAMPLES]
    )
    more = (
        f" (+{others - min(len(odd), MAX_ELEMENT_EXAMPLES):,} more)"
        if others > min(len(odd), MAX_ELEMENT_EXAMPLES)
        else ""
    )
    if vs.more_lengths:
        more += f" (more than {MAX_LENGTHS} different lengths)"
    empty = ""
    if vs.empty_rows:
        empty = (
            f"; {vs.empty_rows:,} empty vector{'s' if vs.empty_rows != 1 else ''} counted as "
            "missing (V001)"
        )
    return (
        f"vector column {column!r} in {split} holds vectors of different lengths: {lo:,} to "
        f"{hi:,} elements, {count:,} rows have {usual:,}; other lengths in rows {shown}{more}"
        f"{empty}. They cannot be stacked into one tensor (np.stack, torch.stack), and only the "
        "dimensions every vector has are compared: pad or truncate them to one length"
    )


def length_notes(split: str, columns) -> list[str]:
    """:func:`length_note` for each vector column among ``columns`` (ColumnStats)."""
    notes = []
    for col in columns:
        vs = getattr(col, "vector", None)
        note = None if vs is None else length_note(col.name, split, vs)
        if note:
            notes.append(note)
    return notes


def _lengths(arr: pa.Array) -> np.ndarray:
    return np.asarray(
        pc.fill_null(pc.list_value_length(arr), 0).to_numpy(zero_copy_only=False), dtype=np.int64
    )


def vector_values(arr: pa.Array) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(values as float64 with null elements as NaN and -0.0 as 0.0, lengths per row,
    null rows) of a vector column (already normalised: no views, no extension)."""
    from datavet.scan.values import as_float

    null_rows = np.asarray(arr.is_null().to_numpy(zero_copy_only=False), dtype=bool)
    lengths = _lengths(arr)
    values = arr.flatten()
    if pa.types.is_dictionary(values.type):
        values = values.dictionary_decode()
    x = as_float(values) if len(values) else np.zeros(0)
    return x, lengths, null_rows


def vector_stats(arr: pa.Array, offset: int, stats, x_lengths_nulls=None) -> VectorStats:
    """Fill ``stats`` (a ColumnStats of ``arr``) and return the column's VectorStats."""
    from datavet.scan.counters import ValueCounter
    from datavet.scan.tensors import PositionStats
    from datavet.scan.values import first_positions

    value_type = arr.type.value_type
    x, lengths, null_rows = x_lengths_nulls or vector_values(arr)
    n = len(arr)
    floating = pa.types.is_floating(value_type) or pa.types.is_decimal(value_type)
    length_table, more_lengths = _length_table(lengths, null_rows, offset)
    empty = (lengths == 0) & ~null_rows if floating else None
    if empty is not None and empty.any():
        null_rows = null_rows | empty  # an empty embedding is as missing as a null one
    else:
        empty = None
    with np.errstate(over="ignore", invalid="ignore"):
        clean = math.isfinite(float(x.sum()))  # one pass when every element is finite
    present_lengths = lengths[~null_rows] if null_rows.any() else lengths
    vs = VectorStats(
        value_type=str(value_type),
        min_len=int(present_lengths.min()) if len(present_lengths) else 0,
        max_len=int(present_lengths.max()) if len(present_lengths) else 0,
        elements=int(len(x)),
        null_rows=int(null_rows.sum()),
        empty_rows=0 if empty is None else int(empty.sum()),
        lengths=length_table,
        more_lengths=more_lengths,
    )
    regular = len(present_lengths) == 0 or vs.min_len == vs.max_len
    rows = pos = None
    if not clean or not regular:
        rows = np.repeat(np.arange(n, dtype=np.int64), lengths)
        starts = np.cumsum(lengths) - lengths
        pos = np.arange(len(x), dtype=np.int64) - np.repeat(starts, lengths)
    nan_row = np.zeros(n, bool)
    pinf_row = np.zeros(n, bool)
    ninf_row = np.zeros(n, bool)
    if clean:
        nan = inf = fin = None
        finite = x
    else:
        nan, pinf, ninf = np.isnan(x), np.isposinf(x), np.isneginf(x)
        inf = pinf | ninf
        fin = ~(nan | inf)
        vs.nan_values = int(nan.sum())
        vs.posinf_values = int(pinf.sum())
        vs.neginf_values = int(ninf.sum())
        if vs.nan_values:
            nan_row[rows[nan]] = True
            k = np.flatnonzero(nan)[:MAX_ELEMENT_EXAMPLES]
            vs.nan_at = tuple(zip((rows[k] + offset).tolist(), pos[k].tolist()))
        if vs.inf_values:
            pinf_row[rows[pinf]] = True
            ninf_row[rows[ninf]] = True
            k = np.flatnonzero(inf)[:MAX_ELEMENT_EXAMPLES]
            vs.inf_at = tuple(zip((rows[k] + offset).tolist(), pos[k].tolist()))
        finite = x[fin]
    missing = null_rows | nan_row
    stats.missing = int(missing.sum())
    stats.missing_rows = first_positions(missing, offset)
    stats.posinf = int(pinf_row.sum())
    stats.neginf = int((ninf_row & ~pinf_row).sum())  # a row counts once, as for tensors
    stats.inf_rows = first_positions(pinf_row | ninf_row, offset)
    stats.values = ValueCounter(total=stats.rows - stats.missing, exact=False)
    if finite.size:
        stats.min, stats.max = float(finite.min()), float(finite.max())
        # Whole numbers matter to T001 only within 0..255 (raw pixels): checked only there.
        in_range = stats.min >= 0 and stats.max <= 255
        vs.integral = in_range and (not floating or bool(np.array_equal(np.floor(finite), finite)))

    # per dimension: a (rows, max_len) matrix, ragged rows padded with NaN
    d = vs.max_len
    present_rows = len(present_lengths)
    if d > MAX_DIMS or present_rows * d > max(MAX_PADDED, 4 * len(x)):
        vs.tracked = False
        stats.finite = Moments.of(finite)
        return vs
    if regular:
        mat = x.reshape(present_rows, d)
        if clean:
            fmat = nmat = imat = None
        else:
            fmat, nmat, imat = (m.reshape(present_rows, d) for m in (fin, nan, inf))
    else:
        r = np.repeat(np.cumsum(~null_rows) - 1, lengths)
        mat = np.full((present_rows, d), np.nan)
        mat[r, pos] = x
        fmat = np.zeros((present_rows, d), bool)
        fmat[r, pos] = True if fin is None else fin
        nmat = np.zeros((present_rows, d), bool)
        imat = np.zeros((present_rows, d), bool)
        if nan is not None:
            nmat[r, pos] = nan
            imat[r, pos] = inf
    if present_rows == 0:
        ps = PositionStats(np.zeros(d, np.int64), np.full(d, np.nan), np.full(d, np.nan))
    elif fmat is None:
        ps = PositionStats.of(mat, None)
    else:
        padded_nan = np.isnan(mat)
        ps = PositionStats.of(mat, padded_nan if padded_nan.any() else None)
    vs.dim_present, vs.dim_lo, vs.dim_hi = ps.present, ps.lo, ps.hi
    zeros = np.zeros(d, np.int64)
    vs.dim_nan = zeros if nmat is None else nmat.sum(axis=0).astype(np.int64)
    vs.dim_inf = zeros.copy() if imat is None else imat.sum(axis=0).astype(np.int64)
    with np.errstate(over="ignore", invalid="ignore"):
        if fmat is None:
            cnt = np.full(d, present_rows, np.int64)
            mean = mat.mean(axis=0) if present_rows else np.zeros(d)
            dev = mat - mean
        else:
            cnt = fmat.sum(axis=0).astype(np.int64)
            z = np.where(fmat, mat, 0.0)
            mean = np.divide(z.sum(axis=0), cnt, out=np.zeros(d), where=cnt > 0)
            dev = np.where(fmat, mat - mean, 0.0)
        m2 = np.einsum("ij,ij->j", dev, dev)
    vs.dim_n, vs.dim_mean, vs.dim_m2 = cnt, mean, m2
    # the column's moments from the dimensions' (Chan's merge, all at once)
    total = int(cnt.sum())
    if total and np.isfinite(mean).all() and np.isfinite(m2).all():
        whole = float((cnt * mean).sum() / total)
        spread = float(m2.sum() + (cnt * (mean - whole) ** 2).sum())
        if math.isfinite(whole) and math.isfinite(spread):
            stats.finite = Moments(total, whole, spread)
            return vs
    stats.finite = Moments.of(finite)
    return vs


@dataclass(frozen=True)
class VectorParts:
    """Constant dimensions of a vector column, for F001's finding."""

    column: str
    dims: int | None  # the vector length (None when rows differ)
    constant: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    values: tuple[float, ...] = ()

    def message(self, split: str) -> str:
        from datavet.scan.tensors import _num, _ranges

        n = len(self.constant)
        same = sorted({_num(v) for v in self.values})
        value = f", every value {same[0]}" if len(same) == 1 else ""
        if self.dims and n == self.dims:
            return (
                f"Vector column {self.column!r} is constant in {split}: every row holds the "
                f"same vector (all {n:,} dimensions constant{value})."
            )
        of = f" of {self.dims:,}" if self.dims else ""
        word = "dimension" if n == 1 and not self.dims else "dimensions"
        verb = "is" if n == 1 else "are"
        return (
            f"{n:,}{of} {word} of vector column {self.column!r} {verb} constant in {split} "
            f"(one value in every row{value}): element {_ranges(self.constant.tolist())}."
        )


def constant_parts(name: str, vs: VectorStats) -> VectorParts | None:
    const = vs.constant_dims()
    if const is None or len(const) == 0:
        return None
    values = tuple(float(v) for v in vs.dim_lo[const[:64]])
    return VectorParts(name, vs.dim, const, values)
