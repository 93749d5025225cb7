"""One block of tensor samples -> its Profile (:func:`profile_block`), and the in-order merge of
a split's block profiles (:func:`fold`). Pure functions of arrays: the engine reads the blocks
and decides where they are profiled (:mod:`datavet.engines.tensors`)."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from datavet.scan.columns import ColumnStats, first_positions
from datavet.scan.counters import ValueCounter
from datavet.scan.hashing import _MISSING, _MULT, _SEEDS, RowHashes, _splitmix, hash_values
from datavet.scan.labels import LabelStats
from datavet.scan.moments import Moments
from datavet.scan.perceptual import PerceptualHashes
from datavet.scan.profile import Profile
from datavet.scan.reservoir import DEFAULT_SAMPLE_ROWS, Reservoir
from datavet.scan.tensor_layout import MAX_FEATURE_COLUMNS, Layout
from datavet.scan.tensor_values import SENTINELS, RawSample, raw_rows, sentinel_counts
from datavet.scan.tensors import (
    FLAGGED_THUMBNAILS,
    THUMBNAILS,
    PositionStats,
    TensorStats,
    Thumbnail,
    _thumbnail,
)

_U = np.uint64
MAX_POSITIONS = 1 << 21  # per-position statistics up to this many values per sample
SAMPLE_VALUES = 2_500_000  # pooled feature values kept for the baselines (20 MB of float64)
GRID = 8  # pooled features: an image channel becomes GRID x GRID block means
MAX_POOLED_CHANNELS = 16
MAX_FEATURES = 256  # (N, D) inputs wider than this are pooled into this many group means
NARROW = 64  # (N, D) inputs up to this wide count sentinel values column by column


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
        if y2.dtype.kind not in "biuf":  # text rows (a test split unlike train): no class
            return pa.nulls(len(y), pa.int64())
        ok = ((y2 == 0) | (y2 == 1)).all(axis=1) & (y2.sum(axis=1) == 1)
        return pa.array(y2.argmax(axis=1).astype(np.int64), mask=~ok)
    return pa.array(np.ascontiguousarray(y.reshape(len(y))))


def without_labels(profile: Profile) -> Profile:
    """``profile`` as if its samples had come without labels (labels found to be no classes
    once the whole split was read): no label statistics, label hashes or label column, and
    thumbnails without captions."""
    name = profile.label.name if profile.label is not None else None
    profile.label = None
    profile.hashes.chunks = [
        (first, rows, np.zeros(len(labels), dtype=_U), *rest)
        for first, rows, labels, *rest in profile.hashes.chunks
    ]
    table = profile.sample.table
    if table is not None and name in table.column_names:
        profile.sample.table = table.drop_columns([name])
    if profile.tensor is not None:
        tensor = profile.tensor
        tensor.thumbnails = tuple(dataclasses.replace(t, label=None) for t in tensor.thumbnails)
        tensor.flagged = tuple(dataclasses.replace(t, label=None) for t in tensor.flagged)
    return profile


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


@dataclass(slots=True)
class ChannelStats(ColumnStats):
    """One channel of tensor inputs, its NaN and inf counted in samples: ``posinf`` and
    ``neginf`` are the samples holding each sign there, and a sample holding both counts in
    both, so ``inf`` (the samples holding either) leaves out the ``both`` counted twice."""

    both: int = 0  # samples holding +inf and -inf in this channel

    @property
    def inf(self) -> int:
        return self.posinf + self.neginf - self.both

    def merge(self, other: ColumnStats) -> ChannelStats:
        merged = ColumnStats.merge(self, other)
        out = ChannelStats(**{f.name: getattr(merged, f.name) for f in _COLUMN_FIELDS})
        out.both = self.both + getattr(other, "both", 0)
        return out


_COLUMN_FIELDS = dataclasses.fields(ColumnStats)


def _channel_columns(
    xc: np.ndarray,
    masks: tuple[np.ndarray, np.ndarray, np.ndarray] | None,
    offset: int,
    layout: Layout,
) -> dict[str, ChannelStats]:
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
        st = ChannelStats(name=name, dtype=layout.dtype, kind=kind, rows=n)
        if nan_s is not None:
            st.missing = int(nan_s[:, j].sum())
            st.posinf = int(pinf_s[:, j].sum())
            st.neginf = int(ninf_s[:, j].sum())
            st.both = int((pinf_s[:, j] & ninf_s[:, j]).sum())
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


def _feature_columns(
    x: np.ndarray, xf: np.ndarray, offset: int, layout: Layout
) -> tuple[dict, np.ndarray]:
    """(N, D) inputs: each column exactly as a table column would be profiled, and each
    column's exact counts of the sentinel-shaped values (free when the column's value counts
    are exact, else one pass over the column's whole numbers)."""
    n = len(x)
    native = x.dtype.kind in "biu" or x.dtype in (np.float32, np.float64)
    src = (x if native else xf).reshape(n, -1)
    out = {}
    xf2 = xf.reshape(n, -1)
    whole = any_whole = None
    if xf2.shape[1] > NARROW:  # short columns: one pass over the block, not one call a column
        with np.errstate(invalid="ignore"):
            whole = xf2 == np.rint(xf2)  # sentinel values are whole numbers; measures seldom
        any_whole = whole.any(axis=0)
    sentinels = np.zeros((xf2.shape[1], len(SENTINELS)), dtype=np.int64)
    for j, name in enumerate(layout.channels):
        col = np.ascontiguousarray(src[:, j])
        st = ColumnStats.of(name, pa.array(col), offset)
        st.dtype = layout.dtype
        out[name] = st
        if st.values.exact:
            sentinels[j] = sentinel_counts(col, st.values.counts)
        elif whole is None:
            sentinels[j] = sentinel_counts(col)
        elif any_whole[j]:
            sentinels[j] = sentinel_counts(xf2[whole[:, j], j])
    return out, sentinels


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
    sentinels = raw = None
    if layout.kind == "features":
        columns, sentinels = _feature_columns(x, xf, offset, layout)
        if MAX_FEATURES < layout.n_channels <= MAX_FEATURE_COLUMNS:
            # the baselines' sample holds group means: keep some raw rows for V007
            raw = RawSample.of(xf.reshape(n, -1), offset, raw_rows(layout.n_channels))
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
        sentinels=sentinels,
        raw=raw,
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


def sample_budget(layout: Layout, sample_rows: int) -> int:
    k = len(pooled_names(layout))
    return max(1, min(sample_rows, max(1000, SAMPLE_VALUES // max(1, k))))
