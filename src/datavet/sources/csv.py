"""CSV and TSV files, streamed block by block with pyarrow."""

from __future__ import annotations

import codecs
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.csv as pacsv

from datavet.errors import InputError, UsageError
from datavet.sources.base import SchemaRestart, TabularSource

_CONVERSION = re.compile(r"In CSV column #(\d+): .*CSV conversion error to (\w+)")
_BLOCK_BYTES = 8 << 20
_SCAN_BYTES = 1 << 20
# What a damaged file can raise while pyarrow reads it: its own errors, a failed decompression
# (OSError), a transcoding error (--encoding), or zlib's own.
_READ_ERRORS = (pa.ArrowException, OSError, UnicodeError, EOFError, ValueError)


def _widen(arrow_type: pa.DataType) -> pa.DataType:
    """The type to retry with when a later block does not fit the inferred one."""
    if pa.types.is_integer(arrow_type):
        return pa.float64()
    return pa.string()


@dataclass
class CsvSource(TabularSource):
    path: Path = None  # type: ignore[assignment]
    delimiter: str = ","
    column_types: dict[str, pa.DataType] = field(default_factory=dict)
    encoding: str = "utf-8"
    filesystem: Any = None  # a pyarrow filesystem (s3://, gs://); None: a local file

    def _input(self):
        """What pyarrow reads: the local path, or a stream on ``filesystem`` (never a download)."""
        if self.filesystem is None:
            return self.path
        return self.filesystem.open_input_stream(str(self.path), compression="detect")

    def _options(self):
        read = pacsv.ReadOptions(block_size=_BLOCK_BYTES, use_threads=True, encoding=self.encoding)
        parse = pacsv.ParseOptions(delimiter=self.delimiter)
        convert = pacsv.ConvertOptions(
            strings_can_be_null=True,
            column_types=self.column_types,
        )
        return read, parse, convert

    def _open(self) -> pacsv.CSVStreamingReader:
        read, parse, convert = self._options()
        try:
            return pacsv.open_csv(self._input(), read, parse, convert)
        except _READ_ERRORS as exc:
            raise self._error(exc) from None

    def open(self) -> CsvSource:
        reader = self._open()
        self.schema = reader.schema
        reader.close()
        if self._utf8 and any("\ufffd" in n for n in self.schema.names):
            # pyarrow replaces invalid UTF-8 in the header silently: never accept that
            self._raise_if_not_utf8()
        self.check_schema()
        self._check_utf8(self.schema)
        return self

    @property
    def _utf8(self) -> bool:
        return codecs.lookup(self.encoding).name == "utf-8"

    def _error(self, exc: BaseException) -> InputError:
        """A reader error as a one-line InputError (invalid UTF-8: with its byte offset)."""
        if self._utf8 and "UTF8" in str(exc).replace("-", "").upper():
            self._raise_if_not_utf8()
        if isinstance(exc, UnicodeError):
            return InputError(self.name, f"not valid {self.encoding} text ({exc})")
        return InputError(self.name, _describe(exc))

    def _raise_if_not_utf8(self) -> None:
        found = first_invalid_utf8(self.path, self.filesystem)
        if found is not None:
            offset, line, byte = found
            raise InputError(
                self.name,
                f"not valid UTF-8: byte 0x{byte:02X} at byte offset {offset:,} (line {line:,}"
                f"{', of the decompressed text' if _compressed(self.path) else ''}); "
                "datavet never replaces characters silently: if the file is in another encoding, "
                "pass it, for example --encoding latin-1",
            )

    def _check_utf8(self, schema: pa.Schema) -> None:
        for f in schema:
            if pa.types.is_binary(f.type) or pa.types.is_large_binary(f.type):
                self._raise_if_not_utf8()
                raise InputError(
                    self.name,
                    f"column {f.name!r} is not valid UTF-8; re-encode the file as UTF-8 "
                    "or pass its encoding (--encoding latin-1)",
                )

    def _iter_batches(self, batch_rows: int) -> Iterator[pa.RecordBatch]:
        reader = self._open()
        while True:
            try:
                batch = reader.read_next_batch()
            except StopIteration:
                return
            except _READ_ERRORS as exc:
                match = _CONVERSION.search(str(exc)) if isinstance(exc, pa.ArrowInvalid) else None
                if match is None or int(match.group(1)) >= len(self.schema):
                    raise self._error(exc) from None
                col = self.schema.field(int(match.group(1)))
                if "UTF8" in str(exc) or _widen(col.type) == col.type:
                    raise self._error(exc) from None
                self.column_types[col.name] = _widen(col.type)
                self.schema = self.schema.set(
                    int(match.group(1)), pa.field(col.name, self.column_types[col.name])
                )
                raise SchemaRestart(col.name) from exc
            self._check_utf8(batch.schema)
            yield batch


def _describe(exc: Exception) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    if text == "Empty CSV file":
        return "file has no header and no rows"
    return f"cannot parse CSV: {text}"


def _compressed(path: Path) -> bool:
    return path.suffix.lower() in {".gz", ".bz2", ".zst", ".lz4"}


def first_invalid_utf8(path: Path, filesystem: Any = None) -> tuple[int, int, int] | None:
    """``(byte offset, line number, byte)`` of the first byte that is not valid UTF-8 (in the
    decompressed text of a compressed file), or None. Streams the file a megabyte at a time."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    offset = 0  # bytes fed to the decoder so far
    lines = 1
    try:
        opened = (
            pa.input_stream(str(path), compression="detect")
            if filesystem is None
            else filesystem.open_input_stream(str(path), compression="detect")
        )
        with opened as stream:
            while True:
                chunk = stream.read(_SCAN_BYTES)
                pending = len(decoder.getstate()[0])  # an incomplete sequence carried over
                try:
                    decoder.decode(chunk, final=not chunk)
                except UnicodeDecodeError as exc:
                    data = exc.object
                    at = offset - pending + exc.start
                    lines += data[: exc.start].count(b"\n")
                    return at, lines, data[exc.start]
                if not chunk:
                    return None
                lines += chunk.count(b"\n")
                offset += len(chunk)
    except _READ_ERRORS:
        return None  # unreadable further on: the reader's own error says so


def open_csv(
    path: Path, name: str, encoding: str | None = None, filesystem: Any = None
) -> CsvSource:
    """A CSV/TSV file: a local path, or a path on a pyarrow ``filesystem`` (an object store),
    streamed from it."""
    delimiter = "\t" if _suffix_without_compression(path) in {".tsv", ".tab"} else ","
    encoding = encoding or "utf-8"
    try:
        codecs.lookup(encoding)
    except LookupError:
        raise UsageError(
            f"unknown --encoding {encoding!r} (for example utf-8, latin-1, cp1252)"
        ) from None
    return CsvSource(
        name=name,
        format="csv",
        path=path,
        delimiter=delimiter,
        uri=str(path),
        encoding=encoding,
        filesystem=filesystem,
    ).open()


def _suffix_without_compression(path: Path) -> str:
    suffixes = [x.lower() for x in path.suffixes]
    if len(suffixes) >= 2 and _compressed(path):
        return suffixes[-2]
    return suffixes[-1] if suffixes else ""
