from __future__ import annotations

import math

import numpy as np

from datavet.auditors.base import AuditContext, Auditor
from datavet.findings import Severity

BOOTSTRAP = 400  # resamples for the lower bound of R^2
SEED = 0


class SuspiciouslyGood(Auditor):
    """A baseline is near perfect, with evidence: look for leakage before celebrating.

    **What it checks**
    The linear baseline's score: balanced accuracy for classification, R^2 for regression. It
    fires only on evidence that the score is near perfect, all three of:

    - the score is at least ``min_score`` (0.99) and the majority / mean baseline is not;
    - the lower confidence bound of the score is at least ``min_score`` too: the one-sided
      Wilson bound (at ``confidence``, 95%) of the accuracy over the scored rows for
      classification, a bootstrap bound of R^2 (400 resamples of the scored rows, fixed seed)
      for regression. A 7-row or 36-row test split that a linear model happens to get all
      right is no evidence: 36 of 36 gives a bound of 0.93. Perfect scores need about 270
      scored rows to pass the default;
    - when the score comes from a test split, the same model cross-validated on train scores
      at least ``min_score`` as well (a lucky test split is not the data's property).

    **Why it matters**
    A result far better than anyone has seen is a reason to look for leakage, not to
    celebrate. When a linear model is near perfect, the answer is usually in the inputs: a
    feature computed from the label, an ID that encodes the class, rows of one subject on both
    sides of the split. (Some tasks are simply easy; then this costs one look.)

    **How to fix**
    Check B003 for a single feature that gives the label away; list how each feature is
    produced and whether it could be known before the label; split by subject or time.
    """

    code = "B002"
    name = "suspiciously-good"
    severity = Severity.WARNING
    summary = "a baseline is near perfect (with confidence): look for leakage"
    thresholds = {"min_score": 0.99, "confidence": 0.95}
    needs = ("baselines",)

    def check(self, ctx: AuditContext):
        b = ctx.require_baselines()
        least = self.options["min_score"]
        if b.task == "classification":
            metric, ref = "balanced_accuracy", "majority"
            label = "balanced accuracy"
        else:
            metric, ref = "r2", "mean"
            label = "R^2"
        score = b.metric("linear", metric)
        base = b.metric(ref, metric) or 0.0
        if score is None or score < least or base >= least:
            return
        if b.task == "classification":
            accuracy = b.metric("linear", "accuracy") or 0.0
            correct = round(accuracy * b.eval_rows)
            bound = min(wilson_lower(correct, b.eval_rows, self.options["confidence"]), score)
            how = f"{correct:,} of {b.eval_rows:,} rows right"
        else:
            bound = bootstrap_r2_lower(b.reference_loss, b.linear_loss, self.options["confidence"])
            how = f"{b.eval_rows:,} rows, bootstrap"
        if bound is None or bound < least:
            return
        metrics = {f"linear_{metric}": score, f"{ref}_{metric}": base, "lower_bound": bound}
        where = f"{b.evaluated_on}, {b.eval_rows:,} rows"
        if b.evaluated_on == "test":
            cv = b.train_cv_metric("linear", metric)
            if cv is None or cv < least:
                return
            metrics[f"train_cv_{metric}"] = cv
            where += f"; {cv:.4f} by cross-validation on train"
        level = round(100 * self.options["confidence"])
        yield self.finding(
            f"The linear baseline is near perfect: {label} {score:.4f} ({where}) against "
            f"{base:.3f} for the {ref}; its {level}% lower bound is {bound:.4f} ({how}). Look "
            "for leakage before trusting any model trained on this.",
            split="test" if b.evaluated_on == "test" else "train",
            columns=(ctx.target,),
            n_affected=b.eval_rows,
            metrics=metrics,
            hint="check how each feature is made (from the label? after the fact?); split by "
            "subject or time",
        )


def _z(confidence: float) -> float:
    from statistics import NormalDist

    return NormalDist().inv_cdf(min(max(confidence, 0.5), 1 - 1e-12))


def wilson_lower(correct: int, n: int, confidence: float = 0.95) -> float:
    """One-sided Wilson score lower bound of a proportion (0 for no rows)."""
    if n <= 0:
        return 0.0
    z = _z(confidence)
    p = correct / n
    centre = p + z * z / (2 * n)
    spread = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return max(0.0, (centre - spread) / (1 + z * z / n))


def bootstrap_r2_lower(
    reference_loss: np.ndarray | None, model_loss: np.ndarray | None, confidence: float = 0.95
) -> float | None:
    """Lower percentile of ``1 - sum(model) / sum(reference)`` over bootstrap resamples of
    the rows (per-row squared errors of the model and of the mean baseline)."""
    if reference_loss is None or model_loss is None:
        return None
    ok = np.isfinite(reference_loss) & np.isfinite(model_loss)
    ref, mod = reference_loss[ok], model_loss[ok]
    n = len(ref)
    if n < 2 or not ref.sum() > 0:
        return None
    rng = np.random.default_rng(SEED)
    r2 = np.empty(BOOTSTRAP)
    for i in range(BOOTSTRAP):
        w = np.bincount(rng.integers(0, n, n), minlength=n)
        total = float(w @ ref)
        r2[i] = 1.0 - float(w @ mod) / total if total > 0 else -np.inf
    return float(np.quantile(r2, 1 - confidence))
