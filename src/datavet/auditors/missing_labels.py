from __future__ import annotations

from datavet.auditors.base import AuditContext, Auditor, pct, rows_text
from datavet.findings import Severity


class MissingLabels(Auditor):
    """The target is NaN, None or null.

    **What it checks**
    The target column of every split that has it: rows whose label is missing, counted exactly,
    with the first row positions.

    **Why it matters**
    A NaN target makes the loss NaN on the first batch that holds it. Libraries that drop missing
    values silently (``value_counts``, many loaders) also make class ratios and metrics wrong
    without saying so.

    **How to fix**
    Find why the label is missing (a failed join, an unlabelled batch mixed in); drop those rows
    from training and evaluation or label them.
    """

    code = "V003"
    name = "missing-labels"
    severity = Severity.ERROR
    summary = "target is NaN / None"
    needs = ("target",)

    def check(self, ctx: AuditContext):
        for profile in ctx.splits:
            label = profile.label
            if label is None or not label.missing:
                continue
            rows = rows_text(label.missing_rows, label.missing)
            yield self.finding(
                f"Target {label.name!r} is missing in {label.missing:,} rows of {profile.split} "
                f"({pct(label.missing, label.rows)}): {rows}.",
                split=profile.split,
                columns=(label.name,),
                n_affected=label.missing,
                examples=label.missing_rows,
                metrics={"count": label.missing, "fraction": label.missing / label.rows},
                hint="drop or label these rows; find the join or export step that lost the labels",
            )
