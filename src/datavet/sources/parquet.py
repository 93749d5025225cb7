"""Parquet files or directories of them, and Arrow IPC (Feather v2) files, streamed."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.fs as pafs
import pyarrow.ipc as ipc
import pyarrow.parquet as pq

from datavet.errors import InputError
from datavet.sources.base import TabularSource
from datavet.sources.fs import (
    PARQUET_SUFFIXES,
    Conform,
    arrow_path,
    locate,
    open_input,
    order_note,
    unify_schemas,
    with_partitions,
    without_pandas_index,
)

__all__ = [
    "PARQUET_SUFFIXES",
    "ArrowIpcSource",
    "ParquetPiece",
    "ParquetSource",
    "transport_problem",
]

_PARQUET_ERRORS = (pa.ArrowException, OSError, UnicodeError, EOFError, ValueError)


def _reader_problem(exc: Exception) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return text


# What the S3 / GCS clients (curl underneath) and the OS say when the store, not the file,
# failed: the connection dropped, refused, or stalled until a timeout.
_TIMED_OUT = re.compile(r"timed out|timeout was reached|curlCode: 28\b|ETIMEDOUT", re.IGNORECASE)
_CONNECTION = re.compile(
    r"NETWORK_CONNECTION|curlCode|curl error|connection (?:reset|refused|aborted|closed|lost)"
    r"|broken pipe|could not connect|failed to connect|recv failure|send failure"
    r"|transfer closed|network is unreachable|ECONNRESET|EPIPE",
    re.IGNORECASE,
)


def transport_problem(exc: BaseException) -> str | None:
    """``cannot read: connection lost (...)`` / ``cannot read: timed out (...)`` when ``exc``
    says that reading failed on the way (the object store or the network: an OSError of the
    filesystem layer), not in the data; None for anything else (a decode error: the file's
    own problem, worded as such by the caller)."""
    if isinstance(exc, TimeoutError):
        kind = "timed out"
    elif isinstance(exc, ConnectionError):
        kind = "connection lost"
    elif isinstance(exc, OSError):
        text = str(exc)
        if _TIMED_OUT.search(text):
            kind = "timed out"
        elif _CONNECTION.search(text):
            kind = "connection lost"
        else:
            return None
    else:
        return None
    return f"cannot read: {kind} ({_reader_problem(exc)}); the data itself may be fine"


def _unreadable(label: str, exc: Exception, problem: str) -> InputError:
    """The InputError of a failed read: the store's failure as such, else ``problem`` (which
    says what is wrong with the data)."""
    return InputError(label, transport_problem(exc) or f"{problem} ({_reader_problem(exc)})")


def _parquet_files(root: Path) -> list[Path]:
    """Data files under a local dataset directory, in a stable order (hidden and _metadata
    skipped): what ``--max-memory`` estimates from."""
    files = [
        p
        for p in root.rglob("*")
        if p.is_file()
        and not any(part.startswith((".", "_")) for part in p.relative_to(root).parts)
        and (p.suffix.lower() in PARQUET_SUFFIXES or not p.suffix)
    ]
    return sorted(files, key=lambda p: p.relative_to(root).as_posix())


@dataclass(frozen=True)
class ParquetPiece:
    """One row group of one file of a Parquet dataset, conformed to the dataset schema: what a
    Dask worker reads (small and picklable: a filesystem, a path, a row group)."""

    filesystem: Any
    path: str
    row_group: int
    label: str
    schema: pa.Schema
    values: tuple[tuple[str, Any], ...] = ()

    def batches(
        self, batch_rows: int, columns: list[str] | None = None
    ) -> Iterator[pa.RecordBatch]:
        values = dict(self.values)
        schema = (
            self.schema if columns is None else pa.schema([self.schema.field(c) for c in columns])
        )
        conform = Conform(self.label, schema, values)
        wanted = [c for c in schema.names if c not in values]
        try:
            with open_input(self.filesystem, self.path) as fh:
                pf = pq.ParquetFile(fh)
                for batch in pf.iter_batches(
                    batch_size=batch_rows, row_groups=[self.row_group], columns=wanted
                ):
                    yield conform(batch)
        except _PARQUET_ERRORS as exc:
            raise _unreadable(self.label, exc, f"row group {self.row_group} is corrupt") from None


@dataclass
class ParquetSource(TabularSource):
    """One Parquet file, or several (a directory, a glob) read in path order as one table, on
    any pyarrow filesystem, with Hive partition values as columns."""

    files: list[str] = field(default_factory=list)
    filesystem: Any = None
    labels: list[str] = field(default_factory=list)
    partition_values: list[dict[str, Any]] = field(default_factory=list)
    partition_schema: pa.Schema = field(default_factory=lambda: pa.schema([]))
    row_groups: list[list[int]] = field(default_factory=list)  # rows of each row group, per file
    notes: list[str] = field(default_factory=list)  # files or columns left out, and why

    def open(self) -> ParquetSource:
        if self.filesystem is None:
            self.filesystem = pafs.LocalFileSystem()
        if not self.labels:
            self.labels = [self.name] if len(self.files) == 1 else list(self.files)
        if not self.partition_values:
            self.partition_values = [{} for _ in self.files]
        schemas = []
        self.row_groups = []
        for path, label in zip(self.files, self.labels):
            try:
                with open_input(self.filesystem, path) as fh:
                    meta = pq.ParquetFile(fh)
                    schemas.append((label, meta.schema_arrow))
                    md = meta.metadata
                    self.row_groups.append(
                        [md.row_group(i).num_rows for i in range(md.num_row_groups)]
                    )
            except _PARQUET_ERRORS as exc:
                raise _unreadable(label, exc, "not a readable Parquet file") from None
        schemas, note = without_pandas_index(self.name, schemas)
        if note:
            self.notes.append(note)
        files_schema = unify_schemas(schemas)
        self.schema = with_partitions(self.labels[0], files_schema, self.partition_schema)
        self.num_rows = sum(sum(groups) for groups in self.row_groups)
        self.check_schema()
        return self

    @property
    def order_note(self) -> str | None:
        return order_note(self.name, self.labels, "Parquet")

    def pieces(self) -> list[tuple[ParquetPiece, int]]:
        """Every row group of every file, in row order, with its number of rows."""
        out = []
        for path, label, values, groups in zip(
            self.files, self.labels, self.partition_values, self.row_groups
        ):
            frozen = tuple(values.items())
            for rg, rows in enumerate(groups):
                out.append(
                    (ParquetPiece(self.filesystem, path, rg, label, self.schema, frozen), rows)
                )
        return out

    def column_batches(
        self, columns: list[str], batch_rows: int
    ) -> Iterator[tuple[int, pa.RecordBatch]]:
        """``(offset, batch)`` of ``columns`` only: a Parquet column is read by itself."""
        offset = 0
        for piece, _ in self.pieces():
            for batch in piece.batches(batch_rows, columns):
                yield offset, batch
                offset += batch.num_rows

    def few_text_values(self, columns: list[str], limit: int) -> list[str]:
        """The text columns of ``columns`` known to hold fewer than ``limit`` distinct values,
        told from their row groups' dictionaries (read as dictionary arrays: for dictionary
        pages, the indices are read and no value is decoded; plain pages are dictionary-encoded
        by pyarrow as it reads them): the union of the dictionaries holds every value there is,
        so a union of fewer than ``limit`` entries bounds the column's distinct values. A row
        group is read only while a column can still be under the limit; a partition column, or
        a file that cannot be read here, is left out (the caller profiles it; the scan reports
        what is wrong with the file)."""
        text = {
            c
            for c in columns
            if c in self.schema.names
            and (
                pa.types.is_string(self.schema.field(c).type)
                or pa.types.is_large_string(self.schema.field(c).type)
            )
            and not any(c in values for values in self.partition_values)
        }
        seen: dict[str, pa.Array] = {}
        try:
            for path in self.files:
                with open_input(self.filesystem, path) as fh:
                    pf = pq.ParquetFile(fh, read_dictionary=sorted(text))
                    names = set(pf.schema_arrow.names)
                    for rg in range(pf.metadata.num_row_groups):
                        live = sorted(c for c in text if c in names)
                        if not live:
                            break
                        table = pf.read_row_group(rg, columns=live)
                        for name in live:
                            column = table.column(name)
                            if not pa.types.is_dictionary(column.type):
                                text.discard(name)
                                continue
                            parts = [a.dictionary for a in column.chunks]  # none: no rows
                            if name in seen:
                                parts.append(seen[name])
                            union = pc.unique(pa.chunked_array(parts, column.type.value_type))
                            seen[name] = union
                            if len(union) >= limit:
                                text.discard(name)
        except _PARQUET_ERRORS:
            return []  # the scan reports what is wrong with the file
        return [c for c in columns if c in text]

    def _iter_batches(self, batch_rows: int) -> Iterator[pa.RecordBatch]:
        for path, label, values in zip(self.files, self.labels, self.partition_values):
            conform = Conform(label, self.schema, values)
            wanted = [c for c in self.schema.names if c not in values]
            try:
                with open_input(self.filesystem, path) as fh:
                    pf = pq.ParquetFile(fh)
                    for groups in _grouped(pf.metadata, batch_rows):
                        try:
                            for batch in pf.iter_batches(
                                batch_size=batch_rows, row_groups=groups, columns=wanted
                            ):
                                yield conform(batch)
                        except _PARQUET_ERRORS as exc:
                            if transport_problem(exc) is None:
                                rg, exc = _corrupt_group(pf, groups, exc)
                            else:  # the store failed: reading the groups again would too
                                rg = groups[0]
                            raise _unreadable(label, exc, f"row group {rg} is corrupt") from None
            except _PARQUET_ERRORS as exc:
                raise _unreadable(label, exc, "not a readable Parquet file") from None


def _grouped(metadata, batch_rows: int) -> list[list[int]]:
    """Consecutive row groups read together, up to ``batch_rows`` rows: a file written in
    small row groups is read in batches of the size asked for, not of its row groups."""
    out: list[list[int]] = []
    rows = 0
    for rg in range(metadata.num_row_groups):
        n = metadata.row_group(rg).num_rows
        if out and rows + n <= batch_rows:
            out[-1].append(rg)
            rows += n
        else:
            out.append([rg])
            rows = n
    return out


def _corrupt_group(pf, groups: list[int], exc: Exception) -> tuple[int, Exception]:
    """The first of ``groups`` that cannot be read alone, and its error (the error path only:
    the groups read together failed with ``exc``)."""
    for rg in groups:
        try:
            for _ in pf.iter_batches(row_groups=[rg]):
                pass
        except _PARQUET_ERRORS as alone:
            return rg, alone
    return groups[0], exc


def open_parquet(path: Path | str, name: str) -> ParquetSource:
    """A local Parquet file (a directory or glob goes through ``sources.open_path``)."""
    loc = locate(path, name)
    return ParquetSource(
        name=name, format="parquet", files=[loc.path], filesystem=loc.filesystem, uri=str(path)
    ).open()


@dataclass
class ArrowIpcSource(TabularSource):
    path: Path = None  # type: ignore[assignment]
    stream: bool = False
    filesystem: Any = None  # a pyarrow filesystem (object stores); None: a local file

    def _input(self):
        if self.filesystem is None:
            path = str(self.path)
            if arrow_path(path) != path:  # a name that is not UTF-8: pyarrow cannot map it
                return open_input(pafs.LocalFileSystem(), path)
            return pa.memory_map(path, "r")
        return self.filesystem.open_input_file(str(self.path))  # ranged reads, not a download

    def _reader(self):
        source = self._input()
        return ipc.open_stream(source) if self.stream else ipc.open_file(source)

    def open(self) -> ArrowIpcSource:
        try:
            try:
                reader = self._reader()
            except _IPC_ERRORS as file_error:
                with self._input() as fh:
                    if fh.read(6) == b"ARROW1":  # a damaged IPC file, not a stream: say why
                        raise file_error
                self.stream = True
                reader = self._reader()
            self.schema = reader.schema
            if not self.stream:
                self.num_rows = sum(
                    self._checked(reader.get_batch(i)).num_rows
                    for i in range(reader.num_record_batches)
                )
        except _IPC_ERRORS as exc:
            raise _unreadable(self.name, exc, "not a readable Arrow IPC/Feather file") from None
        self.check_schema()
        return self

    def _checked(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        """A damaged file can describe buffers it does not hold (offsets past the end, wrong
        lengths): reading such a batch would crash the process, so each is validated first."""
        batch.validate(full=True)
        return batch

    def _iter_batches(self, batch_rows: int) -> Iterator[pa.RecordBatch]:
        try:
            reader = self._reader()
            if self.stream:
                for batch in reader:
                    yield self._checked(batch)
            else:
                for i in range(reader.num_record_batches):
                    yield self._checked(reader.get_batch(i))
        except _IPC_ERRORS as exc:
            raise _unreadable(self.name, exc, "corrupt Arrow data") from None


# What pyarrow raises for damaged IPC data: its own errors, I/O and decompression errors, and
# UnicodeDecodeError for schema metadata that is not text.
_IPC_ERRORS = (pa.ArrowException, OSError, UnicodeError, ValueError, EOFError)


def open_arrow(path: Path | str, name: str, filesystem: Any = None) -> ArrowIpcSource:
    """An Arrow IPC file or stream: a local path (made absolute, so a Dask worker elsewhere
    finds it), or a path on ``filesystem``."""
    where = Path(os.path.abspath(path)) if filesystem is None else Path(path)
    return ArrowIpcSource(
        name=name, format="arrow", path=where, uri=str(path), filesystem=filesystem
    ).open()
