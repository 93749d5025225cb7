"""CSV and TSV files, streamed block by block with pyarrow."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.csv as pacsv

from datavet.errors import InputError
from datavet.sources.base import SchemaRestart, TabularSource

_CONVERSION = re.compile(r"In CSV column #(\d+): .*CSV conversion error to (\w+)")
_BLOCK_BYTES = 8 << 20


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

    def _options(self):
        read = pacsv.ReadOptions(block_size=_BLOCK_BYTES, use_threads=True)
        parse = pacsv.ParseOptions(delimiter=self.delimiter)
        convert = pacsv.ConvertOptions(
            strings_can_be_null=True,
            column_types=self.column_types,
        )
        return read, parse, convert

    def _open(self) -> pacsv.CSVStreamingReader:
        read, parse, convert = self._options()
        try:
            return pacsv.open_csv(self.path, read, parse, convert)
        except pa.ArrowInvalid as exc:
            raise InputError(self.name, _describe(exc)) from exc

    def open(self) -> CsvSource:
        reader = self._open()
        self.schema = reader.schema
        reader.close()
        self.check_schema()
        self._check_utf8(self.schema)
        return self

    def _check_utf8(self, schema: pa.Schema) -> None:
        for f in schema:
            if pa.types.is_binary(f.type) or pa.types.is_large_binary(f.type):
                raise InputError(
                    self.name,
                    f"column {f.name!r} is not valid UTF-8; re-encode the file as UTF-8 "
                    "(for example `iconv -f latin1 -t utf-8`)",
                )

    def _iter_batches(self, batch_rows: int) -> Iterator[pa.RecordBatch]:
        reader = self._open()
        while True:
            try:
                batch = reader.read_next_batch()
            except StopIteration:
                return
            except pa.ArrowInvalid as exc:
                match = _CONVERSION.search(str(exc))
                if match is None:
                    raise InputError(self.name, _describe(exc)) from exc
                col = self.schema.field(int(match.group(1)))
                if "invalid UTF8" in str(exc) or _widen(col.type) == col.type:
                    raise InputError(
                        self.name,
                        f"column {col.name!r} is not valid UTF-8 past the first block; re-encode "
                        "the file as UTF-8"
                        if "UTF8" in str(exc)
                        else _describe(exc),
                    ) from exc
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


def open_csv(path: Path, name: str) -> CsvSource:
    delimiter = "\t" if path.suffix.lower() in {".tsv", ".tab"} else ","
    return CsvSource(name=name, format="csv", path=path, delimiter=delimiter, uri=str(path)).open()
