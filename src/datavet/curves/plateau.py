"""Symptoms of a network that does not learn: the loss sits at the level of predicting the prior,
or it barely moves at all."""

from __future__ import annotations

import numpy as np

from datavet.auditors.base import fmt
from datavet.curves import signals
from datavet.curves.base import CurveContext, CurveRule, Skip, step_text
from datavet.findings import Severity

_NAMES = {"train_loss": "training loss", "val_loss": "validation loss"}


def _jump(ctx: CurveContext, steps: np.ndarray, values: np.ndarray, start: float) -> str | None:
    """'the loss jumped to 107 at step 34: ...' when it ever rose to 3x its start."""
    peak = float(np.max(values))
    if not start > 0 or peak < 3 * start:
        return None
    at = float(steps[int(np.argmax(values))])
    return (
        f"the loss jumped to {fmt(peak)} at {ctx.at(at)}: a learning rate too high can leave "
        "a dead network with a flat loss"
    )


class NoLearningPlateau(CurveRule):
    """The loss sits at the no-learning level: ln C, or the entropy of the class prior. The
    network predicts the prior and ignores its inputs.

    **What it checks**
    The readable part of the training loss (before any divergence or NaN), with at least
    ``min_points`` (20) values. Its level over the last ``tail`` (20%) of the run is compared with
    the loss of a network that outputs the class prior: ln C for balanced classes
    (``--classes C``), the prior's entropy for imbalanced ones (``--prior 0.7,0.2,0.1``). It is
    a plateau when the level is within ``tolerance`` (5%) of it and the last 40% of the run made
    less than ``max_progress`` (5%) of progress.

    Without ``--prior``, the log can give the prior itself: a validation accuracy column that is
    identical at each of the last ``min_same_evals`` (10) evaluations is a network that gives
    every sample the same class (a real model's accuracy on a fixed validation set moves by a
    sample now and then), and that accuracy ``a`` is the majority class's share. Two classes
    (``--classes 2``, or no ``--classes``): the no-learning level is the binary entropy of ``a``.
    C classes: it lies between that and the entropy with the rest spread evenly over the other
    C - 1 classes, and the loss must sit in that range. Without ``--classes``, ``--prior`` and
    such a column the rule is skipped.

    **Why it matters**
    A classifier that gives every class the same probability has loss ln C;
    one that gives each class its frequency has the prior's entropy. That is the floor any
    network reaches without looking at its inputs. A loss parked there means the inputs carry no
    usable signal to the network: labels misaligned with inputs (one side shuffled), features
    zeroed or constant, a dead network (all ReLUs off after a bad step), or a graph cut
    (``detach``, a frozen layer) between the inputs and the loss.

    **How to fix**
    Run ``datavet audit`` on the data: B001 no-signal says whether a linear model finds any
    signal, S003 / L002 catch label errors. Run ``datavet probe``: M002 (overfit one batch) tests
    that the model, loss and update are wired. Look at a few samples with their labels.
    """

    code = "C004"
    name = "no-learning-plateau"
    severity = Severity.WARNING
    summary = "the loss sits at ln C / the prior entropy: the network predicts the prior"
    thresholds = {
        "min_points": 20,
        "tail": 0.2,
        "tolerance": 0.05,
        "max_progress": 0.05,
        "min_same_evals": 10,
    }
    causes = (
        ("data", "inputs and labels misaligned (one side shuffled), features zeroed (B001)"),
        ("normalisation", "saturated first layer from unscaled inputs: no gradient reaches it"),
        ("learning_rate", "so high that one early step killed the network (dead ReLUs)"),
        ("initialisation", "activations saturated or vanishing from the first layer on"),
        ("mask", "a mask that hides every input token (inverted 0/1)"),
        ("loop_order", "optimizer not stepping, or given no/frozen parameters (M002)"),
    )

    def _from_accuracy(self, ctx: CurveContext) -> tuple[float, float, str] | None:
        """(low, high, why): the no-learning level implied by a constant validation accuracy."""
        if ctx.prior is not None or not ctx.log.has("val_metric"):
            return None
        col = ctx.column("val_metric")
        if "acc" not in str(col).lower():
            return None
        _, acc = ctx.segment("val_metric")
        k = int(self.options["min_same_evals"])
        if len(acc) < k:
            return None
        tail = acc[-k:]
        a = float(tail[0])
        if a > 1:  # a percentage
            a, tail = a / 100, tail / 100
        if not (0.5 <= a < 1) or float(np.max(tail) - np.min(tail)) > 1e-9:
            return None
        binary = float(-(a * np.log(a) + (1 - a) * np.log(1 - a)))
        c = ctx.classes or 2
        if c <= 2:
            return binary, binary, f"the binary entropy of the majority share {a:.4g}"
        spread = float(-(a * np.log(a) + (1 - a) * np.log((1 - a) / (c - 1))))
        return (
            binary,
            spread,
            f"the entropy of a class prior whose majority share is {a:.4g} ({col} never moves)",
        )

    def check(self, ctx: CurveContext):
        ref = ctx.no_learning_level
        inferred = self._from_accuracy(ctx)
        if ref is None and inferred is None:
            raise Skip("the no-learning level is unknown: pass --classes C or --prior P1,P2,...")
        name = ctx.primary()
        steps, values = ctx.segment(name)
        o = self.options
        if len(values) < o["min_points"]:
            raise Skip(f"fewer than {int(o['min_points'])} readable {name} values")
        k = max(5, int(round(o["tail"] * len(values))))
        end = signals.level(values[-k:])
        last = values[-max(10, int(round(0.4 * len(values)))) :]
        a, b = np.array_split(last, 2)
        progress = 1 - signals.level(b) / signals.level(a) if signals.level(a) > 0 else 0.0
        if progress >= o["max_progress"]:
            return
        target = why = None
        if ref is not None:
            off = abs(end - ref[0]) / ref[0] if ref[0] > 0 else abs(end)
            if off <= o["tolerance"]:
                target, why = ref
        if target is None and inferred is not None:
            low, high, how = inferred
            if low * (1 - o["tolerance"]) <= end <= high * (1 + o["tolerance"]):
                target = min(max(end, low), high)
                off = abs(end - target) / target if target > 0 else abs(end)
                why = how
        if target is None:
            return
        smooth = signals.rolling_median(values, max(9, len(values) // 20 | 1))
        inside = np.abs(smooth - target) <= 2 * o["tolerance"] * target
        outside = np.flatnonzero(~inside)
        since = float(steps[outside[-1] + 1]) if len(outside) else float(steps[0])
        col = ctx.column(name)
        yield self.finding(
            f"The {_NAMES[name]} ({col}) has sat at {fmt(end)} since {ctx.at(since)}, "
            f"within {off:.1%} of {why} = {fmt(target)}: the network predicts the class prior "
            "and has learned nothing from its inputs"
            + (
                f"; {jump}"
                if (jump := _jump(ctx, steps, values, signals.level(values[:5])))
                else ""
            )
            + ".",
            columns=(col,),
            examples=ctx.example([since]),
            metrics={
                "level": end,
                "no_learning_level": target,
                "relative_gap": off,
                "since_step": since,
                "progress": progress,
            },
            hint="datavet audit (B001 no-signal) and datavet probe (M002 overfit one batch)",
        )
        self.mark(name, since, f"at {why}")


def _levelled_off(values: np.ndarray) -> bool:
    """Whether the loss fell and then levelled off: the drop from the first third of the run to
    the second is above the noise (three standard errors of the difference of two medians) and
    the last third moved less than a quarter of that drop. A learning rate too small leaves the
    loss falling at its slow rate to the end; vanishing gradients leave it flat from the start."""
    thirds = np.array_split(values, 3)
    a, b, c = (signals.level(t) for t in thirds)
    noise = signals.mad(np.diff(values)) / np.sqrt(2)
    se = 1.25 * noise / np.sqrt(len(thirds[-1]))  # of the median of a third
    drop = a - b
    return drop > 3 * np.sqrt(2) * se and abs(b - c) < 0.25 * drop


class LossBarelyMoves(CurveRule):
    """The loss barely moves from where it started: a learning rate too small, or gradients that
    vanish before they reach the weights.

    **What it checks**
    The readable part of the training loss (before any divergence or NaN), with at least
    ``min_points`` (20) values: its level over the last 10% of the run against its first five
    values (over whole cycles when the loss cycles, as C003 reads it).
    It barely moves when it fell less than ``min_decrease`` (10%). Two such runs are left alone,
    since neither cause fits them: a loss that fell measurably over the first third of the run
    and then levelled off (the last third moved less than a quarter of that drop: a converged
    or fine-tuned run), and a loss that started below half the no-learning level
    (``--classes``/``--prior``: a resumed or fine-tuned run). The message adds what the log
    says about the two usual causes: the learning rate, and the gradient norm (tiny norms point
    at vanishing gradients; normal norms with a tiny learning rate at the learning rate).

    **Why it matters**
    A learning rate too small makes the loss fall very slowly, and an
    initialisation that shrinks activations layer by layer (std 0.01 over ten tanh layers gives
    activations around 1e-8) leaves the deep layers without signal or gradient. Either way the
    run spends its budget standing still, and a longer run will not fix it.

    **How to fix**
    Try a learning rate 10x higher on a short run (one change, prediction first: ``datavet
    journal``). If the gradient norm is tiny, look at the per-layer activation statistics
    (``datavet probe``) and use a scaled initialisation (Xavier/He, std 1/sqrt(fan_in)),
    normalisation layers or residual connections.
    """

    code = "C005"
    name = "loss-barely-moves"
    severity = Severity.WARNING
    summary = "the loss barely moves from its start (lr too small, vanishing gradients)"
    thresholds = {"min_points": 20, "min_decrease": 0.1}
    causes = (
        ("data", "labels unrelated to the inputs leave nothing to learn (B001)"),
        ("normalisation", "tiny-scale inputs or targets: the gradients are tiny too (F003)"),
        ("learning_rate", "too small (or a schedule that decays it to ~0 too early)"),
        ("initialisation", "weights so small (or so large, saturated) that gradients vanish"),
        ("aggregation", "a loss divided twice (mean of means, divided by the accumulation count)"),
        ("loop_order", "optimizer given no or the wrong parameters; scheduler stepped too often"),
    )

    def check(self, ctx: CurveContext):
        name = ctx.primary()
        steps, values = ctx.segment(name)
        o = self.options
        if len(values) < o["min_points"]:
            raise Skip(f"fewer than {int(o['min_points'])} readable {name} values")
        # where it started, not the first 10%: a loss that fell fast and then stalled has moved;
        # a loss that cycles (C003) is read over whole cycles, not from one phase of them
        c003 = ctx.options.get("C003", {})
        r, lag = signals.periodicity(values, int(c003.get("max_period", 10)))
        cycle = lag if r >= c003.get("min_periodicity", 0.5) else 1
        k = max(5, int(round(0.1 * len(values))))
        start = signals.level(values[: -(-5 // cycle) * cycle])
        end = signals.level(values[-(-k // cycle) * cycle :])
        if not start > 0:
            return
        decrease = (start - end) / start
        if decrease >= o["min_decrease"]:
            return
        ref = ctx.no_learning_level
        if ref is not None and start < 0.5 * ref[0]:
            return  # it started far below the no-learning level: a resumed or fine-tuned run
        if _levelled_off(values):
            return  # it fell and then converged: the optimizer moves it
        col = ctx.column(name)
        notes = []
        metrics = {"start": start, "end": end, "decrease": decrease}
        if ctx.log.has("lr"):
            _, lr = ctx.segment("lr")
            if len(lr):
                notes.append(f"the learning rate is {float(np.median(lr)):.3g}")
                metrics["lr"] = float(np.median(lr))
        if ctx.log.has("grad_norm"):
            _, g = ctx.segment("grad_norm")
            if len(g):
                med = float(np.median(g))
                notes.append(
                    f"the gradient norm's median is {med:.3g} (a global norm can look normal "
                    "while the first layers get none: datavet probe M007 shows each layer)"
                )
                metrics["grad_norm_median"] = med
        jump = _jump(ctx, steps, values, start)
        if jump:
            notes.append(jump)
        change = f"{decrease:.1%} lower" if decrease >= 0 else f"rose {-decrease:.1%}"
        yield self.finding(
            f"The {_NAMES[name]} ({col}) barely moves: from {fmt(start)} to {fmt(end)} "
            f"({change}) over {ctx.unit}s {step_text(float(steps[0]))}-"
            f"{step_text(float(steps[-1]))}" + (f"; {'; '.join(notes)}" if notes else "") + ".",
            columns=(col,),
            examples=ctx.example([float(steps[0])]),
            metrics=metrics,
            hint="try the lr 10x higher on a short run; if the gradient norm is tiny, check "
            "the initialisation (datavet probe)",
        )
        self.mark(name, float(steps[-1]), "barely moved")
