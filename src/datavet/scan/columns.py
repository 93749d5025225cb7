"""Per-column statistics of one batch, and their merge."""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from datavet.scan.counters import CAPACITY, ValueCounter
from datavet.scan.kmv import KMV
from datavet.scan.moments import Moments
from datavet.scan.numbers import SeparatedNumbers, separated_numbers

if TYPE_CHECKING:
    from datavet.scan.vectors import VectorStats

from datavet.scan.values import (  # noqa: F401 (re-exported: the scan imports them from here)
    _KIND_CACHE,
    MAX_EXAMPLES,
    _bytes_text,
    _column_kind,
    _narrow_decimal,
    _needs_dense,
    _py_text,
    _py_values,
    as_float,
    as_text,
    column_kind,
    dense,
    dense_batch,
    first_positions,
    storage_type,
    temporal_ints,
    wide_ints,
)


def merge_examples(
    a: tuple[int, ...], b: tuple[int, ...], k: int = MAX_EXAMPLES
) -> tuple[int, ...]:
    return tuple(sorted(set(a) | set(b))[:k])


@dataclass(slots=True)
class ColumnStats:
    name: str
    dtype: str
    kind: str
    rows: int = 0
    missing: int = 0  # null, None, NaN, NaT together: what V001 counts
    posinf: int = 0
    neginf: int = 0
    finite: Moments = field(default_factory=Moments)
    min: float = math.inf  # over finite values
    max: float = -math.inf
    values: ValueCounter = field(default_factory=ValueCounter)  # non-missing values, inf included
    missing_rows: tuple[int, ...] = ()
    inf_rows: tuple[int, ...] = ()
    keys: KMV | None = None  # text and integer columns: a sketch of the distinct values
    tmin: int | None = None  # date/time columns: smallest and largest value (int64, column unit)
    tmax: int | None = None
    numeric_text: int = 0  # text columns: values that read as numbers ("12", "1e-3", "nan")
    text_values: tuple[tuple[int, str], ...] = ()  # text columns: first non-numeric (row, value)
    vector: VectorStats | None = None  # vector columns: element-level figures (scan/vectors.py)
    separated: SeparatedNumbers | None = None  # text columns: "47,617", "3,5" (scan/numbers.py)

    @classmethod
    def of(cls, name: str, arr: pa.Array, offset: int, cache: dict | None = None) -> ColumnStats:
        """``cache``: shared with the batch's hashing (see ``hashing.column_lanes``)."""
        from datavet.scan.hashing import float_values, string_values  # builds on this module

        dtype = str(arr.type)
        kind = column_kind(arr.type)
        arr = dense(arr)
        stats = cls(name=name, dtype=dtype, kind=kind, rows=len(arr))
        if kind == "string":
            return _string_stats(stats, string_values(arr, cache), offset)
        if kind == "vector":
            from datavet.scan.vectors import row_slices, vector_stats, vector_values

            slices = row_slices(arr)
            if len(slices) == 1:
                parts = vector_values(arr)
                if cache is not None:
                    cache["vector"] = parts  # the row hashes read the same values
                stats.vector = vector_stats(arr, offset, stats, parts)
                return stats
            merged = None
            for start, length in slices:  # a wide batch, read a slice of rows at a time
                part = cls(name=name, dtype=dtype, kind=kind, rows=length)
                part.vector = vector_stats(arr.slice(start, length), offset + start, part)
                merged = part if merged is None else merged.merge(part)
            return merged
        if kind in ("numeric", "bool"):
            x = float_values(arr, cache)
            with np.errstate(invalid="ignore", over="ignore"):  # inf - inf, or an overflow
                total = float(x.sum())
            # 64-bit integers beyond 2**53 are counted as themselves (float64 would merge them)
            ints = wide_ints(arr, x) if kind == "numeric" else None
            if math.isfinite(total):  # no NaN, no inf: no masks and no copies to make
                stats.finite = Moments.of(x, total)
                if x.size:
                    stats.min, stats.max = float(x.min()), float(x.max())
                present = x.astype(bool) if kind == "bool" else x if ints is None else ints
                stats.values = _count_numbers(present, offset)
                if kind == "numeric" and pa.types.is_integer(arr.type):
                    stats.keys = _sketch(arr)
                return stats
            nan = np.isnan(x)
            pinf = np.isposinf(x)
            ninf = np.isneginf(x)
            ok = ~(nan | pinf | ninf)
            fin = x[ok]
            stats.missing = int(nan.sum())
            stats.posinf = int(pinf.sum())
            stats.neginf = int(ninf.sum())
            stats.finite = Moments.of(fin)
            if fin.size:
                stats.min = float(fin.min())
                stats.max = float(fin.max())
            stats.missing_rows = first_positions(nan, offset)
            stats.inf_rows = first_positions(pinf | ninf, offset)
            present = x[~nan] if ints is None else ints[~nan]
            if kind == "bool":
                present = present.astype(bool)
            stats.values = _count_numbers(present, offset)
            if kind == "numeric" and pa.types.is_integer(arr.type):
                stats.keys = _sketch(arr.drop_null())
        else:
            missing = arr.is_null()
            stats.missing = arr.null_count
            if stats.missing:
                stats.missing_rows = first_positions(missing.to_numpy(zero_copy_only=False), offset)
            present = arr.drop_null() if stats.missing else arr
            if kind == "string":
                stats.numeric_text, stats.text_values = _numeric_text(arr, offset)
                stats.keys = _sketch(present)
            if kind == "temporal" and len(present):
                ints = as_float(present)
                stats.tmin, stats.tmax = int(np.min(ints)), int(np.max(ints))
            if kind in ("string", "temporal", "numeric", "bool"):
                stats.values = _count(present, offset)
            elif kind != "null":
                stats.values = _count(as_text(present))
        return stats

    def merge(self, other: ColumnStats) -> ColumnStats:
        return ColumnStats(
            name=self.name,
            dtype=self.dtype,
            kind=self.kind,
            rows=self.rows + other.rows,
            missing=self.missing + other.missing,
            posinf=self.posinf + other.posinf,
            neginf=self.neginf + other.neginf,
            finite=self.finite.merge(other.finite),
            min=min(self.min, other.min),
            max=max(self.max, other.max),
            values=self.values.merge(other.values),
            missing_rows=merge_examples(self.missing_rows, other.missing_rows),
            inf_rows=merge_examples(self.inf_rows, other.inf_rows),
            keys=_merge_optional(self.keys, other.keys, lambda a, b: a.merge(b)),
            tmin=_merge_optional(self.tmin, other.tmin, min),
            tmax=_merge_optional(self.tmax, other.tmax, max),
            numeric_text=self.numeric_text + other.numeric_text,
            text_values=_first_distinct(self.text_values + other.text_values),
            vector=_merge_optional(self.vector, other.vector, lambda a, b: a.merge(b)),
            separated=_merge_optional(self.separated, other.separated, SeparatedNumbers.merge),
        )

    @property
    def inf(self) -> int:
        return self.posinf + self.neginf

    @property
    def present(self) -> int:
        """Non-missing values (inf counts as present)."""
        return self.rows - self.missing

    @property
    def time_range(self) -> tuple[float, float] | None:
        """(oldest, newest) of a column used as time: a date/time column (int64, column unit)
        or a numeric one (years, epoch seconds); None for other kinds or without values."""
        if self.kind == "temporal":
            return None if self.tmin is None else (self.tmin, self.tmax)
        if self.kind == "numeric" and self.min <= self.max:
            return self.min, self.max
        return None

    @property
    def mean(self) -> float:
        return self.finite.mean if self.finite.n else math.nan

    @property
    def std(self) -> float:
        # one finite value (min == max): exactly 0, not the rounding of a mean such as 0.1
        if self.finite.n and self.min == self.max:
            return 0.0
        return self.finite.std

    @property
    def n_distinct(self) -> int | None:
        return self.values.n_distinct

    @property
    def is_numeric(self) -> bool:
        return self.kind == "numeric"


def _string_stats(stats: ColumnStats, enc, offset: int) -> ColumnStats:
    """A text column's statistics from its dictionary encoding (``hashing.Strings``): the
    same results as counting, matching and hashing every row, at the cost of the distinct
    values."""
    codes, dictionary = enc.codes, enc.dictionary
    missing = codes < 0
    stats.missing = int(missing.sum())
    if stats.missing:
        stats.missing_rows = first_positions(missing, offset)
    # keys: the KMV of the distinct values' hashes (KMV.of depends only on that set)
    stats.keys = KMV.of(enc.dictionary_lanes()[0])
    present = stats.rows - stats.missing
    if present == 0:
        return stats
    counts = enc.counts
    # numeric_text / text_values, as _numeric_text
    is_number = pc.match_substring_regex(dictionary, NUMBER_PATTERN, ignore_case=True)
    is_number = np.asarray(is_number.to_numpy(zero_copy_only=False), dtype=bool)
    stats.numeric_text = int(counts[is_number].sum())
    stats.separated = separated_numbers(dictionary, counts, codes, is_number, offset)
    if stats.numeric_text != present:
        row_other = ~np.where(missing, True, is_number[np.where(missing, 0, codes)])
        other = np.flatnonzero(row_other)[:256]
        picked = dictionary.take(pa.array(codes[other])).to_pylist()
        stats.text_values = _first_distinct(tuple(zip((other + offset).tolist(), picked)))
    # values, as _count(present, offset)
    if present >= SCREEN_MIN_ROWS:
        present_codes = codes[~missing] if stats.missing else codes
        idx = screen_index(offset, present)
        _, sample_counts = np.unique(present_codes[idx], return_counts=True)
        if len(sample_counts) > CAPACITY and int(sample_counts.max()) <= SCREEN_MAX_REPEAT:
            stats.values = ValueCounter(total=present, exact=False)
            return stats
    stats.values = ValueCounter.from_counts(dictionary, counts)
    return stats


def _sketch(arr: pa.Array) -> KMV:
    from datavet.scan.hashing import hash_values  # hashing builds on this module

    return KMV.of(hash_values(arr)) if len(arr) else KMV()


def _merge_optional(a, b, how):
    if a is None:
        return b
    if b is None:
        return a
    return how(a, b)


NUMBER_PATTERN = (
    r"^\s*[-+]?(\d[\d_]*\.?\d*([eE][-+]?\d+)?|\.\d+([eE][-+]?\d+)?|inf|infinity|nan)\s*$"
)


def _numeric_text(arr: pa.Array, offset: int) -> tuple[int, tuple[tuple[int, str], ...]]:
    """How many values of a text column read as numbers, and the first values that do not."""
    is_number = pc.match_substring_regex(arr, NUMBER_PATTERN, ignore_case=True)
    n_number = int(pc.sum(is_number).as_py() or 0)
    present = len(arr) - arr.null_count
    if n_number == present:
        return n_number, ()
    other = np.flatnonzero(~np.asarray(is_number.fill_null(True).to_numpy(zero_copy_only=False)))
    picked = arr.take(pa.array(other[:256])).to_pylist()
    return n_number, _first_distinct(tuple(zip((other[:256] + offset).tolist(), picked)))


def _first_distinct(
    pairs: tuple[tuple[int, str], ...], k: int = MAX_EXAMPLES
) -> tuple[tuple[int, str], ...]:
    out: list[tuple[int, str]] = []
    seen: set[str] = set()
    for row, value in sorted(pairs):
        if value not in seen:
            seen.add(value)
            out.append((row, value))
            if len(out) == k:
                break
    return tuple(out)


SCREEN_MIN_ROWS = 8192  # batches at least this long are screened before exact counting
SCREEN_SAMPLE = 2048
SCREEN_MAX_REPEAT = 8  # a value seen at most this often in the sample is under ~1% of the batch


@functools.lru_cache(maxsize=64)
def screen_index(seed: int, n: int) -> np.ndarray:
    """The rows of a batch of ``n`` rows the screening sample reads (seeded by the batch's
    first row, so runs repeat): the same for every column of the batch, drawn once."""
    idx = np.random.default_rng(seed).integers(0, n, SCREEN_SAMPLE)
    idx.flags.writeable = False
    return idx


def _no_heavy_values(arr: pa.Array, seed: int) -> bool:
    """True when a sample shows a high-cardinality batch with no value above ~1% of it.

    Exact value counting of a batch of 65k distinct floats costs more than the rest of the
    column's statistics together, and would only produce a sketch with nothing in it. The
    sample is pseudo-random (seeded by the batch's first row, so runs repeat) rather than
    strided, so periodic values cannot hide from it. A value covering 1% of the batch appears
    about 20 times in it, 8 or fewer with probability ~0.2%; one covering 99% (F002) always shows.
    """
    idx = screen_index(seed, len(arr))
    sample = arr.take(pa.array(idx))
    vc = pc.value_counts(sample)
    if len(vc) <= CAPACITY:
        return False
    return int(np.max(vc.field("counts").to_numpy())) <= SCREEN_MAX_REPEAT


def _count_numbers(present: np.ndarray, seed: int) -> ValueCounter:
    """``_count(pa.array(present), seed)`` for a NumPy array of numbers (NaN removed, -0.0 as
    0.0) or booleans, screening the sample in NumPy: the Arrow array is built only when the
    batch is counted exactly."""
    if len(present) >= SCREEN_MIN_ROWS:
        idx = screen_index(seed, len(present))
        _, counts = np.unique(present[idx], return_counts=True)
        if len(counts) > CAPACITY and int(counts.max()) <= SCREEN_MAX_REPEAT:
            return ValueCounter(total=len(present), exact=False)
    if len(present) == 0:
        return ValueCounter()
    vc = pc.value_counts(pa.array(present))
    return ValueCounter.from_counts(vc.field("values"), vc.field("counts").to_numpy())


def _count(arr: pa.Array, seed: int = 0) -> ValueCounter:
    if len(arr) == 0:
        return ValueCounter()
    if len(arr) >= SCREEN_MIN_ROWS and _no_heavy_values(arr, seed):
        return ValueCounter(total=len(arr), exact=False)
    vc = pc.value_counts(arr)
    return ValueCounter.from_counts(vc.field("values"), vc.field("counts").to_numpy())
