from __future__ import annotations

import numpy as np

from datavet.auditors.base import AuditContext, Auditor, Skip, fmt
from datavet.findings import Severity


def sign_test(reference_loss: np.ndarray, model_loss: np.ndarray) -> tuple[float, int, int]:
    """One-sided exact sign test that the model's per-row loss is lower than the reference's.

    Returns (p-value, rows where the model is better, rows where it is worse); ties are dropped.
    """
    from datavet._stats import binomtest

    ok = np.isfinite(reference_loss) & np.isfinite(model_loss)
    diff = reference_loss[ok] - model_loss[ok]
    better, worse = int((diff > 0).sum()), int((diff < 0).sum())
    if better + worse == 0:
        return 1.0, 0, 0
    return (
        float(binomtest(better, better + worse, 0.5, alternative="greater").pvalue),
        better,
        worse,
    )


class NoSignal(Auditor):
    """The linear baseline is no better than predicting the majority class or the mean.

    **What it checks**
    The linear baseline (median imputation, standardisation, logistic or ridge regression)
    against the reference that knows nothing about the features: the class prior for
    classification, the train mean for regression. Both are scored row by row on the test
    split, or out of fold by 5-fold cross-validation on train. An exact one-sided sign test
    asks whether the linear model's loss (log loss, or squared error) is lower on more rows
    than chance allows; the rule fires when it is not (p >= ``alpha``, 0.05). With fewer than
    ``min_rows`` (30) rows to compare on, a sign test cannot tell, and the rule is skipped.

    **Why it matters**
    The simplest baselines come before any network: if even a linear model is at chance,
    suspect the relation between inputs and labels before the network: labels shuffled apart
    from their rows, two files joined in different orders, a label encoded wrongly. A network
    can memorise such data (it overfits random labels) while learning nothing.

    **How to fix**
    Look at a few rows with their labels by hand; check how features and labels were joined
    (same order, same key); check the label's encoding. If the signal is real but non-linear,
    note that a network must beat these numbers to be worth training.
    """

    code = "B001"
    name = "no-signal"
    severity = Severity.WARNING
    summary = "the linear baseline is no better than majority/mean"
    thresholds = {"alpha": 0.05, "min_rows": 30}
    needs = ("baselines",)

    def check(self, ctx: AuditContext):
        b = ctx.require_baselines()
        if b.reference_loss is None or b.linear_loss is None:
            raise Skip("no per-row losses")
        comparable = np.isfinite(b.reference_loss) & np.isfinite(b.linear_loss)
        if not comparable.any():
            raise Skip(
                "no evaluation row has a loss for both models (test labels unseen in train?)"
            )
        rows = int(comparable.sum())
        if rows < self.options["min_rows"]:
            # a sign test on a handful of rows cannot find a signal that is there: silence
            # would be no evidence of "no signal" either
            raise Skip(
                f"only {rows} rows to compare the models on (fewer than "
                f"{int(self.options['min_rows'])}): too few to tell signal from noise"
            )
        p, better, worse = sign_test(b.reference_loss, b.linear_loss)
        if p < self.options["alpha"]:
            return
        if b.task == "classification":
            ref, metric = "prior", "log_loss"
            lin, pri = b.metric("linear", "log_loss"), b.metric("prior", "log_loss")
            acc_lin, acc_maj = b.metric("linear", "accuracy"), b.metric("majority", "accuracy")
            scores = (
                f"log loss {fmt(lin)} vs {fmt(pri)} for the class prior; accuracy "
                f"{acc_lin:.3f} vs {acc_maj:.3f} for the majority class"
            )
        else:
            ref, metric = "mean", "mse"
            scores = (
                f"MSE {fmt(b.metric('linear', 'mse'))} vs {fmt(b.metric('mean', 'mse'))} for the "
                f"mean; R^2 {fmt(b.metric('linear', 'r2'))}"
            )
        yield self.finding(
            f"The linear baseline is no better than the {ref} ({b.evaluated_on}): {scores}; it "
            f"was better on {better:,} rows and worse on {worse:,} (sign test p = {p:.2g}).",
            split="test" if b.evaluated_on == "test" else "train",
            columns=(ctx.target,),
            n_affected=b.eval_rows,
            metrics={
                "p_value": p,
                "rows_better": better,
                "rows_worse": worse,
                f"linear_{metric}": b.metric("linear", metric),
                f"{ref}_{metric}": b.metric(ref, metric),
            },
            hint="look at rows with their labels; check the join/order of features and labels",
        )
