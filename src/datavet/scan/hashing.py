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
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from datavet.scan.columns import as_float, column_kind, dense

_U = np.uint64
_SEEDS = (_U(0x243F6A8885A308D3), _U(0x13198A2E03707344))
_KEYS = ("datavet-lane-0..", "datavet-lane-1..")  # pandas hash_array keys: 16 bytes
_MISSING = (_U(0x9E3779B97F4A7C15), _U(0xC2B2AE3D27D4EB4F))
_MULT = _U(0x100000001B3)
MISSING_HASH = _MISSING[0]  # what a missing value hashes to in lane 0 (and so a missing label)


def _splitmix(z: np.ndarray) -> np.ndarray:
    z = z + _U(0x9E3779B97F4A7C15)
    z = (z ^ (z >> _U(30))) * _U(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> _U(27))) * _U(0x94D049BB133111EB)
    return z ^ (z >> _U(31))


def _numeric_lanes(x: np.ndarray) -> list[np.ndarray]:
    missing = np.isnan(x)
    bits = x.view(_U)
    out = []
    for seed, token in zip(_SEEDS, _MISSING):
        h = _splitmix(bits ^ seed)
        h[missing] = token
        out.append(h)
    return out


def _text_lanes(values: np.ndarray, missing: np.ndarray) -> list[np.ndarray]:
    out = []
    for key, token in zip(_KEYS, _MISSING):
        h = pd.util.hash_array(values, encoding="utf8", hash_key=key, categorize=True)
        h = np.asarray(h, dtype=_U).copy()
        h[missing] = token
        out.append(h)
    return out


def column_lanes(arr: pa.Array, as_number: bool = False) -> list[np.ndarray]:
    """Two uint64 lanes of per-value hashes for one column.

    ``as_number``: the column is numeric in another split, so strings that parse as numbers hash
    as those numbers (a CSV's "1.5" equals a Parquet's 1.5).
    """
    arr = dense(arr)
    kind = column_kind(arr.type)
    if kind in ("numeric", "bool"):
        return _numeric_lanes(as_float(arr))
    if kind == "null":
        return _numeric_lanes(np.full(len(arr), np.nan))
    if kind == "temporal":
        ints = (
            pc.cast(arr, pa.int64(), safe=False)
            if not pa.types.is_date32(arr.type)
            else (pc.cast(pc.cast(arr, pa.timestamp("s")), pa.int64()))
        )
        x = ints.to_numpy(zero_copy_only=False)
        missing = np.asarray(arr.is_null().to_numpy(zero_copy_only=False), dtype=bool)
        x = np.where(missing, 0, x).astype(np.int64).view(_U)
        lanes = [_splitmix(x ^ s ^ _U(0x7E)) for s in _SEEDS]
        for h, token in zip(lanes, _MISSING):
            h[missing] = token
        return lanes
    if kind != "string":
        arr = pa.array([None if v is None else str(v) for v in arr.to_pylist()], pa.string())
    values = arr.to_numpy(zero_copy_only=False)
    missing = np.asarray(arr.is_null().to_numpy(zero_copy_only=False), dtype=bool)
    if as_number:
        numbers = pd.to_numeric(pd.Series(values, dtype=object), errors="coerce").to_numpy(float)
        parsed = ~np.isnan(numbers) & ~missing
        text = _text_lanes(np.where(missing, "", values).astype(object), missing)
        nums = _numeric_lanes(np.where(parsed, numbers + 0.0, np.nan))
        return [np.where(parsed, n, t) for n, t in zip(nums, text)]
    return _text_lanes(np.where(missing, "", values).astype(object), missing)


def hash_rows(batch: pa.RecordBatch, columns: list[str], as_number: frozenset[str]) -> np.ndarray:
    """An (n, 2) uint64 array: the 128-bit hash of each row over ``columns`` (a missing column
    hashes as all-missing)."""
    n = batch.num_rows
    acc = [np.full(n, s, dtype=_U) for s in _SEEDS]
    names = set(batch.schema.names)
    for name in sorted(columns):
        if name in names:
            lanes = column_lanes(batch.column(name), name in as_number)
        else:
            lanes = [np.full(n, t, dtype=_U) for t in _MISSING]
        for j in range(2):
            acc[j] = _splitmix(acc[j] * _MULT + lanes[j])
    return np.stack(acc, axis=1)


def hash_values(arr: pa.Array) -> np.ndarray:
    """One uint64 lane per value (used for labels beside the row hash)."""
    return column_lanes(arr)[0]


@dataclass(slots=True)
class RowHashes:
    """Row hashes of a split, in chunks keyed by their first global row.

    Each chunk holds the hashes over all of the split's features, the label hashes, and, only
    when the other split lacks some of those features, the hashes over the shared features.
    """

    chunks: list[tuple[int, np.ndarray, np.ndarray, np.ndarray | None]] = field(
        default_factory=list
    )

    @classmethod
    def of(
        cls, offset: int, rows: np.ndarray, labels: np.ndarray, shared: np.ndarray | None = None
    ) -> RowHashes:
        return cls([(offset, rows, labels, shared)])

    def merge(self, other: RowHashes) -> RowHashes:
        return RowHashes(sorted(self.chunks + other.chunks, key=lambda c: c[0]))

    def arrays(self, shared: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(row positions, (n, 2) feature hashes, label hashes), in row order.

        ``shared``: hashes over the features both splits have (for comparing splits)."""
        if not self.chunks:
            return np.zeros(0, np.int64), np.zeros((0, 2), _U), np.zeros(0, _U)
        pos = np.concatenate(
            [np.arange(o, o + len(r), dtype=np.int64) for o, r, _, _ in self.chunks]
        )
        pick = (lambda c: c[3] if c[3] is not None else c[1]) if shared else (lambda c: c[1])
        rows = np.concatenate([pick(c) for c in self.chunks])
        labels = np.concatenate([c[2] for c in self.chunks])
        return pos, rows, labels

    @property
    def nbytes(self) -> int:
        return sum(
            r.nbytes + lab.nbytes + (0 if sh is None else sh.nbytes)
            for _, r, lab, sh in self.chunks
        )
