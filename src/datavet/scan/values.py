"""Arrow values as the scan reads them: the kind of a column, dense arrays, numbers and text.

The bottom of ``datavet.scan``: the column statistics, the row hashes, the vector and wide-table
scans all build on these, and this module imports none of them.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

MAX_EXAMPLES = 5


_NARROW_DECIMALS = tuple(
    f for f in (getattr(pa.types, f"is_decimal{bits}", None) for bits in (32, 64)) if f
)


def _narrow_decimal(t: pa.DataType) -> bool:
    """decimal32 / decimal64: newer types most compute kernels do not take (read as decimal128)."""
    return any(is_narrow(t) for is_narrow in _NARROW_DECIMALS)


def storage_type(arrow_type: pa.DataType) -> pa.DataType:
    """The type a column is read as: extension types as their storage, run-end-encoded as their
    values, view types as their plain (large) equivalent."""
    t = arrow_type
    if isinstance(t, pa.ExtensionType):
        return storage_type(t.storage_type)
    if pa.types.is_run_end_encoded(t):
        return storage_type(t.value_type)
    if pa.types.is_string_view(t):
        return pa.large_string()
    if pa.types.is_binary_view(t):
        return pa.large_binary()
    if pa.types.is_list_view(t):
        return pa.list_(t.value_field)
    if pa.types.is_large_list_view(t):
        return pa.large_list(t.value_field)
    if _narrow_decimal(t):
        return pa.decimal128(t.precision, t.scale)
    return t


_KIND_CACHE: dict[pa.DataType, str] = {}


def column_kind(arrow_type: pa.DataType) -> str:
    """numeric | bool | string | temporal | vector | null | other (remembered per type: a wide
    table asks for the same few types once per column).

    ``vector``: a list of numbers per row (an embedding, see :mod:`datavet.scan.vectors`).
    ``other``: binary, nested (lists of text, structs, maps, unions) and interval values: their
    text form is counted and hashed, and no rule reads them as numbers."""
    try:
        return _KIND_CACHE[arrow_type]
    except (KeyError, TypeError):  # TypeError: an unhashable (extension) type
        pass
    kind = _column_kind(arrow_type)
    if len(_KIND_CACHE) < 4096 and not isinstance(arrow_type, pa.ExtensionType):
        _KIND_CACHE[arrow_type] = kind
    return kind


def _column_kind(arrow_type: pa.DataType) -> str:
    arrow_type = storage_type(arrow_type)
    if pa.types.is_dictionary(arrow_type):
        return _column_kind(arrow_type.value_type)
    if pa.types.is_boolean(arrow_type):
        return "bool"
    if (
        pa.types.is_integer(arrow_type)
        or pa.types.is_floating(arrow_type)
        or pa.types.is_decimal(arrow_type)
    ):
        return "numeric"
    if pa.types.is_string(arrow_type) or pa.types.is_large_string(arrow_type):
        return "string"
    if pa.types.is_temporal(arrow_type) and not pa.types.is_interval(arrow_type):
        return "temporal"
    if pa.types.is_null(arrow_type):
        return "null"
    if is_vector_type(arrow_type):
        return "vector"
    return "other"


# Types that are their own dense form (nothing to decode, combine or cast)
_DENSE_TYPES = frozenset(
    [pa.bool_(), pa.float16(), pa.float32(), pa.float64(), pa.string(), pa.large_string()]
    + [getattr(pa, f"{s}int{b}")() for s in ("", "u") for b in (8, 16, 32, 64)]
    + [pa.date32(), pa.date64(), pa.binary(), pa.large_binary(), pa.null()]
    + [pa.timestamp(u) for u in ("s", "ms", "us", "ns")]
)


def dense(arr: pa.Array | pa.ChunkedArray) -> pa.Array:
    """One plain Arrow array: chunks combined, dictionaries decoded, extension types as their
    storage, run-end encoding expanded, view types as their plain equivalents."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks() if arr.num_chunks != 1 else arr.chunk(0)
    t = arr.type
    if t in _DENSE_TYPES:  # the common case, asked for every column of every batch
        return arr
    if isinstance(t, pa.ExtensionType):
        return dense(arr.storage)
    if pa.types.is_run_end_encoded(t):
        return dense(pc.run_end_decode(arr))
    if pa.types.is_dictionary(t):
        return dense(arr.dictionary_decode())
    if pa.types.is_string_view(t) or pa.types.is_binary_view(t) or _narrow_decimal(t):
        return pc.cast(arr, storage_type(t))
    if pa.types.is_list_view(t) or pa.types.is_large_list_view(t):
        lengths = np.asarray(
            pc.fill_null(pc.list_value_length(arr), 0).to_numpy(zero_copy_only=False), np.int64
        )
        offsets = np.concatenate([[0], np.cumsum(lengths)])
        large = pa.types.is_large_list_view(t)
        cls = pa.LargeListArray if large else pa.ListArray
        return cls.from_arrays(
            pa.array(offsets, pa.int64() if large else pa.int32()),
            dense(arr.flatten()),
            mask=arr.is_null() if arr.null_count else None,
        )
    if _is_list(t) and _is_list(storage_type(t.value_type)) and is_vector_type(t):
        return _flat_vectors(arr)
    return arr


def dense_batch(batch: pa.RecordBatch) -> pa.RecordBatch:
    """``batch`` with every column :func:`dense` when one needs it (the same batch otherwise)."""
    if not any(_needs_dense(f.type) for f in batch.schema):
        return batch
    arrays = [dense(c) if _needs_dense(c.type) else c for c in batch.columns]
    return pa.RecordBatch.from_arrays(arrays, names=batch.schema.names)


def _needs_dense(t: pa.DataType) -> bool:
    return (
        isinstance(t, pa.ExtensionType)
        or pa.types.is_run_end_encoded(t)
        or pa.types.is_string_view(t)
        or pa.types.is_binary_view(t)
        or pa.types.is_list_view(t)
        or pa.types.is_large_list_view(t)
        or _narrow_decimal(t)
    )


def temporal_ints(arr: pa.Array) -> pa.Array:
    """A date/time/duration column as int64 in its own unit (dates as seconds)."""
    if pa.types.is_date32(arr.type) or pa.types.is_date64(arr.type):
        arr = pc.cast(arr, pa.timestamp("s"))
    elif pa.types.is_time32(arr.type):
        arr = pc.cast(arr, pa.int32())
    return pc.cast(arr, pa.int64(), safe=False)


def as_float(arr: pa.Array) -> np.ndarray:
    """Numbers or booleans as float64, missing as NaN, -0.0 as 0.0 (dates and times as their
    integer value in their own unit, for a date/time target)."""
    arr = dense(arr)
    if pa.types.is_temporal(arr.type):
        arr = temporal_ints(arr)
    if pa.types.is_decimal(arr.type):
        try:
            arr = pc.cast(arr, pa.float64(), safe=False)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):  # very wide decimals
            arr = pa.array([None if v is None else float(v) for v in arr.to_pylist()], pa.float64())
    if not pa.types.is_float64(arr.type):
        arr = pc.cast(arr, pa.float64(), safe=False)
    out = arr.to_numpy(zero_copy_only=False)
    with np.errstate(invalid="ignore"):  # a signalling NaN (damaged bytes) stays a NaN
        return out + 0.0  # a copy (never write into Arrow memory) that also turns -0.0 into 0.0


def wide_ints(arr: pa.Array, x: np.ndarray) -> np.ndarray | None:
    """The values of an int64 or uint64 column (nulls as 0) when some lie beyond 2**53, where
    float64 (``x``, its :func:`as_float`) gives distinct integers one value (64-bit IDs,
    hashes, nanosecond counts); None when ``x`` holds every value exactly."""
    t = arr.type
    if not (pa.types.is_int64(t) or pa.types.is_uint64(t)):
        return None
    with np.errstate(invalid="ignore"):
        if not (np.abs(x) >= 2.0**53).any():
            return None
    return np.asarray(pc.fill_null(arr, 0).to_numpy(zero_copy_only=False))


def as_text(arr: pa.Array) -> pa.Array:
    """Any column as text, null kept: strings as they are; binary as UTF-8 where it is, else as
    Python writes bytes (``b'\\xff'``); everything else (nested, intervals) as its Python text."""
    arr = dense(arr)
    t = arr.type
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return arr
    if pa.types.is_null(t):
        return pa.nulls(len(arr), pa.string())
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t):
        try:
            return pc.cast(pc.cast(arr, pa.large_binary()), pa.large_string())
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            pass
        return pa.array(
            [None if v is None else _bytes_text(v) for v in arr.to_pylist()], pa.large_string()
        )
    if not pa.types.is_nested(t) and not pa.types.is_interval(t):
        try:
            return pc.cast(arr, pa.large_string())
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            pass
    return pa.array(
        [None if v is None else _py_text(v) for v in _py_values(arr)], pa.large_string()
    )


def _bytes_text(v: bytes) -> str:
    try:
        return v.decode("utf-8")
    except UnicodeDecodeError:
        return repr(v)


def _py_values(arr: pa.Array) -> list:
    from datavet.scan.counters import py_list

    try:
        return py_list(arr)
    except (pa.ArrowException, ValueError, OverflowError, TypeError):
        return [None if not s.is_valid else str(s) for s in arr]


def _py_text(v) -> str:
    if isinstance(v, bytes):
        return _bytes_text(v)
    text = str(v)
    # lone surrogates cannot be UTF-8: keep them visible as escapes
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def first_positions(mask: np.ndarray, offset: int, k: int = MAX_EXAMPLES) -> tuple[int, ...]:
    idx = np.flatnonzero(mask)[:k]
    return tuple((idx + offset).tolist())


def _is_list(t: pa.DataType) -> bool:
    return (
        pa.types.is_list(t)
        or pa.types.is_large_list(t)
        or pa.types.is_fixed_size_list(t)
        or pa.types.is_list_view(t)
        or pa.types.is_large_list_view(t)
    )


def is_vector_type(t: pa.DataType) -> bool:
    """A list of numbers or booleans, or lists of such lists (a matrix per row, read
    flattened: see :func:`dense`), or the fixed-shape tensor extension."""
    if isinstance(t, pa.ExtensionType):
        return is_vector_type(t.storage_type)
    if _is_list(t):
        v = t.value_type
        if pa.types.is_dictionary(v):
            v = v.value_type
        if _is_list(v) or isinstance(v, pa.ExtensionType):
            return is_vector_type(v)
        return (
            pa.types.is_integer(v)
            or pa.types.is_floating(v)
            or pa.types.is_boolean(v)
            or pa.types.is_decimal(v)
        )
    return False


def _flat_vectors(arr: pa.Array) -> pa.Array:
    """A column of nested lists of numbers (a matrix or a deeper array per row) as one list of
    numbers per row, in row-major order: NaN and inf inside are seen as in any vector. A null
    row stays null; a null inner list holds no element."""
    rows = np.arange(len(arr), dtype=np.int64)
    values = arr
    while _is_list(values.type):
        parents = np.asarray(pc.list_parent_indices(values).to_numpy(zero_copy_only=False))
        rows = rows[parents] if len(parents) else np.zeros(0, np.int64)
        values = dense(pc.list_flatten(values))
    offsets = np.zeros(len(arr) + 1, np.int64)
    np.cumsum(np.bincount(rows, minlength=len(arr)), out=offsets[1:])
    return pa.LargeListArray.from_arrays(
        pa.array(offsets, pa.int64()), values, mask=arr.is_null() if arr.null_count else None
    )
