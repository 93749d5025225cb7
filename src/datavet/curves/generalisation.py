"""Symptoms read from the validation curve next to the training curve: overfitting, validation
better than training all along, and a validation score too good to be true."""

from __future__ import annotations

import re

import numpy as np

from datavet.auditors.base import fmt
from datavet.curves import signals
from datavet.curves.base import CurveContext, CurveRule, Skip, step_text
from datavet.findings import Severity

_LOWER_IS_BETTER = re.compile(r"err|loss|mae|mse|rmse|wer|cer|perplex|ppl|distance|nll", re.I)


def train_near(ctx: CurveContext, val_steps: np.ndarray, *, same_step: bool = False) -> np.ndarray:
    """The training loss to set beside each validation loss.

    With ``same_step`` and a training value logged at that very step, that value (the same
    weights, measured at the same moment; a window would mix the phases of a loss that cycles).
    In a per-epoch log, where the training loss is the average over the epoch and validation
    comes at its end, the mean of that epoch and the next (the training level at the epoch's
    end, not half an epoch earlier). Otherwise the median of the training values within half
    the gap between evaluations on either side (the nearest one when there are none).
    """
    ts, tv = ctx.segment("train_loss")
    out = np.full(len(val_steps), np.nan)
    if not len(ts):
        return out
    if ctx.log.step_from == "epoch":
        for i, s in enumerate(val_steps):
            j = np.searchsorted(ts, s)
            if j + 1 < len(ts) and ts[j] == s:
                out[i] = 0.5 * (tv[j] + tv[j + 1])
        return out
    gap = float(np.median(np.diff(val_steps))) if len(val_steps) > 1 else 1.0
    half = max(gap / 2, 0.0)
    for i, s in enumerate(val_steps):
        j = np.searchsorted(ts, s)
        if same_step and j < len(ts) and ts[j] == s:
            out[i] = float(tv[j])
            continue
        lo, hi = np.searchsorted(ts, s - half), np.searchsorted(ts, s + half, side="right")
        if hi > lo:
            out[i] = float(np.median(tv[lo:hi]))
        else:
            out[i] = float(tv[int(np.argmin(np.abs(ts - s)))])
    return out


class Overfitting(CurveRule):
    """The validation loss rises while the training loss keeps falling: overfitting, with the
    step where the gap opened.

    **What it checks**
    The validation loss (smoothed over three evaluations) before any divergence or NaN, with at
    least ``min_points`` (5) evaluations. From its lowest point it must rise by at least
    ``min_rise`` (20%) by the end of the run (the level of its last evaluations, and the last one
    itself above half that rise), while the training loss at the end is at least
    ``min_train_drop`` (10%) below where it was at the validation minimum. The gap opened at the
    step of the validation minimum: the best checkpoint.

    **Why it matters**
    From that step on the network memorises the training set instead of learning what carries
    over: every further step makes the model worse on new data while the training curve looks
    better. Training longer is wasted; the checkpoint at the minimum is the model to keep.

    **How to fix**
    Stop at the minimum (early stopping on the validation loss); then more data, augmentation,
    weight decay, dropout or a smaller model. When the validation loss never fell more than
    ``min_val_drop`` (5%) below its first value, the finding is an error of another kind: the
    model learned nothing that carries over (labels unrelated to the inputs: random, shuffled,
    misaligned; the best validation loss stays at the class-prior entropy, ln C), and no
    checkpoint is worth keeping: audit the data (B001). Check the data first: duplicated
    training rows (S002) shrink the effective training set, and a train/validation shift (L004)
    looks the same.
    """

    code = "C006"
    name = "overfitting"
    severity = Severity.WARNING
    summary = "validation loss rises while training loss falls, from the step the gap opened"
    thresholds = {"min_points": 5, "min_rise": 0.2, "min_train_drop": 0.1, "min_val_drop": 0.05}
    causes = (
        (
            "data",
            "too few training samples, duplicates (S002), train/validation shift (L004), "
            "labels unrelated to the inputs when validation never improved (B001)",
        ),
        ("eval_mode", "dropout left off in training (model.eval() never undone)"),
        ("regularisation", "too much capacity or too little regularisation for the data"),
    )

    def check(self, ctx: CurveContext):
        ctx.require("val_loss")
        ctx.require("train_loss")
        vs, vv = ctx.segment("val_loss")
        o = self.options
        if len(vv) < o["min_points"]:
            raise Skip(f"fewer than {int(o['min_points'])} readable validation losses")
        smooth = signals.rolling_median(vv, 3)
        m = int(np.argmin(smooth))
        if m >= len(vv) - 2:
            return
        low = float(smooth[m])
        if not low > 0:
            return
        k = max(2, int(round(0.2 * len(vv))))
        end = signals.level(vv[-k:])
        rise = end / low - 1
        if rise < o["min_rise"] or vv[-1] < low * (1 + o["min_rise"] / 2):
            return
        train = train_near(ctx, vs[[m, -1]])
        ts, tv = ctx.segment("train_loss")
        t_end = signals.level(tv[-max(5, int(round(0.1 * len(tv)))) :])
        t_at = float(train[0])
        if not t_at > 0 or 1 - t_end / t_at < o["min_train_drop"]:
            return
        at = float(vs[m])
        col = ctx.column("val_loss")
        start = float(smooth[0])
        if start > 0 and low >= (1 - o["min_val_drop"]) * start:
            # the validation loss never got below its start: nothing carried over at all, so
            # there is no good checkpoint to keep (the curve of labels unrelated to the inputs)
            yield self.finding(
                f"The validation loss ({col}) never fell below its start ({fmt(start)}; best "
                f"{fmt(low)} at {ctx.at(at)}) and then rose {rise:.0%} to {fmt(end)}, while the "
                f"training loss fell to {fmt(t_end)}: the model memorised the training set "
                "and learned nothing that carries over. This is not ordinary overfitting: no "
                "checkpoint is worth keeping. Labels unrelated to the inputs (shuffled, "
                "misaligned, random) give this curve; a loss at its start is the class-prior "
                "entropy (ln C for balanced classes).",
                severity=Severity.ERROR,
                columns=(col, ctx.column("train_loss")),
                examples=ctx.example([at]),
                metrics={
                    "gap_step": at,
                    "val_start": start,
                    "val_min": low,
                    "val_end": end,
                    "rise": rise,
                    "train_end": t_end,
                },
                hint="datavet audit TRAIN --test VAL --target LABEL: B001 no-signal says "
                "whether a linear model finds anything; look at rows with their labels",
            )
            self.mark("val_loss", at, "never learned")
            return
        yield self.finding(
            f"The validation loss ({col}) reached its lowest, {fmt(low)}, at {ctx.unit} "
            f"{step_text(at)} and rose {rise:.0%} since, to {fmt(end)} by {ctx.unit} "
            f"{step_text(float(vs[-1]))}, while the training loss kept falling ({fmt(t_at)} -> "
            f"{fmt(t_end)}): overfitting from {ctx.at(at)}, the best checkpoint.",
            columns=(col, ctx.column("train_loss")),
            examples=ctx.example([at]),
            metrics={
                "gap_step": at,
                "val_min": low,
                "val_end": end,
                "rise": rise,
                "train_at_gap": t_at,
                "train_end": t_end,
            },
            hint=f"keep the checkpoint of {ctx.at(at)} (early stopping); more data or "
            "regularisation",
        )
        self.mark("val_loss", at, "gap opens")


class ValBetterThanTrain(CurveRule):
    """The validation loss stays below the training loss by a margin from start to end.

    **What it checks**
    Each validation loss against the training loss around the same step (the median of the
    training values within half the gap between evaluations; the value of that very step when the
    training loss cycles, as in C003, so the window does not mix the phases; in a per-epoch log,
    the training level at the end of the epoch), before any divergence or NaN,
    with at least ``min_pairs`` (5) evaluations. It fires when the validation loss is at least
    ``margin`` (10%) lower in at least ``min_share`` (75%) of them, and of the last third of them
    (the first evaluations, before anything is learned, show no gap).

    **Why it matters**
    A network should not do better on data it has not seen. When it does all along, the two
    numbers are not measured the same way. When the log has a dropout column above 0 (a column
    whose name contains "dropout"), the finding is info: dropout active in training and off in
    validation is the usual, benign cause. Otherwise the two numbers are not measured the same
    way or the validation data is not new: dropout or
    augmentation that only runs in training (expected, but know it), a model left in train mode
    or switched to eval mode at the wrong time, a training loss averaged over an epoch while the
    model improved, or validation samples that are copies of (or easier than) training ones.

    **How to fix**
    Evaluate the training set in eval mode the same way as validation: if the gap closes, it is
    dropout/augmentation. If not, check the split for overlap (``datavet audit --test``:
    S001 train-test-overlap) and the eval-mode switching (``datavet probe``).
    """

    code = "C007"
    name = "val-better-than-train"
    severity = Severity.WARNING
    summary = "validation loss below training loss by a margin throughout"
    thresholds = {"min_pairs": 5, "margin": 0.1, "min_share": 0.75}
    causes = (
        ("data", "validation rows copied from training or easier than them (S001 overlap)"),
        ("eval_mode", "model.eval()/model.train() switched at the wrong place"),
        ("aggregation", "a training loss averaged over the epoch while the model improved"),
        ("regularisation", "dropout or augmentation active only in training"),
    )

    def check(self, ctx: CurveContext):
        ctx.require("val_loss")
        ctx.require("train_loss")
        vs, vv = ctx.segment("val_loss")
        o = self.options
        if len(vv) < o["min_pairs"]:
            raise Skip(f"fewer than {int(o['min_pairs'])} readable validation losses")
        _, tv = ctx.segment("train_loss")
        c003 = ctx.options.get("C003", {})
        cycles = signals.periodicity(tv, int(c003.get("max_period", 10)))[0]
        tr = train_near(ctx, vs, same_step=cycles >= c003.get("min_periodicity", 0.5))
        ok = np.isfinite(tr) & (tr > 0)
        vs, vv, tr = vs[ok], vv[ok], tr[ok]
        if len(vv) < o["min_pairs"]:
            raise Skip(f"fewer than {int(o['min_pairs'])} evaluations with a training loss near")
        ratio = vv / tr
        better = ratio <= 1 - o["margin"]
        share = float(better.mean())
        late = float(better[-max(3, len(better) // 3) :].mean())
        if share < o["min_share"] or late < o["min_share"]:
            return
        med = float(np.median(ratio))
        col = ctx.column("val_loss")
        dropout = _dropout_in_log(ctx)
        if dropout is not None:
            yield self.finding(
                f"The validation loss ({col}) is below the training loss at "
                f"{int(better.sum())} of {len(vv)} evaluations ({share:.0%}), by {1 - med:.0%} "
                f"at the median, and the log shows dropout ({dropout}): dropout is active in "
                "training and off in validation, the usual benign cause of this gap.",
                severity=Severity.INFO,
                columns=(col, ctx.column("train_loss")),
                n_affected=int(better.sum()),
                examples=ctx.example(vs[better]),
                metrics={"share": share, "median_ratio": med, "pairs": len(vv)},
                hint="to confirm, evaluate the training set in eval mode: the gap should close",
            )
            self.mark("val_loss", float(vs[0]), "val below train (dropout)")
            return
        yield self.finding(
            f"The validation loss ({col}) is below the training loss at {int(better.sum())} of "
            f"{len(vv)} evaluations ({share:.0%}) from {ctx.at(float(vs[0]))} to "
            f"{step_text(float(vs[-1]))}, by {1 - med:.0%} at the median "
            f"({fmt(float(np.median(vv)))} vs {fmt(float(np.median(tr)))}): dropout or "
            "augmentation only in training, an eval-mode mix-up, or validation data that is "
            "not new.",
            columns=(col, ctx.column("train_loss")),
            n_affected=int(better.sum()),
            examples=ctx.example(vs[better]),
            metrics={"share": share, "median_ratio": med, "pairs": len(vv)},
            hint="evaluate the training set in eval mode; check the split for overlap "
            "(datavet audit --test, S001)",
        )
        self.mark("val_loss", float(vs[0]), "val below train")


def _dropout_in_log(ctx: CurveContext) -> str | None:
    """'dropout = 0.5' when the log has a numeric column whose name contains "dropout" with a
    value above 0; None otherwise."""
    for name, values in ctx.log.extra.items():
        if "dropout" not in str(name).lower():
            continue
        values = np.asarray(values, dtype=float)
        values = values[np.isfinite(values)]
        if len(values) and float(np.max(values)) > 0:
            return f"{name} = {float(np.max(values)):g}"
    return None


class SuspiciouslyGoodValidation(CurveRule):
    """The validation score is near perfect: look for leakage before celebrating.

    **What it checks**
    The validation metric (accuracy, AUC, F1: higher is better, in [0, 1] or in percent),
    before any divergence or NaN. It fires when its best value reaches ``min_score`` (0.99).
    Metrics whose name says lower is better (error, loss, MAE...) are skipped.

    **Why it matters**
    When performance is bad everyone suspects the code; when it is good
    nobody does. If past work stalled at 70% and this run reaches 99%, look for leakage first.
    The most common: samples from the same subject on both sides of the split; then a feature
    computed from the answer, or information that is linked to it by accident (measurement
    order, file position).

    **How to fix**
    ``datavet audit TRAIN --test VAL --target LABEL``: S001 (rows shared by the splits), B002
    (a linear baseline already near perfect), B003 (one feature gives the label away), L002
    (label tied to row order). Split by subject or by time; list how each feature is produced
    and whether it could be known before the label. For sequence models, check that the future
    is masked (``datavet probe``). Some tasks are simply easy: then this costs one look.
    """

    code = "C008"
    name = "suspiciously-good-validation"
    severity = Severity.WARNING
    summary = "a near-perfect validation score: look for leakage"
    thresholds = {"min_score": 0.99}
    causes = (
        ("data", "the same subject in both splits (S001), a feature made from the label (B003)"),
        ("mask", "the future not masked: the model reads the answer"),
        ("eval_mode", "scored on the training set, or the validation loader points at train"),
    )

    def check(self, ctx: CurveContext):
        ctx.require("val_metric")
        col = ctx.column("val_metric")
        if _LOWER_IS_BETTER.search(col):
            raise Skip(f"{col!r} looks like a lower-is-better metric; C008 reads scores")
        steps, values = ctx.segment("val_metric")
        if not len(values):
            raise Skip("no readable validation metric")
        scale = 100.0 if 1.0 < float(np.max(values)) <= 100.0 else 1.0
        if float(np.max(values)) > 100.0 or float(np.min(values)) < -1.0:
            raise Skip(f"{col!r} is not a score in [0, 1] or in percent")
        v = values / scale
        best = float(np.max(v))
        if best < self.options["min_score"]:
            return
        first = float(steps[int(np.flatnonzero(v >= self.options["min_score"])[0])])
        yield self.finding(
            f"The validation score ({col}) reaches {best:.4f} (first {self.options['min_score']:g} "
            f"or better at {ctx.at(first)}): near perfect. Look for leakage before "
            "trusting it: the same subject on both sides of the split, a feature computed from "
            "the label, an order or ID that encodes it.",
            columns=(col,),
            examples=ctx.example([first]),
            metrics={"best": best, "first_step": first},
            hint="datavet audit TRAIN --test VAL --target LABEL (S001, B002, B003)",
        )
        self.mark("val_metric", first, "near-perfect score")
