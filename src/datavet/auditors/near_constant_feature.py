from __future__ import annotations

from datavet.auditors.base import AuditContext, Auditor, Skip, pct
from datavet.findings import Severity


class NearConstantFeature(Auditor):
    """One value covers nearly all rows of a feature in train.

    **What it checks**
    Every feature column of the train split that is not constant: the share of its non-missing
    rows taken by the most frequent value. It fires at ``min_fraction`` (99%) or more. Counts are
    exact up to 1,024 distinct values; beyond that a Misra-Gries sketch bounds the error at 0.1%.

    **Why it matters**
    A feature that is almost always the same value gives the model a handful of rows to learn
    from; after a split, some folds see it constant. Often it is a default value filled in for
    missing data (0, -1, 9999).

    **How to fix**
    Check whether the dominant value means "missing"; if so treat it as missing. Otherwise
    consider dropping the column or turning it into a binary "is rare value" indicator.
    """

    code = "F002"
    name = "near-constant-feature"
    severity = Severity.INFO
    summary = "one value covers >= 99% of train rows"
    thresholds = {"min_fraction": 0.99, "min_rows": 2}

    def check(self, ctx: AuditContext):
        train = ctx.train
        if train.rows < self.options["min_rows"]:
            raise Skip(f"train has {train.rows} row(s)")
        for col in train.columns.values():
            if col.present == 0 or col.n_distinct == 1:
                continue
            top = col.values.most_common(1)
            if not top:
                continue
            value, count = top[0]
            share = count / col.present
            if share < self.options["min_fraction"]:
                continue
            approx = "" if col.values.exact else "at least "
            yield self.finding(
                f"Column {col.name!r} is nearly constant in train: {value!r} covers {approx}"
                f"{pct(count, col.present)} of its {col.present:,} non-missing values.",
                split="train",
                columns=(col.name,),
                n_affected=col.present - count,
                metrics={"top_fraction": share, "distinct": col.n_distinct or -1},
                hint="check whether the dominant value is a stand-in for missing data; "
                "else drop it or make it an indicator",
            )
