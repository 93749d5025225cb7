"""``--max-memory``: the memory an audit of file inputs holds, checked twice.

Before reading: from metadata (row count and row width: the Parquet footer plus the decoded
size of its first rows, the Arrow schema, the .npy/.npz array headers, an uncompressed CSV's
size and first lines), so a file that compresses a thousand to one (a Parquet run of zeros, a
zipped .npy of zeros, long dictionary-encoded strings) is refused by its decoded size.

While reading: :class:`Budget` counts what is actually decoded, batch by batch, as it arrives
(rows, decoded bytes, the largest batch), and stops the scan with a one-line error as soon as
what the scan keeps would pass the limit. Compressed CSVs (gzip, bzip2, zstd, lz4) are budgeted
this way only: a gzip trailer's size is that of its last member, modulo 4 GiB, and says nothing.

What the scan keeps (README, "Scale"): the batches in flight, the bounded sample, and 40 bytes a
row of row hashes.
"""

from __future__ import annotations

import os
import re
import zipfile
from dataclasses import dataclass
from pathlib import Path

from datavet.errors import InputError, UsageError

HASH_BYTES = 40  # a row's hashes: 16 row + 8 label + 16 near-duplicate (README: "Scale")
# A split with more rows keeps its hashes on disk (the local engine's SPILL_ROWS): in memory
# they never take more than this many rows' worth.
HASHES_IN_MEMORY = 1_500_000


def hash_bytes(rows: int) -> int:
    """The memory the row hashes of a split of ``rows`` rows take."""
    return min(rows, HASHES_IN_MEMORY) * HASH_BYTES


_UNITS = {"": 1, "b": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
_VARIABLE_WIDTH = 32  # a text value's bytes when the metadata does not say


def parse_size(value: int | str) -> int:
    """``16MB``, ``512M``, ``2GiB``, ``1.5g`` or a number of bytes -> bytes (units are powers of
    1024: 1 MB = 1 MiB)."""
    if isinstance(value, int) and not isinstance(value, bool):
        size = value
    else:
        m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(?:i?b)?\s*", str(value), re.IGNORECASE)
        if m is None:
            raise UsageError(
                f"--max-memory {value!r}: expected a size such as 512MB, 4GB or 1073741824"
            )
        size = int(float(m.group(1)) * _UNITS[m.group(2).lower()])
    if size <= 0:
        raise UsageError(f"--max-memory must be positive, got {value!r}")
    return size


def human(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:,.0f} {unit}" if unit == "B" else f"{n:,.1f} {unit}"
        n /= 1024
    return f"{n:,.1f} TiB"  # pragma: no cover


@dataclass
class Estimate:
    name: str
    rows: int
    row_bytes: int
    basis: str  # where the numbers come from

    def need(self, batch_rows: int, sample_rows: int) -> int:
        held = 2 * min(self.rows, batch_rows) + min(self.rows, sample_rows)
        return hash_bytes(self.rows) + self.row_bytes * held


def estimate(path: str | os.PathLike, name: str | None = None) -> Estimate | None:
    """Rows and decoded bytes a row of the file at ``path``, from metadata only; None when the
    format gives nothing to go on (the reader reports unreadable files itself)."""
    path = Path(path)
    name = name or str(path)
    suffixes = [s.lower() for s in path.suffixes]
    if not path.is_dir() and not path.is_file():
        return None  # a pipe (stdin, FIFO, <(...)): reading its head here would consume it
    try:
        if path.is_dir() or (suffixes and suffixes[-1] in (".parquet", ".pq", ".parq")):
            return _parquet(path, name)
        if suffixes and suffixes[-1] == ".npy":
            return _npy(path, name)
        if suffixes and suffixes[-1] == ".npz":
            return _npz(path, name)
        if suffixes and suffixes[-1] in (".arrow", ".feather", ".ipc"):
            return _arrow(path, name)
        if any(s in (".csv", ".tsv", ".tab") for s in suffixes[-2:]):
            return _csv(path, name)
    except Exception:  # damaged metadata (pyarrow, zlib, numpy's header parser...): no
        return None  # estimate; the reader's own one-line error follows
    return None


def check(inputs, limit: int, *, batch_rows: int, sample_rows: int) -> None:
    """Raise InputError (one line, with the numbers) when the file inputs need more than
    ``limit`` bytes. ``inputs``: ``[(role, data)]``; in-memory data is already in memory."""
    found = [
        e
        for _, data in inputs
        if isinstance(data, (str, os.PathLike)) and (e := estimate(data)) is not None
    ]
    total = sum(e.need(batch_rows, sample_rows) for e in found)
    if total <= limit:
        return
    big = max(found, key=lambda e: e.need(batch_rows, sample_rows))
    raise InputError(
        big.name,
        f"resource limit: the audit needs about {human(total)} of memory, over --max-memory "
        f"{human(limit)} ({big.rows:,} rows x {big.row_bytes:,} bytes a row decoded, from "
        f"{big.basis}, plus {HASH_BYTES} bytes a row of row hashes for at most "
        f"{HASHES_IN_MEMORY:,} rows a split), before reading the rows. "
        "Raise --max-memory, or audit a sample of the rows",
    )


def _arrow_width(field_type, text_bytes: float | None = None) -> float:
    import pyarrow as pa

    try:
        return max(field_type.bit_width // 8, 1)
    except ValueError:  # variable width: text, lists, nested
        pass
    if pa.types.is_dictionary(field_type):
        return max(field_type.index_type.bit_width // 8, 1)
    return 4 + (text_bytes if text_bytes is not None else _VARIABLE_WIDTH)


def _parquet(path: Path, name: str) -> Estimate | None:
    import pyarrow.parquet as pq

    from datavet.sources.parquet import _parquet_files

    files = _parquet_files(path) if path.is_dir() else [path]
    rows = 0
    width = 0.0
    for f in files:
        meta = pq.ParquetFile(f).metadata
        schema = pq.ParquetFile(f).schema_arrow
        n = meta.num_rows
        rows += n
        text = {}
        for rg in range(meta.num_row_groups):
            group = meta.row_group(rg)
            for c in range(group.num_columns):
                col = group.column(c)
                top = col.path_in_schema.split(".")[0]
                text[top] = text.get(top, 0) + col.total_uncompressed_size
        w = sum(_arrow_width(fld.type, text.get(fld.name, 0) / max(n, 1)) for fld in schema)
        width = max(width, w, _decoded_row_bytes(f))
    return Estimate(name, rows, int(round(width)), "the Parquet footer and its first rows decoded")


PROBE_ROWS = 256


def _decoded_row_bytes(path: Path) -> float:
    """Bytes a row of the first rows once decoded: the footer's sizes are the encoded ones,
    and a dictionary-encoded column of long strings decodes to many times its size."""
    import pyarrow.parquet as pq

    pf = pq.ParquetFile(path)
    if pf.metadata.num_row_groups == 0 or pf.metadata.num_rows == 0:
        return 0.0
    for batch in pf.iter_batches(batch_size=PROBE_ROWS, row_groups=[0]):
        return batch.nbytes / max(batch.num_rows, 1)
    return 0.0


def _arrow(path: Path, name: str) -> Estimate | None:
    import pyarrow as pa
    import pyarrow.ipc as ipc

    with pa.memory_map(str(path), "r") as source:
        reader = ipc.open_file(source)
        rows = sum(reader.get_batch(i).num_rows for i in range(reader.num_record_batches))
        width = sum(_arrow_width(f.type) for f in reader.schema)
    return Estimate(name, rows, int(width), "the Arrow schema and batch lengths")


def _npy_header(fh):
    import numpy as np
    from numpy.lib import format as npformat

    version = npformat.read_magic(fh)
    if version == (1, 0):
        shape, _, dtype = npformat.read_array_header_1_0(fh)
    else:
        shape, _, dtype = npformat.read_array_header_2_0(fh)
    rows = shape[0] if shape else 1
    per_row = int(np.prod(shape[1:], dtype=np.int64)) * dtype.itemsize if shape else dtype.itemsize
    return rows, per_row


def _npy(path: Path, name: str) -> Estimate | None:
    with path.open("rb") as fh:
        rows, per_row = _npy_header(fh)
    return Estimate(name, rows, per_row, "the .npy header")


def _npz(path: Path, name: str) -> Estimate | None:
    rows, width = 0, 0
    with zipfile.ZipFile(path) as archive:
        for member in archive.infolist():
            if not member.filename or member.is_dir():
                continue
            with archive.open(member) as fh:  # decompresses only the header's few bytes
                n, per_row = _npy_header(fh)
            rows = max(rows, n)
            width += per_row
    return Estimate(name, rows, width, "the .npz member headers")


def _csv(path: Path, name: str) -> Estimate | None:
    size = path.stat().st_size
    if path.suffix.lower() in (".gz", ".bz2", ".zst", ".lz4"):
        # the decoded size is not known before decoding (a gzip trailer holds the last member's
        # size modulo 4 GiB): the streaming Budget counts it as it is decoded
        return None
    with path.open("rb") as fh:
        head = fh.read(1 << 16)
    lines = max(head.count(b"\n"), 1)
    line_bytes = max(len(head) / lines, 1.0)
    columns = head.split(b"\n", 1)[0].count(b",") + head.split(b"\n", 1)[0].count(b"\t") + 1
    rows = int(size / line_bytes)
    # decoded, a row holds its text (at most) plus an 8-byte slot per column
    return Estimate(name, rows, int(line_bytes + 8 * columns), "the file size and first lines")


def batch_bytes(batch) -> int:
    try:
        return int(batch.nbytes)
    except Exception:  # noqa: BLE001 - a type pyarrow cannot size: count its buffers
        return int(batch.get_total_buffer_size())


class Budget:
    """The memory the scan keeps, counted from what is decoded as it arrives.

    Sources call :meth:`charge` with every decoded batch (``TabularSource.batches``). The need is
    ``rows x 40`` bytes of row hashes (for up to ``HASHES_IN_MEMORY`` rows a split) plus the
    sample (``min(rows, sample_rows)`` rows of the average decoded row) for every split, plus
    the batches in flight (``2 x workers + 1`` of the largest batch seen). A second pass over
    the same rows (near duplicates) counts nothing new.
    """

    def __init__(self, limit: int, *, batch_rows: int, sample_rows: int, workers: int = 1):
        self.limit = limit
        self.batch_rows = batch_rows
        self.sample_rows = sample_rows
        self.in_flight = 2 * max(1, workers) + 1
        self.seen: dict[str, list[int]] = {}  # name -> [rows, decoded bytes, largest batch]

    def need(self) -> int:
        held = 0
        largest = 0
        for rows, nbytes, biggest in self.seen.values():
            row_bytes = nbytes / rows if rows else 0.0
            held += hash_bytes(rows) + int(min(rows, self.sample_rows) * row_bytes)
            largest = max(largest, biggest)
        return held + self.in_flight * largest

    def charge(self, name: str, offset: int, batch) -> None:
        """Count a decoded batch whose first row is ``offset``; InputError when over."""
        nbytes = batch_bytes(batch)
        seen = self.seen.setdefault(name, [0, 0, 0])
        end = offset + batch.num_rows
        if end > seen[0]:  # new rows (a second pass re-reads rows already counted)
            new = end - max(offset, seen[0])
            seen[1] += int(nbytes * new / max(batch.num_rows, 1))
            seen[0] = end
        seen[2] = max(seen[2], nbytes)
        need = self.need()
        if need > self.limit:
            rows, decoded, _ = seen
            raise InputError(
                name,
                f"resource limit: over --max-memory {human(self.limit)} while reading: after "
                f"{rows:,} rows ({human(decoded)} decoded, {human(seen[2])} in the largest "
                f"batch) the audit would hold about {human(need)} (the batches in flight, the "
                f"sample and {HASH_BYTES} bytes a row of row hashes); stopped reading. Raise "
                "--max-memory, or audit a sample of the rows",
            )
