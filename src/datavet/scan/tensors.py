"""Profiles of tensor data: per-channel statistics, constant positions, whole-sample hashes.

A tensor split becomes a regular :class:`~datavet.scan.Profile`, so the table rules apply to it
unchanged:

- ``columns`` are the channels ("channel 0", ...; "x0" .. "x{D-1}" for ``(N, D)`` arrays). Each
  is a ColumnStats whose rows are *samples*: ``missing`` counts the samples holding a NaN in
  that channel and ``missing_rows`` names the first of them by dataset index (so V001 and V002
  say which samples to look at), while the moments, min and max are over the channel's values
  (so F003 and T001 see the channel's scale);
- ``label`` is a LabelStats of the labels (class indices, one-hot rows read as their index);
- ``hashes`` are 128-bit hashes of whole samples (S001, S002): every value as float64 bits,
  canonicalised as in :mod:`datavet.scan.hashing` (``-0.0 == 0.0``, NaN equals NaN, ``1`` equals
  ``1.0``), mixed with its position by splitmix and summed, in two independent lanes;
- ``sample`` holds a few pooled features per sample (block means) for the baselines;
- ``tensor`` (:class:`TensorStats`) adds what tables lack: the layout, NaN/inf counts per channel
  in values, per-position min and max (which positions never change), and a few thumbnails.

Everything merges like the rest of the Profile, so a file streamed block by block, a DataLoader
read batch by batch and the whole array in one block give the same profile.
"""

from __future__ import annotations

import base64
import math
import os
from collections import deque
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa

from datavet.errors import InputError, UsageError
from datavet.scan.columns import ColumnStats, first_positions
from datavet.scan.counters import ValueCounter
from datavet.scan.hashing import _MISSING, _MULT, _SEEDS, RowHashes, _splitmix, hash_values
from datavet.scan.labels import LabelStats
from datavet.scan.moments import Moments
from datavet.scan.perceptual import PerceptualHashes
from datavet.scan.profile import Profile
from datavet.scan.reservoir import DEFAULT_SAMPLE_ROWS, Reservoir

_U = np.uint64
IN_FLIGHT_VALUES = 1 << 22  # input values in blocks being profiled at once, over all workers
MIN_BLOCK_VALUES = 1 << 18  # (each value costs ~24 bytes of float64 copies and hash words)
MAX_WORKERS = 4
MAX_POSITIONS = 1 << 21  # per-position statistics up to this many values per sample
MAX_CHANNELS = 1024  # a channel axis longer than this is almost surely the wrong axis
SAMPLE_VALUES = 2_500_000  # pooled feature values kept for the baselines (20 MB of float64)
THUMBNAILS = 6  # the first samples shown in the report
FLAGGED_THUMBNAILS = 2  # and the first samples holding NaN or inf
THUMB_SIZE = 32  # thumbnails are at most this many pixels on a side
GRID = 8  # pooled features: an image channel becomes GRID x GRID block means
MAX_POOLED_CHANNELS = 16
# a torch Dataset/DataLoader (possibly endless) is read up to this many samples by default
DEFAULT_MAX_SAMPLES = 1_000_000
MAX_FEATURE_COLUMNS = 4096  # (N, D) inputs wider than this are read as one channel
MAX_FEATURES = 256  # (N, D) inputs wider than this are pooled into this many group means


# --- layout ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Layout:
    """How a sample's axes are read: which one holds channels and what the others mean.

    ``channel_axis`` counts the sample's own axes (0 is the first axis after N); ``kind`` is
    "features" for ``(N, D)``, "image" for ``(N, C, H, W)`` (or ``(N, H, W)``), "sequence" for
    ``(N, T, F)``, "other" beyond.
    """

    shape: tuple[int, ...]
    dtype: str
    channel_axis: int | None
    kind: str
    reason: str = ""

    @property
    def n_channels(self) -> int:
        if self.kind == "features":
            return self.shape[0] if self.shape else 1
        return 1 if self.channel_axis is None else self.shape[self.channel_axis]

    @property
    def rest(self) -> tuple[int, ...]:
        """The sample's axes other than the channel axis, in order."""
        if self.kind == "features":
            return (1,)
        if self.channel_axis is None:
            return self.shape
        return tuple(s for i, s in enumerate(self.shape) if i != self.channel_axis)

    @property
    def channels(self) -> tuple[str, ...]:
        prefix = "x" if self.kind == "features" else "channel "
        return tuple(f"{prefix}{c}" for c in range(self.n_channels))

    @property
    def positions(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) if self.shape else 1

    def to_channels(self, x: np.ndarray) -> np.ndarray:
        """``(n, *shape)`` -> ``(n, C, P)``: channels first, the rest flattened."""
        n = len(x)
        if self.kind == "features" or self.channel_axis is None:
            return x.reshape(n, self.n_channels, -1)
        return np.moveaxis(x, 1 + self.channel_axis, 1).reshape(n, self.n_channels, -1)

    def describe(self) -> str:
        shape = "x".join(map(str, self.shape)) or "1"
        if self.kind == "features":
            return f"{self.n_channels:,} features per sample"
        what = {"image": "images", "sequence": "sequences"}.get(self.kind, "samples")
        chans = "1 channel" if self.n_channels == 1 else f"{self.n_channels:,} channels"
        return f"{what} of shape {shape}, {chans}"


def resolve_layout(shape: tuple[int, ...], dtype: str, requested=None) -> Layout:
    """Decide the channel axis: ``requested`` is an axis of the full tensor (N is axis 0),
    ``"none"`` for no channel axis, or None to decide from the shape."""
    ndim = len(shape)
    if ndim == 1 and shape[0] > MAX_FEATURE_COLUMNS and requested in (None, "auto"):
        # a statistics record per feature would cost more than the data: read the vector as one
        # channel of positions (per-position statistics still find constant features)
        return Layout(
            shape,
            dtype,
            None,
            "sequence",
            f"{shape[0]:,} features per sample (more than {MAX_FEATURE_COLUMNS:,}) read as one "
            "sequence of positions: per-feature statistics are kept per position",
        )
    if ndim <= 1:
        return Layout(shape, dtype, 0 if ndim else None, "features", "one value per feature")
    full = ndim + 1
    if requested not in (None, "auto"):
        if str(requested).lower() == "none":
            axis, reason = None, "no channel axis (--channel-axis none)"
        else:
            try:
                k = int(requested)
            except (TypeError, ValueError):
                raise UsageError(
                    f"--channel-axis must be an axis number or 'none', not {requested!r}"
                ) from None
            if not -full <= k < full:
                raise UsageError(
                    f"--channel-axis {k} is out of range for inputs of shape (N, "
                    f"{', '.join(map(str, shape))})"
                )
            k %= full
            if k == 0:
                raise UsageError(
                    "--channel-axis 0 is the sample axis (N); channels are on 1 or later"
                )
            axis, reason = k - 1, f"channel axis {k} (--channel-axis)"
    elif ndim == 2:
        a, b = shape
        if a == b and a >= 8:
            axis = None
            reason = (
                f"square {a}x{b} samples read as one-channel images (--channel-axis -1 reads them "
                f"as sequences of {b} features)"
            )
        else:
            axis = 1
            reason = (
                f"read as sequences of {a} steps with {b} features, channel axis -1 "
                "(--channel-axis none reads them as one-channel images)"
            )
    elif ndim == 3 and shape[0] > 4 and shape[2] in (1, 3, 4):
        axis = 2
        reason = (
            f"channels last (N, H, W, C) with {shape[2]} channels: the last axis is small and "
            "axis 1 is not (pass --channel-axis 1 for channels first)"
        )
    else:
        axis, reason = 0, "channel axis 1, as in (N, C, H, W)"
    rest = ndim - (axis is not None)
    if axis is None:
        kind = "image" if ndim == 2 else "other"
    else:
        kind = {2: "image", 1: "sequence"}.get(rest, "other")
    layout = Layout(shape, dtype, axis, kind, reason)
    if layout.n_channels > MAX_CHANNELS:
        raise UsageError(
            f"inputs of shape (N, {', '.join(map(str, shape))}) would have "
            f"{layout.n_channels:,} channels on axis {(axis or 0) + 1}; pass the channel axis with "
            "--channel-axis (or 'none')"
        )
    return layout


# --- per-position statistics and thumbnails --------------------------------------------------


@dataclass(slots=True)
class PositionStats:
    """Per input position (channels first, then the rest): how many non-NaN values, and the
    smallest and largest of them (infinities included)."""

    present: np.ndarray
    lo: np.ndarray
    hi: np.ndarray

    @classmethod
    def of(cls, x2: np.ndarray, nan: np.ndarray | None) -> PositionStats:
        if nan is None:
            return cls(np.full(x2.shape[1], len(x2), np.int64), x2.min(axis=0), x2.max(axis=0))
        present = len(x2) - nan.sum(axis=0)
        return cls(present.astype(np.int64), np.fmin.reduce(x2, axis=0), np.fmax.reduce(x2, axis=0))

    def merge(self, other: PositionStats) -> PositionStats:
        return PositionStats(
            self.present + other.present, np.fmin(self.lo, other.lo), np.fmax(self.hi, other.hi)
        )

    @property
    def constant(self) -> np.ndarray:
        """Positions holding one value in every sample (NaN aside)."""
        return (self.present > 0) & (self.lo == self.hi)


@dataclass(frozen=True)
class Thumbnail:
    """A small picture of one sample: 8-bit pixels scaled to the sample's own range; ``marks``
    is 1 where a pixel block holds NaN, 2 where it holds infinity."""

    index: int
    label: str | None
    pixels: np.ndarray  # uint8 (h, w, c), c = 1 or 3
    marks: np.ndarray | None  # uint8 (h, w)
    flag: str | None  # "nan" | "inf" | None

    def to_dict(self) -> dict:
        h, w, c = self.pixels.shape
        return {
            "index": self.index,
            "label": self.label,
            "flag": self.flag,
            "height": h,
            "width": w,
            "channels": c,
            "pixels": base64.b64encode(self.pixels.tobytes()).decode("ascii"),
            "marks": None
            if self.marks is None
            else base64.b64encode(self.marks.tobytes()).decode("ascii"),
        }


def _first_k(a: tuple[Thumbnail, ...], b: tuple[Thumbnail, ...], k: int) -> tuple:
    seen: dict[int, Thumbnail] = {}
    for t in sorted(a + b, key=lambda t: t.index):
        seen.setdefault(t.index, t)
    return tuple(list(seen.values())[:k])


def _thumbnail(img: np.ndarray, index: int, label: str | None) -> Thumbnail:
    """``img`` is one sample, channels first: (C, H, W) float64."""
    c = img.shape[0]
    show = img[:3] if c in (3, 4) else img[:1]
    _, height, width = show.shape
    s = max(1, math.ceil(max(height, width) / THUMB_SIZE))
    sh, sw = min(s, height), min(s, width)
    h, w = height // sh, width // sw
    block = show[:, : h * sh, : w * sw].reshape(show.shape[0], h, sh, w, sw)
    nan = np.isnan(block).any(axis=(0, 2, 4))
    inf = np.isinf(block).any(axis=(0, 2, 4))
    fin = np.isfinite(block)
    with np.errstate(over="ignore", invalid="ignore"):
        # Scaled down first, so values near the float64 limit cannot overflow the block sums.
        top = float(np.max(np.abs(block[fin]))) if fin.any() else 1.0
        top = top if top > 0 else 1.0
        total = np.where(fin, block / top, 0.0).sum(axis=(2, 4))
        count = fin.sum(axis=(2, 4))
        mean = np.divide(total, count, out=np.zeros_like(total), where=count > 0)
    have = count > 0
    if have.any():
        lo, hi = float(mean[have].min()), float(mean[have].max())
    else:
        lo = hi = 0.0
    if hi > lo:
        scaled = (mean - lo) * (255.0 / (hi - lo))
    else:
        scaled = np.full_like(mean, 128.0)
    pixels = np.where(have, np.clip(np.rint(scaled), 0, 255), 0).astype(np.uint8)
    pixels = np.ascontiguousarray(np.moveaxis(pixels, 0, -1))
    marks = None
    if nan.any() or inf.any():
        marks = np.where(nan, 1, np.where(inf, 2, 0)).astype(np.uint8)
    flag = "nan" if np.isnan(img).any() else ("inf" if np.isinf(img).any() else None)
    return Thumbnail(index, label, pixels, marks, flag)


# --- tensor statistics -----------------------------------------------------------------------


@dataclass(slots=True)
class TensorStats:
    """What a tensor split adds to its Profile (see the module docstring)."""

    layout: Layout
    nan_values: np.ndarray  # per channel: NaN values
    posinf_values: np.ndarray
    neginf_values: np.ndarray
    integral: bool = True  # every finite value is a whole number
    positions: PositionStats | None = None  # None past MAX_POSITIONS values per sample
    thumbnails: tuple[Thumbnail, ...] = ()  # the first samples (image layouts only)
    flagged: tuple[Thumbnail, ...] = ()  # the first samples holding NaN or inf
    perceptual: PerceptualHashes | None = None  # images: near-duplicate hashes (T002)

    def merge(self, other: TensorStats) -> TensorStats:
        if other.layout != self.layout:
            raise ValueError(f"cannot merge tensor profiles of {self.layout} and {other.layout}")
        positions = None
        if self.positions is not None and other.positions is not None:
            positions = self.positions.merge(other.positions)
        return TensorStats(
            layout=self.layout,
            nan_values=self.nan_values + other.nan_values,
            posinf_values=self.posinf_values + other.posinf_values,
            neginf_values=self.neginf_values + other.neginf_values,
            integral=self.integral and other.integral,
            positions=positions,
            thumbnails=_first_k(self.thumbnails, other.thumbnails, THUMBNAILS),
            flagged=_first_k(self.flagged, other.flagged, FLAGGED_THUMBNAILS),
            perceptual=(
                self.perceptual.merge(other.perceptual)
                if self.perceptual is not None
                else other.perceptual
            ),
        )

    def constant_parts(self, columns: dict[str, ColumnStats]) -> ConstantParts | None:
        """The inputs that never change across samples: whole channels, and positions."""
        layout = self.layout
        names = layout.channels
        if self.positions is None:
            const = None
            whole = [columns[n].n_distinct == 1 for n in names]
            values = [
                columns[n].values.most_common(1)[0][0] if ok else math.nan
                for n, ok in zip(names, whole)
            ]
        else:
            const = self.positions.constant.reshape(len(names), -1)
            lo = self.positions.lo.reshape(len(names), -1)
            whole = list(const.all(axis=1) & (lo == lo[:, :1]).all(axis=1))
            values = list(lo[:, 0])
        channels = tuple((n, float(v)) for n, v, ok in zip(names, values, whole) if ok)
        if layout.kind == "features":
            if not channels:
                return None
            return ConstantParts(layout, layout.n_channels, len(channels), channels, "", 0)
        if const is None:
            if not channels:
                return None
            return ConstantParts(layout, None, 0, channels, "", 0)
        n_const = int(const.sum())
        if n_const == 0:
            return None
        other = const & ~np.asarray(whole)[:, None]
        where = _where(other, layout) if other.any() else ""
        return ConstantParts(layout, layout.positions, n_const, channels, where, int(other.sum()))

    def summary(self, columns: dict[str, ColumnStats]) -> dict:
        """A plain dict for the report (JSON and HTML)."""
        layout = self.layout
        const = self.positions.constant if self.positions is not None else None
        chans = []
        for c, name in enumerate(layout.channels):
            col = columns.get(name)
            chans.append(
                {
                    "name": name,
                    "nan_values": int(self.nan_values[c]),
                    "posinf_values": int(self.posinf_values[c]),
                    "neginf_values": int(self.neginf_values[c]),
                    "nan_samples": col.missing if col else None,
                    "inf_samples": col.inf if col else None,
                    "min": col.min if col and col.finite.n else None,
                    "max": col.max if col and col.finite.n else None,
                    "mean": col.mean if col and col.finite.n else None,
                    "std": col.std if col and col.finite.n else None,
                    "constant": bool(col is not None and col.n_distinct == 1),
                }
            )
        constant_map = None
        if const is not None and layout.kind == "image":
            h, w = layout.rest
            per_channel = const.reshape(layout.n_channels, h, w)
            varying = ~np.array([ch["constant"] for ch in chans])
            # Constant channels would paint the whole map white: show the other channels'.
            mask = (per_channel[varying] if varying.any() else per_channel).any(axis=0)
            constant_map = {
                "height": h,
                "width": w,
                "pixels": base64.b64encode(
                    (mask * np.uint8(255)).astype(np.uint8).tobytes()
                ).decode("ascii"),
            }
        shown = list(self.thumbnails)
        shown += [t for t in self.flagged if t.index not in {s.index for s in shown}]
        return {
            "layout": layout.kind,
            "shape": list(layout.shape),
            "dtype": layout.dtype,
            "channel_axis": None if layout.channel_axis is None else layout.channel_axis + 1,
            "channel_reason": layout.reason,
            "positions": layout.positions,
            "constant_positions": None if const is None else int(const.sum()),
            "integral": self.integral,
            "channels": chans,
            "constant_map": constant_map,
            "thumbnails": [t.to_dict() for t in shown],
        }


@dataclass(frozen=True)
class ConstantParts:
    """Constant inputs of a tensor split: what the constant-feature rule summarises."""

    layout: Layout
    positions: int | None  # input positions per sample (None when not tracked)
    constant: int  # positions with one value in every sample (constant channels' included)
    channels: tuple[tuple[str, float], ...]  # whole channels with one value, and the value
    where: str  # where the other constant positions lie
    others: int  # constant positions outside constant channels

    @property
    def columns(self) -> tuple[str, ...]:
        return tuple(n for n, _ in self.channels)


def _join(items: list[str]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def _num(v: float) -> str:
    return str(int(v)) if math.isfinite(v) and v == int(v) and abs(v) < 1e15 else f"{v:.4g}"


def _ranges(idx: Iterable[int]) -> str:
    runs: list[list[int]] = []
    for i in sorted(idx):
        if runs and i == runs[-1][1] + 1:
            runs[-1][1] = i
        else:
            runs.append([i, i])
    text = [f"{a}" if a == b else f"{a}-{b}" for a, b in runs[:6]]
    return ", ".join(text) + (f" (+{len(runs) - 6} more runs)" if len(runs) > 6 else "")


def _where(mask: np.ndarray, layout: Layout) -> str:
    """Where the True positions of ``mask`` (C, P) lie, in words."""
    names = layout.channels
    chans = [names[c] for c in range(mask.shape[0]) if mask[c].any()]
    in_chans = ""
    if layout.n_channels > 1:
        in_chans = f" in {_join(chans)}" if len(chans) <= 4 else f" in {len(chans)} channels"
    if layout.kind == "image":
        h, w = layout.rest
        spatial = mask.reshape(mask.shape[0], h, w).any(axis=0)
        rows, cols = np.nonzero(spatial)
        edge = np.minimum(np.minimum(rows, h - 1 - rows), np.minimum(cols, w - 1 - cols))
        k = int(edge.max()) + 1
        px = "pixel" if k == 1 else "pixels"
        outer = "outer pixel" if k == 1 else f"outer {k} pixels"
        if k <= max(1, min(h, w) // 4):
            r = np.arange(h)[:, None]
            c = np.arange(w)[None, :]
            frame = np.minimum(np.minimum(r, h - 1 - r), np.minimum(c, w - 1 - c)) < k
            if np.array_equal(frame, spatial):
                return f"the border (the {outer} on every side){in_chans}"
            return f"the border (all within {k} {px} of the edge){in_chans}"
        r0, r1, c0, c1 = rows.min(), rows.max(), cols.min(), cols.max()
        if spatial[r0 : r1 + 1, c0 : c1 + 1].all():
            return (
                f"a {r1 - r0 + 1}x{c1 - c0 + 1} block at rows {r0}-{r1}, columns "
                f"{c0}-{c1}{in_chans}"
            )
        shown = ", ".join(f"(row {a}, column {b})" for a, b in zip(rows[:5], cols[:5]))
        return f"e.g. {shown}{in_chans}"
    if layout.kind == "sequence":
        steps = np.flatnonzero(mask.any(axis=0))
        live = mask[[i for i, n in enumerate(names) if n in chans]]
        if live.shape[0] and live[:, steps].all() and len(chans) == mask.shape[0]:
            return f"steps {_ranges(steps)} in every channel (padding?)"
        return f"steps {_ranges(steps)}{in_chans}"
    shape = (mask.shape[0], *layout.rest)
    flat = np.flatnonzero(mask.reshape(-1))[:5]
    coords = [tuple(int(i) for i in np.unravel_index(f, shape)) for f in flat]
    return "e.g. positions " + ", ".join(map(str, coords))


# --- one block -------------------------------------------------------------------------------


@dataclass(frozen=True)
class TensorPlan:
    layout: Layout
    label: str | None = None
    label_mode: str = "none"  # "class" | "onehot" | "none"
    sample_rows: int = DEFAULT_SAMPLE_ROWS
    seed: int = 0


_salt_cache: dict[int, tuple[np.ndarray, np.ndarray]] = {}


def _position_keys(p: int) -> tuple[np.ndarray, np.ndarray]:
    """Per position: a salt added to each value's bits, and an odd multiplier for lane 1."""
    if p not in _salt_cache:
        if len(_salt_cache) > 8:
            _salt_cache.clear()
        pos = np.arange(p, dtype=_U) * _MULT
        _salt_cache[p] = (_splitmix(pos ^ _SEEDS[0]), _splitmix(pos ^ _SEEDS[1]) | _U(1))
    return _salt_cache[p]


def _shape_salt(shape: tuple[int, ...], lane: int) -> np.ndarray:
    acc = np.array([len(shape) + 1], dtype=_U) ^ _SEEDS[lane]
    for s in shape:
        acc = _splitmix(acc * _MULT + np.array([s], dtype=_U))
    return acc


def _splitmix_inplace(z: np.ndarray, tmp: np.ndarray) -> np.ndarray:
    """:func:`datavet.scan.hashing._splitmix`, without temporaries (the arrays are large)."""
    z += _U(0x9E3779B97F4A7C15)
    for shift, mult in ((30, 0xBF58476D1CE4E5B9), (27, 0x94D049BB133111EB)):
        np.right_shift(z, _U(shift), out=tmp)
        z ^= tmp
        z *= _U(mult)
    np.right_shift(z, _U(31), out=tmp)
    z ^= tmp
    return z


def sample_hashes(
    x2: np.ndarray, nan: np.ndarray | None, shape: tuple[int, ...], *, in_place: bool = False
) -> np.ndarray:
    """(n, 2) uint64: a 128-bit hash of each row of ``x2`` (float64, -0.0 already 0.0).

    Each value's float64 bits (every NaN as one token) plus a per-position salt go through
    splitmix; lane 0 is the sum of those words, lane 1 their sum weighted by per-position odd
    multipliers (both mod 2^64), each finished with the shape. Samples that differ at one
    position always differ in lane 0 (splitmix is a bijection); otherwise a collision takes two
    independent 64-bit coincidences. ``in_place`` reuses ``x2``'s memory (it is destroyed)."""
    n, p = x2.shape
    z = np.ascontiguousarray(x2).view(_U)
    if not in_place or not x2.flags.c_contiguous:
        z = z.copy()
    if nan is not None:
        np.putmask(z, nan, _MISSING[0])
    salt, mult = _position_keys(p)
    z += salt
    _splitmix_inplace(z, np.empty_like(z))
    out = np.empty((n, 2), dtype=_U)
    out[:, 0] = _splitmix(z.sum(axis=1, dtype=_U) ^ _shape_salt(shape, 0))
    out[:, 1] = _splitmix((z @ mult) ^ _shape_salt(shape, 1))
    return out


def label_array(y: np.ndarray | None, mode: str) -> pa.Array | None:
    """Labels of a block as one Arrow value per sample (None when not class-like)."""
    if y is None or mode == "none":
        return None
    if y.dtype == np.float16:
        y = y.astype(np.float32)
    if mode == "onehot":
        y2 = y.reshape(len(y), -1)
        ok = ((y2 == 0) | (y2 == 1)).all(axis=1) & (y2.sum(axis=1) == 1)
        return pa.array(y2.argmax(axis=1).astype(np.int64), mask=~ok)
    return pa.array(np.ascontiguousarray(y.reshape(len(y))))


def is_one_hot(y: np.ndarray) -> bool:
    y2 = y.reshape(len(y), -1)
    return bool(((y2 == 0) | (y2 == 1)).all() and (y2.sum(axis=1) == 1).all())


def pooled_names(layout: Layout) -> list[str]:
    """Names of the per-sample features kept for the baselines (see :func:`_pooled`)."""
    names = layout.channels
    if layout.kind == "features":
        d = len(names)
        if d <= MAX_FEATURES:
            return list(names)
        edges = np.linspace(0, d, MAX_FEATURES + 1).astype(int)
        return [f"x{a}-x{b - 1}" for a, b in zip(edges[:-1], edges[1:])]
    if layout.kind == "image" and layout.n_channels <= MAX_POOLED_CHANNELS:
        h, w = layout.rest
        gh, gw = min(h, GRID), min(w, GRID)
        if gh * gw == 1:
            return list(names)
        return [f"{n} cell {i},{j}" for n in names for i in range(gh) for j in range(gw)]
    if layout.kind == "sequence" and layout.n_channels <= 2 * MAX_POOLED_CHANNELS:
        (t,) = layout.rest
        edges = np.linspace(0, t, min(t, GRID) + 1).astype(int)
        if len(edges) == 2:
            return list(names)
        return [f"{n} steps {a}-{b - 1}" for n in names for a, b in zip(edges[:-1], edges[1:])]
    return list(names)


def _pooled(xc: np.ndarray, fin: np.ndarray | None, layout: Layout) -> np.ndarray:
    """(n, k) block means over finite values, in :func:`pooled_names` order (NaN if none)."""
    n, c, p = xc.shape
    z = xc if fin is None else np.where(fin, xc, 0.0)
    # Without NaN/inf the counts are the cells' sizes: pool a single sample of ones.
    ones = np.ones((1, c, p)) if fin is None else fin.astype(np.float64)
    if layout.kind == "features":
        if c <= MAX_FEATURES:
            return xc[:, :, 0]
        edges = np.linspace(0, c, MAX_FEATURES + 1).astype(int)[:-1]
        total = np.add.reduceat(z[:, :, 0], edges, axis=1)
        count = np.add.reduceat(ones[:, :, 0], edges, axis=1)
        count = np.broadcast_to(count, total.shape)
    elif layout.kind == "image" and c <= MAX_POOLED_CHANNELS and len(pooled_names(layout)) > c:
        h, w = layout.rest
        eh = np.linspace(0, h, min(h, GRID) + 1).astype(int)[:-1]
        ew = np.linspace(0, w, min(w, GRID) + 1).astype(int)[:-1]

        def pool(a):
            a = a.reshape(len(a), c, h, w)
            return np.add.reduceat(np.add.reduceat(a, eh, axis=2), ew, axis=3).reshape(len(a), -1)

        total, count = pool(z), pool(ones)
        count = np.broadcast_to(count, total.shape)
    elif layout.kind == "sequence" and len(pooled_names(layout)) > c:
        (t,) = layout.rest
        et = np.linspace(0, t, min(t, GRID) + 1).astype(int)[:-1]
        total = np.add.reduceat(z, et, axis=2).reshape(n, -1)
        count = np.add.reduceat(ones, et, axis=2).reshape(len(ones), -1)
        count = np.broadcast_to(count, total.shape)
    else:
        total, count = z.sum(axis=2), np.broadcast_to(ones.sum(axis=2), (n, c))
    with np.errstate(over="ignore", invalid="ignore"):
        return np.divide(total, count, out=np.full(total.shape, np.nan), where=count > 0)


def _channel_columns(
    xc: np.ndarray,
    masks: tuple[np.ndarray, np.ndarray, np.ndarray] | None,
    offset: int,
    layout: Layout,
) -> dict[str, ColumnStats]:
    n, c, p = xc.shape
    kind = "bool" if layout.dtype == "bool" else "numeric"
    if masks is not None:
        nan, pinf, ninf = masks
        fin = ~(nan | pinf | ninf)
        z = np.where(fin, xc, 0.0)
        count = fin.sum(axis=(0, 2))
        nan_s, pinf_s, ninf_s = nan.any(axis=2), pinf.any(axis=2), ninf.any(axis=2)
        nn_lo = np.where(nan, np.inf, xc).min(axis=(0, 2))
        nn_hi = np.where(nan, -np.inf, xc).max(axis=(0, 2))
        lo = np.where(fin, xc, np.inf).min(axis=(0, 2))
        hi = np.where(fin, xc, -np.inf).max(axis=(0, 2))
    else:
        fin = None
        z = xc
        count = np.full(c, n * p, dtype=np.int64)
        nan_s = None
        lo = nn_lo = xc.min(axis=(0, 2))
        hi = nn_hi = xc.max(axis=(0, 2))
    with np.errstate(over="ignore", invalid="ignore"):
        mean = np.divide(z.sum(axis=(0, 2)), count, out=np.zeros(c), where=count > 0)
        d = z - mean[None, :, None]
        if fin is not None:
            d = np.where(fin, d, 0.0)
        m2 = np.einsum("ijk,ijk->j", d, d)
    out = {}
    for j, name in enumerate(layout.channels):
        st = ColumnStats(name=name, dtype=layout.dtype, kind=kind, rows=n)
        if nan_s is not None:
            st.missing = int(nan_s[:, j].sum())
            st.posinf = int(pinf_s[:, j].sum())
            st.neginf = int((ninf_s[:, j] & ~pinf_s[:, j]).sum())  # a sample counts once
            st.missing_rows = first_positions(nan_s[:, j], offset)
            st.inf_rows = first_positions(pinf_s[:, j] | ninf_s[:, j], offset)
        if count[j]:
            if math.isfinite(mean[j]) and math.isfinite(m2[j]):
                st.finite = Moments(int(count[j]), float(mean[j]), float(m2[j]))
            else:  # the sum overflowed (values near 1e308): the careful path
                vals = xc[:, j, :] if fin is None else xc[:, j, :][fin[:, j, :]]
                st.finite = Moments.of(vals)
            st.min, st.max = float(lo[j]), float(hi[j])
        present = n - st.missing
        if present > 0 and nn_lo[j] == nn_hi[j]:
            # One value in this block: keep it, so merged blocks say whether the channel is
            # constant (F001, F003 and F002 read n_distinct as for a table column).
            st.values = ValueCounter(counts={float(nn_lo[j]): present}, total=present, exact=True)
        else:
            st.values = ValueCounter(total=present, exact=False)
        out[name] = st
    return out


def _feature_columns(x: np.ndarray, xf: np.ndarray, offset: int, layout: Layout) -> dict:
    """(N, D) inputs: each column exactly as a table column would be profiled."""
    n = len(x)
    native = x.dtype.kind in "biu" or x.dtype in (np.float32, np.float64)
    src = (x if native else xf).reshape(n, -1)
    out = {}
    for j, name in enumerate(layout.channels):
        st = ColumnStats.of(name, pa.array(np.ascontiguousarray(src[:, j])), offset)
        st.dtype = layout.dtype
        out[name] = st
    return out


def _thumbnails(
    xc: np.ndarray, rows: Iterable[int], offset: int, layout: Layout, text: list | None
) -> tuple[Thumbnail, ...]:
    shape3 = (layout.n_channels, *layout.rest)
    out = []
    for i in map(int, rows):
        lab = None if text is None or text[i] is None else str(text[i])
        out.append(_thumbnail(xc[i].reshape(shape3), offset + i, lab))
    return tuple(out)


def profile_block(
    x: np.ndarray, y: np.ndarray | None, offset: int, plan: TensorPlan, split: str
) -> Profile:
    """The Profile of one block of samples ``x`` (n, *shape) with labels ``y``."""
    layout = plan.layout
    n = len(x)
    with np.errstate(over="ignore", invalid="ignore"):
        # a copy: never write into a memory map or a tensor's storage; a long double beyond
        # float64's range becomes inf (and is reported as such), a signalling NaN stays a NaN
        xf = x.astype(np.float64)
        xf += 0.0  # -0.0 -> 0.0
    xc = layout.to_channels(xf)
    floating = x.dtype.kind == "f"
    masks = nan = fin = None
    with np.errstate(over="ignore", invalid="ignore"):
        clean = not floating or math.isfinite(float(xf.sum()))  # one pass when all is finite
    if not clean:
        nan, pinf, ninf = np.isnan(xc), np.isposinf(xc), np.isneginf(xc)
        masks = (nan, pinf, ninf)
        fin = ~(nan | pinf | ninf)
        if not nan.any():
            nan = None
    if layout.kind == "features":
        columns = _feature_columns(x, xf, offset, layout)
    else:
        columns = _channel_columns(xc, masks, offset, layout)
    integral = True
    if floating:
        z = xc if fin is None else np.where(fin, xc, 0.0)
        integral = bool(np.array_equal(np.floor(z), z))
        del z
    positions = None
    if layout.positions <= MAX_POSITIONS:
        positions = PositionStats.of(xc.reshape(n, -1), None if nan is None else nan.reshape(n, -1))
    labels = label_array(y, plan.label_mode)
    thumbs: tuple[Thumbnail, ...] = ()
    flagged: tuple[Thumbnail, ...] = ()
    if layout.kind == "image":
        text = labels.to_pylist() if labels is not None else None
        thumbs = _thumbnails(xc, range(min(n, THUMBNAILS)), offset, layout, text)
        if fin is not None:
            bad = np.flatnonzero(~fin.all(axis=(1, 2)))[:FLAGGED_THUMBNAILS]
            flagged = _thumbnails(xc, bad, offset, layout, text)
    zeros = np.zeros(layout.n_channels, dtype=np.int64)
    tensor = TensorStats(
        layout=layout,
        nan_values=masks[0].sum(axis=(0, 2)) if masks is not None else zeros,
        posinf_values=masks[1].sum(axis=(0, 2)) if masks is not None else zeros.copy(),
        neginf_values=masks[2].sum(axis=(0, 2)) if masks is not None else zeros.copy(),
        integral=integral,
        positions=positions,
        thumbnails=thumbs,
        flagged=flagged,
        perceptual=PerceptualHashes.of(xc, layout.rest, offset) if layout.kind == "image" else None,
    )
    label_stats = None
    label_hashes = np.zeros(n, dtype=_U)
    if labels is not None:
        label_stats = LabelStats.of(plan.label, labels, offset)
        label_hashes = hash_values(labels)
    names = pooled_names(layout)
    feats = np.ascontiguousarray(_pooled(xc, fin, layout).T)
    arrays = [pa.array(feats[j]) for j in range(len(names))]
    if labels is not None:
        arrays.append(labels)
        names = [*names, plan.label]
    batch = pa.RecordBatch.from_arrays(arrays, names=names)
    del xc, fin, masks
    # Last, as it overwrites xf: hashes of whole samples in stored order.
    x2 = xf.reshape(n, -1)
    hashes = sample_hashes(x2, None if nan is None else np.isnan(x2), layout.shape, in_place=True)
    if tensor.perceptual is not None:
        tensor.perceptual.with_exact(hashes, offset)
    return Profile(
        split=split,
        rows=n,
        columns=columns,
        label=label_stats,
        hashes=RowHashes.of(offset, hashes, label_hashes),
        sample=Reservoir.of(batch, offset, plan.sample_rows, plan.seed),
        tensor=tensor,
    )


# --- a whole split, and both -----------------------------------------------------------------


def fold(profiles: Iterable[Profile]) -> Profile | None:
    """Merge in order, pairing equal-sized runs first (a binary counter), so each row of the
    baselines' sample is copied O(log blocks) times rather than once per block."""
    stack: list[tuple[int, Profile]] = []
    for p in profiles:
        level = 0
        while stack and stack[-1][0] == level:
            _, q = stack.pop()
            p = q.merge(p)
            level += 1
        stack.append((level, p))
    if not stack:
        return None
    out = stack[0][1]
    for _, p in stack[1:]:
        out = out.merge(p)
    return out


def _sample_budget(layout: Layout, sample_rows: int) -> int:
    k = len(pooled_names(layout))
    return max(1, min(sample_rows, max(1000, SAMPLE_VALUES // max(1, k))))


def default_workers() -> int:
    return max(1, min(MAX_WORKERS, os.cpu_count() or 1))


def scan_source(
    source,
    plan: TensorPlan,
    split: str,
    *,
    batch_rows: int,
    workers: int | None = None,
    max_samples: int | None = None,
) -> tuple[Profile, str]:
    """Profile every block of a tensor source; returns (profile, label mode used).

    Blocks are read in order on this thread and profiled on ``workers`` threads (NumPy
    releases the GIL); the block size shrinks as workers are added, so the memory held by
    blocks in flight stays about ``IN_FLIGHT_VALUES`` values whatever the number of cores."""
    workers = workers or default_workers()
    block_values = max(MIN_BLOCK_VALUES, IN_FLIGHT_VALUES // workers)
    mode = plan.label_mode
    notes = source.notes

    def tasks() -> Iterator[tuple]:
        nonlocal mode, plan
        for offset, x, y in source.blocks(block_values, batch_rows):
            if len(x) == 0:
                continue
            if max_samples is not None and offset + len(x) > max_samples:
                x, y = (
                    x[: max(0, max_samples - offset)],
                    None if y is None else y[: max_samples - offset],
                )
                _capped(source, split, max_samples, notes)
                if len(x) == 0:
                    return
            if tuple(x.shape[1:]) != plan.layout.shape:
                raise InputError(
                    source.name,
                    f"samples from {offset:,} on have shape {tuple(x.shape[1:])}, earlier ones "
                    f"{plan.layout.shape}",
                )
            if mode == "decide":
                mode = _label_mode(y, source, split, notes)
                plan = TensorPlan(plan.layout, plan.label, mode, plan.sample_rows, plan.seed)
            if workers > 1 and x.base is not None:
                # Read a view (of a memory map, a tensor) now, on this thread: the source gives
                # its pages back when the next block is asked for, before a worker would read.
                x = np.array(x)
            yield x, y, offset, plan, split

    if workers == 1:
        profile = fold(profile_block(*task) for task in tasks())
    else:
        with ThreadPoolExecutor(workers, thread_name_prefix="datavet-tensors") as pool:

            def results() -> Iterator[Profile]:
                pending: deque = deque()
                try:
                    for task in tasks():
                        pending.append(pool.submit(profile_block, *task))
                        if len(pending) >= workers:
                            yield pending.popleft().result()
                    while pending:
                        yield pending.popleft().result()
                finally:
                    for f in pending:
                        f.cancel()

            profile = fold(results())
    profile = profile or Profile(split=split)
    profile.source = source.name
    profile.format = source.format
    return profile, mode


def _capped(source, split: str, max_samples: int, notes: list[str]) -> None:
    note = (
        f"{split}: capped: only the first {max_samples:,} samples of {source.name} were read "
        "(a Dataset or DataLoader is read up to max_samples, default "
        f"{DEFAULT_MAX_SAMPLES:,}; pass max_samples= to read more)"
    )
    if note not in notes:
        notes.append(note)


def _label_mode(y: np.ndarray | None, source, split: str, notes: list[str]) -> str:
    if y is None:
        return "none"
    shape = tuple(y.shape[1:])
    if shape in ((), (1,)):
        return "class"
    if len(shape) == 1 and is_one_hot(y):
        notes.append(
            f"{split}: labels are one-hot rows of {shape[0]} values: the class is the index of "
            "the 1 (a row that is not one-hot counts as a missing label)"
        )
        return "onehot"
    notes.append(
        f"{split}: labels have shape {shape} per sample (not class indices or one-hot rows): "
        "label rules skipped"
    )
    return "none"


@dataclass
class TensorRun:
    """What api.audit needs from the tensor path."""

    profiles: dict[str, Profile]
    target: str | None
    target_note: str | None
    features: list[str]  # the baselines' features (pooled, in the sample table)
    columns: dict[str, tuple[tuple[str, str, str], ...]]  # S004's view: split -> columns
    notes: list[str] = field(default_factory=list)


def profile_tensors(
    train,
    test=None,
    *,
    sample_rows: int = DEFAULT_SAMPLE_ROWS,
    batch_rows: int = 65_536,
    workers: int | None = None,
    max_samples: int | None = None,
) -> TensorRun:
    """Profile tensor splits (TensorSources) into Profiles the auditors read like tables.

    ``max_samples``: read at most this many samples of each split; by default a torch Dataset
    or DataLoader (which may never end) is read up to ``DEFAULT_MAX_SAMPLES`` and arrays whole.
    A capped split says so in the notes."""
    from datavet.sources.arrays import TensorSource

    def cap(src) -> int | None:
        if max_samples is not None:
            return max_samples
        return DEFAULT_MAX_SAMPLES if src.format in ("dataset", "dataloader") else None

    for role, src in (("train", train), ("test", test)):
        if src is not None and not isinstance(src, TensorSource):
            raise UsageError(
                f"train and test must both be tensors or both be tables; {role} is a table "
                f"({src.name})"
            )
    info = train.info()
    for src in (train, test):
        shape = None if src is None else (info if src is train else src.info()).sample_shape
        if shape is not None and 0 in shape:
            raise InputError(
                src.name,
                f"samples of shape ({', '.join(map(str, shape))}) hold no values (an axis of "
                "length 0); nothing to audit",
            )
    layout = resolve_layout(info.sample_shape, info.dtype_name, train.channel_axis)
    label = train.label if info.label_shape is not None else None
    plan = TensorPlan(layout, label, "decide", _sample_budget(layout, sample_rows))
    profiles = {}
    train_profile, mode = scan_source(
        train, plan, "train", batch_rows=batch_rows, workers=workers, max_samples=cap(train)
    )
    profiles["train"] = train_profile
    if mode == "none":
        label = None
    splits = [("train", train, layout)]
    if test is not None:
        tinfo = test.info()
        if tinfo.sample_shape == layout.shape:
            tlayout = Layout(
                layout.shape, tinfo.dtype_name, layout.channel_axis, layout.kind, layout.reason
            )
        else:
            tlayout = resolve_layout(tinfo.sample_shape, tinfo.dtype_name, test.channel_axis)
        tlabel = label if tinfo.label_shape is not None and label is not None else None
        tplan = TensorPlan(
            tlayout, tlabel, "decide" if tlabel else "none", _sample_budget(tlayout, sample_rows)
        )
        profiles["test"], _ = scan_source(
            test, tplan, "test", batch_rows=batch_rows, workers=workers, max_samples=cap(test)
        )
        splits.append(("test", test, tlayout))
    notes = []
    columns = {}
    for split, src, lay in splits:
        p = profiles[split]
        notes.append(f"{split}: {p.rows:,} samples, {lay.describe()}, {lay.dtype} ({lay.reason})")
        notes.extend(n for n in src.notes if n not in notes)
        shape = "x".join(map(str, lay.shape)) or "1"
        cols = [(n, lay.dtype, "bool" if lay.dtype == "bool" else "numeric") for n in lay.channels]
        cols.append(("sample shape", shape, f"shape {shape}"))
        if p.label is not None:
            cols.append((p.label.name, p.label.dtype, p.label.kind))
        columns[split] = tuple(cols)
    features = pooled_names(layout)
    if label is not None and features != list(layout.channels):
        notes.append(
            f"baselines on tensors use {len(features):,} pooled features per sample "
            f"(block means: {features[0]!r}, ...)"
        )
    return TensorRun(profiles, label, None, features, columns, notes)


def tensor_summary(profile: Profile) -> dict | None:
    t = getattr(profile, "tensor", None)
    return None if t is None else t.summary(profile.columns)
