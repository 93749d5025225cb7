from __future__ import annotations

import math
import statistics

from datavet.auditors.base import AuditContext, Auditor, Skip, fmt
from datavet.findings import Severity


class ScaleMismatch(Auditor):
    """Numeric features whose scales differ by a factor of 100 or more.

    **What it checks**
    The train split's numeric features (booleans and 0/1 indicator columns, constant and
    all-missing columns, and ID-like or ``--group`` columns excluded). Near-constant columns,
    where one value covers at least ``near_constant`` (99%) of the non-missing rows, are left
    out too: their root mean square is small because they hardly vary (99.9% zeros), not
    because their unit differs, and F002 already reports them.
    A feature's scale is the root mean square of its finite values, ``sqrt(mean^2 + std^2)``:
    the size of the numbers the network is fed, offset included. It fires when the largest and
    smallest scales differ by ``min_ratio`` (100x) or more, and names the outliers: the features
    at least ``outlier_ratio`` (10x) away from the median scale.

    **Why it matters**
    Un-normalised inputs make the first layer's outputs dominated by the large feature, push the
    initial loss away from its expected value, and leave no single learning rate that suits
    every direction: the big feature's weights oscillate while the small ones barely move.

    **How to fix**
    Standardise every feature (subtract the train mean, divide by the train std), or use a
    log transform for positive quantities that span orders of magnitude.
    """

    code = "F003"
    name = "scale-mismatch"
    severity = Severity.WARNING
    summary = "numeric features' scales differ >= 100x (names the outliers)"
    thresholds = {"min_ratio": 100.0, "outlier_ratio": 10.0, "near_constant": 0.99}
    column_cell = "std"

    def check(self, ctx: AuditContext):
        scales = {}
        for col in ctx.train.columns.values():
            if col.kind != "numeric" or col.finite.n < 2 or col.n_distinct == 1:
                continue
            if col.name in ctx.key_columns:  # an ID's "scale" means nothing
                continue
            if col.n_distinct == 2 and col.min == 0 and col.max == 1:
                continue  # a 0/1 indicator: its scale is fixed by construction, as a boolean's
            top = max(col.values.counts.values(), default=0)  # not most_common: no sort
            if top >= self.options["near_constant"] * col.present:
                continue  # nearly constant: a small RMS from hardly varying, not a unit (F002)
            scale = math.hypot(col.mean, col.std)  # no overflow for |x| > 1e154
            if scale > 0 and math.isfinite(scale):
                scales[col.name] = scale
        if len(scales) < 2:
            raise Skip(f"{len(scales)} varying numeric feature(s); need 2 to compare scales")
        lo_name = min(scales, key=scales.get)
        hi_name = max(scales, key=scales.get)
        ratio = scales[hi_name] / scales[lo_name]
        if ratio < self.options["min_ratio"]:
            return
        # The median on a log scale: with an even count it is the geometric mean of the middle
        # pair, so two features at 1 and 1000 are both 32x from it, not 1x and 500x.
        median = math.exp(statistics.median(math.log(v) for v in scales.values()))
        far = self.options["outlier_ratio"]
        # (a hair of tolerance: scales of exactly 10x the median must not hinge on rounding)
        edge = 1 - 1e-9
        outliers = [
            n for n, s in scales.items() if s >= far * median * edge or s * far * edge <= median
        ]
        if not outliers:  # two clusters, no clear majority: name both ends
            outliers = [hi_name, lo_name]
        outliers.sort(key=lambda n: -abs(math.log(scales[n] / median)))
        described = ", ".join(
            f"{n!r} ({fmt(scales[n])}, {_times(scales[n] / median)} the median)" for n in outliers
        )
        yield self.finding(
            f"Feature scales in train differ {_factor(scales[hi_name], scales[lo_name])}x (from "
            f"{lo_name!r} at "
            f"{fmt(scales[lo_name])} to {hi_name!r} at {fmt(scales[hi_name])}); median scale "
            f"{fmt(median)}. Out of line: {described}.",
            split="train",
            columns=tuple(outliers),
            n_affected=len(outliers),
            metrics={
                "ratio": ratio,
                "median_scale": median,
                **{f"scale[{n}]": scales[n] for n in outliers},
            },
            hint="standardise features with train mean and std (or log-transform wide "
            "positive quantities)",
        )


def _factor(hi: float, lo: float) -> str:
    """``hi / lo``, also past float64's range (scales near 1e300 and 1e-300)."""
    ratio = hi / lo
    if math.isfinite(ratio):
        return fmt(ratio)
    return f"about 1e{math.log10(hi) - math.log10(lo):.0f}"


def _times(r: float) -> str:
    return f"{fmt(r)}x" if r >= 1 else f"1/{fmt(1 / r)}"
