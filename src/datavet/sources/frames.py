"""In-memory inputs: pandas DataFrames, Arrow tables, NumPy arrays and ``(X, y)`` pairs.

Every pandas column becomes one Arrow column that keeps its values and its kind: numbers stay
numbers, text stays text (lone surrogates shown as ``\\udXXX`` escapes, since UTF-8 cannot hold
them), NumPy arrays or lists of numbers per row become a vector column (an embedding), integers
beyond int64 become exact decimals, ``longdouble`` becomes float64, a column that mixes kinds
keeps every value as text. Arrays of other libraries are read as NumPy's are: torch tensors
(detached, copied to the CPU) and any array with ``__array__`` (JAX, TensorFlow, CuPy through
``.get()``); a column of one-number tensors (``list(torch_tensor)``) is a column of numbers. A
column of lists or arrays that is kept as text because some row holds something else (a string
inside a list) gets a note naming the column and that row: the NaN inside the other rows' vectors
are not checked. What cannot be audited (complex numbers) is refused with a message that names
the column.
"""

from __future__ import annotations

import decimal
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa

from datavet._lazy import pandas as pd
from datavet.errors import InputError, UsageError
from datavet.sources.base import TableSource, TabularSource
from datavet.sources.tensor_base import (
    TensorInfo,
    TensorSource,
    check_dtype,
    is_torch_tensor,
    tensor_to_numpy,
)

_ARROW_ERRORS = (
    pa.ArrowInvalid,
    pa.ArrowTypeError,
    pa.ArrowNotImplementedError,
    OverflowError,
    UnicodeError,
    ValueError,
    TypeError,
)


def _is_missing(v) -> bool:
    """None, NaN, NaT, pd.NA and Decimal NaN (never asks a list or an array for its truth)."""
    if v is None or v is pd.NA or v is pd.NaT:
        return True
    if isinstance(v, float | np.floating):
        return math.isnan(v)
    if isinstance(v, decimal.Decimal):
        return v.is_nan()
    if isinstance(v, np.datetime64 | np.timedelta64):
        return bool(np.isnat(v))
    return False


def _text(v) -> str:
    if isinstance(v, bytes):
        try:
            return v.decode("utf-8")
        except UnicodeDecodeError:
            return repr(v)
    text = v if isinstance(v, str) else str(v)
    # UTF-8 cannot hold a lone surrogate: keep it visible as an escape
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _is_array(v) -> bool:
    """A NumPy array, a tensor or another library's array: a value that holds many numbers."""
    if isinstance(v, str | bytes | np.generic):
        return False
    return isinstance(v, np.ndarray) or is_torch_tensor(v) or hasattr(v, "__array__")


def _numbers(v) -> np.ndarray | None:
    """The numbers ``v`` holds, as a NumPy array: a NumPy array, a torch tensor (detached, on the
    CPU; torch is already loaded when one exists), another library's array (``__array__``; a
    CuPy array through ``.get()``), or a list or tuple of numbers. None for anything else."""
    if isinstance(v, str | bytes | np.generic):
        return None
    try:
        if isinstance(v, np.ndarray):
            arr = v
        elif is_torch_tensor(v):
            arr = tensor_to_numpy(v)
        elif isinstance(v, list | tuple):
            arr = np.asarray(v)
            if arr.dtype == object and all(
                e is None or (isinstance(e, int | float | np.number) and not isinstance(e, bool))
                for e in v
            ):  # a null element: NaN, as Arrow's null elements are read
                arr = np.array([np.nan if e is None else e for e in v], np.float64)
        elif _is_array(v):
            try:
                arr = np.asarray(v)
            except TypeError:  # CuPy refuses an implicit copy to the host
                get = getattr(v, "get", None)
                if get is None:
                    return None
                arr = np.asarray(get())
        else:
            return None
    except Exception:  # noqa: BLE001 - a value that cannot be an array of numbers is not one
        return None
    return arr if arr.dtype.kind in "biuf" else None


def _vector_type(dtypes: set) -> pa.DataType:
    """The Arrow element type of vectors of these NumPy dtypes (floats beyond 64 bits and
    float16 as float64)."""
    dt = np.result_type(*dtypes)
    if dt.kind == "f" and dt != np.float32:
        dt = np.dtype(np.float64)
    return pa.from_numpy_dtype(dt)


def _arrays_to_arrow(arrays: list) -> pa.Array:
    """One array of numbers (or None) per row: a vector column, row-major, or a column of
    numbers when every array holds one number (``list(tensor)`` gives 0-d tensors)."""
    present = [a for a in arrays if a is not None]
    kind = _vector_type({a.dtype for a in present})
    mask = np.array([a is None for a in arrays], dtype=bool)
    if all(a.ndim == 0 for a in present):
        flat = np.array([0 if a is None else a.item() for a in arrays], kind.to_pandas_dtype())
        return pa.array(flat, type=kind, mask=mask if mask.any() else None)
    parts = [np.ravel(a) for a in present]
    values = np.concatenate(parts).astype(kind.to_pandas_dtype(), copy=False)
    sizes = np.zeros(len(arrays), np.int64)
    sizes[~mask] = [len(p) for p in parts]
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    return pa.LargeListArray.from_arrays(
        pa.array(offsets, pa.int64()),
        pa.array(values, kind),
        mask=pa.array(mask) if mask.any() else None,
    )


def _not_a_number(v) -> str:
    """What in ``v`` (a row of a column of lists) is not a number, in words."""
    if isinstance(v, list | tuple):
        for e in v:
            if isinstance(e, list | tuple):
                inner = _not_a_number(e)
                if inner:
                    return inner
            elif not isinstance(e, int | float | np.number) and e is not None:
                return f"a list holding {_text(e)[:40]!r}"
        return f"a list that is not flat numbers ({_text(v)[:40]!r})"
    if _is_array(v):
        return f"{type(v).__name__} of {getattr(v, 'dtype', 'non-numbers')}"
    return f"{_text(v)[:40]!r}, not a list of numbers"


def _text_vectors(values: list, bad: int, column, notes: list[str] | None, where: str) -> None:
    """The note of a column of vectors kept as text because row ``bad`` holds something else
    (said only when some other row does hold numbers)."""
    if notes is None:
        return
    if not any(not _is_missing(v) and _numbers(v) is not None for v in values):
        return
    notes.append(
        f"{where}: column {column!r} holds lists or arrays of numbers, but row {bad} holds "
        f"{_not_a_number(values[bad])}: the column is read as text, so the NaN and infinities "
        "inside its vectors are not checked; make every element a number (NaN or None where "
        "one is missing)"
    )


def _objects_to_arrow(
    values: list, column: str | None = None, notes: list[str] | None = None, where: str = ""
) -> pa.Array:
    """An object column pyarrow could not convert as it stands. ``notes`` (with the column's
    name and ``where``, the input's name) receives the note of a column of lists or arrays
    kept as text."""
    present = [v for v in values if not _is_missing(v)]
    if present and all(
        isinstance(v, int | np.integer) and not isinstance(v, bool) for v in present
    ):
        # integers beyond int64: exact decimals while they fit, else text
        digits = max(len(str(abs(int(v)))) for v in present)
        for precision, kind in ((38, pa.decimal128), (76, pa.decimal256)):
            if digits <= precision:
                return pa.array(
                    [None if _is_missing(v) else decimal.Decimal(int(v)) for v in values],
                    kind(precision, 0),
                )
    if present and all(isinstance(v, decimal.Decimal) for v in present):
        try:
            return pa.array([None if _is_missing(v) else v for v in values])
        except _ARROW_ERRORS:
            pass
    if any(isinstance(v, list | tuple) or _is_array(v) for v in present):
        # arrays (NumPy, torch, ...) or lists of numbers per row, a matrix per row read
        # row-major: one vector per row, so NaN and inf inside are found as in any embedding
        arrays: list[np.ndarray | None] = []
        for i, v in enumerate(values):
            arr = None if _is_missing(v) else _numbers(v)
            if arr is None and not _is_missing(v):
                _text_vectors(values, i, column, notes, where)
                break
            arrays.append(arr)
        else:
            return _arrays_to_arrow(arrays)
    # A column mixing numbers and strings (or holding anything else): keep every value as text;
    # missing stays missing.
    return pa.array([None if _is_missing(v) else _text(v) for v in values], type=pa.string())


def _column_to_arrow(series: pd.Series, source: str, notes: list[str] | None = None) -> pa.Array:
    """``notes`` receives what the reader should know of the column (see _objects_to_arrow)."""
    dtype = series.dtype
    if isinstance(dtype, pd.SparseDtype):
        series = series.sparse.to_dense()
        dtype = series.dtype
    if isinstance(dtype, np.dtype):
        if dtype.kind == "c":
            raise InputError(
                source,
                f"column {series.name!r} holds complex numbers ({dtype}); datavet audits real "
                "values: pass its real and imaginary parts as two columns",
            )
        if dtype.kind == "f" and dtype.itemsize > 8:  # longdouble: float64 is plenty to audit
            with np.errstate(over="ignore"):
                series = series.astype(np.float64)
        if dtype.kind == "V":
            raise InputError(
                source, f"column {series.name!r} holds raw structured values ({dtype})"
            )
    try:
        arr = pa.array(series, from_pandas=True)
    except _ARROW_ERRORS:
        return _objects_to_arrow(series.astype(object).tolist(), series.name, notes, source)
    if pa.types.is_decimal(arr.type) and series.dtype == np.dtype(object):
        # Decimal("NaN") is missing, never a value
        values = series.tolist()
        if any(isinstance(v, decimal.Decimal) and v.is_nan() for v in values):
            return _objects_to_arrow(values)
    return arr


def from_pandas(
    df: pd.DataFrame, name: str, label: pa.Array | None = None, label_name: str | None = None
) -> TableSource:
    """A DataFrame as a table; ``label``: an extra column (the ``y`` of an ``(X, y)`` pair)."""
    names = [str(c) for c in df.columns]
    notes: list[str] = []
    arrays = [_column_to_arrow(df.iloc[:, i], name, notes) for i in range(df.shape[1])]
    if label is not None:
        if label_name in names:
            raise UsageError(f"{name}: target name {label_name!r} clashes with a feature column")
        arrays.append(label)
        names.append(label_name)
    table = pa.Table.from_arrays(arrays, names=names) if arrays else pa.table({})
    source = TableSource(
        name=name, format="pandas", schema=table.schema, num_rows=len(df), table=table, notes=notes
    )
    if label is not None:
        source.label = label_name
    source.check_schema()
    return source


def from_arrow(
    table: pa.Table | pa.RecordBatch, name: str, fmt: str = "arrow", *, check: bool = False
) -> TableSource:
    """An Arrow table or batch. ``check``: validate it fully first (a table the caller built
    from raw buffers can hold text that is not UTF-8, offsets out of range...), as the file
    readers validate what they read."""
    if isinstance(table, pa.RecordBatch):
        table = pa.Table.from_batches([table])
    if check:
        try:
            table.validate(full=True)
        except pa.ArrowInvalid as exc:
            raise InputError(name, f"not a valid Arrow table ({exc})".splitlines()[0]) from None
    source = TableSource(
        name=name, format=fmt, schema=table.schema, num_rows=table.num_rows, table=table
    )
    source.check_schema()
    return source


def _features_frame(x, name: str) -> pd.DataFrame:
    """Features given as a NumPy array (or anything array-like): a DataFrame, columns x0, x1, ...
    (a structured array keeps its field names)."""
    if isinstance(x, pd.DataFrame):
        return x
    if isinstance(x, pd.Series):
        return x.to_frame()
    x = np.asarray(x)
    if x.dtype.names:  # a structured array: one column per field
        if x.ndim != 1:
            raise UsageError(f"{name}: expected a 1-D structured array, got shape {x.shape}")
        return pd.DataFrame({f: x[f] if x[f].ndim == 1 else list(x[f]) for f in x.dtype.names})
    if x.ndim == 1:
        x = x[:, None]
    if x.ndim != 2:
        raise UsageError(f"{name}: expected a 2-D array of features, got shape {x.shape}")
    return pd.DataFrame({f"x{j}": x[:, j] for j in range(x.shape[1])})


def _labels(y, name: str, rows: int) -> tuple[pa.Array, str | None]:
    """The labels of an ``(X, y)`` pair as one Arrow column, and their own name if any."""
    own = None
    if isinstance(y, pd.DataFrame):
        if y.shape[1] != 1:
            raise UsageError(
                f"{name}: labels must be one column (got a DataFrame with {y.shape[1]} columns)"
            )
        y = y.iloc[:, 0]
    if isinstance(y, pd.Series):
        own = None if y.name is None else str(y.name)
        series = y.reset_index(drop=True)
    else:
        arr = np.asarray(y)
        if arr.dtype.names:
            raise UsageError(f"{name}: labels must be one value per row, not a structured array")
        if arr.ndim == 2 and arr.shape[1] == 1:
            arr = arr[:, 0]
        if arr.ndim != 1:
            raise UsageError(
                f"{name}: labels must be a 1-D array with one value per row "
                f"(got shape {arr.shape} for {rows} rows)"
            )
        series = pd.Series(arr) if arr.dtype != object else pd.Series(arr, dtype=object)
    if len(series) != rows:
        raise UsageError(
            f"{name}: labels must be a 1-D array with one value per row "
            f"(got {len(series)} labels for {rows} rows)"
        )
    return _column_to_arrow(series.rename(own), name), own


def from_pair(x, y, name: str, target: str | None) -> TableSource:
    """An ``(X, y)`` pair, as ``train_test_split`` returns it: X a DataFrame (names and dtypes
    kept) or an array (columns x0, x1, ...), y a Series or an array. The label column is named
    ``target`` when given, else y's own name, else ``target`` (``label`` for array features)."""
    frame = _features_frame(x, name)
    label, own = _labels(y, name, len(frame))
    default = "target" if isinstance(x, pd.DataFrame | pd.Series) else "label"
    return from_pandas(frame, name, label, target or own or default)


def from_numpy(x: np.ndarray, y: np.ndarray | None, name: str, target: str | None) -> TableSource:
    """A 2-D feature array and an optional label array; columns are named x0, x1, ..."""
    if y is not None:
        return from_pair(x, y, name, target)
    return from_pandas(_features_frame(x, name), name)


# --- the frames people hold: polars, Arrow streams, pyarrow datasets, Hugging Face, Dask -------
#
# Each opens as a table read in batches, without a copy where the format allows: a polars
# DataFrame and a Hugging Face Dataset hand over their Arrow memory; a LazyFrame, an Arrow
# stream, a pyarrow dataset, an IterableDataset and a Dask DataFrame are read a batch (a
# partition) at a time, and asked again for each pass the audit makes.


def _module(obj) -> str:
    return type(obj).__module__.split(".")[0]


def _is(obj, module: str, *names: str) -> bool:
    """``obj`` is (a subclass of) ``module.<name>`` for one of ``names``, found by the class
    hierarchy, so no optional library is imported to ask."""
    return any(
        c.__module__.split(".")[0] == module and c.__name__ in names for c in type(obj).__mro__
    )


def is_dask_frame(obj) -> bool:
    return _is(obj, "dask", "DataFrame", "Series") and hasattr(obj, "npartitions")


def is_hf_iterable(obj) -> bool:
    return _is(obj, "datasets", "IterableDataset")


def _same_schema(a: pa.Schema, b: pa.Schema) -> bool:
    return a.remove_metadata() == b.remove_metadata()


def _as_batches(item) -> list[pa.RecordBatch]:
    if isinstance(item, pa.RecordBatch):
        return [item]
    if isinstance(item, pa.Table):
        return item.to_batches()
    raise TypeError(f"expected Arrow batches, got {type(item).__name__}")  # pragma: no cover


@dataclass
class StreamSource(TabularSource):
    """A table read by asking ``read(batch_rows)`` for an iterator of Arrow batches (or tables)
    on every pass. ``drop``: columns left out (``notes`` say why); batches are cast to the
    schema the first one set, so every batch of a column has one type."""

    read: Callable[[int], Iterator] | None = None
    drop: tuple[str, ...] = ()
    notes: list[str] = field(default_factory=list)

    def _iter_batches(self, batch_rows: int) -> Iterator[pa.RecordBatch]:
        try:
            for item in self.read(batch_rows):
                for batch in _as_batches(item):
                    yield self._fit(batch)
        except (pa.ArrowException, TypeError, ValueError) as exc:
            raise InputError(self.name, f"cannot read: {exc}".splitlines()[0]) from None

    def _fit(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        if self.drop:
            batch = batch.select([n for n in batch.schema.names if n not in self.drop])
        if not _same_schema(batch.schema, self.schema):
            if batch.schema.names != self.schema.names:
                raise InputError(
                    self.name,
                    f"a batch has columns {batch.schema.names}, the first had {self.schema.names}",
                )
            try:
                batch = batch.cast(self.schema)
            except _ARROW_ERRORS as exc:
                raise InputError(
                    self.name, f"a batch's column types differ from the first batch's: {exc}"
                ) from None
        return batch


def _stream(name: str, fmt: str, read, schema: pa.Schema, num_rows=None, **kw) -> StreamSource:
    source = StreamSource(name=name, format=fmt, schema=schema, num_rows=num_rows, read=read, **kw)
    source.check_schema()
    return source


# polars


def _check_polars_types(schema, name: str) -> None:
    """polars' 128-bit integers have no Arrow type: refused by name, not as pyarrow's
    "unsupported format string"."""
    for column, dtype in schema.items():
        if str(dtype) in ("Int128", "UInt128"):
            raise InputError(
                name,
                f"column {column!r} is polars {dtype}, which Arrow cannot hold: cast it to "
                "Int64 if its values fit, or to pl.Decimal(38, 0)",
            )


def from_polars(df, name: str) -> TabularSource:
    """A polars DataFrame: its Arrow memory, as ``to_arrow`` hands it over (no copy for numbers
    and text), or a LazyFrame: run by polars' streaming engine, a batch at a time."""
    if _is(df, "polars", "LazyFrame"):
        import polars as pl

        _check_polars_types(df.collect_schema(), name)
        schema = pl.DataFrame(schema=df.collect_schema()).to_arrow().schema  # runs nothing

        def read(batch_rows: int):
            batches = getattr(df, "collect_batches", None)
            if batches is not None:
                for part in batches(chunk_size=batch_rows, lazy=True):
                    yield part.to_arrow()
                return
            start = 0  # older polars: slices of the query, each run on its own
            while True:
                part = df.slice(start, batch_rows).collect()
                if part.height == 0:
                    return
                yield part.to_arrow()
                start += part.height

        return _stream(name, "polars", read, schema)
    if _is(df, "polars", "Series"):
        df = df.to_frame()
    _check_polars_types(df.schema, name)
    return from_arrow(df.to_arrow(), name, fmt="polars")


# the Arrow PyCapsule stream interface (DuckDB relations, polars, pyarrow, and what comes next)


def has_arrow_stream(obj) -> bool:
    return hasattr(type(obj), "__arrow_c_stream__")


def from_arrow_stream(obj, name: str) -> TabularSource:
    """Any object with ``__arrow_c_stream__``; the stream is asked for again on each pass. A
    ``RecordBatchReader`` can be read only once: it is read into a table."""
    if isinstance(obj, pa.RecordBatchReader):
        return from_arrow(obj.read_all(), name)
    try:
        first = pa.RecordBatchReader.from_stream(obj)
    except (pa.ArrowException, TypeError, ValueError) as exc:
        raise InputError(name, f"cannot read its Arrow stream: {exc}".splitlines()[0]) from None
    pending = [first]

    def read(batch_rows: int):
        reader = pending.pop() if pending else pa.RecordBatchReader.from_stream(obj)
        yield from reader

    return _stream(name, "arrow-stream", read, first.schema)


# pyarrow.dataset


def is_arrow_dataset(obj) -> bool:
    return _is(obj, "pyarrow", "Dataset") and hasattr(obj, "to_batches")


def from_arrow_dataset(ds, name: str) -> TabularSource:
    """A ``pyarrow.dataset.Dataset``: its fragments streamed in order."""

    def read(batch_rows: int):
        return ds.to_batches(batch_size=batch_rows)

    try:
        rows = ds.count_rows()
    except (pa.ArrowException, OSError):
        rows = None
    return _stream(name, "arrow-dataset", read, ds.schema, num_rows=rows)


# Hugging Face datasets

MEDIA_FEATURES = ("Image", "Audio", "Video", "Pdf", "Nifti", "Mesh")
ARRAY_FEATURES = ("Array2D", "Array3D", "Array4D", "Array5D")
LABEL_NAMES = ("label", "labels", "target", "targets")


def is_hf_dataset(obj) -> bool:
    return _is(obj, "datasets", "Dataset") and hasattr(obj, "features")


def _kind_of(feature) -> str:
    return type(feature).__name__


def _hf_media(features, name: str) -> tuple[tuple[str, ...], list[str]]:
    """Columns holding images, audio or video (encoded files: no values to audit as a table)."""
    media = tuple(k for k, f in (features or {}).items() if _kind_of(f) in MEDIA_FEATURES)
    notes = []
    if media:
        what = ", ".join(f"{k!r} ({_kind_of(features[k])})" for k in media)
        notes.append(
            f"{name}: left out {what}: encoded media files, not values a table check reads; "
            "decode them to arrays (ds.with_format('numpy')) and audit those as tensors"
        )
    return media, notes


def from_hf_dataset(
    ds, name: str, *, target: str | None = None, inputs: str | None = None, channel_axis=None
):
    """A ``datasets.Dataset``: its Arrow table (memory-mapped, no copy) as a table, or, when a
    fixed-shape array feature (``Array2D``..``Array5D``) holds the inputs, the tensor path."""
    features = ds.features or {}
    arrays = [k for k, f in features.items() if _kind_of(f) in ARRAY_FEATURES]
    if inputs is not None or arrays:
        return _hf_tensors(ds, name, arrays, target, inputs, channel_axis)
    media, notes = _hf_media(features, name)
    if ds.num_columns and len(media) == ds.num_columns:
        raise InputError(name, notes[0].split(": ", 1)[1].replace("left out", "only", 1))
    if getattr(ds, "_indices", None) is None:
        table = ds.data.table  # the Arrow table itself: memory-mapped from the cache, no copy
        if media:
            table = table.drop_columns(list(media))
        source = from_arrow(table, name, fmt="hf-dataset")
        source.notes = notes  # type: ignore[attr-defined]
        return source
    # shuffled, selected or filtered: an index mapping, read in its order a batch at a time
    arrow = ds.with_format("arrow")

    def read(batch_rows: int):
        return arrow.iter(batch_size=batch_rows)

    schema = ds.data.table.schema
    schema = pa.schema([f for f in schema if f.name not in media], metadata=schema.metadata)
    return _stream(name, "hf-dataset", read, schema, num_rows=ds.num_rows, drop=media, notes=notes)


def _hf_keys(features, name: str, arrays: list[str], target, inputs) -> tuple[str, str | None]:
    """(the inputs feature, the labels feature or None) of a dataset read as tensors."""
    if inputs is None:
        if len(arrays) != 1:
            raise UsageError(
                f"{name}: several array features ({', '.join(map(repr, arrays))}); "
                "pass inputs= to choose the one that holds the inputs"
            )
        inputs = arrays[0]
    if inputs not in features:
        raise UsageError(f"{name}: no feature {inputs!r}; features: {', '.join(features)}")
    label = target
    if label is None:
        named = [k for k in features if k.lower() in LABEL_NAMES]
        classes = [k for k, f in features.items() if _kind_of(f) == "ClassLabel"]
        picked = named or classes
        label = picked[0] if len(picked) == 1 else None
    if label is not None and label not in features:
        raise UsageError(f"{name}: no feature {label!r}; features: {', '.join(features)}")
    return inputs, label


def _hf_notes(features, name: str, inputs: str, label: str | None) -> list[str]:
    left = [k for k in features if k not in (inputs, label)]
    notes = [f"{name}: inputs {inputs!r}" + (f", labels {label!r}" if label else "")]
    if left:
        notes.append(f"{name}: left out of the tensor audit: {', '.join(map(repr, left))}")
    return notes


def _hf_tensors(ds, name, arrays, target, inputs, channel_axis):
    from datavet.sources.arrays import ArraySource, _Reader

    features = ds.features
    inputs, label = _hf_keys(features, name, arrays, target, inputs)

    class _Column(_Reader):
        def __init__(self, column: str):
            self.column = column
            self.view = ds.with_format("numpy", columns=[column])
            first = np.asarray(self.view[0:1][column])
            self.shape = (ds.num_rows, *first.shape[1:])
            self.dtype = first.dtype
            self.dtype_name = first.dtype.name

        def read(self, start: int, stop: int) -> np.ndarray:
            return np.asarray(self.view[start:stop][self.column])

    return ArraySource(
        name=name,
        format="hf-dataset",
        label=label,
        num_rows=ds.num_rows,
        channel_axis=channel_axis,
        notes=_hf_notes(features, name, inputs, label),
        x=_Column(inputs),
        y=_Column(label) if label is not None else None,
    )


@dataclass
class HfStreamTensors(TensorSource):
    """A ``datasets.IterableDataset`` whose inputs are an ``Array2D``..``Array5D`` feature: read
    as NumPy batches of the inputs (and labels), in the order the stream yields them, again on
    every pass. Its length is known only once read."""

    stream: object = None  # the IterableDataset, its inputs and labels columns, as NumPy
    inputs: str = ""
    _info: TensorInfo | None = field(default=None, repr=False)

    def _arrays(self, batch) -> tuple[np.ndarray, np.ndarray | None]:
        x = np.asarray(batch[self.inputs])
        y = None if self.label is None else np.asarray(batch[self.label])
        return x, y

    def info(self) -> TensorInfo:
        if self._info is None:
            first = next(iter(self.stream.iter(batch_size=1)), None)
            if first is None:
                raise InputError(self.name, "no data rows (the stream is empty)")
            x, y = self._arrays(first)
            check_dtype(x.dtype, f"{self.name}[{self.inputs}]", "inputs")
            if y is not None:
                check_dtype(y.dtype, f"{self.name}[{self.label}]", "labels")
            self._info = TensorInfo(
                sample_shape=tuple(x.shape[1:]),
                dtype=x.dtype,
                dtype_name=x.dtype.name,
                label_shape=None if y is None else tuple(y.shape[1:]),
                label_dtype=None if y is None else y.dtype,
            )
        return self._info

    def blocks(self, max_values: int, max_rows: int):
        per_sample = max(1, int(np.prod(self.info().sample_shape, dtype=np.int64)))
        step = max(1, min(max_rows, max_values // per_sample))
        offset = 0
        for batch in self.stream.iter(batch_size=step):
            x, y = self._arrays(batch)
            yield offset, x, y
            offset += len(x)


def from_hf_iterable(
    ds, name: str, *, target: str | None = None, inputs: str | None = None, channel_axis=None
):
    """A ``datasets.IterableDataset``: streamed as Arrow tables, a batch at a time, on every
    pass (its shards are read again; nothing is kept); or, when a fixed-shape array feature
    (``Array2D``..``Array5D``) holds the inputs, the tensor path, as for a ``Dataset``."""
    features = ds.features or {}
    arrays = [k for k, f in features.items() if _kind_of(f) in ARRAY_FEATURES]
    if features and (inputs is not None or arrays):
        inputs, label = _hf_keys(features, name, arrays, target, inputs)
        columns = [inputs] if label is None else [inputs, label]
        notes = _hf_notes(features, name, inputs, label)
        notes.append(
            f"{name}: an IterableDataset is read in the order it yields samples; rows are "
            "positions in that stream"
        )
        return HfStreamTensors(
            name=name,
            format="hf-iterable",
            label=label,
            channel_axis=channel_axis,
            notes=notes,
            stream=ds.select_columns(columns).with_format("numpy"),
            inputs=inputs,
        )
    media, notes = _hf_media(ds.features, name)
    arrow = ds.with_format("arrow")

    def read(batch_rows: int):
        return arrow.iter(batch_size=batch_rows)

    if ds.features is not None:
        schema = ds.features.arrow_schema
    else:  # features unknown until read: the first batch says
        first = next(iter(arrow.iter(batch_size=1)), None)
        if first is None:
            raise InputError(name, "no data rows (the stream is empty)")
        schema = first.schema
    schema = pa.schema([f for f in schema if f.name not in media], metadata=schema.metadata)
    return _stream(name, "hf-iterable", read, schema, drop=media, notes=notes)


# Dask


@dataclass
class DaskFrameSource(StreamSource):
    """A Dask DataFrame. The Dask engine profiles each partition where it lives (see
    ``engines.dask``); the local engine computes one partition at a time."""

    frame: object = None


def _unconverted(frame):
    """``frame`` with Dask's ``dataframe.convert-string`` undone where its expression still
    holds the objects: that option (on by default) turns every object column into text, a
    column of lists or arrays (an embedding) into strings such as "[1.0, nan]", which would hide
    the NaN inside the vectors and read mixed columns as text. The user's config is untouched.
    Dask before 2025.1 converts when the frame is made; :func:`_text_lists` notes those."""
    try:
        from dask.dataframe.dask_expr import new_collection
        from dask.dataframe.dask_expr._expr import ArrowStringConversion
        from dask.dataframe.dask_expr.io.io import FromPandas
    except ImportError:  # pragma: no cover - dask before 2025.1
        return frame
    expr = frame.expr
    for node in list(expr.walk()):
        if isinstance(node, ArrowStringConversion):  # from_delayed, from_map, from_array
            expr = expr.substitute(node, node.frame)
        elif isinstance(node, FromPandas) and node.operand("pyarrow_strings_enabled"):
            expr = expr.substitute(
                node, node.substitute_parameters({"pyarrow_strings_enabled": False})
            )
    return frame if expr is frame.expr else new_collection(expr)


def _looks_like_list(text: str) -> bool:
    """``"[1.0, nan, -2e-3]"`` (a list's repr) or ``"[ 1. nan]"`` (a NumPy array's)."""
    text = text.strip()
    if text[:1] != "[" or text[-1:] != "]":
        return False
    tokens = text[1:-1].replace(",", " ").split()
    try:
        [float(t) for t in tokens]
    except ValueError:
        return False
    return bool(tokens)


def _text_lists(table: pa.Table, name: str) -> list[str]:
    """A note for each text column whose values (the first 20) all look like lists of numbers:
    vectors turned into text, so their values are not checked as a vector column."""
    notes = []
    for col, column in zip(table.column_names, table.columns, strict=True):
        if not (pa.types.is_string(column.type) or pa.types.is_large_string(column.type)):
            continue
        values = column.drop_null().slice(0, 20).to_pylist()
        if values and all(_looks_like_list(v) for v in values):
            notes.append(
                f"{name}: column {col!r} holds text that looks like lists of numbers "
                f"({values[0][:40]!r}), so its values are not checked as a vector; if it held "
                "lists, Dask's dataframe.convert-string option made them text: make the frame "
                "inside dask.config.set({'dataframe.convert-string': False})"
            )
    return notes


def from_dask(frame, name: str) -> DaskFrameSource:
    if _is(frame, "dask", "Series"):
        frame = frame.to_frame()
    frame = _unconverted(frame)
    first = from_pandas(frame.get_partition(0).compute(), name)
    head = first.table
    pending = [head]

    def read(batch_rows: int):
        if pending:
            yield pending.pop()
            start = 1
        else:
            start = 0
        for i in range(start, frame.npartitions):
            yield from_pandas(frame.get_partition(i).compute(), name).table

    source = DaskFrameSource(
        name=name,
        format="dask",
        schema=head.schema,
        read=read,
        frame=frame,
        notes=first.notes + _text_lists(head, name),
    )
    source.check_schema()
    return source


# what is not accepted


ACCEPTED = (
    "a path (CSV, TSV, Parquet, Arrow/Feather; a directory, a glob or a URL), a pandas or "
    "polars DataFrame (or LazyFrame), a pyarrow Table, RecordBatch or dataset, any object with "
    "__arrow_c_stream__ (DuckDB relations), a Hugging Face Dataset or IterableDataset, a Dask "
    "DataFrame, NumPy arrays or an (X, y) pair, torch tensors, Datasets or DataLoaders"
)


def refusal(data, role: str) -> str:
    """Why ``data`` cannot be audited, what can be, and the one-line conversion."""
    kind = type(data)
    what = f"{kind.__module__.split('.')[0]}.{kind.__name__}"
    if kind.__module__ == "builtins":
        what = kind.__name__
    how = None
    if _is(data, "datasets", "DatasetDict", "IterableDatasetDict"):
        how = "a DatasetDict holds several splits: pass ds['train'] and ds['test']"
    elif _is(data, "pyspark", "DataFrame"):
        how = "convert it with df.toPandas(), or write it as Parquet and pass the path"
    elif hasattr(data, "to_pandas"):
        how = f"convert it with {kind.__name__}.to_pandas()"
    elif hasattr(data, "to_arrow"):
        how = f"convert it with {kind.__name__}.to_arrow()"
    elif hasattr(data, "toPandas"):
        how = f"convert it with {kind.__name__}.toPandas()"
    elif isinstance(data, (list, dict)):
        how = "wrap it as pandas.DataFrame(data)"
    text = f"cannot audit {what} as {role}: pass {ACCEPTED}"
    return f"{text}; {how}" if how else text
