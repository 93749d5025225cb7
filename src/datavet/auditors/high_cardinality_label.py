from __future__ import annotations

from datavet.auditors.base import AuditContext, Auditor, Skip, pct
from datavet.findings import Severity
from datavet.scan.idlike import looks_like_key_name


class HighCardinalityLabel(Auditor):
    """The target has so many distinct values that it is unlikely to be a class label.

    **What it checks**
    The train target: it fires when classification was chosen (or forced) with more than
    ``max_classes`` (100) classes, or when whole-number or text labels are nearly all distinct
    (at least ``max_unique_fraction``, 90%, of at least 50 labelled rows), which is what an ID
    column looks like. All-distinct whole numbers of a regression target count only when they
    run consecutively (row numbers) or the column is named like a key: a population or a
    price in cents is all distinct too, and is no ID.
    An ID-like label is judged only with at least ``min_rows`` labelled rows.

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
    needs = ("target",)

    def check(self, ctx: AuditContext):
        label = ctx.train.label
        n = label.values.n_distinct
        present = label.present
        if present < 2:
            raise Skip("fewer than 2 labelled rows")
        distinct = f"{n:,}" if n is not None else "more than 1,024"
        # Whole numbers that are all different are normal for a quantity (a population, a
        # price in cents): they look like an ID as classes, under a key's name, or when they
        # run consecutively (row numbers: 1000, 1001, 1002...).
        integer_key = (
            label.kind == "numeric"
            and label.integral
            and (
                ctx.task == "classification"
                or looks_like_key_name(label.name)
                or _consecutive(label)
            )
        )
        id_like = (
            (label.kind == "string" or integer_key)
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


def _consecutive(label) -> bool:
    """Whether the whole-number labels fill their range almost densely: from the exact values
    when the counter kept them all, else from the spread (consecutive whole numbers 1..n have
    a standard deviation of about n / sqrt(12))."""
    import numpy as np

    if label.values.exact:
        values = [float(v) for v in label.values.keys() if isinstance(v, (int, float))]
        return bool(values) and max(values) - min(values) + 1 <= 1.5 * len(values)
    bins = label.positions
    if bins.mean is None or not label.present:
        return False
    n = bins.n.astype(float)
    total = n.sum()
    if total < 2:
        return False
    mean = float((n * bins.mean).sum() / total)
    var = float(bins.m2.sum() + (n * (bins.mean - mean) ** 2).sum()) / (total - 1)
    return bool(np.isfinite(var)) and np.sqrt(12 * var) <= 1.5 * label.present
