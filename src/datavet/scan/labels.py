"""Label statistics: exact class counts, missing labels, and labels along row position."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from datavet.scan.columns import (
    _first_distinct,
    _numeric_text,
    as_float,
    as_text,
    column_kind,
    dense,
    first_positions,
    merge_examples,
)
from datavet.scan.counters import ValueCounter, py_list
from datavet.scan.moments import merge_arrays

MAX_BINS = 1024  # position bins; a bin is a power-of-two number of rows
MAX_TRACKED_CLASSES = 64  # classes followed along position; beyond that only moments are kept


def bin_width(last_row: int) -> int:
    """Smallest power of two such that rows 0..last_row fit in MAX_BINS bins."""
    width = 1
    while last_row // width >= MAX_BINS:
        width *= 2
    return width


def _coarsen_counts(a: np.ndarray, factor: int) -> np.ndarray:
    if factor == 1:
        return a
    pad = (-len(a)) % factor
    return np.pad(a, (0, pad)).reshape(-1, factor).sum(axis=1)


def _pad(a: np.ndarray, length: int) -> np.ndarray:
    return np.pad(a, (0, length - len(a))) if len(a) < length else a


@dataclass(slots=True)
class PositionBins:
    """Label counts (per tracked class) and label moments per bin of global row position.

    Bin ``i`` covers rows ``[i * width, (i + 1) * width)``. The width depends only on the
    largest row seen, so the merge of any split of a table equals the bins of the whole.
    """

    width: int = 1
    n: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    mean: np.ndarray | None = None  # numeric labels only
    m2: np.ndarray | None = None
    classes: dict = field(default_factory=dict)  # label value -> counts per bin
    overflow: bool = False  # more than MAX_TRACKED_CLASSES classes: per-class bins dropped

    @classmethod
    def of(cls, arr: pa.Array, offset: int) -> PositionBins:
        valid = ~np.asarray(arr.is_null().to_numpy(zero_copy_only=False), dtype=bool)
        numeric = column_kind(arr.type) in ("numeric", "bool")
        y = as_float(arr) if numeric else None
        if y is not None:
            valid &= ~np.isnan(y)
        last = offset + len(arr) - 1
        width = bin_width(last)
        rows = np.flatnonzero(valid)
        bins = (rows + offset) // width
        nbins = last // width + 1
        n = np.bincount(bins, minlength=nbins).astype(np.int64)
        mean = m2 = None
        if y is not None:
            yv = y[rows]
            finite = np.isfinite(yv)
            if finite.all():
                s = np.bincount(bins, weights=yv, minlength=nbins)
                mean = np.divide(s, n, out=np.zeros(nbins), where=n > 0)
                m2 = np.bincount(bins, weights=(yv - mean[bins]) ** 2, minlength=nbins)
        out = cls(width=width, n=n, mean=mean, m2=m2)
        if len(rows):
            encoded = pc.dictionary_encode(arr.filter(pa.array(valid)))
            values = py_list(encoded.dictionary)  # dates beyond Python's range: as text
            if len(values) > MAX_TRACKED_CLASSES:
                out.overflow = True
            else:
                codes = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
                table = np.bincount(bins * len(values) + codes, minlength=nbins * len(values))
                table = table.reshape(nbins, len(values))
                out.classes = {v: table[:, j].copy() for j, v in enumerate(values)}
        return out

    def summary(self, max_points: int = 100, max_classes: int = 8) -> dict:
        """The label along row position, coarsened to at most ``max_points`` points: per point its
        first row, labelled rows, each common class's share, and the mean of a numeric label."""
        width = self.width
        while -(-len(self.n) * self.width // width) > max_points:
            width *= 2
        bins = self.coarsen(width)
        n = bins.n
        safe = np.where(n > 0, n, 1)
        common = sorted(bins.classes, key=lambda k: -int(bins.classes[k].sum()))[:max_classes]
        return {
            "rows_per_point": width,
            "start": (np.arange(len(n)) * width).tolist(),
            "n": n.tolist(),
            "classes": [
                {"value": k, "rate": np.where(n > 0, bins.classes[k] / safe, 0.0).tolist()}
                for k in common
            ],
            "mean": None if bins.mean is None else bins.mean.tolist(),
        }

    def coarsen(self, width: int) -> PositionBins:
        if width == self.width:
            return self
        f = width // self.width
        n = _coarsen_counts(self.n, f)
        mean = m2 = None
        if self.mean is not None:
            pad = (-len(self.n)) % f
            nn = np.pad(self.n, (0, pad)).reshape(-1, f)
            mm = np.pad(self.mean, (0, pad)).reshape(-1, f)
            qq = np.pad(self.m2, (0, pad)).reshape(-1, f)
            with np.errstate(over="ignore", invalid="ignore"):  # labels near 1e308: inf, said
                mean = np.divide((nn * mm).sum(1), n, out=np.zeros(len(n)), where=n > 0)
                m2 = qq.sum(1) + (nn * (mm - mean[:, None]) ** 2).sum(1)
        classes = {k: _coarsen_counts(v, f) for k, v in self.classes.items()}
        return PositionBins(width, n, mean, m2, classes, self.overflow)

    def merge(self, other: PositionBins) -> PositionBins:
        width = max(self.width, other.width)
        a, b = self.coarsen(width), other.coarsen(width)
        length = max(len(a.n), len(b.n))
        n_a, n_b = _pad(a.n, length), _pad(b.n, length)
        n = n_a + n_b
        mean = m2 = None
        if a.mean is not None and b.mean is not None:
            _, mean, m2 = merge_arrays(
                n_a,
                _pad(a.mean, length),
                _pad(a.m2, length),
                n_b,
                _pad(b.mean, length),
                _pad(b.m2, length),
            )
        overflow = a.overflow or b.overflow
        classes: dict = {}
        if not overflow:
            for k in list(a.classes) + [k for k in b.classes if k not in a.classes]:
                classes[k] = _pad(a.classes.get(k, np.zeros(0, np.int64)), length) + _pad(
                    b.classes.get(k, np.zeros(0, np.int64)), length
                )
            if len(classes) > MAX_TRACKED_CLASSES:
                overflow, classes = True, {}
        return PositionBins(width, n, mean, m2, classes, overflow)


@dataclass(slots=True)
class LabelStats:
    name: str
    dtype: str
    kind: str
    rows: int = 0
    missing: int = 0
    missing_rows: tuple[int, ...] = ()
    values: ValueCounter = field(default_factory=ValueCounter)
    integral: bool = True  # every present numeric label is a whole number
    positions: PositionBins = field(default_factory=PositionBins)
    numeric_text: int = 0  # text labels that read as numbers (for V004)
    text_values: tuple[tuple[int, str], ...] = ()
    # +inf / -inf labels (V003): neither missing nor a class or a value to fit
    posinf: int = 0
    neginf: int = 0
    inf_rows: tuple[int, ...] = ()

    @classmethod
    def of(cls, name: str, arr: pa.Array, offset: int) -> LabelStats:
        dtype = str(arr.type)
        kind = column_kind(arr.type)
        arr = dense(arr)
        stats = cls(name=name, dtype=dtype, kind=kind, rows=len(arr))
        missing = np.asarray(arr.is_null().to_numpy(zero_copy_only=False), dtype=bool)
        unusable = missing
        if kind in ("numeric", "bool"):
            y = as_float(arr)
            missing = missing | np.isnan(y)
            inf = ~missing & np.isinf(y)
            stats.posinf = int((inf & (y > 0)).sum())
            stats.neginf = int((inf & (y < 0)).sum())
            stats.inf_rows = first_positions(inf, offset)
            unusable = missing | inf
            finite = y[~unusable]
            stats.integral = bool(np.all(finite == np.round(finite)))
        else:
            stats.integral = False
            if kind == "string":
                stats.numeric_text, stats.text_values = _numeric_text(arr, offset)
        # NaN labels are missing and infinite ones unusable: neither is a class, and neither
        # counts for the task, the class counts or the label's moments
        arr = arr.filter(pa.array(~unusable))
        stats.missing = int(missing.sum())
        stats.missing_rows = first_positions(missing, offset)
        if len(arr):
            vc = _value_counts(arr)
            stats.values = ValueCounter.from_counts(
                vc.field("values"), vc.field("counts").to_numpy()
            )
        # Position bins see every row (missing and infinite labels excluded from the counts).
        stats.positions = PositionBins.of(_with_nulls(arr, unusable), offset)
        return stats

    def merge(self, other: LabelStats) -> LabelStats:
        return LabelStats(
            name=self.name,
            dtype=self.dtype,
            kind=self.kind,
            rows=self.rows + other.rows,
            missing=self.missing + other.missing,
            missing_rows=merge_examples(self.missing_rows, other.missing_rows),
            values=self.values.merge(other.values),
            integral=self.integral and other.integral,
            positions=self.positions.merge(other.positions),
            numeric_text=self.numeric_text + other.numeric_text,
            text_values=_first_distinct(self.text_values + other.text_values),
            posinf=self.posinf + other.posinf,
            neginf=self.neginf + other.neginf,
            inf_rows=merge_examples(self.inf_rows, other.inf_rows),
        )

    @property
    def inf(self) -> int:
        return self.posinf + self.neginf

    @property
    def present(self) -> int:
        """Labelled rows a model can use: neither missing nor infinite."""
        return self.rows - self.missing - self.inf


LABEL_KINDS = ("numeric", "bool", "string", "temporal", "null")


def label_batch(batch: pa.RecordBatch, target: str) -> pa.RecordBatch:
    """``batch`` with a label that is neither a number, a boolean, text nor a date as its text.

    Binary labels, lists, structs, maps, unions and intervals become one class per distinct
    value's text (``b"cat"`` reads as ``"cat"``; ``[0, 1]`` as ``"[0, 1]"``), so every label
    rule and the baselines see classes they can count, compare and encode."""
    i = batch.schema.get_field_index(target)
    arr = batch.column(i)
    if column_kind(arr.type) in LABEL_KINDS:
        return batch
    text = as_text(arr)
    return batch.set_column(i, pa.field(target, text.type), text)


def _with_nulls(present: pa.Array, missing: np.ndarray) -> pa.Array:
    """Put the present values back at their row positions, with nulls where labels are missing."""
    if not missing.any():
        return present
    idx = np.full(len(missing), -1, dtype=np.int64)
    idx[~missing] = np.arange(len(present))
    return present.take(pa.array(idx, mask=missing))


def _value_counts(arr: pa.Array):
    """``pc.value_counts``, also for types it has no kernel for (decimal32/64 and other newer
    types): counted as float64 where that cast exists, else as their text."""
    try:
        return pc.value_counts(arr)
    except pa.ArrowNotImplementedError:
        pass
    for typ in (pa.float64(), pa.string()):
        try:
            return pc.value_counts(arr.cast(typ))
        except (pa.ArrowNotImplementedError, pa.ArrowInvalid):
            continue
    return pc.value_counts(pa.array([None if v is None else str(v) for v in arr.to_pylist()]))
