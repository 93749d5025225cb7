from __future__ import annotations

from datavet.auditors.base import AuditContext, Auditor, Skip, fmt, pct
from datavet.findings import Severity


class ClassImbalance(Auditor):
    """The majority class outnumbers the minority class 10 to 1 or more in train.

    **What it checks**
    Exact class counts over every train row (missing labels excluded and reported by V003). It
    fires when ``majority / minority >= max_ratio`` (10).

    **Why it matters**
    A model can reach high accuracy by never predicting the small class; accuracy and the loss
    curve then look fine while the model is useless for the class that matters. Small classes
    also vanish from some folds of an unstratified split.

    **How to fix**
    Stratify splits by label; weight the loss by inverse class frequency or resample; judge the
    model with balanced accuracy, per-class recall or PR-AUC, not accuracy.
    """

    code = "L001"
    name = "class-imbalance"
    severity = Severity.WARNING
    summary = "majority/minority class ratio >= 10"
    thresholds = {"max_ratio": 10.0}
    needs = ("classification",)

    def check(self, ctx: AuditContext):
        label = ctx.train.label
        if not label.values.exact:
            raise Skip("more than 1,024 classes; class counts are not exact")
        counts = label.values.most_common()
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
            f"({pct(n_minor, total)}); {len(small)} of {len(counts)} classes are under "
            f"1/{fmt(self.options['max_ratio'])} of the majority.",
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
