from __future__ import annotations

from datavet.auditors.base import AuditContext, Auditor
from datavet.findings import Severity


class SuspiciouslyGood(Auditor):
    """A baseline is near perfect: look for leakage before celebrating.

    **What it checks**
    The linear baseline's score: balanced accuracy at or above ``min_score`` (0.99) for
    classification, R^2 at or above it for regression, when the majority / mean baseline is
    not already that good.

    **Why it matters**
    The source chapter: a result far better than anyone has seen is a reason to look for
    leakage, not to celebrate. When a linear model is near perfect, the answer is usually in the
    inputs: a feature computed from the label, an ID that encodes the class, rows of one subject
    on both sides of the split. (Some tasks are simply easy; then this costs one look.)

    **How to fix**
    Check B003 for a single feature that gives the label away; list how each feature is
    produced and whether it could be known before the label; split by subject or time.
    """

    code = "B002"
    name = "suspiciously-good"
    severity = Severity.WARNING
    summary = "a baseline is near perfect: look for leakage"
    thresholds = {"min_score": 0.99}

    def check(self, ctx: AuditContext):
        b = ctx.require_baselines()
        if b.task == "classification":
            metric, ref = "balanced_accuracy", "majority"
            label = "balanced accuracy"
        else:
            metric, ref = "r2", "mean"
            label = "R^2"
        score = b.metric("linear", metric)
        base = b.metric(ref, metric) or 0.0
        if score is None or score < self.options["min_score"] or base >= self.options["min_score"]:
            return
        yield self.finding(
            f"The linear baseline is near perfect: {label} {score:.4f} ({b.evaluated_on}, "
            f"{b.eval_rows:,} rows) against {base:.3f} for the {ref}. Look for leakage before "
            "trusting any model trained on this.",
            split="test" if b.evaluated_on == "test" else "train",
            columns=(ctx.target,),
            n_affected=b.eval_rows,
            metrics={f"linear_{metric}": score, f"{ref}_{metric}": base},
            hint="check how each feature is made (from the label? after the fact?); split by "
            "subject or time",
        )
