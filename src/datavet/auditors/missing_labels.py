from __future__ import annotations

from datavet.auditors.base import AuditContext, Auditor, pct, plural, rows_text
from datavet.findings import Severity


class MissingLabels(Auditor):
    """The target is NaN, None or null, or +inf / -inf.

    **What it checks**
    The target column of every split that has it: rows whose label is missing, counted exactly,
    with the first row positions; and, as a finding of its own, rows whose numeric label is
    +inf or -inf (each counted). V002 checks the features only, so an infinite label is
    reported here: like a missing one it is no class and no value a model can fit. Neither kind
    counts as a class or a target value anywhere else: task detection, class counts and the
    label's moments leave those rows out (0/1 labels with one inf stay classification).

    **Why it matters**
    A NaN target makes the loss NaN on the first batch that holds it, and an infinite one makes
    a squared error infinite. Libraries that drop missing values silently (``value_counts``,
    many loaders) also make class ratios and metrics wrong without saying so.

    **How to fix**
    Find why the label is missing (a failed join, an unlabelled batch mixed in); drop those rows
    from training and evaluation or label them. An infinite label comes from a transform
    (``log(0)``, a division by zero, an overflowing cast): fix it, or drop those rows.
    """

    code = "V003"
    name = "missing-labels"
    severity = Severity.ERROR
    summary = "target is NaN / None / +-inf"
    needs = ("target",)

    def check(self, ctx: AuditContext):
        for profile in ctx.splits:
            label = profile.label
            if label is None:
                continue
            if label.missing:
                yield self._missing(label, profile.split)
            if label.inf:
                yield self._infinite(label, profile.split)

    def _missing(self, label, split: str):
        return self.finding(
            f"Target {label.name!r} is missing in {plural(label.missing, 'row')} of {split} "
            f"({pct(label.missing, label.rows)}): {rows_text(label.missing_rows, label.missing)}.",
            split=split,
            columns=(label.name,),
            n_affected=label.missing,
            examples=label.missing_rows,
            metrics={"count": label.missing, "fraction": label.missing / label.rows},
            hint="drop or label these rows; find the join or export step that lost the labels",
        )

    def _infinite(self, label, split: str):
        kinds = " and ".join(
            f"{k} in {plural(n, 'row')}"
            for k, n in (("+inf", label.posinf), ("-inf", label.neginf))
            if n
        )
        return self.finding(
            f"Target {label.name!r} holds {kinds} of {split} "
            f"({pct(label.inf, label.rows)}): {rows_text(label.inf_rows, label.inf)}.",
            split=split,
            columns=(label.name,),
            n_affected=label.inf,
            examples=label.inf_rows,
            metrics={
                "posinf": label.posinf,
                "neginf": label.neginf,
                "fraction": label.inf / label.rows,
            },
            hint="fix the transform that made it (log(x + eps), guarded division) or drop the rows",
        )
