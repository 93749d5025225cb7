"""128-bit hashes of canonicalised rows, for overlap and duplicate detection.

Canonical form, so equal rows hash alike whatever file they came from:
- numbers and booleans as float64: ``1``, ``1.0`` and ``True`` are one value, ``-0.0 == 0.0``;
- every missing value (null, None, NaN, NaT) is one token, so NaN equals NaN;
- strings as UTF-8, timestamps as their integer value;
- columns are combined in name order, so column order does not matter.
Two independent 64-bit lanes make 128 bits: with 64 bits a billion rows would expect collisions.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from datavet._lazy import pandas as pd
from datavet.scan.hashmix import (  # noqa: F401 (re-exported)
    _KEYS,
    _MISSING,
    _MULT,
    _SEEDS,
    _U,
    MISSING_HASH,
    _splitmix,
    _splitmix_inplace,
)
from datavet.scan.values import as_float, as_text, column_kind, dense, temporal_ints, wide_ints


def _numeric_lanes(x: np.ndarray) -> list[np.ndarray]:
    missing = np.isnan(x)
    bits = x.view(_U)
    out = []
    for seed, token in zip(_SEEDS, _MISSING):
        h = np.bitwise_xor(bits, seed)
        h += _U(0x9E3779B97F4A7C15)
        h = _splitmix_inplace(h)
        h[missing] = token
        out.append(h)
    return out


def _wide_int_lanes(lanes: list[np.ndarray], ints: np.ndarray, x: np.ndarray) -> None:
    """Integers that float64 rounds (``x`` is not ``ints``; beyond 2**53) hash as themselves,
    in ``lanes`` (the lanes of ``x``): no float equals them, and 2**60 and 2**60 + 1 are two
    values. An int64 and a uint64 of one value hash alike."""
    with np.errstate(invalid="ignore"):  # casts of values out of range, masked out below
        if ints.dtype == np.uint64:
            exact = (x < 2.0**64) & (x.astype(np.uint64) == ints)
        else:
            exact = (x < 2.0**63) & (x.astype(np.int64) == ints)
    rounded = np.flatnonzero(~exact & ~np.isnan(x))
    if not len(rounded):
        return
    bits = ints[rounded].view(_U)
    # a uint64 at or above 2**63 shares its bits with a negative int64 of another value
    salt = (
        _U(0x1A7E) if ints.dtype != np.uint64 else np.where(bits >> _U(63), _U(0x2B8F), _U(0x1A7E))
    )
    for lane, seed in zip(lanes, _SEEDS):
        lane[rounded] = _splitmix(bits ^ seed ^ salt)


def _text_lanes(values: np.ndarray, missing: np.ndarray) -> list[np.ndarray]:
    out = []
    for key, token in zip(_KEYS, _MISSING):
        h = pd.util.hash_array(values, encoding="utf8", hash_key=key, categorize=True)
        h = np.asarray(h, dtype=_U).copy()
        h[missing] = token
        out.append(h)
    return out


# The lanes of small dictionaries, by their values: a text column with a few levels has the
# same dictionary in every batch, and hashing it through pandas costs ~1 ms a call (more than
# the rest of the column's work). Bounded; the arrays are read-only.
SMALL_DICTIONARY = 256
_LANES_SEEN: dict[tuple, list[np.ndarray]] = {}
_LANES_SEEN_MAX = 512


def value_lanes(values: pa.Array) -> list[np.ndarray]:
    """Both hash lanes of each value of a text array without nulls (as ``_text_lanes``)."""
    key = None
    if len(values) <= SMALL_DICTIONARY:
        key = tuple(values.to_pylist())
        hit = _LANES_SEEN.get(key)
        if hit is not None:
            return hit
    objects = values.to_numpy(zero_copy_only=False).astype(object)
    lanes = _text_lanes(objects, np.zeros(len(objects), bool))
    if key is not None:
        for lane in lanes:
            lane.flags.writeable = False
        if len(_LANES_SEEN) >= _LANES_SEEN_MAX:
            _LANES_SEEN.clear()
        _LANES_SEEN[key] = lanes
    return lanes


class Strings:
    """A text column of one batch, dictionary-encoded once: each distinct value is hashed,
    regex-matched and counted once, and rows only index into the results (no Python object
    per row). ``codes`` index ``dictionary`` (distinct non-missing values in order of first
    appearance, as ``pyarrow.compute.value_counts`` lists them); -1 marks a missing value."""

    __slots__ = ("codes", "dictionary", "_lanes", "_counts")

    def __init__(self, arr: pa.Array):
        enc = pc.dictionary_encode(arr)
        self.dictionary = enc.dictionary
        self.codes = np.asarray(pc.fill_null(enc.indices, -1).to_numpy(zero_copy_only=False))
        self._lanes = None
        self._counts = None

    @property
    def missing(self) -> np.ndarray:
        return self.codes < 0

    @property
    def counts(self) -> np.ndarray:
        """Rows per dictionary value."""
        if self._counts is None:
            codes = self.codes[self.codes >= 0] if (self.codes < 0).any() else self.codes
            self._counts = np.bincount(codes, minlength=len(self.dictionary)).astype(np.int64)
        return self._counts

    def dictionary_lanes(self) -> list[np.ndarray]:
        """Both hash lanes of every dictionary value (as ``_text_lanes`` hashes them)."""
        if self._lanes is None:
            self._lanes = value_lanes(self.dictionary)
        return self._lanes

    def lanes(self) -> list[np.ndarray]:
        return _take_lanes(self.dictionary_lanes(), self.codes)


def _take_lanes(dictionary_lanes: list[np.ndarray], codes: np.ndarray) -> list[np.ndarray]:
    missing = codes < 0
    idx = np.where(missing, 0, codes) if missing.any() else codes
    out = []
    for lane, token in zip(dictionary_lanes, _MISSING):
        h = lane[idx] if len(lane) else np.zeros(len(codes), _U)
        h[missing] = token
        out.append(h)
    return out


def column_lanes(
    arr: pa.Array, as_number: bool = False, cache: dict | None = None
) -> list[np.ndarray]:
    """Two uint64 lanes of per-value hashes for one column.

    ``as_number``: the column is numeric in another split, so strings that parse as numbers hash
    as those numbers (a CSV's "1.5" equals a Parquet's 1.5). ``cache``: what the batch's other
    passes over this column already computed (``"float"``: its values as float64,
    ``"strings"``: its :class:`Strings` encoding; ``"print"``: the low byte of lane 0, which
    the near-duplicate fingerprints read); filled in here when missing.
    """
    lanes = _column_lanes(arr, as_number, cache)
    if cache is not None and not as_number and "print" not in cache:
        cache["print"] = (lanes[0] & _U(0xFF)).astype(np.uint8)
    return lanes


def _column_lanes(arr: pa.Array, as_number: bool, cache: dict | None) -> list[np.ndarray]:
    arr = dense(arr)
    kind = column_kind(arr.type)
    if kind in ("numeric", "bool"):
        x = float_values(arr, cache)
        lanes = _numeric_lanes(x)
        ints = wide_ints(arr, x)
        if ints is not None:
            _wide_int_lanes(lanes, ints, x)
        return lanes
    if kind == "string" and not as_number:
        return string_values(arr, cache).lanes()
    if kind == "null":
        return _numeric_lanes(np.full(len(arr), np.nan))
    if kind == "temporal":
        x = temporal_ints(arr).to_numpy(zero_copy_only=False)
        missing = np.asarray(arr.is_null().to_numpy(zero_copy_only=False), dtype=bool)
        x = np.where(missing, 0, x).astype(np.int64).view(_U)
        lanes = [_splitmix(x ^ s ^ _U(0x7E)) for s in _SEEDS]
        for h, token in zip(lanes, _MISSING):
            h[missing] = token
        return lanes
    if kind == "vector":
        return vector_lanes(arr, cache)
    if kind != "string":
        arr = as_text(arr)
    values = arr.to_numpy(zero_copy_only=False)
    missing = np.asarray(arr.is_null().to_numpy(zero_copy_only=False), dtype=bool)
    if as_number:
        numbers = pd.to_numeric(pd.Series(values, dtype=object), errors="coerce").to_numpy(float)
        parsed = ~np.isnan(numbers) & ~missing
        text = _text_lanes(np.where(missing, "", values).astype(object), missing)
        nums = _numeric_lanes(np.where(parsed, numbers + 0.0, np.nan))
        return [np.where(parsed, n, t) for n, t in zip(nums, text)]
    return _text_lanes(np.where(missing, "", values).astype(object), missing)


def vector_lanes(arr: pa.Array, cache: dict | None = None) -> list[np.ndarray]:
    """Two lanes of per-row hashes of a vector column (``scan/vectors.py``): each element
    canonicalised as a number (``1 == 1.0``, ``-0.0 == 0.0``, NaN and null elements one token),
    mixed with its element index, summed per row (and summed with odd per-index weights for the
    second lane), then mixed with the vector's length. A null vector hashes as missing."""
    from datavet.scan.vectors import row_slices, vector_values

    arr = dense(arr)
    parts = cache.get("vector") if cache is not None else None
    if parts is None:
        slices = row_slices(arr)
        if len(slices) > 1:  # a wide batch: a slice of rows at a time
            pieces = [vector_lanes(arr.slice(a, n)) for a, n in slices]
            return [np.concatenate([p[j] for p in pieces]) for j in range(2)]
        parts = vector_values(arr)
    x, lengths, null_rows = parts
    z = np.ascontiguousarray(x).view(_U).copy()
    z[np.isnan(x)] = _MISSING[0]
    starts = np.cumsum(lengths) - lengths
    pos = (np.arange(len(x), dtype=np.int64) - np.repeat(starts, lengths)).astype(_U)
    out = []
    for lane, seed in enumerate(_SEEDS):
        salt = _splitmix(pos * _MULT ^ seed)
        h = _splitmix(z ^ salt)
        if lane:
            h *= salt | _U(1)
        cs = np.concatenate([np.zeros(1, _U), np.cumsum(h, dtype=_U)])
        acc = cs[starts + lengths] - cs[starts]  # per-row sums, modulo 2**64
        acc ^= _splitmix(lengths.astype(_U) ^ seed ^ _U(0x5EC7))
        acc = _splitmix(acc)
        acc[null_rows] = _MISSING[lane]
        out.append(acc)
    return out


def float_values(arr: pa.Array, cache: dict | None = None) -> np.ndarray:
    """``as_float(arr)``, computed once per batch column when a ``cache`` is given (callers
    only read it)."""
    if cache is None:
        return as_float(arr)
    if "float" not in cache:
        cache["float"] = as_float(arr)
    return cache["float"]


def string_values(arr: pa.Array, cache: dict | None = None) -> Strings:
    if cache is None:
        return Strings(arr)
    if "strings" not in cache:
        cache["strings"] = Strings(arr)
    return cache["strings"]


_MASK = (1 << 64) - 1


def mult_powers(m: int) -> list[int]:
    """``[MULT**k mod 2**64 for k in 0..m]`` as Python ints."""
    p = np.ones(m + 1, _U)
    if m:
        p[1:] = np.multiply.accumulate(np.full(m, _MULT, _U))  # wraps modulo 2**64
    return p.tolist()


def fold_weights(columns) -> dict[str, int]:
    """Each column's weight in :func:`combine_lanes`'s fold of ``columns``: folding
    ``acc = acc * MULT + lane`` over the m columns in name order is
    ``seed * MULT**m + sum(lane_p * MULT**(m - 1 - p))`` modulo 2**64."""
    order = sorted(columns)
    powers = mult_powers(len(order))
    m = len(order)
    return {name: powers[m - 1 - p] for p, name in enumerate(order)}


def combine_lanes(
    n: int,
    lanes_of,
    columns: list[str],
    names,
    partial: np.ndarray | None = None,
    skip=frozenset(),
) -> np.ndarray:
    """The (n, 2) row hash: lanes of ``columns`` in name order folded into two accumulators
    (a column not in ``names`` hashes as all-missing). ``lanes_of(name)`` gives a column's
    two lanes, already well mixed (SplitMix64 of the value), so each step is a multiply-add
    (a bijection of the accumulator, an odd multiplier) and the result is mixed once at the
    end: half the passes of mixing at every step.

    The fold is computed as its closed form (see :func:`fold_weights`), so columns can be
    added in any order: ``partial`` is the (2, n) weighted lane sum of the ``skip`` columns,
    computed elsewhere (``scan/wide.py``, many numeric columns at once)."""
    order = sorted(columns)
    m = len(order)
    powers = mult_powers(m)
    acc = np.empty((2, n), dtype=_U)
    for j in range(2):
        acc[j].fill((int(_SEEDS[j]) * powers[m]) & _MASK)
    if partial is not None:
        acc += partial
    scratch = np.empty(n, _U)
    for p, name in enumerate(order):
        if name in skip:
            continue
        w = powers[m - 1 - p]
        lanes = lanes_of(name) if name in names else None
        for j in range(2):
            if lanes is None:
                acc[j] += _U((int(_MISSING[j]) * w) & _MASK)
            else:
                np.multiply(lanes[j], _U(w), out=scratch)
                acc[j] += scratch
    for j in range(2):
        acc[j] += _U(0x9E3779B97F4A7C15)
        _splitmix_inplace(acc[j])
    return np.ascontiguousarray(acc.T)


def hash_values(arr: pa.Array) -> np.ndarray:
    """One uint64 lane per value (used for labels beside the row hash)."""
    return column_lanes(arr)[0]


@dataclass(slots=True)
class RowHashes:
    """Row hashes of a split, in chunks keyed by their first global row.

    Each chunk holds the hashes over all of the split's features, the label hashes, the hashes
    over the shared features only when the other split lacks some of the features, and the
    near-duplicate hashes (``scan/neardup.py``) when the scan computed them.
    """

    chunks: list[tuple] = field(default_factory=list)
    # (first row, (n, 2) rows, labels, (n, 2) shared or None, (n, 2) near or None)
    # When set, the hashes were spilled to disk while scanning (``chunks`` is then empty): an
    # ``engines.spill.HashSpill``; the row checks read it one hash partition at a time
    # (``rowchecks.spilled_checks``), the near-duplicate check a slice of rows at a time.
    spill: object | None = None

    @classmethod
    def of(
        cls,
        offset: int,
        rows: np.ndarray,
        labels: np.ndarray,
        shared: np.ndarray | None = None,
        near: np.ndarray | None = None,
    ) -> RowHashes:
        return cls([(offset, rows, labels, shared, near)])

    def merge(self, other: RowHashes) -> RowHashes:
        if self.spill is not None or other.spill is not None:
            self.unspill()
            other.unspill()
        return RowHashes(sorted(self.chunks + other.chunks, key=lambda c: c[0]))

    def unspill(self) -> None:
        """Read spilled hashes back into memory (one chunk), for a caller that needs them all."""
        if self.spill is not None:
            self.chunks, self.spill = self.spill.load(), None

    def consolidate(self) -> None:
        """Concatenate the chunks into one, in place, freeing each chunk's arrays as soon as
        they are copied (so the peak is one extra copy of one field, not of everything).
        Chunks that do not cover consecutive rows are left as they are."""
        if self.spill is not None:
            return
        chunks = self.chunks
        if len(chunks) <= 1 or any(a[0] + len(a[1]) != b[0] for a, b in zip(chunks, chunks[1:])):
            return
        self.chunks = []
        if any(c[3] is None for c in chunks) and not all(c[3] is None for c in chunks):
            chunks = [c[:3] + (c[1] if c[3] is None else c[3],) + c[4:] for c in chunks]
        fields: dict[int, np.ndarray | None] = {}
        for f in (3, 4, 2, 1):  # shared may fall back on rows: rows last
            parts = [c[f] for c in chunks]
            if any(p is None for p in parts):
                fields[f] = None  # shared and near hashes are all or nothing
                continue
            fields[f] = np.concatenate(parts)
            for k, c in enumerate(chunks):  # drop this field from the chunks: frees it
                chunks[k] = c[:f] + (None,) + c[f + 1 :]
        self.chunks = [(chunks[0][0], fields[1], fields[2], fields[3], fields[4])]

    def _positions(self) -> np.ndarray:
        return np.concatenate(
            [np.arange(o, o + len(r), dtype=np.int64) for o, r, *_ in self.chunks]
        )

    def arrays(self, shared: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(row positions, (n, 2) feature hashes, label hashes), in row order.

        ``shared``: hashes over the features both splits have (for comparing splits)."""
        self.unspill()
        if not self.chunks:
            return np.zeros(0, np.int64), np.zeros((0, 2), _U), np.zeros(0, _U)
        pick = (lambda c: c[3] if c[3] is not None else c[1]) if shared else (lambda c: c[1])
        if len(self.chunks) == 1:
            c = self.chunks[0]
            return np.arange(c[0], c[0] + len(c[1]), dtype=np.int64), pick(c), c[2]
        rows = np.concatenate([pick(c) for c in self.chunks])
        labels = np.concatenate([c[2] for c in self.chunks])
        return self._positions(), rows, labels

    def near(self) -> np.ndarray | None:
        """The (n, 2) near-duplicate hashes in row order, or None when they were not computed."""
        if self.spill is not None:
            return self.spill.near_rows()
        if not self.chunks or any(c[4] is None for c in self.chunks):
            return None
        if len(self.chunks) == 1:
            return self.chunks[0][4]
        return np.concatenate([c[4] for c in self.chunks])

    @property
    def nbytes(self) -> int:
        return sum(sum(a.nbytes for a in c[1:] if a is not None) for c in self.chunks)


SPILL_BITS = 8  # hash partitions on disk: 256 per split, grouped into larger ones when read
# (the store that writes them is engines/spill.py HashSpill: the scan does no I/O)
