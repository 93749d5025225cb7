"""CSV and TSV files, streamed block by block with pyarrow.

The delimiter is sniffed from the first lines when not given (``,`` ``;`` tab ``|``); text in
another encoding than UTF-8 is transcoded as it streams; fields longer than a block grow the
block; standard input and other pipes are spooled to a temporary file first (they can be read
only once, and a scan may need a second pass).
"""

from __future__ import annotations

import atexit
import codecs
import csv as pycsv
import io
import os
import re
import shutil
import stat
import sys
import tempfile
import threading
import weakref
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from datavet.errors import InputError, UsageError
from datavet.sources.base import SchemaRestart, TabularSource
from datavet.sources.parquet import transport_problem

_CONVERSION = re.compile(r"In CSV column #(\d+): .*CSV conversion error to (\w+)")
_INVALID_VALUE = re.compile(r"invalid value '(.*)'$", re.DOTALL)  # pyarrow quotes it trimmed
# The texts pyarrow reads as missing (NA, NaN, null, ...): padded ("  NA ") in a numeric column,
# they are read as missing too
_MISSING = pacsv.ConvertOptions().null_values
_INTEGER = r"^[+-]?[0-9]+$"
_INT64_MAX = 2**63 - 1
_BLOCK_BYTES = 8 << 20
_MAX_BLOCK_BYTES = 512 << 20  # a field or row longer than this is refused (clear message)
_BLOCK_GROWTH = 8
_SCAN_BYTES = 1 << 20
_SNIFF_BYTES = 64 << 10
_RELEASE_WAIT_S = 30.0  # how long to wait for pyarrow's read-ahead to let go of our stream
# What a damaged file can raise while pyarrow reads it: its own errors, a failed decompression
# (OSError), a transcoding error (--encoding), or zlib's own.
_READ_ERRORS = (pa.ArrowException, OSError, UnicodeError, EOFError, ValueError)
DELIMITERS = (",", ";", "\t", "|")
_DELIMITER_NAMES = {"tab": "\t", "\\t": "\t", "comma": ",", "semicolon": ";", "pipe": "|"}
_CODECS = {".gz": "gzip", ".bz2": "bz2", ".zst": "zstd", ".lz4": "lz4"}
_EXCEL_SEP = re.compile(r"\ufeff?sep=([^\r\n])[ \t]*\r?\n")  # Excel's delimiter line


def _numeric(t: pa.DataType) -> bool:
    return pa.types.is_integer(t) or pa.types.is_floating(t)


def _missing_as_null(arr: pa.Array) -> pa.Array:
    """Text values trimmed of spaces, with the blank ones and the missing markers as null."""
    trimmed = pc.utf8_trim_whitespace(arr)
    blank = pc.or_(pc.equal(pc.utf8_length(trimmed), 0), pc.is_in(trimmed, pa.array(_MISSING)))
    return pc.if_else(blank, pa.scalar(None, trimmed.type), trimmed)


def _number_type(arr: pa.Array) -> pa.DataType | None:
    """The type that holds text ``arr`` (trimmed, blanks and markers missing) exactly: int64,
    uint64 (whole numbers beyond int64: 64-bit hashes and IDs), float64, or string (not numbers,
    or whole numbers beyond int64 that uint64 does not hold: float64 would merge distinct ones).
    None when no value is left."""
    values = pc.drop_null(_missing_as_null(arr))
    if len(values) == 0:
        return None
    for t in (pa.int64(), pa.uint64()):
        try:
            pc.cast(values, t)
            return t
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            pass
    whole = values.filter(pc.match_substring_regex(values, _INTEGER))
    try:
        pc.cast(whole, pa.int64())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return pa.string()
    try:
        pc.cast(values, pa.float64())
        return pa.float64()
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return pa.string()


def _join(current: pa.DataType, value: pa.DataType | None) -> pa.DataType:
    """The type to retry with when a later value (of type ``value``) does not fit ``current``."""
    if value is None or not _numeric(current) or pa.types.is_string(value):
        return pa.string()
    if pa.types.is_uint64(current) and not pa.types.is_uint64(value):
        return pa.string()  # whole numbers beyond int64 with negative or fractional ones
    if pa.types.is_floating(current) or pa.types.is_floating(value):
        return pa.float64()
    return pa.uint64()


@dataclass
class CsvSource(TabularSource):
    path: Path = None  # type: ignore[assignment]
    delimiter: str = ","
    column_types: dict[str, pa.DataType] = field(default_factory=dict)
    encoding: str = "utf-8"
    block_size: int = 0  # bytes pyarrow parses at once (0: _BLOCK_BYTES); grows for long fields
    dialect_note: str | None = None  # how the delimiter was chosen, when it is not ","
    filesystem: Any = None  # a pyarrow filesystem (s3://, gs://); None: a local file
    # quoted values may hold line breaks (pyarrow's multi-threaded reader assumes they do not,
    # and is faster so): switched on when a row comes apart at one
    newlines_in_values: bool = False
    skip_rows: int = 0  # 1 after Excel's "sep=;" line
    # numeric columns pyarrow reads as text and datavet converts: they hold blank cells or padded
    # markers ("     NaN", "  NA "), which pyarrow takes for text
    padded: dict[str, pa.DataType] = field(default_factory=dict)

    @property
    def read_note(self) -> str | None:
        return self.dialect_note

    def _options(self, threads: bool = True):
        # Text in another encoding reaches pyarrow already transcoded to UTF-8 (_TextStream)
        read = pacsv.ReadOptions(
            block_size=self._block, use_threads=threads, encoding="utf8", skip_rows=self.skip_rows
        )
        parse = pacsv.ParseOptions(
            delimiter=self.delimiter, newlines_in_values=self.newlines_in_values
        )
        convert = pacsv.ConvertOptions(
            strings_can_be_null=True,
            column_types=self.column_types,
        )
        return read, parse, convert

    @property
    def _block(self) -> int:
        return self.block_size or _BLOCK_BYTES

    def _retry(self, exc: BaseException) -> bool:
        """Whether to read again with other options: larger blocks, or line breaks in values."""
        return self._grow_block(exc) or self._allow_newlines(exc)

    def _allow_newlines(self, exc: BaseException) -> bool:
        """A row that came apart ("Expected 10 columns, got 5"): often a quoted value holding a
        line break (a tweet, an address), which is valid CSV. Read again allowing them (True)."""
        if self.newlines_in_values or not isinstance(exc, pa.ArrowInvalid):
            return False
        text = str(exc)
        if not re.search(r"Expected \d+ columns, got \d+|out of sync with chunker", text):
            return False
        self.newlines_in_values = True
        return True

    def _grow_block(self, exc: BaseException) -> bool:
        """A field or row longer than a block: read larger blocks (True), up to a bound."""
        if not _straddles(exc) or self._block >= _MAX_BLOCK_BYTES:
            return False
        self.block_size = min(self._block * _BLOCK_GROWTH, _MAX_BLOCK_BYTES)
        return True

    @property
    def _via_python(self) -> bool:
        """True when pyarrow reads the file through a Python object (a transcoder, or a file
        opened by Python because its name is not valid UTF-8)."""
        if self.filesystem is not None:
            return not self._utf8
        return not self._utf8 or not _encodable(self.path)

    def _input(self):
        """What pyarrow reads when no Python stream is needed: the local path, or a stream on
        ``filesystem`` (never a download)."""
        if self.filesystem is None:
            return str(self.path)
        return self.filesystem.open_input_stream(str(self.path), compression="detect")

    def _raw(self):
        """The file's (decompressed) bytes, as a readable stream."""
        if self.filesystem is not None:
            return self.filesystem.open_input_stream(str(self.path), compression="detect")
        if _encodable(self.path):
            return pa.input_stream(str(self.path), compression="detect")
        fh = open(self.path, "rb")  # noqa: SIM115 (closed by the stream that owns it)
        codec = _CODECS.get(self.path.suffix.lower())
        return pa.CompressedInputStream(pa.PythonFile(fh, mode="r"), codec) if codec else fh

    def _open(self, threads: bool = True) -> tuple[pacsv.CSVStreamingReader, _Guard | None]:
        """pyarrow's reader over the file, and the guard to release it with (``_release``).

        pyarrow reads ahead on its own I/O threads. When those threads call into Python (the
        transcoder of --encoding, a Python file object) and the reader is dropped while a read
        is in flight (an error, a restart), an exit right after it deadlocks or aborts the
        interpreter: the thread wants the GIL of an interpreter that is finalizing. So every
        reader that reads through Python is released by ``_release``, which returns only when
        pyarrow has let go of the Python stream.
        """
        while True:
            guard = stream = None
            if self._via_python:
                guard = _Guard()
                text = _TextStream(self._raw(), None if self._utf8 else self.encoding, guard)
                weakref.finalize(text, guard.released.set)
                # Buffered: pyarrow copies what it reads into its own memory (a Python bytes
                # object handed to pyarrow would be freed later, with the GIL, on its threads)
                stream = pa.BufferedInputStream(pa.PythonFile(text, mode="r"), _SCAN_BYTES)
                del text
            error = None
            try:
                return pacsv.open_csv(stream or self._input(), *self._options(threads)), guard
            except _READ_ERRORS as exc:
                if not self._retry(exc):
                    error = self._error(exc)
            stream = None
            _release(guard)
            if error is not None:
                raise error

    def _first_batch(self) -> tuple[pa.Schema, pa.RecordBatch | None]:
        """The inferred schema, and the first block's rows (None: no rows, or unreadable: the
        scan's own error says why). One thread: no read-ahead of blocks that are not needed."""
        reader, guard = self._open(threads=False)
        try:
            return reader.schema, reader.read_next_batch()
        except (StopIteration, *_READ_ERRORS):
            return reader.schema, None
        finally:
            reader.close()
            reader = None
            _release(guard)

    def open(self) -> CsvSource:
        self.schema, first = self._first_batch()
        try:
            names = self.schema.names
        except UnicodeDecodeError:  # a header that is not UTF-8, kept as bytes by pyarrow
            names = None
        if names is None or (self._utf8 and any("\ufffd" in n for n in names)):
            # pyarrow replaces invalid UTF-8 in the header silently: never accept that
            error = self._utf8_error()
            if error is not None:
                raise error
            if names is None:
                raise InputError(self.name, "the header is not valid text in its encoding")
        self.check_schema()
        self._check_utf8(self.schema)
        if first is not None:
            self._exact_numbers(first)
        # Every later pass reopens the file: give it the types inferred here, so pyarrow does
        # not infer them again per column (the same first block gives the same types; a column
        # with no value there stays inferred, as a later restart may widen it)
        for f in self.schema:
            if not pa.types.is_null(f.type):
                self.column_types.setdefault(f.name, f.type)
        return self

    def _exact_numbers(self, first: pa.RecordBatch) -> None:
        """Correct two guesses pyarrow makes from the first block: a column of numbers with a
        blank cell or a padded marker is not text (it is read as ``padded``), and whole numbers
        beyond int64 (20-digit hashes, IDs) are not float64, which gives distinct ones one value
        (they are read as uint64, or as text where no 64-bit integer holds them all)."""
        wide = []
        for i, f in enumerate(self.schema):
            col = first.column(i)
            if pa.types.is_string(f.type):
                # a look at the first values first: most text columns show at once they are text
                t = _number_type(col.slice(0, 256))
                if t is not None and _numeric(t):
                    t = _number_type(col)
                if t is not None and _numeric(t):
                    self.padded[f.name] = t
                    self.column_types[f.name] = pa.string()
                    self.schema = self.schema.set(i, pa.field(f.name, t))
            elif pa.types.is_float64(f.type) and _beyond_int64(col):
                wide.append(f.name)
        if not wide:
            return
        for name in wide:
            self.column_types[name] = pa.string()
        _, text = self._first_batch()
        for name in wide:
            t = _number_type(text.column(name)) if text is not None else None
            if t not in (pa.uint64(), pa.string()):
                t = pa.float64()  # numbers that are not all whole: float64 is their type
            self.column_types[name] = t
            i = self.schema.get_field_index(name)
            self.schema = self.schema.set(i, pa.field(name, t))

    @property
    def _utf8(self) -> bool:
        return codecs.lookup(self.encoding).name == "utf-8"

    def _error(self, exc: BaseException) -> InputError:
        """A reader error as a one-line InputError (invalid UTF-8: with its byte offset; the
        store or the network failing: said as such, not as a parse error)."""
        lost = transport_problem(exc)
        if lost is not None:
            return InputError(self.name, lost)
        if self._utf8 and "UTF8" in str(exc).replace("-", "").upper():
            found = self._utf8_error()
            if found is not None:
                return found
        if isinstance(exc, UnicodeError):
            return InputError(self.name, f"not valid {self.encoding} text ({_first_line(exc)})")
        if _straddles(exc):
            return InputError(
                self.name,
                f"a field or row is longer than {_MAX_BLOCK_BYTES >> 20} MiB, the most datavet "
                "reads at once (or a quote is never closed); check the quoting, or store the "
                "data as Parquet",
            )
        if "Empty CSV file" in str(exc) and _head(self)[0].strip():
            # pyarrow's answer to a header with no line end after it
            return InputError(self.name, "no data rows (only a header, with no line end)")
        if re.search(r"Expected \d+ columns, got \d+", str(exc)):
            line = self._unclosed_quote()
            if line is not None:
                return InputError(
                    self.name,
                    f"cannot parse CSV: a quote opened on line {line:,} is never closed "
                    "(the rest of the file reads as one value)",
                )
        return InputError(self.name, _describe(exc))

    def _unclosed_quote(self) -> int | None:
        """The line where a quoted value opens that the file never closes, or None. Reads the
        whole file with Python's csv module: only to explain an error."""
        try:
            with self._raw() as raw:
                text = io.TextIOWrapper(raw, self.encoding, errors="replace", newline="")
                reader = pycsv.reader(text, delimiter=self.delimiter, strict=True)
                start = 1
                while True:
                    start = reader.line_num + 1
                    next(reader)
        except StopIteration:
            return None
        except pycsv.Error as exc:
            return start if "unexpected end of data" in str(exc) else None
        except _READ_ERRORS:
            return None

    def _utf8_error(self) -> InputError | None:
        found = first_invalid_utf8(self.path, self._raw)
        if found is None:
            return None
        offset, line, byte = found
        return InputError(
            self.name,
            f"not valid UTF-8: byte 0x{byte:02X} at byte offset {offset:,} (line {line:,}"
            f"{', of the decompressed text' if _compressed(self.path) else ''}); "
            "datavet never replaces characters silently: if the file is in another encoding, "
            "pass it, for example --encoding latin-1",
        )

    def _check_utf8(self, schema: pa.Schema) -> None:
        for f in schema:
            if pa.types.is_binary(f.type) or pa.types.is_large_binary(f.type):
                raise self._utf8_error() or InputError(
                    self.name,
                    f"column {f.name!r} is not valid UTF-8; re-encode the file as UTF-8 "
                    "or pass its encoding (--encoding latin-1)",
                )

    def _iter_batches(self, batch_rows: int) -> Iterator[pa.RecordBatch]:
        reader, guard = self._open()
        error: BaseException | None = None
        try:
            while error is None:
                try:
                    batch = reader.read_next_batch()
                except StopIteration:
                    return
                except _READ_ERRORS as exc:
                    error = self._next_error(exc)
                    continue
                self._check_utf8(batch.schema)
                if self.padded:
                    try:
                        batch = self._numbers(batch)
                    except SchemaRestart as exc:
                        error = exc
                        continue
                yield batch
        finally:
            reader.close()
            reader = None
            _release(guard)
        raise error

    def _next_error(self, exc: BaseException) -> BaseException:
        """What a failed block means: a restart with a wider column type or a larger block,
        or a one-line InputError."""
        if self._retry(exc):
            return SchemaRestart("(block size or line breaks in values)")
        match = _CONVERSION.search(str(exc)) if isinstance(exc, pa.ArrowInvalid) else None
        if match is None or int(match.group(1)) >= len(self.schema):
            return self._error(exc)
        col = self.schema.field(int(match.group(1)))
        if "UTF8" in str(exc) or pa.types.is_string(col.type):
            return self._error(exc)
        # the type pyarrow was given (a directory of files may have widened it in another file)
        read_as = self.column_types.get(col.name, col.type)
        value = _INVALID_VALUE.search(str(exc))
        if value is None:  # an older pyarrow that does not quote it
            return self._restart(col.name, pa.float64() if pa.types.is_integer(read_as) else None)
        value_type = _number_type(pa.array([value.group(1)], pa.string()))
        if value_type is None and _numeric(read_as):
            # a blank cell or a marker with spaces around it, in a column of numbers
            self.padded[col.name] = read_as
            self.column_types[col.name] = pa.string()
            return self._restart(col.name, read_as)
        return self._restart(col.name, _join(read_as, value_type))

    def _restart(self, name: str, wide: pa.DataType | None) -> SchemaRestart:
        """Read column ``name`` as ``wide`` (None: text) from the start."""
        wide = wide or pa.string()
        if name in self.padded and _numeric(wide):
            self.padded[name] = wide
        else:
            self.padded.pop(name, None)
            self.column_types[name] = wide
        self.schema = self.schema.set(self.schema.get_field_index(name), pa.field(name, wide))
        return SchemaRestart(name)

    def _numbers(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        """``batch`` with its ``padded`` columns converted to numbers; SchemaRestart when one
        holds a value its type cannot (a wider number, or text)."""
        schema = batch.schema
        arrays = batch.columns
        for name, t in self.padded.items():
            i = schema.get_field_index(name)
            if i < 0 or not pa.types.is_string(arrays[i].type):
                continue
            try:
                arrays[i] = pc.cast(_missing_as_null(arrays[i]), t)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                raise self._restart(name, _join(t, _number_type(arrays[i]))) from None
            schema = schema.set(i, pa.field(name, t))
        return pa.RecordBatch.from_arrays(arrays, schema=schema)


class _Guard:
    """Shared by a :class:`_TextStream` and the code that waits for pyarrow to drop it."""

    def __init__(self) -> None:
        self.closed = False
        self.released = threading.Event()


class _TextStream(io.RawIOBase):
    """A file's bytes for pyarrow to read from its I/O threads: transcoded to UTF-8 when
    ``encoding`` is given; empty once the guard is closed (so read-ahead stops at once)."""

    def __init__(self, raw, encoding: str | None, guard: _Guard) -> None:
        super().__init__()
        self._source = raw
        self._decoder = codecs.getincrementaldecoder(encoding)() if encoding else None
        self._guard = guard
        self._pending = b""
        self._pos = 0
        self._eof = False

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return False

    def tell(self) -> int:
        return self._pos

    def read(self, n: int = -1) -> bytes:
        if self._guard.closed:
            return b""
        want = n if n is not None and n >= 0 else 1 << 62
        while len(self._pending) < want and not self._eof:
            chunk = self._source.read(_SCAN_BYTES if n is None or n < 0 else max(n, 1 << 16))
            self._eof = not chunk
            if self._decoder is not None:
                chunk = self._decoder.decode(chunk, final=self._eof).encode("utf-8")
            self._pending += chunk
        out, self._pending = self._pending[:want], self._pending[want:]
        self._pos += len(out)
        return out

    def close(self) -> None:
        if not self.closed:
            self._source.close()
        super().close()


def _release(guard: _Guard | None) -> None:
    """Stop the read-ahead of a reader that reads through Python, and wait (without the GIL)
    until pyarrow has dropped the stream: after this no pyarrow thread calls into Python for
    it, and the interpreter can exit at any moment. The caller drops the reader first."""
    if guard is None:
        return
    guard.closed = True
    guard.released.wait(_RELEASE_WAIT_S)


def _beyond_int64(arr: pa.Array) -> bool:
    """True when float64 ``arr`` holds a value beyond int64: pyarrow's guess for whole numbers
    too large for int64, which float64 does not hold exactly (their text says whether they are)."""
    top = pc.max(pc.abs(arr)).as_py()
    return top is not None and top > _INT64_MAX


def _straddles(exc: BaseException) -> bool:
    return "straddl" in str(exc) or "increase block size" in str(exc)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _describe(exc: BaseException) -> str:
    text = _first_line(exc)
    if "Empty CSV file" in text:
        return "file has no header and no rows (only blank lines)"
    if re.search(r"Expected \d+ columns, got \d+", text):
        # even with line breaks allowed inside quoted values: a break outside quotes (pandas
        # leaves a lone carriage return unquoted), or a row with a delimiter too few or many
        return (
            f"cannot parse CSV: {text} (a line break inside an unquoted value, such as a lone "
            "carriage return, or a row with a field too many or too few)"
        )
    return f"cannot parse CSV: {text}"


def _compressed(path: Path) -> bool:
    return path.suffix.lower() in {".gz", ".bz2", ".zst", ".lz4"}


def _encodable(path: Path) -> bool:
    """True when the file name is valid UTF-8 (pyarrow takes names as UTF-8 text)."""
    try:
        str(path).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def first_invalid_utf8(path: Path, opener=None) -> tuple[int, int, int] | None:
    """``(byte offset, line number, byte)`` of the first byte that is not valid UTF-8 (in the
    decompressed text of a compressed file), or None. Streams the file a megabyte at a time.
    ``opener``: returns the file's decompressed bytes as a stream (default: by its name)."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    offset = 0  # bytes fed to the decoder so far
    lines = 1
    try:
        stream = opener() if opener else pa.input_stream(str(path), compression="detect")
        with stream:
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


# -- encodings and delimiters ------------------------------------------------------------------


def check_encoding(encoding: str) -> str:
    """The codec's name, or UsageError: unknown, or not a text encoding (rot13, base64). The
    message names the setting, not a flag: it answers ``--encoding`` and ``encoding=`` alike."""
    try:
        info = codecs.lookup(encoding)
    except (LookupError, TypeError, ValueError):
        raise UsageError(
            f"unknown encoding {encoding!r} (for example utf-8, latin-1, cp1252)"
        ) from None
    if not getattr(info, "_is_text_encoding", True):
        raise UsageError(
            f"encoding {encoding!r} is not a text encoding (for example utf-8, latin-1, cp1252)"
        )
    return info.name


def check_delimiter(delimiter: str) -> str:
    """One character (``,`` ``;`` ``|``, a tab written as ``\\t`` or ``tab``), else UsageError."""
    value = _DELIMITER_NAMES.get(str(delimiter).lower(), delimiter)
    if not isinstance(value, str) or len(value) != 1 or value in '"\r\n' or ord(value) > 127:
        raise UsageError(
            f"delimiter {delimiter!r}: expected one ASCII character such as , ; | or tab"
        )
    return value


def sniff_delimiter(text: str, default: str, complete: bool) -> str | None:
    """The delimiter of CSV ``text`` (the first lines of a file), or None when no candidate
    gives consistent rows of two fields or more (a one-column file stays one column).

    Each candidate splits the lines as CSV (quotes respected, so "a;b" inside quotes counts
    for nothing). It qualifies when the header and at least 90% of the rows have the same
    number of fields, more than one. The one with the most fields wins; ties go to
    ``default``, then to ``,`` tab ``;`` ``|`` in that order. ``complete``: ``text`` is the
    whole file (else its last, possibly cut, line is left out).
    """
    if not complete:
        cut = text.rfind("\n")
        text = text[: cut + 1] if cut > 0 else text
    best: tuple[int, int, str] | None = None
    for rank, delim in enumerate(sorted(DELIMITERS, key=lambda d: (d != default,))):
        try:
            rows = [r for r in pycsv.reader(io.StringIO(text), delimiter=delim) if r]
        except pycsv.Error:
            continue
        if not rows:
            return None
        widths = [len(r) for r in rows]
        mode, count = Counter(widths[1:] or widths).most_common(1)[0]
        if mode < 2 or widths[0] != mode or count < 0.9 * max(len(widths) - 1, 1):
            continue
        key = (mode, -rank, delim)
        if best is None or key[:2] > best[:2]:
            best = key
    return best[2] if best is not None else None


def _head_bytes(source: CsvSource) -> bytes | None:
    """The file's first ``_SNIFF_BYTES`` (decompressed), or None when it cannot be read (the
    reader's own error then says what is wrong)."""
    try:
        with source._raw() as stream:
            return stream.read(_SNIFF_BYTES)
    except _READ_ERRORS:
        return None


def _head(source: CsvSource, data: bytes | None = None) -> tuple[str, bool]:
    """The first lines of the file, decoded (unknown bytes replaced: only for sniffing), and
    whether they are the whole file. ``data``: its first bytes, when already read."""
    if data is None:
        data = _head_bytes(source)
    if data is None:
        return "", True  # the reader's own error says what is wrong
    decoder = codecs.getincrementaldecoder(source.encoding)(errors="replace")
    try:
        return decoder.decode(data, final=len(data) < _SNIFF_BYTES), len(data) < _SNIFF_BYTES
    except UnicodeError:  # utf-16 without a byte-order mark fails even with "replace"
        return "", True  # the reader's own error says what is wrong


def _check_not_utf16(source: CsvSource, data: bytes | None) -> None:
    """InputError when a file read as UTF-8 is UTF-16 text: a byte-order mark (FF FE or FE FF)
    at the start, or a NUL byte in every other byte (ASCII text in UTF-16 without a mark).
    Read as UTF-8 it parses into columns of NUL-riddled names, or fails with a parse error that
    says nothing of the encoding. ``data``: the file's first bytes (None: unreadable, and the
    reader's own error says what is wrong)."""
    if data is None:
        return
    head = data[:4096]
    if head.startswith(b"\xff\xfe"):
        found, codec = "byte-order mark FF FE", "utf-16"
    elif head.startswith(b"\xfe\xff"):
        found, codec = "byte-order mark FE FF", "utf-16"
    else:
        pairs = len(head) // 2
        if pairs < 2:
            return
        even = head[0 : 2 * pairs : 2].count(0)  # NULs at even offsets: big-endian ASCII
        odd = head[1 : 2 * pairs : 2].count(0)  # at odd offsets: little-endian ASCII
        if odd >= 0.9 * pairs and even <= 0.1 * pairs:
            found, codec = "a NUL byte in every other byte", "utf-16-le"
        elif even >= 0.9 * pairs and odd <= 0.1 * pairs:
            found, codec = "a NUL byte in every other byte", "utf-16-be"
        else:
            return
    raise InputError(
        source.name,
        f"looks like UTF-16 text ({found}), not UTF-8; pass --encoding {codec} "
        f"(encoding={codec!r} in Python) to read it, or re-save the file as UTF-8",
    )


def open_csv(
    path: Path,
    name: str,
    encoding: str | None = None,
    delimiter: str | None = None,
    filesystem: Any = None,
) -> CsvSource:
    """A CSV/TSV file: a local path, or a path on a pyarrow ``filesystem`` (an object store),
    streamed from it."""
    default = "\t" if _suffix_without_compression(path) in {".tsv", ".tab"} else ","
    encoding = check_encoding(encoding or "utf-8")
    source = CsvSource(
        name=name,
        format="csv",
        path=path,
        delimiter=check_delimiter(delimiter) if delimiter is not None else default,
        uri=str(path),
        encoding=encoding,
        filesystem=filesystem,
    )
    head = _head_bytes(source)
    if source._utf8:
        _check_not_utf16(source, head)
    text, complete = _head(source, head)
    hint = _EXCEL_SEP.match(text)
    if hint is not None:
        # Excel's "sep=;" line names the delimiter and is not the header
        source.skip_rows = 1
        text = text[hint.end() :]
    if delimiter is None and hint is not None and hint.group(1) in DELIMITERS:
        source.delimiter = hint.group(1)
        source.dialect_note = (
            f"{name}: read with delimiter {_shown(source.delimiter)}, named by its first line "
            f"{hint.group(0).strip()!r} (--delimiter sets it)"
        )
    elif delimiter is None:
        sniffed = sniff_delimiter(text, default, complete)
        if sniffed is not None and sniffed != default:
            source.delimiter = sniffed
            source.dialect_note = (
                f"{name}: read with delimiter {_shown(sniffed)}, sniffed from its first lines "
                "(--delimiter sets it)"
            )
    elif source.delimiter != "," or hint is not None:
        source.dialect_note = f"{name}: read with delimiter {_shown(source.delimiter)}"
        if hint is not None:
            source.dialect_note += f", its first line {hint.group(0).strip()!r} left out"
    source.open()
    if delimiter is not None and len(source.schema) == 1:
        _check_one_column(source, text, complete)
    return source


def _check_one_column(source: CsvSource, text: str, complete: bool) -> None:
    """InputError when a file read with a given delimiter has one column, but its header and
    rows split evenly on another: a comma file given ``--delimiter ';'`` (a CI job written for
    other exports) would otherwise pass with every check skipped."""
    other = sniff_delimiter(text, source.delimiter, complete)
    if other is None or other == source.delimiter:
        return
    raise InputError(
        source.name,
        f"the delimiter given, {_shown(source.delimiter)}, reads it as one column, but its "
        f"header and rows split into columns on {_shown(other)}: pass that delimiter, or "
        "none to have it sniffed",
    )


def _shown(delimiter: str) -> str:
    return "tab" if delimiter == "\t" else repr(delimiter)


def _suffix_without_compression(path: Path) -> str:
    suffixes = [x.lower() for x in path.suffixes]
    if len(suffixes) >= 2 and _compressed(path):
        return suffixes[-2]
    return suffixes[-1] if suffixes else ""


# -- pipes ---------------------------------------------------------------------------------------

_SPOOLS: list[str] = []


def is_pipe(path: str | os.PathLike) -> bool:
    """``-`` (standard input), a FIFO, ``<(...)`` (``/dev/fd/N``) or another non-regular,
    non-directory file that can be read only once."""
    if str(path) == "-":
        return True
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISCHR(mode)


def spool(path: str | os.PathLike, name: str) -> Path:
    """Copy what a pipe (``-``: standard input) holds into a temporary file, removed at exit,
    named so that its format is recognised: a suffix of the pipe's own name, or from its first
    bytes (gzip, Parquet, Arrow; else CSV)."""
    tmp = tempfile.mkdtemp(prefix="datavet-pipe-")
    if not _SPOOLS:
        atexit.register(_remove_spools)
    _SPOOLS.append(tmp)
    out = Path(tmp) / "data"
    try:
        src = sys.stdin.buffer if str(path) == "-" else open(path, "rb")  # noqa: SIM115
        try:
            with open(out, "wb") as dst:
                shutil.copyfileobj(src, dst, 1 << 20)
        finally:
            if src is not sys.stdin.buffer:
                src.close()
    except OSError as exc:
        raise InputError(name, f"cannot read the pipe: {exc.strerror or exc}") from None
    with open(out, "rb") as fh:
        head = fh.read(6)
    suffixes = "".join(Path(str(path)).suffixes[-2:]).lower() if str(path) != "-" else ""
    if head[:4] == b"PAR1":
        suffixes = ".parquet"
    elif head == b"ARROW1":
        suffixes = ".arrow"
    elif head[:2] == b"\x1f\x8b" and not suffixes.endswith(".gz"):
        suffixes = ".csv.gz"
    elif not suffixes or not any(
        s in (".csv", ".tsv", ".tab", ".parquet", ".pq", ".arrow", ".feather", ".ipc")
        for s in Path("x" + suffixes).suffixes
    ):
        suffixes = ".csv"
    final = out.with_name("data" + suffixes)
    out.rename(final)
    return final


def _remove_spools() -> None:
    for tmp in _SPOOLS:
        shutil.rmtree(tmp, ignore_errors=True)
