from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from datavet.auditors.base import AuditContext, Auditor, Skip
from datavet.findings import Severity

MIN_ROWS = 30  # fewer rows in a split: no test of its distribution means much
MAX_LEVELS = 20  # a numeric column with at most this many distinct values is compared by level
HIST_BINS = 20


@dataclass(frozen=True)
class Drift:
    column: str
    test: str  # "ks" | "chi2"
    effect: float  # KS D, or Cramer's V
    p_value: float
    sampled: bool  # computed from the reservoir samples, not every row

    def text(self) -> str:
        what = "KS D" if self.test == "ks" else "Cramer's V"
        return f"{self.column!r} ({what} = {self.effect:.2f}, p = {self.p_value:.2g})"


def drift_features(ctx: AuditContext) -> list[str]:
    """The features both splits hold, leaving out the target, keys (ID-like and group columns)
    and the time column: those differ between splits by design. Tensor inputs are skipped:
    their per-channel statistics are no features to compare row by row."""
    if ctx.train.tensor is not None or (ctx.test is not None and ctx.test.tensor is not None):
        raise Skip("tensor inputs: train/test drift is measured on tables only")
    skip = {ctx.target, ctx.time, *ctx.key_columns}
    return [
        name
        for name, stats in ctx.train.columns.items()
        if name not in skip
        and name in ctx.test.columns
        and stats.kind in ("numeric", "bool", "string")
        and ctx.test.columns[name].kind == stats.kind
    ]


def _finite(profile, column: str) -> np.ndarray:
    from datavet.scan.columns import as_float

    table = profile.sample.table
    if table is None or column not in table.column_names:
        return np.zeros(0)
    x = as_float(table.column(column).combine_chunks())
    return x[np.isfinite(x)]


def _levels(a, b) -> tuple[np.ndarray, np.ndarray] | None:
    """Counts per level of two exact value counters, rare levels pooled (expected >= 5)."""
    if not (a.exact and b.exact) or not a.total or not b.total:
        return None
    levels = sorted(set(a.counts) | set(b.counts), key=lambda v: (type(v).__name__, str(v)))
    ca = np.array([a.counts.get(v, 0) for v in levels], float)
    cb = np.array([b.counts.get(v, 0) for v in levels], float)
    n = ca.sum() + cb.sum()
    rare = (ca + cb) * min(ca.sum(), cb.sum()) / n < 5  # expected count in the smaller split
    if rare.any():
        ca = np.r_[ca[~rare], ca[rare].sum()]
        cb = np.r_[cb[~rare], cb[rare].sum()]
    keep = (ca + cb) > 0
    return ca[keep], cb[keep]


def compare(ctx: AuditContext, column: str, min_effect: float = 0.0) -> Drift | None:
    """The two-sample comparison of one feature between train and test, or None when there is
    too little to compare. A KS D below ``min_effect`` comes without its p-value (NaN): no
    p-value makes it drift, and the exact one costs a pass over n1 + n2 diagonals."""
    from datavet._stats import chi2_contingency, ks_2samp, ks_statistic  # SciPy's, no SciPy

    a, b = ctx.train.columns[column], ctx.test.columns[column]
    levels = None
    few = (
        a.values.exact
        and b.values.exact
        and len(set(a.values.counts) | set(b.values.counts)) <= MAX_LEVELS
    )
    if a.kind != "numeric" or few:
        levels = _levels(a.values, b.values)
    if levels is not None:
        ca, cb = levels
        if len(ca) < 2 or min(ca.sum(), cb.sum()) < MIN_ROWS:
            return None
        chi2, p, _, _ = chi2_contingency(np.stack([ca, cb]), correction=False)
        v = math.sqrt(chi2 / (ca.sum() + cb.sum()))
        return Drift(column, "chi2", v, float(p), sampled=False)
    if a.kind != "numeric":
        return None  # more distinct values than the counters hold: no exact counts to compare
    x, y = _finite(ctx.train, column), _finite(ctx.test, column)
    if min(len(x), len(y)) < MIN_ROWS:
        return None
    sampled = ctx.train.sample.is_sample or ctx.test.sample.is_sample
    if min_effect > 0 and (d := ks_statistic(x, y)) < min_effect:
        return Drift(column, "ks", d, math.nan, sampled=sampled)
    # warn=False: a tiny D on equal sizes gets the asymptotic p, as from SciPy, without a
    # RuntimeWarning for the user (the rules may run on threads: no catch_warnings)
    res = ks_2samp(x, y, warn=False)
    return Drift(column, "ks", float(res.statistic), float(res.pvalue), sampled=sampled)


def histograms(ctx_train, ctx_test, column: str) -> dict | None:
    """Train and test histograms of one feature on shared bins, for the report's charts:
    numeric columns from the samples, others from the value counts (top levels)."""
    a, b = ctx_train.columns.get(column), ctx_test.columns.get(column)
    if a is None or b is None:
        return None
    if a.kind == "numeric" and not (a.values.exact and len(a.values.counts) <= MAX_LEVELS):
        x, y = _finite(ctx_train, column), _finite(ctx_test, column)
        if not len(x) or not len(y):
            return None
        lo, hi = float(min(x.min(), y.min())), float(max(x.max(), y.max()))
        if lo == hi:
            hi = lo + 1.0
        edges = np.linspace(lo, hi, HIST_BINS + 1)
        return {
            "column": column,
            "kind": "numeric",
            "edges": edges.tolist(),
            "train": np.histogram(x, edges)[0].tolist(),
            "test": np.histogram(y, edges)[0].tolist(),
        }
    levels = [v for v, _ in (a.values.merge(b.values)).most_common(HIST_BINS)]
    return {
        "column": column,
        "kind": "levels",
        "levels": [str(v) for v in levels],
        "train": [a.values.counts.get(v, 0) for v in levels],
        "test": [b.values.counts.get(v, 0) for v in levels],
    }


class FeatureDrift(Auditor):
    """A feature's distribution differs between train and test.

    **What it checks**
    Every feature both splits hold (the target, ID-like, group and time columns left out) is
    compared between train and test. Numeric features: the two-sample Kolmogorov-Smirnov test
    on the row samples the scan keeps (every row up to 50,000 per split; the message says when
    they are samples), with the KS statistic D (the largest gap between the two cumulative
    distributions, 0 to 1) as the effect size. Text, boolean and numeric features with at most
    20 distinct values: a chi-square test on the exact value counts of every row, with
    Cramer's V as the effect size (rare levels pooled; text with more distinct values than
    the counts keep exactly, 1,024, is not compared). A feature drifts when its effect
    reaches ``min_effect`` (0.1) and its p-value, Bonferroni-corrected for the number of
    features compared, is below ``alpha`` (0.001): a large test split with negligible
    differences stays quiet, and so does a small one with a chance difference. The finding
    names the drifted features, largest effect first.

    **Why it matters**
    A test score promises performance on data like the test split. When a feature's
    distribution moves between train and test, the model is evaluated where it was not
    trained: the split was made by time, site or source rather than at random, a preprocessing
    step differs between the two files, or the units changed.

    **How to fix**
    If the split should be random, split again at random (stratified by label). If the drift
    is real (a later period, a new site), keep it but know what it means: look at the drifted
    features, check their preprocessing and units, and expect the test score to reflect the
    shift; consider re-weighting or training on data like the test split.
    """

    code = "S010"
    name = "feature-drift"
    severity = Severity.WARNING
    summary = "a feature's distribution differs between train and test"
    thresholds = {"alpha": 0.001, "min_effect": 0.1}
    needs = ("test",)
    sections = ("drift",)

    def check(self, ctx: AuditContext):
        columns = drift_features(ctx)
        if not columns:
            raise Skip("no feature of a comparable kind in both splits")
        if min(ctx.train.rows, ctx.test.rows) < MIN_ROWS:
            raise Skip(f"fewer than {MIN_ROWS} rows in a split")
        gate = self.options["min_effect"]
        results = [d for c in columns if (d := compare(ctx, c, gate)) is not None]
        if not results:
            raise Skip("no feature with enough values in both splits to compare")
        m = len(results)
        drifted = sorted(
            (
                d
                for d in results
                if d.effect >= self.options["min_effect"]
                and min(1.0, d.p_value * m) < self.options["alpha"]
            ),
            key=lambda d: (-d.effect, d.column),
        )
        if not drifted:
            return
        listed = ", ".join(d.text() for d in drifted[:5])
        more = f" (+{len(drifted) - 5} more)" if len(drifted) > 5 else ""
        sampled = [d for d in drifted if d.sampled]
        note = (
            f" Numeric features compared on uniform samples of {len(ctx.train.sample.keys):,} "
            f"train and {len(ctx.test.sample.keys):,} test rows."
            if sampled
            else ""
        )
        word = "feature" if m == 1 else "features"
        yield self.finding(
            f"{len(drifted)} of {m} {word} differ between train and test, largest effect "
            f"first: {listed}{more}.{note}",
            split="test",
            columns=tuple(d.column for d in drifted),
            n_affected=len(drifted),
            metrics={
                "max_effect": drifted[0].effect,
                "min_p_value": min(d.p_value for d in drifted),
                "features_compared": m,
                **{f"effect:{d.column}": d.effect for d in drifted[:20]},
            },
            hint="split at random if that was meant; else check the drifted features' "
            "preprocessing and units",
        )
