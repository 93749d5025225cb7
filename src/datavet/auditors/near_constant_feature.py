from __future__ import annotations

from datavet.auditors.base import (
    AuditContext,
    Auditor,
    ColumnItem,
    Skip,
    as_stored,
    grouped,
    pct,
)
from datavet.findings import Severity


class NearConstantFeature(Auditor):
    """One value covers nearly all rows of a feature in train.

    **What it checks**
    Every feature column of the train split that is not constant: the share of its non-missing
    rows taken by the most frequent value. It fires at ``min_fraction`` (99%) or more. Counts are
    exact up to 1,024 distinct values; beyond that a Misra-Gries sketch bounds the error at 0.1%.
    Several such columns are one finding that lists them (the first five in the message, every
    one in ``columns``; ``n_affected`` is then the number of columns).
    A train split with fewer than ``min_rows`` rows is not judged.

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
    column_cell = "distinct"
    per_column = ("train",)

    def check(self, ctx: AuditContext):
        train = ctx.train
        if train.rows < self.options["min_rows"]:
            raise Skip(f"train has {train.rows} row(s)")
        hint = (
            "check whether the dominant value is a stand-in for missing data; "
            "else drop it or make it an indicator"
        )
        items, messages = [], {}
        for col in train.columns.values():
            if col.present == 0 or col.n_distinct == 1:
                continue
            top_count = max(col.values.counts.values(), default=0)  # cheap; sort only hits
            if top_count < self.options["min_fraction"] * col.present:
                continue
            top = col.values.most_common(1)
            if not top:
                continue
            value, count = top[0]
            value = as_stored(value, col.dtype)
            share = count / col.present
            if share < self.options["min_fraction"]:
                continue
            approx = "" if col.values.exact else "at least "
            messages[col.name] = (
                f"Column {col.name!r} is nearly constant in train: {value!r} covers {approx}"
                f"{pct(count, col.present)} of its {col.present:,} non-missing values."
            )
            items.append(
                ColumnItem(
                    col.name,
                    f"{value!r} {approx}{pct(count, col.present)}",
                    col.present - count,
                    metrics={"top_fraction": share, "distinct": col.n_distinct or -1},
                )
            )
        yield from grouped(
            self,
            items,
            single=lambda it: self.finding(
                messages[it.column],
                split="train",
                columns=(it.column,),
                n_affected=it.n_affected,
                metrics=dict(it.metrics),
                hint=hint,
            ),
            headline="are nearly constant in train",
            split="train",
            hint=hint,
            count="columns",
        )
