"""Turn every input into a :class:`TabularSource`: a stream of Arrow batches with row offsets."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pyarrow as pa

from datavet._lazy import pandas as pd
from datavet.errors import InputError, UsageError
from datavet.sources import frames, fs
from datavet.sources.arrays import TensorSource, is_tensor_input, open_tensor
from datavet.sources.base import DEFAULT_BATCH_ROWS, SchemaRestart, TableSource, TabularSource
from datavet.sources.csv import is_pipe, open_csv, spool
from datavet.sources.frames import from_arrow, from_numpy, from_pair, from_pandas
from datavet.sources.fs import (
    ARROW_SUFFIXES,
    CSV_SUFFIXES,
    PARQUET_SUFFIXES,
    FileSetSource,
)
from datavet.sources.parquet import ParquetSource, open_arrow
from datavet.sources.tensor_base import TENSOR_SUFFIXES

__all__ = [
    "ARROW_SUFFIXES",
    "CSV_SUFFIXES",
    "DEFAULT_BATCH_ROWS",
    "PARQUET_SUFFIXES",
    "SchemaRestart",
    "TableSource",
    "TabularSource",
    "TensorSource",
    "open_source",
    "refuse_shared_pipe",
]

_PICKLE_REFUSED = (
    "pickle files are refused: unpickling runs arbitrary code; save the table as Parquet or CSV"
)
_UNSUPPORTED = (
    "expected a table file ("
    + ", ".join(sorted(CSV_SUFFIXES) + sorted(PARQUET_SUFFIXES) + sorted(ARROW_SUFFIXES))
    + "; CSV and TSV also compressed: "
    + ", ".join(sorted(fs.COMPRESSED_SUFFIXES))
    + "), a tensor file ("
    + ", ".join(sorted(TENSOR_SUFFIXES))
    + "), a directory of table files (Hive partitions such as site=A/ become columns), a glob "
    "such as 'data/*.parquet', or an s3://, gs:// or file:// URL"
)
_FEATHER_V1 = (
    "is a Feather v1 file, which datavet does not read: save it again as Feather v2 "
    "(pyarrow.feather.write_feather(table, path), or pandas' to_feather()) or as Parquet"
)


def _suffix(path: Path) -> str:
    return fs.suffix_of(str(path))


def open_path(
    path: str | os.PathLike,
    name: str | None = None,
    encoding: str | None = None,
    delimiter: str | None = None,
) -> TabularSource:
    """Open a file, a directory, a glob or a URL (see ``sources.fs``) as one table; standard
    input (``-``), a FIFO or ``<(...)`` is read once into a temporary file first."""
    if is_pipe(path):
        name = name or ("<stdin>" if str(path) == "-" else str(path))
        return open_path(spool(path, name), name, encoding, delimiter)
    name = name or os.fspath(path)
    loc = fs.locate(path, name)
    if loc.local and not fs.is_url(os.fspath(path)) and not fs.is_glob(os.fspath(path)):
        local = Path(path)
        if not local.exists():
            raise InputError(name, "no such file or directory")
        if local.is_file():
            return _open_local_file(local, name, encoding, delimiter)
    found = fs.find(loc)
    if found.kind == "file":
        if loc.local:
            return _open_local_file(Path(found.files[0].path), name, encoding, delimiter)
        return _open_remote_file(loc, found.files[0], encoding, delimiter)
    return _open_many(found, name, encoding, delimiter)


def _open_local_file(
    path: Path, name: str, encoding: str | None, delimiter: str | None = None
) -> TabularSource:
    if not os.access(path, os.R_OK):
        raise InputError(name, "permission denied")
    if path.stat().st_size == 0:
        raise InputError(name, "file is empty (0 bytes)")
    kind = fs.format_of(str(path))
    if kind is None:
        with path.open("rb") as fh:
            kind = fs.format_of_bytes(fh.read(6))
    loc = fs.locate(path, name)
    return _open_file(kind, loc, str(path), name, encoding, delimiter, suffix=_suffix(path))


def _open_remote_file(
    loc: fs.Location, ref: fs.FileRef, encoding: str | None, delimiter: str | None = None
) -> TabularSource:
    if ref.size == 0:
        raise InputError(loc.name, "file is empty (0 bytes)")
    kind = ref.format
    if kind is None:
        try:
            with loc.filesystem.open_input_stream(ref.path) as fh:
                kind = fs.format_of_bytes(fh.read(6))
        except (pa.ArrowException, OSError) as exc:
            raise InputError(loc.name, f"cannot read ({exc})".splitlines()[0]) from None
    suffix = fs.suffix_of(ref.path)
    return _open_file(kind, loc, ref.path, loc.name, encoding, delimiter, suffix=suffix)


def _open_file(
    kind: str | None, loc: fs.Location, path: str, name: str, encoding, delimiter=None, *, suffix
) -> TabularSource:
    """One file of a known format, on the location's filesystem."""
    if kind == "pickle":
        raise InputError(name, _PICKLE_REFUSED)
    if kind in ("csv", "arrow"):
        _check_content(kind, loc, path, name)
    if kind == "csv":
        if loc.local:
            return open_csv(Path(path), name, encoding, delimiter=delimiter)
        return open_csv(Path(path), name, encoding, delimiter=delimiter, filesystem=loc.filesystem)
    if kind == "parquet":
        where = os.path.abspath(path) if loc.local else path
        return ParquetSource(
            name=name, format="parquet", files=[where], filesystem=loc.filesystem, uri=name
        ).open()
    if kind == "arrow":
        return open_arrow(path, name, None if loc.local else loc.filesystem)
    raise InputError(name, f"unsupported format {suffix or '(no extension)'!r}; {_UNSUPPORTED}")


def _check_content(kind: str, loc: fs.Location, path: str, name: str) -> None:
    """Refuse, in one line that says what it is, a file whose first bytes contradict its name:
    a Parquet or Arrow file named .csv (its reader would quote binary bytes as a bad row), or a
    Feather v1 file (the Arrow reader takes it for a broken IPC file)."""
    try:
        with fs.open_input(loc.filesystem, path, stream=True) as fh:
            head = fh.read(6)
    except (pa.ArrowException, OSError):
        return  # the format's reader says what is wrong
    if head[:4] == b"FEA1":
        raise InputError(name, _FEATHER_V1)
    actual = fs.format_of_bytes(head)
    if kind == "csv" and actual is not None:
        raise InputError(
            name,
            f"is a {_NAMES[actual]} file (it starts with {head[:4].decode()}), not CSV: "
            f"rename it to {_RENAME[actual]}",
        )


_NAMES = {"parquet": "Parquet", "arrow": "Arrow IPC/Feather"}
_RENAME = {"parquet": ".parquet", "arrow": ".arrow"}


def refuse_shared_pipe(train: object, test: object) -> None:
    """Refuse one pipe given for both splits before either is read: a pipe can be read only
    once, so the second split would find it empty and be blamed for it."""
    if not all(isinstance(d, (str, os.PathLike)) for d in (train, test)):
        return
    if os.fspath(train) == "-" and os.fspath(test) == "-":
        raise UsageError(
            "standard input (-) can be read only once: give '-' for one split only, "
            "and the other as a file"
        )
    if is_pipe(train) and is_pipe(test) and os.path.samefile(train, test):
        raise UsageError(
            f"{os.fspath(train)} is a pipe, which can be read only once: "
            "it cannot be both the train and the test split"
        )


def _open_many(
    found: fs.Found, name: str, encoding: str | None, delimiter: str | None = None
) -> TabularSource:
    """A directory or glob: its files in path order, partition directories as columns."""
    loc = found.location
    part_schema, values = fs.partitions(found)
    labels = [r.label for r in found.files]
    kind = found.files[0].format
    if kind == "parquet":
        return ParquetSource(
            name=name,
            format="parquet",
            files=[r.path for r in found.files],
            filesystem=loc.filesystem,
            labels=labels,
            partition_values=values,
            partition_schema=part_schema,
            uri=name,
            notes=list(found.notes),
        ).open()
    children = [
        _open_file(kind, loc, r.path, r.label, encoding, delimiter, suffix=fs.suffix_of(r.path))
        for r in found.files
    ]
    return FileSetSource(
        name=name,
        format=kind,
        children=children,
        labels=labels,
        partition_values=values,
        partition_schema=part_schema,
        text_fallback=kind == "csv",
        uri=name,
        notes=list(found.notes),
    ).open()


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

    ``data`` may be a path (CSV, TSV, Parquet, Arrow IPC/Feather; a directory or glob of such
    files, Hive partition directories read as columns; a file://, s3:// or gs:// URL), a pandas
    DataFrame, a pyarrow Table or RecordBatch, a 2-D NumPy array, or an ``(X, y)`` pair of arrays;
    also the frames of other libraries (see ``sources.frames``): a polars DataFrame or LazyFrame,
    any object with ``__arrow_c_stream__``, a ``pyarrow.dataset.Dataset``, a Hugging Face
    ``Dataset`` or ``IterableDataset``, a Dask DataFrame. Tensor inputs (``.npy``/``.npz``/``.pt``
    paths, arrays with more than 2 dimensions, torch tensors, Datasets and DataLoaders) open as a
    :class:`TensorSource` (see ``sources.arrays``). ``encoding`` is the text encoding of CSV/TSV
    files (default UTF-8, checked strictly); ``delimiter`` their field separator (default:
    sniffed among ``,`` ``;`` tab ``|``).
    """
    if isinstance(data, TabularSource):
        return data
    # Hugging Face first: an IterableDataset is also a torch IterableDataset
    if frames.is_hf_dataset(data):
        return frames.from_hf_dataset(
            data, f"<{role} Dataset>", target=target, inputs=inputs, channel_axis=channel_axis
        )
    if frames.is_hf_iterable(data):
        return frames.from_hf_iterable(
            data,
            f"<{role} IterableDataset>",
            target=target,
            inputs=inputs,
            channel_axis=channel_axis,
        )
    if is_tensor_input(data):
        return open_tensor(data, role=role, target=target, inputs=inputs, channel_axis=channel_axis)
    if isinstance(data, (str, os.PathLike)):
        return open_path(data, encoding=encoding, delimiter=delimiter)
    if isinstance(data, pd.DataFrame):
        return from_pandas(data, f"<{role} DataFrame>")
    if isinstance(data, pd.Series):
        return from_pandas(data.to_frame(), f"<{role} Series>")
    if isinstance(data, (pa.Table, pa.RecordBatch)):
        return from_arrow(data, f"<{role} Table>", check=True)
    if frames._is(data, "polars", "DataFrame", "LazyFrame", "Series"):
        return frames.from_polars(data, f"<{role} {type(data).__name__}>")
    if frames.is_dask_frame(data):
        return frames.from_dask(data, f"<{role} Dask DataFrame>")
    if frames.is_arrow_dataset(data):
        return frames.from_arrow_dataset(data, f"<{role} dataset>")
    if isinstance(data, np.ndarray):
        return from_numpy(data, None, f"<{role} array>", target)
    if isinstance(data, tuple) and len(data) == 2:
        x, y = data
        return from_pair(x, y, f"<{role} arrays>", target)
    if frames.has_arrow_stream(data):
        return frames.from_arrow_stream(data, f"<{role} {type(data).__name__}>")
    raise UsageError(frames.refusal(data, role))
