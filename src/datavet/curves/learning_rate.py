"""Symptoms of a learning rate that is too high: the loss climbs (divergence) or swings back and
forth without getting lower (oscillation)."""

from __future__ import annotations

import numpy as np

from datavet.auditors.base import fmt
from datavet.curves import signals
from datavet.curves.base import CurveContext, CurveRule, Skip, step_text
from datavet.findings import Severity

_NAMES = {"train_loss": "training loss", "val_loss": "validation loss"}


def lr_change(ctx: CurveContext, step: float, *, factor: float = 2.0) -> str | None:
    """'the learning rate went from 0.02 to 2 at step 200': the last change by ``factor`` or
    more at or before ``step``."""
    if not ctx.log.has("lr"):
        return None
    steps, lr = ctx.points("lr")
    ok = np.isfinite(lr) & (lr > 0) & (steps <= step)
    steps, lr = steps[ok], lr[ok]
    if len(lr) < 2:
        return None
    ratio = lr[1:] / lr[:-1]
    jumps = np.flatnonzero((ratio >= factor) | (ratio <= 1 / factor))
    if not len(jumps):
        return None
    j = int(jumps[-1])
    return (
        f"the learning rate went from {lr[j]:g} to {lr[j + 1]:g} at {ctx.unit} "
        f"{step_text(float(steps[j + 1]))}"
    )


def _lr_from_start(ctx: CurveContext, onset: float) -> str | None:
    """'the learning rate was 2 from the first step': an onset within the first updates of a run
    whose logged learning rate never changed before it."""
    if not ctx.log.has("lr"):
        return None
    steps, lr = ctx.points("lr")
    ok = np.isfinite(lr) & (steps <= onset)
    steps, lr = steps[ok], lr[ok]
    if not len(lr) or len(np.unique(lr)) != 1 or steps[0] != ctx.log.steps[0]:
        return None
    if np.count_nonzero(ctx.log.steps < onset) > 10:  # not within the first updates
        return None
    return f"the learning rate was {lr[0]:g} from the first {ctx.unit}"


class LossDivergence(CurveRule):
    """The loss rises by a factor over its recent level, its start or its lowest level, and
    does not come back: divergence, with the step where the climb began.

    **What it checks**
    The training loss (the validation loss when there is none), point by point. At each step the
    reference is the median of the ``ref_window`` (20) values before it. A divergence is a value at
    least ``factor`` (2) x the reference that does not come back into the normal band (reference
    plus three robust standard deviations) within the next ``window`` (10) values, or turns
    NaN/inf there. The rise must also climb at least ``min_climb`` (a quarter) of the way back to
    the starting loss, so a near-zero loss that doubles is not a divergence. The onset is the
    first step of the climb: walking back from the detection over the values above the band.

    A run whose learning rate is too high from its first updates has no calm level to compare
    with, and the climb often kills the network (dead ReLUs), so the loss falls back to the
    no-learning level instead of staying up. That is a divergence too: ``min_high`` (2) values
    at least ``factor`` x the starting loss within ``window`` values, after which the loss
    (smoothed over 2 x ``window`` + 1 values) never gets more than ``max_progress`` (25%) below
    its start. Its onset is the first value more than ``start_margin`` (25%) above the start.

    A training loss that falls, then climbs back too slowly for any step to double the level
    before it (1 -> 3 over hundreds of steps), is judged against its lowest level (smoothed
    over 2 x ``window`` + 1 values): a divergence when it reaches ``factor`` x that level and
    climbs back at least ``rise_share`` (half) of what it had learned, without falling back
    below halfway. Its onset is where it turned. A validation loss that does so is
    overfitting's sign (C006), not a divergence.

    A loss that takes values <= 0 (a Gaussian NLL, a normalising flow, a negative ELBO) has no
    ratio to a level, so neither test applies; its unit is what it learned: the descent from
    its start to its lowest level (smoothed over 2 x ``window`` + 1 values). A divergence is a
    rise from that lowest level by at least ``rise_share`` (half) of the descent (and three
    robust standard deviations of the step-to-step noise) that never falls back below half that
    rise. Its onset is where the loss turned: the lowest value in the ``window`` steps up to the
    last one within the noise of the lowest level.

    **Why it matters**
    A learning rate that is too high makes the loss swing or climb; a climb that does not come
    back has destroyed what was learned, and everything after the onset is wasted compute. The
    onset is the step to look at: what changed there (a schedule step, a resumed run, a new data
    shard)? The gradient norm usually shows it first (C009).

    **How to fix**
    Lower the learning rate (10x as a first try), add warm-up, clip the gradient norm; check the
    schedule at the onset step and the inputs' scale (``datavet audit``: F003). Change one thing
    at a time and write the prediction first (``datavet journal``).
    """

    code = "C002"
    name = "loss-divergence"
    severity = Severity.ERROR
    summary = "the loss climbs by a factor and does not come back (lr too high)"
    thresholds = {
        "factor": 2.0,
        "window": 10,
        "ref_window": 20,
        "min_climb": 0.25,
        "min_high": 2,
        "max_progress": 0.25,
        "start_margin": 0.25,
        "rise_share": 0.5,
    }
    causes = (
        ("data", "a block of bad samples or a new data shard at the onset step (V002, F003)"),
        ("normalisation", "unscaled inputs: one learning rate cannot suit every direction"),
        ("learning_rate", "too high, or raised by the schedule (or a resumed run) at the onset"),
        ("initialisation", "weights too large for the depth: activations and updates explode"),
        ("aggregation", "a summed loss: the effective learning rate grows with the batch size"),
        ("loop_order", "no zero_grad: gradients accumulate and each update grows"),
    )

    def check(self, ctx: CurveContext):
        name = ctx.primary()
        if len(ctx.points(name)[1]) < 3:
            raise Skip(f"{name} has fewer than 3 values")
        div = ctx.divergence()
        if div is None:
            return
        name, steps, values, d = div
        onset = float(steps[d.onset])
        peak_step = float(steps[d.peak])
        if d.nonfinite is not None:
            end = f"turned {fmt(d.peak_value)} at {ctx.at(peak_step)}"
        elif d.kind == "rise":
            end = f"reached {fmt(d.peak_value)} at {ctx.at(peak_step)}"
        elif d.kind == "slow":
            end = (
                f"reached {fmt(d.peak_value)} ({fmt(d.peak_value / d.reference)}x) at "
                f"{ctx.at(peak_step)}"
            )
        else:
            end = (
                f"reached {fmt(d.peak_value)} ({fmt(d.peak_value / d.reference)}x) at {ctx.unit} "
                f"{step_text(peak_step)}"
            )
        if d.kind == "no_recovery":
            against = f"its starting level of {fmt(d.reference)}"
            end += " and never got back below its start"
            if d.nonfinite is None and np.isfinite(d.end_level):
                end += f" (it ends at {fmt(d.end_level)}"
                ref = ctx.no_learning_level
                if ref is not None and abs(d.end_level - ref[0]) <= 0.1 * ref[0]:
                    end += (
                        f", near {ref[1]} = {fmt(ref[0])}: a network the climb killed, "
                        "predicting the prior"
                    )
                end += ")"
        elif d.kind == "rise":
            against = f"its lowest level of {fmt(d.reference)}"
            end += (
                f" without coming back: a rise of {fmt(d.peak_value - d.reference)}, "
                f"{fmt((d.peak_value - d.reference) / d.end_level)}x the {fmt(d.end_level)} it "
                "had fallen from its start (the loss takes values <= 0, so the rise is measured "
                "against that descent, not as a ratio)"
                if d.nonfinite is None
                else " (the loss takes values <= 0: the rise is measured against its descent "
                f"of {fmt(d.end_level)}, not as a ratio)"
            )
        elif d.kind == "slow":
            against = f"its lowest level of {fmt(d.reference)}"
            end += (
                f" without coming back: a slow climb over {step_text(peak_step - onset)} "
                f"{ctx.unit}s, so no {ctx.unit} doubled the level just before it"
                if d.nonfinite is None
                else ""
            )
        else:
            against = f"a recent level of {fmt(d.reference)}"
            end += " without coming back"
        why = lr_change(ctx, onset) or _lr_from_start(ctx, onset)
        spike = ctx.spike_before(onset, int(ctx.options.get("C001", {}).get("lookback", 20)))
        if spike is not None:
            s_step, s_value, s_ratio = spike
            spike_text = (
                f"the gradient norm spiked to {fmt(s_value)} ({s_ratio:.0f}x its recent median) "
                f"at {ctx.at(s_step)}"
            )
            why = f"{why}; {spike_text}" if why else spike_text
        col = ctx.column(name)
        metrics = {
            "onset_step": onset,
            "detect_step": float(steps[d.detect]),
            "reference": d.reference,
            "onset_value": float(values[d.onset]),
            "peak_step": peak_step,
            "peak": d.peak_value,
            "no_recovery": 1.0 if d.kind == "no_recovery" else 0.0,
        }
        if d.kind == "rise":
            metrics["descent"] = d.end_level
        yield self.finding(
            f"The {_NAMES[name]} ({col}) diverges: it began climbing at {ctx.unit} "
            f"{step_text(onset)} ({fmt(float(values[d.onset]))}, against {against})"
            f"{', ' if d.kind == 'no_recovery' else ' and '}{end}"
            + (f"; {why}" if why else "")
            + ".",
            columns=(col,),
            examples=ctx.example([onset]),
            metrics=metrics,
            hint=f"look at what changed at {ctx.at(onset)}; lower the lr 10x, add "
            "warm-up or clip gradients",
        )
        self.mark(name, onset, "divergence begins")


class LossOscillation(CurveRule):
    """The loss cycles up and down from step to step without getting lower.

    **What it checks**
    The second half of the readable run (before any divergence or NaN) of the training loss, with
    at least ``min_points`` (20) values. The step-to-step changes, less their local mean (what a
    smooth descent leaves is ~0), must repeat with a period of 2 to ``max_period`` (10) steps
    (autocorrelation at that lag at least ``min_periodicity``, 0.5; minibatch noise stays near
    0), be at least ``min_swing`` (3%) of the loss at the median, and the loss in the last third
    of that half must be less than ``max_progress`` (25%) below the first third. Irregular jumps
    are not flagged: in a minibatch run they cannot be told from batch noise without a second
    run at a lower learning rate.

    **Why it matters**
    A step size beyond what the loss surface allows along its steepest direction overshoots the
    valley on every update: the loss bounces between its walls, in a cycle, instead of
    descending. A learning rate too high makes the loss swing or diverge.
    With unscaled inputs the steep direction comes from the feature with the large scale, and
    no single learning rate suits every direction.

    **How to fix**
    Lower the learning rate (by 3-10x) and standardise the inputs (``datavet audit``: F003
    scale-mismatch). Momentum close to 1 rings the same way; lower it or the learning rate.
    """

    code = "C003"
    name = "loss-oscillation"
    severity = Severity.WARNING
    summary = "the loss cycles up and down without progress (lr too high)"
    thresholds = {
        "min_points": 20,
        "max_period": 10,
        "min_periodicity": 0.5,
        "min_swing": 0.03,
        "max_progress": 0.25,
    }
    causes = (
        ("data", "unshuffled data: batches alternate between kinds of samples (L002)"),
        ("normalisation", "unscaled inputs: the steep direction of a large-scale feature"),
        ("learning_rate", "too high for the steepest direction, or momentum too close to 1"),
        ("aggregation", "a summed loss: the step size grows with the batch size"),
        ("loop_order", "a scheduler stepped per batch instead of per epoch (or the reverse)"),
    )

    def check(self, ctx: CurveContext):
        name = ctx.primary()
        steps, values = ctx.segment(name)
        o = self.options
        if len(values) < 2 * o["min_points"]:
            raise Skip(
                f"fewer than {2 * int(o['min_points'])} readable {name} values before any "
                "divergence or NaN"
            )
        half = len(values) // 2
        s, v = steps[half:], values[half:]
        lvl = signals.level(v)
        if not lvl > 0:
            return
        swing = float(np.median(np.abs(signals.wiggle(v)))) / lvl
        periodicity, period = signals.periodicity(v, int(o["max_period"]))
        thirds = np.array_split(v, 3)
        first, last = signals.level(thirds[0]), signals.level(thirds[-1])
        progress = 1 - last / first if first > 0 else 0.0
        if periodicity < o["min_periodicity"] or swing < o["min_swing"]:
            return
        if progress >= o["max_progress"]:
            return
        col = ctx.column(name)
        why = lr_change(ctx, float(s[0]))
        yield self.finding(
            f"The {_NAMES[name]} ({col}) oscillates without progress over {ctx.unit}s "
            f"{step_text(float(s[0]))}-{step_text(float(s[-1]))}: it repeats a {period}-{ctx.unit} "
            f"cycle (autocorrelation {periodicity:.2f}), a typical {ctx.unit} changes it by "
            f"{swing:.0%} ({fmt(lvl)}), and its level only went from {fmt(first)} to "
            f"{fmt(last)}" + (f"; {why}" if why else "") + ".",
            columns=(col,),
            examples=ctx.example([float(s[0])]),
            metrics={
                "from_step": float(s[0]),
                "to_step": float(s[-1]),
                "period": period,
                "periodicity": periodicity,
                "swing": swing,
                "progress": progress,
                "level": lvl,
            },
            hint="lower the lr 3-10x; standardise the inputs",
        )
        self.mark(name, float(s[0]), "oscillation")


class LearningRateCollapse(CurveRule):
    """The logged learning rate falls to almost nothing long before the run ends.

    **What it checks**
    The learning-rate column (``lr``, ``learning_rate``...). It fires when the learning rate
    drops below ``min_ratio`` (1e-4) of its peak and stays there for at least ``min_share``
    (10%) of the logged steps. A cosine or linear decay that reaches 0 only at the last steps
    stays quiet.

    **Why it matters**
    A schedule meant to be stepped once per epoch (``StepLR``, ``ExponentialLR``,
    ``MultiStepLR``) but called once per batch decays hundreds of times too fast: with
    ``StepLR(step_size=30, gamma=0.1)`` stepped every batch the learning rate is 1e-13 by step
    400. Training goes on, the loss freezes, and nothing errors: the run looks like a plateau.

    **How to fix**
    Call ``scheduler.step()`` once per epoch for epoch-based schedules (after the inner batch
    loop), or give the schedule its length in batches (``OneCycleLR``, ``CosineAnnealingLR``
    with ``T_max`` = total steps). Check the logged lr against the schedule you meant.
    """

    code = "C010"
    name = "learning-rate-collapse"
    severity = Severity.WARNING
    summary = "the learning rate falls to ~0 long before the run ends (schedule stepped per batch?)"
    thresholds = {"min_ratio": 1e-4, "min_share": 0.1}
    causes = (("learning_rate", "a per-epoch schedule stepped every batch, or a decay too fast"),)

    def check(self, ctx: CurveContext):
        ctx.require("lr")
        steps, lr = ctx.points("lr")
        ok = np.isfinite(lr) & (lr >= 0)
        steps, lr = steps[ok], lr[ok]
        if len(lr) < 5:
            raise Skip("fewer than 5 readable learning rates")
        peak_i = int(np.argmax(lr))
        peak = float(lr[peak_i])
        if not peak > 0:
            raise Skip("the learning rate is 0 throughout")
        low = lr < self.options["min_ratio"] * peak
        low[:peak_i] = False  # warm-up from 0 is not a collapse
        share = float(low.mean())
        if share < self.options["min_share"]:
            return
        first = int(np.flatnonzero(low)[0])
        at = float(steps[first])
        col = ctx.column("lr")
        yield self.finding(
            f"The learning rate ({col}) fell from its peak {peak:g} to {float(lr[first]):g} by "
            f"{ctx.at(at)} and {float(lr[-1]):g} at {ctx.at(float(steps[-1]))}: below "
            f"{self.options['min_ratio']:g} of the peak for {share:.0%} of the logged steps, so "
            "the model barely trains from there on. A per-epoch schedule stepped every batch "
            "decays this fast.",
            columns=(col,),
            examples=ctx.example([at]),
            metrics={"peak": peak, "collapse_step": at, "final_lr": float(lr[-1]), "share": share},
            hint="call scheduler.step() once per epoch (after the batch loop) for StepLR/"
            "ExponentialLR/MultiStepLR, or size the schedule in batches",
        )
        self.mark("lr", at, "lr collapsed")
