"""Turn every input into a :class:`TabularSource`: a stream of Arrow batches with row offsets."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa

from datavet.errors import InputError, UsageError
from datavet.sources.arrays import TensorSource, is_tensor_input, open_tensor
from datavet.sources.base import DEFAULT_BATCH_ROWS, SchemaRestart, TableSource, TabularSource
from datavet.sources.csv import is_pipe, open_csv, spool
from datavet.sources.frames import from_arrow, from_numpy, from_pandas
from datavet.sources.parquet import PARQUET_SUFFIXES, open_arrow, open_parquet

__all__ = [
    "DEFAULT_BATCH_ROWS",
    "SchemaRestart",
    "TableSource",
    "TabularSource",
    "TensorSource",
    "open_source",
]

CSV_SUFFIXES = {".csv", ".tsv", ".tab"}
ARROW_SUFFIXES = {".arrow", ".feather", ".ipc"}
_COMPRESSED = {".gz", ".bz2", ".zst", ".lz4"}
_REFUSED = {".pkl", ".pickle", ".joblib"}


def _suffix(path: Path) -> str:
    suffixes = [s.lower() for s in path.suffixes]
    if len(suffixes) >= 2 and suffixes[-1] in _COMPRESSED:
        return suffixes[-2]
    return suffixes[-1] if suffixes else ""


def open_path(
    path: str | os.PathLike,
    name: str | None = None,
    encoding: str | None = None,
    delimiter: str | None = None,
) -> TabularSource:
    if is_pipe(path):  # standard input, a FIFO, <(...): read once, into a temporary file
        name = name or ("<stdin>" if str(path) == "-" else str(path))
        return open_path(spool(path, name), name, encoding, delimiter)
    path = Path(path)
    name = name or str(path)
    if not path.exists():
        raise InputError(name, "no such file or directory")
    if path.is_dir():
        return open_parquet(path, name)
    if not os.access(path, os.R_OK):
        raise InputError(name, "permission denied")
    if path.stat().st_size == 0:
        raise InputError(name, "file is empty (0 bytes)")
    kind = _suffix(path)
    if kind in _REFUSED:
        raise InputError(
            name,
            "pickle files are refused: unpickling runs arbitrary code; "
            "save the table as Parquet or CSV",
        )
    if kind in CSV_SUFFIXES:
        return open_csv(path, name, encoding, delimiter)
    if kind in PARQUET_SUFFIXES:
        return open_parquet(path, name)
    if kind in ARROW_SUFFIXES:
        return open_arrow(path, name)
    with path.open("rb") as fh:
        head = fh.read(6)
    if head[:4] == b"PAR1":
        return open_parquet(path, name)
    if head == b"ARROW1":
        return open_arrow(path, name)
    raise InputError(
        name,
        f"unsupported format {kind or '(no extension)'!r}; expected .csv, .tsv, .parquet, "
        ".arrow or .feather, or a directory of Parquet files",
    )


def open_source(
    data: object,
    *,
    role: str = "train",
    target: str | None = None,
    inputs: str | None = None,
    channel_axis: int | str | None = None,
    encoding: str | None = None,
    delimiter: str | None = None,
) -> TabularSource | TensorSource:
    """Open ``data`` for scanning.

    ``data`` may be a path (CSV, TSV, Parquet file or directory, Arrow IPC/Feather), a pandas
    DataFrame, a pyarrow Table or RecordBatch, a 2-D NumPy array, or an ``(X, y)`` pair of arrays.
    Tensor inputs (``.npy``/``.npz``/``.pt`` paths, arrays with more than 2 dimensions, torch
    tensors, Datasets and DataLoaders) open as a :class:`TensorSource` (see ``sources.arrays``).
    ``encoding`` is the text encoding of CSV/TSV files (default UTF-8, checked strictly);
    ``delimiter`` their field separator (default: sniffed among ``,`` ``;`` tab ``|``).
    """
    if isinstance(data, TabularSource):
        return data
    if is_tensor_input(data):
        return open_tensor(data, role=role, target=target, inputs=inputs, channel_axis=channel_axis)
    if isinstance(data, (str, os.PathLike)):
        return open_path(data, encoding=encoding, delimiter=delimiter)
    if isinstance(data, pd.DataFrame):
        return from_pandas(data, f"<{role} DataFrame>")
    if isinstance(data, pd.Series):
        return from_pandas(data.to_frame(), f"<{role} Series>")
    if isinstance(data, (pa.Table, pa.RecordBatch)):
        return from_arrow(data, f"<{role} Table>")
    if isinstance(data, np.ndarray):
        return from_numpy(data, None, f"<{role} array>", target)
    if isinstance(data, tuple) and len(data) == 2:
        x, y = data
        return from_numpy(np.asarray(x), np.asarray(y), f"<{role} arrays>", target)
    raise UsageError(
        f"cannot audit {type(data).__name__} as {role}: pass a path, a pandas DataFrame, "
        "a pyarrow Table, or an (X, y) pair of NumPy arrays"
    )
