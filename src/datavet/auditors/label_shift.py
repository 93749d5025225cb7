from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from datavet.auditors.base import AuditContext, Auditor, Skip, fmt, plural
from datavet.auditors.sentinel_values import _numbers
from datavet.findings import Severity
from datavet.framework import POSITIVE


class LabelShift(Auditor):
    """The train and test label distributions differ.

    **What it checks**
    Classification: the total variation distance between the train and test class frequencies
    (half the sum of absolute differences: the share of rows that would have to change class),
    with a chi-square test of homogeneity. Regression: the standardised difference of the means
    (Cohen's d) with Welch's t-test; and, because one corrupt value (99999 among values near
    100) inflates the standard deviation until no mean shift shows, also a robust comparison on
    the row samples (up to 50,000 rows per split): the difference of the medians over the
    pooled robust standard deviation (1.4826 x the median absolute deviation) with Yuen's
    t-test on 20%-trimmed means. The effect size comes first: it fires only when the effect
    reaches ``min_tvd`` (0.1) or ``min_d`` (0.2) and the p-value is below ``alpha`` (0.001), so a
    large test set with a negligible shift stays quiet. When only the robust comparison sees
    the shift, the finding names the target values more than ``extreme_z`` (10) robust standard
    deviations from their split's median that hid it, with their rows.

    **Why it matters**
    A model's test score is only a promise about data like the test set. When the label mix
    moves between train and test, calibrated probabilities are off, thresholds tuned on one do
    not fit the other, and accuracy reflects the new class mix more than the model. It often
    means the split was made by time or source rather than at random.

    **How to fix**
    If the split should be random, stratify it by label. If the shift is real (a later period),
    keep it, but report per-class metrics and recalibrate on data like the test set.
    """

    code = "L004"
    name = "label-shift"
    severity = Severity.WARNING
    summary = "train and test label distributions differ"
    thresholds = {"alpha": 0.001, "min_tvd": 0.1, "min_d": 0.2, "extreme_z": 10.0}
    ranges = {"extreme_z": POSITIVE}
    needs = ("target", "test")

    def check(self, ctx: AuditContext):
        train, test = ctx.train.label, ctx.test.label
        if test is None or test.present == 0:
            raise Skip("the test split has no labels")
        if ctx.task == "classification":
            yield from self._classes(train, test)
        else:
            yield from self._means(ctx, train, test)

    def _classes(self, train, test):
        from datavet._stats import chi2_contingency

        if not (train.values.exact and test.values.exact):
            raise Skip("more than 1,024 classes; class counts are not exact")
        classes = sorted(set(train.values.keys()) | set(test.values.keys()), key=str)
        a = np.array([train.values.counts.get(c, 0) for c in classes], float)
        b = np.array([test.values.counts.get(c, 0) for c in classes], float)
        pa_, pb = a / a.sum(), b / b.sum()
        tvd = 0.5 * float(np.abs(pa_ - pb).sum())
        table = np.stack([a, b])
        table = table[:, table.sum(axis=0) > 0]
        p = float(chi2_contingency(table, correction=False)[1]) if table.shape[1] > 1 else 1.0
        if tvd < self.options["min_tvd"] or p >= self.options["alpha"]:
            return
        order = np.argsort(-np.abs(pa_ - pb))[:3]
        moved = ", ".join(
            f"{classes[i]!r} {100 * pa_[i]:.1f}% -> {100 * pb[i]:.1f}%" for i in order
        )
        yield self.finding(
            f"Label distribution differs between train and test: total variation distance "
            f"{tvd:.3f} (p = {p:.2g}); largest moves: {moved}.",
            split="test",
            columns=(test.name,),
            n_affected=test.present,
            metrics={"tvd": tvd, "p_value": p},
            hint="stratify the split by label, or report per-class metrics and recalibrate",
        )

    def _means(self, ctx, train, test):
        try:
            found = list(self._moments(train, test))
        except Skip as why:
            found, unavailable = [], why
        else:
            unavailable = None
        if found:
            yield from found
            return
        robust = _robust(ctx.train, test.name), _robust(ctx.test, test.name)
        if robust[0] is None or robust[1] is None:
            if unavailable is not None:
                raise unavailable
            return
        try:
            with np.errstate(over="ignore", invalid="ignore"):
                found = list(self._medians(*robust, test))
        except OverflowError:
            raise Skip("target values too large for float64 moments (overflow)") from None
        yield from found

    def _moments(self, train, test):
        with np.errstate(over="ignore", invalid="ignore"):
            a, b = _moments(train), _moments(test)
        if a is None or b is None:
            raise Skip("target moments unavailable (non-finite or non-numeric target)")
        (n1, m1, v1), (n2, m2, v2) = a, b
        if n1 < 2 or n2 < 2:
            raise Skip("too few labelled rows")
        try:
            with np.errstate(over="raise"):
                found = list(self._compare(n1, m1, v1, n2, m2, v2, test))
        except (OverflowError, FloatingPointError):
            raise Skip("target values too large for float64 moments (overflow)") from None
        yield from found

    def _compare(self, n1, m1, v1, n2, m2, v2, test):
        from datavet._stats import t as student_t

        if not all(math.isfinite(x) for x in (m1, v1, m2, v2)):
            raise OverflowError
        pooled = math.sqrt(((n1 - 1) * v1 + (n2 - 1) * v2) / (n1 + n2 - 2)) if n1 + n2 > 2 else 0
        # Means and variances come from merged per-bin moments: a constant target can differ
        # in its last bits between splits. A difference at that scale (a few thousand ulps of
        # the mean) is rounding, not a shift; anything larger is left to d and p, which weigh
        # it against the spread (a target near 1e9 with std 1 shifting by 0.5 is a shift).
        tiny = 1e-12 * max(abs(m1), abs(m2), 1e-300)
        if abs(m2 - m1) <= tiny:
            return
        if pooled <= tiny:
            pooled = 0.0
        # Both targets constant at different values: the largest shift there is.
        d = (m2 - m1) / pooled if pooled > 0 else math.copysign(math.inf, m2 - m1)
        se = math.sqrt(v1 / n1 + v2 / n2)
        t = (m2 - m1) / se if se > 0 else math.inf
        df = (
            (v1 / n1 + v2 / n2) ** 2
            / ((v1 / n1) ** 2 / max(n1 - 1, 1) + (v2 / n2) ** 2 / max(n2 - 1, 1))
            if se > 0
            else 1.0
        )
        p = float(2 * student_t.sf(abs(t), df))
        if abs(d) < self.options["min_d"] or p >= self.options["alpha"]:
            return
        yield self.finding(
            f"Target {test.name!r} shifts between train and test: mean {fmt(m1)} -> {fmt(m2)}"
            f"{_by(m1, m2)} (Cohen's d = {d:.2f}, Welch p = {p:.2g}).",
            split="test",
            columns=(test.name,),
            n_affected=test.present,
            metrics={"cohens_d": d, "p_value": p, "train_mean": m1, "test_mean": m2},
            hint="split at random if that was meant; else evaluate on data like the test set",
        )

    def _medians(self, a: _Sample, b: _Sample, test):
        """The robust comparison, for a shift the means hide."""
        from datavet._stats import t as student_t

        n1, n2 = len(a.x), len(b.x)
        # d, t and p do not depend on the unit: computed on values divided by a power of two
        # near their spread (exact), as squares of targets near 1e300 overflow
        unit = math.frexp(max(a.scale, b.scale, abs(a.median), abs(b.median)))[1]
        xa, xb = np.ldexp(a.x, -unit), np.ldexp(b.x, -unit)
        (ma, sa), (mb, sb) = (
            (math.ldexp(s.median, -unit), math.ldexp(s.scale, -unit)) for s in (a, b)
        )
        pooled = math.sqrt(((n1 - 1) * sa**2 + (n2 - 1) * sb**2) / (n1 + n2 - 2))
        if not pooled > 0 or ma == mb:
            return
        d = (mb - ma) / pooled
        (t1, v1, h1), (t2, v2, h2) = _trimmed(xa), _trimmed(xb)
        if not (v1 + v2 > 0 and math.isfinite(v1 + v2)):
            return
        t = (t2 - t1) / math.sqrt(v1 + v2)
        df = (v1 + v2) ** 2 / (v1**2 / (h1 - 1) + v2**2 / (h2 - 1))
        p = float(2 * student_t.sf(abs(t), df))
        if abs(d) < self.options["min_d"] or p >= self.options["alpha"]:
            return
        extreme = [
            (z, v, split, row)
            for s, x, m, sc, split in ((a, xa, ma, sa, "train"), (b, xb, mb, sb, "test"))
            for v, z, row in zip(s.x, np.abs(x - m) / sc, s.rows, strict=True)
            if z > self.options["extreme_z"]
        ]
        extreme.sort(key=lambda e: -e[0])
        named = ", ".join(
            f"{fmt(v)} ({split} row {row})" if row >= 0 else f"{fmt(v)} ({split})"
            for _, v, split, row in extreme[:3]
        )
        hidden = (
            f" The means ({fmt(float(a.x.mean()))} -> {fmt(float(b.x.mean()))}) hide it, "
            f"swayed by {plural(len(extreme), 'value')} over {fmt(self.options['extreme_z'])} "
            f"robust standard deviations from its split's median: {named}"
            f"{' and more' if len(extreme) > 3 else ''}; check those values."
            if extreme
            else ""
        )
        sampled = " (on row samples)" if a.sampled or b.sampled else ""
        yield self.finding(
            f"Target {test.name!r} shifts between train and test: median {fmt(a.median)} -> "
            f"{fmt(b.median)}{_by(a.median, b.median)} (robust d = {d:.2f} from medians and "
            f"MADs, Yuen's trimmed-mean p = {p:.2g}){sampled}.{hidden}",
            split="test",
            columns=(test.name,),
            n_affected=test.present,
            metrics={
                "robust_d": d,
                "p_value": p,
                "train_median": a.median,
                "test_median": b.median,
                "extreme_values": len(extreme),
            },
            hint="check the extreme target values; split at random if that was meant",
        )


def _by(before: float, after: float) -> str:
    """The shift itself, when the two values print alike (a target near 1e9 moving by 0.6)."""
    if fmt(before) != fmt(after):
        return ""
    diff = after - before
    return f" ({'+' if diff > 0 else '-'}{fmt(abs(diff))})"


@dataclass(frozen=True)
class _Sample:
    """A split's finite target values from its row sample, with their rows, median and robust
    standard deviation."""

    x: np.ndarray
    rows: np.ndarray
    median: float
    scale: float
    sampled: bool


def _robust(profile, name: str) -> _Sample | None:
    table = profile.sample.table
    if table is None or name not in table.column_names:
        return None
    x, rows = _numbers(table.column(name), profile.sample.positions)
    if len(x) < 5:
        return None
    with np.errstate(over="ignore", invalid="ignore"):  # targets near the float64 limit
        median = float(np.median(x))
        scale = 1.4826 * float(np.median(np.abs(x - median)))
    if not (math.isfinite(median) and math.isfinite(scale)):
        return None
    return _Sample(x, rows, median, scale, profile.sample.is_sample)


def _trimmed(x: np.ndarray, trim: float = 0.2) -> tuple[float, float, int]:
    """Yuen's (trimmed mean, squared standard error, values kept) of ``x``."""
    x = np.sort(x)
    n = len(x)
    g = int(trim * n)
    h = n - 2 * g
    w = np.clip(x, x[g], x[n - g - 1])  # winsorised
    return float(x[g : n - g].mean()), float((n - 1) * w.var(ddof=1) / (h * (h - 1))), h


def _moments(label) -> tuple[int, float, float] | None:
    """(n, mean, variance with ddof=1) of a numeric target, from its position bins."""
    bins = label.positions
    if bins.mean is None:
        return None
    n = bins.n.astype(float)
    total = n.sum()
    if total == 0:
        return None
    mean = float((n * bins.mean).sum() / total)
    m2 = float(bins.m2.sum() + (n * (bins.mean - mean) ** 2).sum())
    return int(total), mean, m2 / (total - 1) if total > 1 else 0.0
