"""The one interface every tabular input is read through."""

from __future__ import annotations

import datetime
from collections.abc import Iterator
from dataclasses import dataclass, field

import pyarrow as pa

from datavet.errors import InputError

DEFAULT_BATCH_ROWS = 65_536


class SchemaRestart(Exception):
    """A streaming reader met a value its inferred column type cannot hold.

    The source has already widened that column's type; the scan starts over with the new schema.
    Only CSV raises this: its types are inferred from the first block, and a file's head is not
    the file.
    """


@dataclass
class TabularSource:
    """A named stream of Arrow record batches with global row offsets.

    Subclasses implement :meth:`_iter_batches`. Nothing outside ``datavet.sources`` opens a file.
    """

    name: str
    format: str
    schema: pa.Schema = field(default=None)  # type: ignore[assignment]
    num_rows: int | None = None  # when known before reading (Parquet footer, Arrow file, frames)
    uri: str | None = None
    # a datavet.sources.budget.Budget (``max_memory``): charged with every decoded batch
    budget: object = field(default=None, repr=False, compare=False)

    @property
    def order_note(self) -> str | None:
        """How the rows are ordered when that is not simply one file's order (several files)."""
        return None

    @property
    def read_note(self) -> str | None:
        """How the input was read when that is worth saying (a sniffed CSV delimiter)."""
        return None

    def batches(self, batch_rows: int = DEFAULT_BATCH_ROWS) -> Iterator[tuple[int, pa.RecordBatch]]:
        """Yield ``(offset, batch)`` in row order; ``offset`` is the global row of the first row."""
        offset = 0
        for batch in self._iter_batches(batch_rows):
            if batch.num_rows == 0:
                continue
            if self.budget is not None:  # what was decoded, not what the metadata claimed
                self.budget.charge(self.name, offset, batch)
            for start in range(0, batch.num_rows, batch_rows):
                piece = batch.slice(start, batch_rows)
                yield offset, piece
                offset += piece.num_rows

    def _iter_batches(self, batch_rows: int) -> Iterator[pa.RecordBatch]:  # pragma: no cover
        raise NotImplementedError

    def check_schema(self) -> None:
        """Refuse schemas the scan cannot address unambiguously."""
        names = self.schema.names
        if not names:
            raise InputError(self.name, "no columns")
        seen: dict[str, int] = {}
        dups = []
        for i, n in enumerate(names):
            if n in seen:
                dups.append(f"{n!r} at positions {seen[n]} and {i}")
            seen.setdefault(n, i)
        if dups:
            raise InputError(self.name, "duplicate column names: " + "; ".join(dups))


@dataclass
class TableSource(TabularSource):
    """An in-memory Arrow table (from pandas, NumPy or Arrow itself)."""

    table: pa.Table | None = None
    label: str | None = None  # an (X, y) pair: the column that holds y
    notes: list[str] = field(default_factory=list)  # how it was read, when worth saying

    def _iter_batches(self, batch_rows: int) -> Iterator[pa.RecordBatch]:
        yield from self.table.to_batches(max_chunksize=batch_rows)

    def parse_times(self, name: str) -> int | None:
        """Read the text column ``name`` (the ``time`` column) as ISO-8601 dates/times, as a CSV
        reader does: a data frame read with ``pd.read_csv`` holds them as text. Values that are
        not ISO-8601 become missing (V001 counts them); a column mostly not dates stays text.
        Returns how many values did not parse, or None when the column was left as it was."""
        if self.table is None or name not in self.table.column_names:
            return None
        column = self.table.column(name)
        if pa.types.is_dictionary(column.type):
            column = column.cast(column.type.value_type)
        if not (pa.types.is_string(column.type) or pa.types.is_large_string(column.type)):
            return None
        parsed, failed = _iso_times(column)
        if parsed is None:
            return None
        i = self.table.column_names.index(name)
        self.table = self.table.set_column(i, pa.field(name, parsed.type), parsed)
        self.schema = self.table.schema
        return failed


def _iso_times(column: pa.ChunkedArray) -> tuple[pa.ChunkedArray | None, int]:
    """(``column`` as timestamp[us], UTC wall time where an offset is given; how many present
    values did not parse), or (None, 0) when at most half of them are ISO-8601. Blank cells are
    missing. Each distinct value is parsed once (Arrow's parser; Python's for mixed forms), and
    each row takes its value's: no Python object per row."""
    import pyarrow.compute as pc

    target = pa.timestamp("us")
    column = pc.if_else(pc.equal(pc.utf8_trim_whitespace(column), ""), None, column)
    uniques = pc.unique(column).drop_null()
    present = len(column) - column.null_count
    if not present:
        return None, 0
    # an offset (Z, +01:00) needs a zone-aware parse; asking for one of text without offsets
    # is slow to fail, so only where some value has one
    offset = pc.any(pc.match_substring_regex(uniques, r"(Z|[+-]\d\d(:?\d\d)?)\s*$")).as_py()
    try:
        times = pc.cast(uniques, pa.timestamp("us", tz="UTC") if offset else target).cast(target)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        times = pa.array([_iso_time(text) for text in uniques.to_pylist()], target)
    parsed = times.take(pc.index_in(column, value_set=uniques))
    failed = present - (len(parsed) - parsed.null_count)
    if failed * 2 >= present:
        return None, 0
    if not isinstance(parsed, pa.ChunkedArray):
        parsed = pa.chunked_array([parsed])
    return parsed, failed


def _iso_time(text: str) -> datetime.datetime | None:
    """One ISO-8601 date/time as a naive UTC datetime, or None."""
    try:
        value = datetime.datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    if value.tzinfo is not None:
        value = value.astimezone(datetime.timezone.utc).replace(tzinfo=None)
    return value
