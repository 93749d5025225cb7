"""Parquet files or directories of them, and Arrow IPC (Feather v2) files, streamed."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.ipc as ipc
import pyarrow.parquet as pq

from datavet.errors import InputError
from datavet.sources.base import TabularSource

PARQUET_SUFFIXES = {".parquet", ".pq", ".parq"}


def _reader_problem(exc: Exception) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return text


def _parquet_files(root: Path) -> list[Path]:
    """Data files under a dataset directory, in a stable order (hidden and _metadata skipped)."""
    files = [
        p
        for p in root.rglob("*")
        if p.is_file()
        and not any(part.startswith((".", "_")) for part in p.relative_to(root).parts)
        and (p.suffix.lower() in PARQUET_SUFFIXES or not p.suffix)
    ]
    return sorted(files, key=lambda p: p.relative_to(root).as_posix())


@dataclass
class ParquetSource(TabularSource):
    files: list[Path] = field(default_factory=list)

    def open(self) -> ParquetSource:
        schema = None
        total = 0
        for path in self.files:
            label = self._label(path)
            try:
                meta = pq.ParquetFile(path)
            except (pa.ArrowException, OSError, UnicodeError, EOFError) as exc:
                raise InputError(
                    label, f"not a readable Parquet file ({_reader_problem(exc)})"
                ) from exc
            file_schema = meta.schema_arrow
            if schema is None:
                schema = file_schema
            elif not file_schema.equals(schema):
                raise InputError(
                    label,
                    f"schema differs from {self._label(self.files[0])} "
                    f"({_schema_diff(schema, file_schema)})",
                )
            total += meta.metadata.num_rows
        self.schema = schema
        self.num_rows = total
        self.check_schema()
        return self

    @property
    def order_note(self) -> str | None:
        if len(self.files) < 2:
            return None
        return (
            f"{self.name}: rows of {len(self.files)} Parquet files taken in file path order "
            "(sorted by path, then row groups in file order); positional checks (L002, B004) "
            "assume this order, and no sort key says it is the data's own"
        )

    def _label(self, path: Path) -> str:
        return self.name if len(self.files) == 1 else f"{self.name}/{path.name}"

    def _iter_batches(self, batch_rows: int) -> Iterator[pa.RecordBatch]:
        for path in self.files:
            pf = pq.ParquetFile(path)
            for rg in range(pf.num_row_groups):
                try:
                    yield from pf.iter_batches(batch_size=batch_rows, row_groups=[rg])
                except (pa.ArrowException, OSError, UnicodeError, EOFError) as exc:
                    raise InputError(
                        self._label(path), f"row group {rg} is corrupt ({_reader_problem(exc)})"
                    ) from exc


def _schema_diff(a: pa.Schema, b: pa.Schema) -> str:
    parts = []
    only_a = [n for n in a.names if n not in b.names]
    only_b = [n for n in b.names if n not in a.names]
    if only_a:
        parts.append("missing " + ", ".join(map(repr, only_a)))
    if only_b:
        parts.append("extra " + ", ".join(map(repr, only_b)))
    for f in a:
        if f.name in b.names and b.field(f.name).type != f.type:
            parts.append(f"{f.name!r} is {b.field(f.name).type} not {f.type}")
    return "; ".join(parts) or "field metadata differs"


def open_parquet(path: Path, name: str) -> ParquetSource:
    if path.is_dir():
        files = _parquet_files(path)
        if not files:
            raise InputError(name, "directory holds no Parquet files")
    else:
        files = [path]
    return ParquetSource(name=name, format="parquet", files=files, uri=str(path)).open()


@dataclass
class ArrowIpcSource(TabularSource):
    path: Path = None  # type: ignore[assignment]
    stream: bool = False

    def _reader(self):
        source = pa.memory_map(str(self.path), "r")
        return ipc.open_stream(source) if self.stream else ipc.open_file(source)

    def open(self) -> ArrowIpcSource:
        try:
            try:
                reader = self._reader()
            except _IPC_ERRORS as file_error:
                with open(self.path, "rb") as fh:
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
            raise InputError(
                self.name, f"not a readable Arrow IPC/Feather file ({_reader_problem(exc)})"
            ) from None
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
            raise InputError(self.name, f"corrupt Arrow data ({_reader_problem(exc)})") from None


# What pyarrow raises for damaged IPC data: its own errors, I/O and decompression errors, and
# UnicodeDecodeError for schema metadata that is not text.
_IPC_ERRORS = (pa.ArrowException, OSError, UnicodeError, ValueError, EOFError)


def open_arrow(path: Path, name: str) -> ArrowIpcSource:
    return ArrowIpcSource(name=name, format="arrow", path=path, uri=str(path)).open()
