"""In-memory inputs: pandas DataFrames, Arrow tables, NumPy ``(X, y)`` pairs."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa

from datavet.errors import InputError, UsageError
from datavet.sources.base import TableSource


def _column_to_arrow(series: pd.Series) -> pa.Array:
    try:
        return pa.array(series, from_pandas=True)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        # A column mixing numbers and strings: keep every value, as text; missing stays missing.
        values = [None if pd.isna(v) else str(v) for v in series.astype(object)]
        return pa.array(values, type=pa.string())


def from_pandas(df: pd.DataFrame, name: str) -> TableSource:
    names = [str(c) for c in df.columns]
    arrays = [_column_to_arrow(df.iloc[:, i]) for i in range(df.shape[1])]
    table = pa.Table.from_arrays(arrays, names=names) if arrays else pa.table({})
    source = TableSource(
        name=name, format="pandas", schema=table.schema, num_rows=len(df), table=table
    )
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


def from_numpy(x: np.ndarray, y: np.ndarray | None, name: str, target: str | None) -> TableSource:
    """A 2-D feature array and an optional label array; columns are named x0, x1, ..."""
    x = np.asarray(x)
    if x.ndim == 1:
        x = x[:, None]
    if x.ndim != 2:
        raise UsageError(f"{name}: expected a 2-D array of features, got shape {x.shape}")
    if x.dtype == object:
        raise InputError(name, "object arrays are not supported; pass a numeric array")
    columns = {f"x{j}": pa.array(x[:, j]) for j in range(x.shape[1])}
    if y is not None:
        y = np.asarray(y)
        if y.ndim != 1 or len(y) != len(x):
            raise UsageError(
                f"{name}: labels must be a 1-D array with one value per row "
                f"(got shape {y.shape} for {len(x)} rows)"
            )
        label = target or "label"
        if label in columns:
            raise UsageError(f"{name}: target name {label!r} clashes with a feature column")
        columns[label] = pa.array(y)
    return from_arrow(pa.table(columns), name)
