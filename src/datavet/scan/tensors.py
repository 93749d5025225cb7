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

This module holds what a tensor split adds (:class:`TensorStats`: per-position statistics,
thumbnails, constant parts); :mod:`datavet.scan.tensor_layout` reads the sample shape and
:mod:`datavet.scan.tensor_block` profiles one block of samples. The pass over a split (reading
blocks, on several threads) is the engine's: :mod:`datavet.engines.tensors`.
"""

from __future__ import annotations

import base64
import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from datavet.scan.perceptual import PerceptualHashes
from datavet.scan.tensor_layout import MAX_CHANNELS, MAX_FEATURE_COLUMNS, Layout, resolve_layout
from datavet.scan.tensor_values import RawSample

THUMBNAILS = 6  # the first samples shown in the report
FLAGGED_THUMBNAILS = 2  # and the first samples holding NaN or inf
THUMB_SIZE = 32  # thumbnails are at most this many pixels on a side


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
    # (N, F) features only (scan/tensor_values.py): per feature, exact counts of SENTINELS
    sentinels: np.ndarray | None = None  # int64 (F, len(SENTINELS))
    raw: RawSample | None = None  # raw rows, when the baselines' sample holds group means

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
            sentinels=(
                self.sentinels + other.sentinels
                if self.sentinels is not None and other.sentinels is not None
                else None
            ),
            raw=(
                self.raw.merge(other.raw)
                if self.raw is not None and other.raw is not None
                else None
            ),
        )

    def constant_parts(self, columns: dict) -> ConstantParts | None:
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

    def summary(self, columns: dict) -> dict:
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


def tensor_summary(profile) -> dict | None:
    """The tensor part of a split's summary (None for a table); ``columns`` and ``profile``
    are the split's ColumnStats and Profile (not imported here: they import this module)."""
    t = getattr(profile, "tensor", None)
    return None if t is None else t.summary(profile.columns)


__all__ = [
    "MAX_CHANNELS",
    "MAX_FEATURE_COLUMNS",
    "ConstantParts",
    "Layout",
    "PositionStats",
    "TensorStats",
    "Thumbnail",
    "resolve_layout",
    "tensor_summary",
]
