from __future__ import annotations

from datavet.auditors.base import AuditContext, Auditor, Skip, pct
from datavet.findings import Severity


class HighCardinalityLabel(Auditor):
    """The target has so many distinct values that it is unlikely to be a class label.

    **What it checks**
    The train target: it fires when classification was chosen (or forced) with more than
    ``max_classes`` (100) classes, or when whole-number or text labels are nearly all distinct
    (at least ``max_unique_fraction``, 90%, of at least 50 labelled rows), which is what an ID
    column looks like.

    **Why it matters**
    A "class" with one or two rows cannot be learned or evaluated; a softmax over thousands of
    them wastes the model, and an ID column picked as the target by mistake produces a model
    that learns nothing while the pipeline reports no error. A numeric target with many values is
    usually a regression target.

    **How to fix**
    Check that the right column is the target. If the values are quantities, use
    ``--task regression``; if they are real classes, group rare ones into "other".
    """

    code = "L005"
    name = "high-cardinality-label"
    severity = Severity.WARNING
    summary = "the target has too many distinct values to be classes (an ID?)"
    thresholds = {"max_classes": 100, "max_unique_fraction": 0.9, "min_rows": 50}

    def check(self, ctx: AuditContext):
        ctx.require_target()
        label = ctx.train.label
        n = label.values.n_distinct
        present = label.present
        if present < 2:
            raise Skip("fewer than 2 labelled rows")
        distinct = f"{n:,}" if n is not None else "more than 1,024"
        id_like = (
            (label.kind == "string" or (label.kind == "numeric" and label.integral))
            and present >= self.options["min_rows"]
            and (n is None or n >= self.options["max_unique_fraction"] * present)
        )
        many = ctx.task == "classification" and (n is None or n > self.options["max_classes"])
        if not (id_like or many):
            return
        share = f" ({pct(n, present)} of labelled rows)" if n is not None else ""
        advice = (
            "it looks like an ID column; check that the right column is the target"
            if id_like
            else "use --task regression if these are quantities, or group rare classes"
        )
        yield self.finding(
            f"Target {label.name!r} has {distinct} distinct values in {present:,} train rows"
            f"{share}, treated as {ctx.task}: {advice}.",
            split="train",
            columns=(label.name,),
            n_affected=present,
            metrics={"distinct": n if n is not None else -1, "rows": present},
            hint="check the target column; --task regression for quantities",
        )
