"""In-memory inputs: pandas DataFrames, Arrow tables, NumPy arrays and ``(X, y)`` pairs.

Every pandas column becomes one Arrow column that keeps its values and its kind: numbers stay
numbers, text stays text (lone surrogates shown as ``\\udXXX`` escapes, since UTF-8 cannot hold
them), NumPy arrays or lists of numbers per row become a vector column (an embedding), integers
beyond int64 become exact decimals, ``longdouble`` becomes float64, a column that mixes kinds
keeps every value as text. What cannot be audited (complex numbers) is refused with a message
that names the column.
"""

from __future__ import annotations

import decimal
import math

import numpy as np
import pandas as pd
import pyarrow as pa

from datavet.errors import InputError, UsageError
from datavet.sources.base import TableSource

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


def _objects_to_arrow(values: list) -> pa.Array:
    """An object column pyarrow could not convert as it stands."""
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
    # A column mixing numbers and strings (or holding anything else): keep every value as text;
    # missing stays missing.
    return pa.array([None if _is_missing(v) else _text(v) for v in values], type=pa.string())


def _column_to_arrow(series: pd.Series, source: str) -> pa.Array:
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
        return _objects_to_arrow(series.astype(object).tolist())
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
    arrays = [_column_to_arrow(df.iloc[:, i], name) for i in range(df.shape[1])]
    if label is not None:
        if label_name in names:
            raise UsageError(f"{name}: target name {label_name!r} clashes with a feature column")
        arrays.append(label)
        names.append(label_name)
    table = pa.Table.from_arrays(arrays, names=names) if arrays else pa.table({})
    source = TableSource(
        name=name, format="pandas", schema=table.schema, num_rows=len(df), table=table
    )
    if label is not None:
        source.label = label_name
    source.check_schema()
    return source


def from_arrow(table: pa.Table | pa.RecordBatch, name: str) -> TableSource:
    if isinstance(table, pa.RecordBatch):
        table = pa.Table.from_batches([table])
    source = TableSource(
        name=name, format="arrow", schema=table.schema, num_rows=table.num_rows, table=table
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
