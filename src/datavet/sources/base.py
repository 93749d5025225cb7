"""The one interface every tabular input is read through."""

from __future__ import annotations

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

    def _iter_batches(self, batch_rows: int) -> Iterator[pa.RecordBatch]:
        yield from self.table.to_batches(max_chunksize=batch_rows)
