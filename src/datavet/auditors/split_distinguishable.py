from __future__ import annotations

import math

import numpy as np

from datavet.auditors.base import AuditContext, Auditor, Skip
from datavet.auditors.feature_drift import MIN_ROWS, drift_features
from datavet.findings import Severity

MAX_ROWS = 5_000  # rows per split the classifier sees (a uniform subset of the sample)
MAX_CATEGORIES = 20  # text features with at most this many values are one-hot encoded
FOLDS = 5


def _to_pandas(table):
    """``table.to_pandas()``; text that is not valid UTF-8 (a damaged file) is decoded with
    replacement characters instead of failing the rule."""
    import pandas as pd
    import pyarrow as pa

    columns = {}
    for name, col in zip(table.column_names, table.columns):
        if pa.types.is_string(col.type) or pa.types.is_large_string(col.type):
            try:
                col.validate(full=True)
            except pa.ArrowInvalid:
                raw = col.cast(pa.large_binary()).to_pylist()
                columns[name] = pd.Series(
                    [None if v is None else v.decode("utf-8", "replace") for v in raw],
                    dtype=object,
                )
                continue
        columns[name] = col.to_pandas()
    return pd.DataFrame(columns)


def _design(ctx: AuditContext, columns: list[str], rows: int):
    """The feature matrix of ``rows`` train rows then ``rows`` test rows (from the samples),
    and the original column of each matrix column."""
    import pandas as pd

    parts = []
    for profile in (ctx.train, ctx.test):
        table = profile.sample.table.select(columns)
        n = table.num_rows
        pick = (
            np.sort(np.random.default_rng(0).choice(n, rows, replace=False)) if n > rows else None
        )
        frame = _to_pandas(table if pick is None else table.take(pick))
        parts.append(frame.reset_index(drop=True))
    both = pd.concat(parts, ignore_index=True)
    blocks, owners = [], []
    for c in columns:
        kind = ctx.train.columns[c].kind
        if kind in ("numeric", "bool"):
            x = np.array(pd.to_numeric(both[c], errors="coerce"), dtype=float)
            x[~np.isfinite(x)] = np.nan
            if np.isnan(x).all():
                continue
            missing = np.isnan(x)
            x[missing] = np.nanmedian(x)
            with np.errstate(over="ignore", invalid="ignore"):
                sd = x.std()
            if not np.isfinite(sd) or sd == 0:  # constant, or values near 1e308 (overflow)
                continue
            blocks.append(((x - x.mean()) / sd)[:, None])
            owners.append(c)
            if missing.any() and not missing.all():
                blocks.append(missing[:, None].astype(float))
                owners.append(c)
        else:
            stats = ctx.train.columns[c]
            if stats.n_distinct is None or stats.n_distinct > MAX_CATEGORIES:
                continue
            dummies = pd.get_dummies(both[c].astype("object"), dummy_na=True, dtype=float)
            dummies = dummies.loc[:, dummies.std() > 0]
            if dummies.shape[1]:
                blocks.append(dummies.to_numpy())
                owners.extend([c] * dummies.shape[1])
    if not blocks:
        return None, []
    return np.hstack(blocks), owners


def auc_p_value(auc: float, n1: int, n2: int) -> float:
    """One-sided p-value of an AUC above 0.5 (Mann-Whitney U, normal approximation)."""
    from datavet._stats import norm

    se = math.sqrt((n1 + n2 + 1) / (12.0 * n1 * n2))
    return float(norm.sf((auc - 0.5) / se))


class SplitDistinguishable(Auditor):
    """A classifier tells train rows from test rows (adversarial validation).

    **What it checks**
    A logistic regression is trained to tell whether a row comes from train or test, on an
    equal number of rows of each (at most 5,000 per split, drawn from the row samples the scan
    keeps), over the features both splits hold: numbers standardised (missing values as the
    median plus a missing flag), text with at most 20 values one-hot encoded; the target,
    ID-like, group and time columns left out. Its 5-fold cross-validated ROC AUC is 0.5 when
    the splits are alike. It fires when the AUC reaches ``min_auc`` (0.6) and its p-value
    (Mann-Whitney) is below ``alpha`` (0.00001: cross-validated AUCs of small splits vary
    more than the test assumes, so the bar is high), and names the features with the largest
    standardised coefficients: the ones that carry the difference.

    **Why it matters**
    A model is evaluated on test rows on the promise that they come from the distribution it
    was trained on. When a simple model can tell the splits apart, they do not: rows were
    split by time or by source, or the two files were prepared differently. Feature-by-feature
    tests (S010) can miss a shift that only shows in a combination of features; this check
    sees those too.

    **How to fix**
    Look at the features it names. If the split should be random, split again at random. If
    the difference is real, evaluate knowing that the test score measures performance under
    that shift, and consider training on data like the test split.
    """

    code = "S011"
    name = "split-distinguishable"
    severity = Severity.WARNING
    summary = "a classifier tells train rows from test rows (adversarial validation)"
    thresholds = {"alpha": 1e-5, "min_auc": 0.6}
    needs = ("test",)

    def check(self, ctx: AuditContext):
        columns = drift_features(ctx)
        if not columns:
            raise Skip("no feature of a comparable kind in both splits")
        sample_train, sample_test = ctx.train.sample.table, ctx.test.sample.table
        if sample_train is None or sample_test is None:
            raise Skip("no row samples")
        rows = min(sample_train.num_rows, sample_test.num_rows, MAX_ROWS)
        if rows < MIN_ROWS:
            raise Skip(f"fewer than {MIN_ROWS} rows in a split")
        x, owners = _design(ctx, columns, rows)
        if x is None:
            raise Skip("no feature the classifier can use")
        # scikit-learn's LogisticRegression(C=1.0) and StratifiedKFold(shuffle, seed 0), in
        # NumPy (datavet.linear): no scikit-learn import
        from datavet.auditors.single_feature_leakage import _auc
        from datavet.linear import Logistic, StratifiedKFold

        y = np.r_[np.zeros(rows), np.ones(rows)]
        scores = np.empty(len(y))
        for fit_idx, eval_idx in StratifiedKFold(FOLDS, 0).split(x, y):
            fold = Logistic(C=1.0, max_iter=1000).fit(x[fit_idx], y[fit_idx])
            scores[eval_idx] = fold.decision_function(x[eval_idx])
        auc = float(_auc(scores, y == 1))
        p = auc_p_value(auc, rows, rows)
        if auc < self.options["min_auc"] or p >= self.options["alpha"]:
            return
        coef = np.abs(Logistic(C=1.0, max_iter=1000).fit(x, y).coef_[0])
        weight: dict[str, float] = {}
        for c, w in zip(owners, coef, strict=True):
            weight[c] = weight.get(c, 0.0) + float(w)
        ranked = sorted(weight.items(), key=lambda kv: (-kv[1], kv[0]))
        top = ranked[0][1]
        carrying = [(c, w) for c, w in ranked if w >= 0.25 * top][:5]
        names = ", ".join(f"{c!r} ({w:.2f})" for c, w in carrying)
        sampled = (
            ctx.train.sample.is_sample
            or ctx.test.sample.is_sample
            or rows < min(ctx.train.rows, ctx.test.rows)
        )
        how = f"{rows:,} rows of each split" + (" (a uniform sample)" if sampled else "")
        yield self.finding(
            f"A logistic regression tells test rows from train rows: cross-validated AUC "
            f"{auc:.3f} (0.5 = indistinguishable; p = {p:.2g}; {how}). The features that carry "
            f"it (|standardised coefficient|): {names}.",
            split="test",
            columns=tuple(c for c, _ in carrying),
            metrics={"auc": auc, "p_value": p, "rows_per_split": rows},
            hint="split at random if that was meant; else look at the named features",
        )
