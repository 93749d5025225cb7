from __future__ import annotations

from datavet.auditors.base import AuditContext, Auditor, Skip, pct
from datavet.findings import Severity
from datavet.framework import COUNT, UNIT
from datavet.scan.perceptual import MAX_SAMPLES, SIDE, near_pairs


class NearDuplicateTensors(Auditor):
    """Test images with a near copy in train: re-encoded, resized or brightened duplicates.

    **What it checks**
    Image tensors (``(N, C, H, W)`` or ``(N, H, W)``, at least 16 pixels on a side) with a test
    split. Every image is averaged over its channels, shrunk to a 16 x 16 thumbnail by block
    means and standardised (so brightness and contrast changes drop out; block means average
    JPEG noise away); its 8 x 8 block means above their mean give a 64-bit key. A test image
    matches a train image when their keys differ in at most ``max_bits`` (6) of 64 bits, their
    thumbnails correlate at ``min_corr`` (0.99) or more, and so do their details (thumbnail
    minus its 3 x 3 blur: texture and edges) at ``min_detail`` (0.9) or more: images of one
    class that share a layout (a bright square in the same corner, a centred digit) correlate
    up to ~0.98 but differ in detail. Exact copies are left to S001.
    Flat images (no structure) are not compared; at most 200,000 images per split are hashed
    (the first ones). It fires when at least ``min_matches`` (1) test image matches.

    **Why it matters**
    A photo saved twice (once as PNG, once as JPEG), resized, or with its brightness changed is
    the same example to a network, but not to an exact hash: S001 sees nothing. With such
    copies on both sides of the split, the test score measures memory, not generalisation, and
    it will drop in production. Scraped and merged image datasets are full of them.

    **How to fix**
    Deduplicate before splitting: hash every image perceptually (the same idea: a small
    grey-scale thumbnail), group near copies, and put each group in one split. Look at the
    listed pairs first: burst photos or video frames may be legitimately close, and then the
    split should go by source (``--group``), not by image.
    """

    code = "T002"
    name = "near-duplicate-tensors"
    severity = Severity.WARNING
    summary = "test images that are near copies of train images (re-encoded, resized, brightened)"
    thresholds = {"max_bits": 6, "min_corr": 0.99, "min_detail": 0.9, "min_matches": 1}
    ranges = {
        "max_bits": (0.0, 64.0, "[]", True),  # of a 64-bit key
        "min_corr": UNIT,
        "min_detail": UNIT,
        "min_matches": COUNT,
    }
    needs = ("test",)

    def check(self, ctx: AuditContext):
        if ctx.test is None:
            raise Skip("no test split given")
        a = ctx.train.tensor.perceptual if ctx.train.tensor is not None else None
        b = ctx.test.tensor.perceptual if ctx.test.tensor is not None else None
        if a is None or b is None:
            raise Skip(f"applies to image tensors at least {SIDE} pixels on a side, in both splits")
        o = self.options
        pairs = near_pairs(
            a,
            b,
            max_bits=int(o["max_bits"]),
            min_corr=float(o["min_corr"]),
            min_detail=float(o["min_detail"]),
        )
        if len(pairs) < o["min_matches"]:
            return
        listed = ", ".join(f"test {q} ~ train {t} (r={c:.3f})" for q, t, c in pairs[:5])
        more = f" (+{len(pairs) - 5} more)" if len(pairs) > 5 else ""
        capped = ""
        if a.seen > MAX_SAMPLES or b.seen > MAX_SAMPLES:
            capped = f" (the first {MAX_SAMPLES:,} images of each split were compared)"
        yield self.finding(
            f"{len(pairs):,} test images ({pct(len(pairs), ctx.test.rows)}) are near copies of "
            f"train images that are not byte-identical (re-encoded, resized or brightened): "
            f"{listed}{more}{capped}. The test score counts them as new images.",
            split="test",
            n_affected=len(pairs),
            examples=tuple(q for q, _, _ in pairs[:20]),
            metrics={
                "matches": len(pairs),
                "share": len(pairs) / max(ctx.test.rows, 1),
                "min_corr": min(c for _, _, c in pairs),
            },
            hint="deduplicate perceptually before splitting, or split by source (--group)",
        )
