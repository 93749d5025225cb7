from __future__ import annotations

from datavet.auditors.base import AuditContext, Auditor, Skip
from datavet.findings import Severity


class ConstantFeature(Auditor):
    """A feature with a single distinct non-missing value in train.

    **What it checks**
    Every feature column of the train split: exactly one distinct value among its non-missing
    rows (for numbers, min == max, with infinities counted as values). Columns that are entirely
    missing are left to V001.

    **Why it matters**
    A constant column carries no information. Standardising it divides by a zero standard
    deviation (NaN), and its presence often means a broken join or a sensor that was unplugged.

    **How to fix**
    Drop the column, or find out why it stopped varying.
    """

    code = "F001"
    name = "constant-feature"
    severity = Severity.WARNING
    summary = "one distinct non-null value in train"
    thresholds = {"min_rows": 2}

    def check(self, ctx: AuditContext):
        train = ctx.train
        if train.rows < self.options["min_rows"]:
            raise Skip(f"train has {train.rows} row(s); a column of one row is always constant")
        for col in train.columns.values():
            if col.present == 0 or col.n_distinct != 1:
                continue
            ((value, _),) = col.values.most_common(1)
            missing = f" ({col.missing:,} missing)" if col.missing else ""
            yield self.finding(
                f"Column {col.name!r} is constant in train: all {col.present:,} non-missing "
                f"values are {value!r}{missing}.",
                split="train",
                columns=(col.name,),
                n_affected=col.present,
                metrics={"distinct": 1},
                hint="drop the column (it carries no information; standardising it divides by 0)",
            )
