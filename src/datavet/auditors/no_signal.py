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


def paired_t_test(reference_loss: np.ndarray, model_loss: np.ndarray) -> float:
    """One-sided paired t-test that the model's mean per-row loss is lower than the reference's.

    Unlike the sign test it weighs how much each row's loss changes: a feature that pins down
    a minority of rows lowers their loss a lot and raises the others' a little, which a count
    of rows calls "worse more often". Rows without a finite loss for both are dropped.
    """
    from datavet._stats import t

    ok = np.isfinite(reference_loss) & np.isfinite(model_loss)
    diff = reference_loss[ok] - model_loss[ok]
    if len(diff) < 2:
        return 1.0
    mean, sd = float(diff.mean()), float(diff.std(ddof=1))
    if not sd > 0:  # every row changed by the same amount: no doubt about the sign
        return 0.0 if mean > 0 else 1.0
    return float(t.sf(mean / (sd / np.sqrt(len(diff))), len(diff) - 1))


class NoSignal(Auditor):
    """The linear baseline is no better than predicting the majority class or the mean.

    **What it checks**
    The linear baseline (median imputation, standardisation, logistic or ridge regression)
    against the reference that knows nothing about the features: the class prior for
    classification, the train mean for regression. Both are scored row by row on the test
    split, or out of fold by 5-fold cross-validation on train. A one-sided paired t-test on
    the per-row loss differences (log loss, or squared error) asks whether the linear model's
    mean loss is lower than chance allows; the rule fires when it is not (p >= ``alpha``,
    0.05). The mean decides, not the number of rows where the loss is lower: a feature that
    pins down a minority of rows lowers their loss a lot and raises the others' a little. A
    linear loss that is lower, but by no more than chance explains, is reported as "not
    clearly better", as info (unless the rule's severity is set): on a small or noisy table a
    real but weak signal looks like that, and only a loss no lower than the reference's says
    there is nothing to learn. With fewer than ``min_rows`` (30) rows to compare on, the test
    cannot tell, and the rule is skipped.

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
            unseen = (
                "test labels unseen in train?"
                if b.evaluated_on == "test"
                else "each fold's labels unseen in the rows it was fitted on?"
            )
            raise Skip(f"no evaluation row has a loss for both models ({unseen})")
        rows = int(comparable.sum())
        if rows < self.options["min_rows"]:
            # a test on a handful of rows cannot find a signal that is there: silence
            # would be no evidence of "no signal" either
            raise Skip(
                f"only {rows} rows to compare the models on (fewer than "
                f"{int(self.options['min_rows'])}): too few to tell signal from noise"
            )
        # the mean loss decides (what the log loss / MSE reports): a sign test counts rows and
        # is fooled both ways, by a feature that pins down a minority of rows (a large gain on
        # few rows) and by a skewed class prior (a small gain on the majority's many rows)
        p = paired_t_test(b.reference_loss, b.linear_loss)
        if p < self.options["alpha"]:
            return
        p_sign, better, worse = sign_test(b.reference_loss, b.linear_loss)
        if b.task == "classification":
            ref, metric = "prior", "log_loss"
            lin, base = b.metric("linear", "log_loss"), b.metric("prior", "log_loss")
            acc_lin, acc_maj = b.metric("linear", "accuracy"), b.metric("majority", "accuracy")
            scores = (
                f"log loss {fmt(lin)} vs {fmt(base)} for the class prior; accuracy "
                f"{acc_lin:.3f} vs {acc_maj:.3f} for the majority class"
            )
        else:
            ref, metric = "mean", "mse"
            lin, base = b.metric("linear", "mse"), b.metric("mean", "mse")
            scores = (
                f"MSE {fmt(lin)} vs {fmt(base)} for the mean; R^2 {fmt(b.metric('linear', 'r2'))}"
            )
        # a lower loss that chance explains is "not clearly better", never "no better"
        lower = lin is not None and base is not None and lin < base
        yield self.finding(
            f"The linear baseline is {'not clearly better' if lower else 'no better'} than the "
            f"{ref} ({b.evaluated_on}): {scores}. Its mean loss per row is no lower than chance "
            f"allows (paired t-test p = {p:.2g}); it was better on {better:,} rows and worse on "
            f"{worse:,}.",
            severity=Severity.INFO if lower and self.level == self.severity else None,
            split="test" if b.evaluated_on == "test" else "train",
            columns=(ctx.target,),
            n_affected=b.eval_rows,
            metrics={
                "p_value": p,
                "rows_better": better,
                "rows_worse": worse,
                "sign_test_p_value": p_sign,
                f"linear_{metric}": b.metric("linear", metric),
                f"{ref}_{metric}": b.metric(ref, metric),
            },
            hint="look at rows with their labels; check the join/order of features and labels",
        )
