from __future__ import annotations

from datavet.auditors.base import AuditContext, Auditor, Skip, fmt, pct
from datavet.findings import Finding, Severity


class ClassImbalance(Auditor):
    """The majority class outnumbers the minority class 10 to 1 or more in train; or train has a
    single class (a regression target: a single value).

    **What it checks**
    Exact class counts over every train row (missing labels excluded and reported by V003). It
    fires when ``majority / minority >= max_ratio`` (10), at the rule's severity (warning). When
    every labelled train row has the same class, or a regression target holds one distinct
    value, it fires at error severity (unless the rule's severity is overridden): the extreme
    imbalance, where there is nothing to learn at all.

    **Why it matters**
    A model can reach high accuracy by never predicting the small class; accuracy and the loss
    curve then look fine while the model is useless for the class that matters. Small classes
    also vanish from some folds of an unstratified split. With one class (or one target value)
    a model learns a constant: training "succeeds" with a loss near 0 and the model predicts
    nothing.

    **How to fix**
    Stratify splits by label; weight the loss by inverse class frequency or resample; judge the
    model with balanced accuracy, per-class recall or PR-AUC, not accuracy. A single class or a
    constant target usually means a filter, a join or a split went wrong, or the wrong column
    was named as the target: check how train was built.
    """

    code = "L001"
    name = "class-imbalance"
    severity = Severity.WARNING
    summary = "majority/minority class ratio >= 10"
    thresholds = {"max_ratio": 10.0}
    needs = ("target",)  # a classification target; or a regression one, for a single value

    def __init__(self, *, severity: Severity | None = None, thresholds=None) -> None:
        super().__init__(severity=severity, thresholds=thresholds)
        # a single class is an error, unless the user set this rule's severity
        self._single = severity if severity is not None else Severity.ERROR

    def check(self, ctx: AuditContext):
        label = ctx.train.label
        counts = label.values.most_common() if label.values.exact else []
        if len(counts) == 1 and counts[0][1] >= 2:  # one labelled row: S009 (too few rows)
            yield self._single_value(counts[0], label, ctx.task == "classification")
            return
        ctx.require_classification()
        if not label.values.exact:
            raise Skip("more than 1,024 classes; class counts are not exact")
        if len(counts) < 2:
            raise Skip(f"train has {len(counts)} class(es)")
        (major, n_major), (minor, n_minor) = counts[0], counts[-1]
        ratio = n_major / n_minor
        if ratio < self.options["max_ratio"]:
            return
        total = label.present
        small = [(v, n) for v, n in counts if n_major / n >= self.options["max_ratio"]]
        yield self.finding(
            f"Classes in train are imbalanced {fmt(ratio)}:1: majority {major!r} has "
            f"{n_major:,} rows ({pct(n_major, total)}), minority {minor!r} has {n_minor:,} "
            f"({pct(n_minor, total)}); {len(small)} of {len(counts)} classes have at most "
            f"1/{fmt(self.options['max_ratio'])} of the majority's rows.",
            split="train",
            columns=(label.name,),
            n_affected=sum(n for _, n in small),
            metrics={
                "ratio": ratio,
                "majority_fraction": n_major / total,
                "minority_fraction": n_minor / total,
                "classes": len(counts),
            },
            hint="stratify the split; weight or resample classes; report balanced accuracy",
        )

    def _single_value(self, count: tuple, label, classes: bool) -> Finding:
        value, n = count
        if classes:
            what = (
                f"Train has a single class: all {n:,} labelled rows have class {value!r}; a "
                "classifier cannot learn to tell classes apart from one class."
            )
            hint = "check the filter, join or split that built train, and the --target column"
            metrics = {"classes": 1, "majority_fraction": 1.0}
        else:
            what = (
                f"The regression target is constant in train: all {n:,} labelled rows have "
                f"the value {value!r}; a model cannot learn anything from a single value."
            )
            hint = "check the target column (--target) and how train was built"
            metrics = {"distinct_values": 1}
        return self.finding(
            what,
            severity=self._single,
            split="train",
            columns=(label.name,),
            n_affected=n,
            metrics=metrics,
            hint=hint,
        )
