"""Perceptual hashes of images: near-duplicate samples that exact hashes miss.

Each image is averaged over its channels and shrunk to a ``SIDE`` x ``SIDE`` thumbnail by block
means, then standardised (zero mean, unit standard deviation). The thumbnail, quantised to int8,
is kept to confirm a match; its 8 x 8 block means, compared with their mean, give a 64-bit key.
Block means average pixel noise away (JPEG re-encoding, a little blur, rounding to uint8), and
the standardisation removes brightness and contrast changes, so a re-encoded copy of an image
gets (nearly) the same key and a thumbnail that correlates at ~0.99+ with the original's.

Matching (:func:`near_pairs`) finds candidates whose keys agree on one of four 16-bit bands,
confirms them by the Hamming distance of the keys and the correlation of the thumbnails, and
leaves out thumbnails that are identical (exact copies: S001's). Flat images (no structure to
compare) get no hash. The store is mergeable (concatenation, capped at ``MAX_SAMPLES`` per split
by row order) and costs 8 + SIDE * SIDE bytes per image.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

SIDE = 16
KEY_SIDE = 8
MAX_SAMPLES = 200_000  # images hashed per split (the first ones, by row)
BANDS = 4
MAX_CANDIDATES = 32  # per image and band: a band shared by thousands is background, not content
_BITS = np.left_shift(np.uint64(1), np.arange(64, dtype=np.uint64))


@dataclass(slots=True)
class PerceptualHashes:
    rows: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    keys: np.ndarray = field(default_factory=lambda: np.zeros(0, np.uint64))
    thumbs: np.ndarray = field(default_factory=lambda: np.zeros((0, SIDE * SIDE), np.int8))
    seen: int = 0  # images offered, hashed or not (flat, non-finite, beyond the cap)
    exact: np.ndarray | None = None  # the exact sample hash (lane 0) of each hashed image

    @classmethod
    def of(cls, xc: np.ndarray, rest: tuple[int, ...], offset: int) -> PerceptualHashes | None:
        """From a block of images ``xc`` (n, C, H * W) float64 with ``rest == (H, W)``; None for
        samples that are not 2-D images at least SIDE pixels on a side."""
        if len(rest) != 2 or min(rest) < SIDE:
            return None
        n = len(xc)
        h, w = rest
        with np.errstate(over="ignore", invalid="ignore"):
            gray = xc.mean(axis=1).reshape(n, h, w)
            ok = np.isfinite(gray).all(axis=(1, 2))
            gray = np.where(np.isfinite(gray), gray, 0.0)
            top = np.abs(gray).max(axis=(1, 2), keepdims=True)
            gray = gray / np.where(top > 0, top, 1.0)  # block sums cannot overflow
            thumb = _shrink(_shrink(gray, SIDE, axis=1), SIDE, axis=2)
            mean = thumb.mean(axis=(1, 2), keepdims=True)
            std = thumb.std(axis=(1, 2), keepdims=True)
        ok &= (std[:, 0, 0] > 1e-3) & np.isfinite(std[:, 0, 0])
        if not ok.any():
            return cls(seen=n)
        z = (thumb[ok] - mean[ok]) / std[ok]
        small = z.reshape(len(z), KEY_SIDE, SIDE // KEY_SIDE, KEY_SIDE, SIDE // KEY_SIDE)
        small = small.mean(axis=(2, 4)).reshape(len(z), -1)
        bits = small > small.mean(axis=1, keepdims=True)
        keys = np.bitwise_or.reduce(np.where(bits, _BITS, np.uint64(0)), axis=1).astype(np.uint64)
        thumbs = np.clip(np.rint(z.reshape(len(z), -1) * 32), -127, 127).astype(np.int8)
        rows = offset + np.flatnonzero(ok).astype(np.int64)
        return cls(rows, keys, thumbs, n).capped()

    def capped(self) -> PerceptualHashes:
        if len(self.rows) <= MAX_SAMPLES:
            return self
        keep = np.argsort(self.rows, kind="stable")[:MAX_SAMPLES]
        keep.sort()
        exact = None if self.exact is None else self.exact[keep]
        return PerceptualHashes(
            self.rows[keep], self.keys[keep], self.thumbs[keep], self.seen, exact
        )

    def with_exact(self, hashes: np.ndarray, offset: int) -> PerceptualHashes:
        """Attach the block's exact sample hashes ((n, 2) uint64, row ``offset`` first), so that
        exact copies (S001's) are told apart from near ones."""
        self.exact = np.asarray(hashes)[self.rows - offset, 0].astype(np.uint64)
        return self

    def merge(self, other: PerceptualHashes | None) -> PerceptualHashes:
        if other is None:
            return self
        exact = None
        if self.exact is not None and other.exact is not None:
            exact = np.concatenate([self.exact, other.exact])
        return PerceptualHashes(
            np.concatenate([self.rows, other.rows]),
            np.concatenate([self.keys, other.keys]),
            np.concatenate([self.thumbs, other.thumbs]),
            self.seen + other.seen,
            exact,
        ).capped()

    @property
    def hashed(self) -> int:
        return len(self.rows)


def _shrink(x: np.ndarray, size: int, axis: int) -> np.ndarray:
    """Mean over ``size`` nearly equal bins along ``axis`` (area resampling)."""
    n = x.shape[axis]
    edges = (np.arange(size) * n) // size
    sums = np.add.reduceat(x, edges, axis=axis)
    counts = np.diff(np.append(edges, n)).astype(float)
    shape = [1] * x.ndim
    shape[axis] = size
    return sums / counts.reshape(shape)


def _popcount(x: np.ndarray) -> np.ndarray:
    x = x.astype(np.uint64)
    x = x - ((x >> np.uint64(1)) & np.uint64(0x5555555555555555))
    x = (x & np.uint64(0x3333333333333333)) + ((x >> np.uint64(2)) & np.uint64(0x3333333333333333))
    x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return ((x * np.uint64(0x0101010101010101)) >> np.uint64(56)).astype(np.int64)


def _detail(thumbs: np.ndarray) -> np.ndarray:
    """The thumbnails minus their 3 x 3 box blur: edges and texture, not the layout."""
    t = thumbs.reshape(len(thumbs), SIDE, SIDE).astype(np.float64)
    b = t.copy()
    for axis in (1, 2):
        b = (b + np.roll(b, 1, axis) + np.roll(b, -1, axis)) / 3
    return (t - b).reshape(len(t), -1)


def _corr(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a = a - a.mean(axis=1, keepdims=True)
    b = b - b.mean(axis=1, keepdims=True)
    num = (a * b).sum(axis=1)
    den = np.sqrt((a * a).sum(axis=1) * (b * b).sum(axis=1))
    return np.divide(num, den, out=np.zeros_like(num), where=den > 0)


def near_pairs(
    base: PerceptualHashes,
    query: PerceptualHashes,
    *,
    max_bits: int = 6,
    min_corr: float = 0.99,
    min_detail: float = 0.9,
) -> list[tuple[int, int, float]]:
    """``(query row, base row, correlation)`` for each query image with a near copy in
    ``base``: keys within ``max_bits`` of 64, thumbnails correlated at ``min_corr`` or more and
    their details (thumbnail minus its blur) at ``min_detail`` or more (look-alikes of one
    class share the layout, not the texture), leaving out exact copies (equal exact hashes;
    without them, identical thumbnails). The best match per query image."""
    if not base.hashed or not query.hashed:
        return []
    qi_all, bi_all = [], []
    for band in range(BANDS):
        shift = np.uint64(16 * band)
        bk = ((base.keys >> shift) & np.uint64(0xFFFF)).astype(np.int64)
        qk = ((query.keys >> shift) & np.uint64(0xFFFF)).astype(np.int64)
        order = np.argsort(bk, kind="stable")
        sorted_keys = bk[order]
        lo = np.searchsorted(sorted_keys, qk, side="left")
        hi = np.searchsorted(sorted_keys, qk, side="right")
        hi = np.minimum(hi, lo + MAX_CANDIDATES)
        count = hi - lo
        if not count.any():
            continue
        qi = np.repeat(np.arange(len(qk)), count)
        starts = np.repeat(lo, count)
        within = np.arange(len(qi)) - np.repeat(np.cumsum(count) - count, count)
        qi_all.append(qi)
        bi_all.append(order[starts + within])
    if not qi_all:
        return []
    pairs = np.unique(np.stack([np.concatenate(qi_all), np.concatenate(bi_all)], axis=1), axis=0)
    qi, bi = pairs[:, 0], pairs[:, 1]
    close = _popcount(query.keys[qi] ^ base.keys[bi]) <= max_bits
    qi, bi = qi[close], bi[close]
    if not len(qi):
        return []
    corr = _corr(query.thumbs[qi].astype(np.float64), base.thumbs[bi].astype(np.float64))
    detail = _corr(_detail(query.thumbs[qi]), _detail(base.thumbs[bi]))
    if query.exact is not None and base.exact is not None:
        same = query.exact[qi] == base.exact[bi]
    else:
        same = (query.thumbs[qi] == base.thumbs[bi]).all(axis=1)
    good = (corr >= min_corr) & (detail >= min_detail) & ~same
    best: dict[int, tuple[int, float]] = {}
    for q, b_, c in zip(qi[good].tolist(), bi[good].tolist(), corr[good].tolist()):
        if q not in best or c > best[q][1]:
            best[q] = (b_, c)
    return sorted((int(query.rows[q]), int(base.rows[b_]), float(c)) for q, (b_, c) in best.items())
