"""The first NaN or inf in the log, and what came just before it."""

from __future__ import annotations

import numpy as np

from datavet.auditors.base import fmt
from datavet.curves.base import CurveContext, CurveRule, step_text
from datavet.findings import Severity

_NAMES = {
    "train_loss": "training loss",
    "val_loss": "validation loss",
    "grad_norm": "gradient norm",
}


class NonFiniteLoss(CurveRule):
    """The first step where the loss or the gradient norm is NaN or inf, and whether the gradient
    norm spiked (or the loss climbed) before it.

    **What it checks**
    The training loss, the validation loss and the gradient norm, in step order. The first NaN or
    inf is reported with its step and series, then what led to it: a gradient-norm spike in the
    ``lookback`` (20) logged steps before (C009's rule and thresholds: above ``factor`` x the
    median of the recent normal values), a divergence of the loss (C002)
    that began earlier, and a learning rate ``lr_jump`` (10) times the highest used until
    ``lookback`` steps before (a jump, not a warm-up ramp). A non-finite
    gradient norm followed by finite losses and finite norms again is what mixed-precision loss
    scaling does when it skips a step; it is reported as a warning, not an error. So is a NaN/inf
    loss the run recovered from: at least ``lookback`` finite values follow the last one, and
    the first of them sit no higher than the highest of the ``lookback`` values before the first
    one (skipped or guarded steps; the other rules then read past them).

    **Why it matters**
    After the first NaN every later number in the log is noise: the weights are NaN. What happened
    just before tells the causes apart. A spike or a climb first points at the learning rate or an
    exploding update; a NaN out of a calm run points at one bad value: a log of 0, a division by
    zero, a fully masked row, a bad sample. The loss can even stay finite
    while a gradient is already NaN, so watch the gradient norm too.

    **How to fix**
    Reproduce the step on its batch with ``datavet probe`` (M004 names the first module whose
    output is NaN/inf and the sample rows; M005 finds a backward-only NaN with anomaly mode).
    Check the data for NaN/inf and zeros fed to log (``datavet audit``: V001, V002). After a
    spike or a climb, lower the learning rate, add warm-up or clip the gradient norm.
    """

    code = "C001"
    name = "nonfinite-loss"
    severity = Severity.ERROR
    summary = "first step with a NaN/inf loss or gradient norm, and whether a spike came first"
    thresholds = {"lookback": 20, "lr_jump": 10.0}
    causes = (
        ("data", "a NaN, inf, zero under a log or extreme value in a batch (V001, V002, F003)"),
        ("normalisation", "unscaled inputs or targets make the first outputs and updates huge"),
        ("learning_rate", "too high: the norm spikes, the weights overflow"),
        ("initialisation", "weights so large that activations overflow (exp, softmax)"),
        ("mask", "a row masked entirely: softmax over nothing, 0/0 in a masked mean"),
        ("aggregation", "a division by a count that can be zero (empty batch, no valid token)"),
    )

    def check(self, ctx: CurveContext):
        first = ctx.first_nonfinite()
        if not first:
            return
        recovered = [k for k in first if k != "grad_norm" and ctx.recovered(k)]
        if recovered and not any(k != "grad_norm" and k not in recovered for k in first):
            if "grad_norm" not in first or np.isfinite(ctx.points("grad_norm")[1][-1]):
                yield self._recovered(ctx, recovered)
                return
        first = {k: v for k, v in first.items() if k not in recovered}
        losses = {k: v for k, v in first.items() if k != "grad_norm"}
        series, (step, value) = min(first.items(), key=lambda kv: (kv[1][0], kv[0] != "grad_norm"))
        word = "NaN" if np.isnan(value) else fmt(value)
        # a non-finite gradient norm that the run survives: loss scaling skipped those steps
        if not losses:
            steps, g = ctx.points("grad_norm")
            bad = ~np.isfinite(g)
            after = g[np.flatnonzero(bad)[-1] + 1 :]
            if len(after) and np.isfinite(after).all():
                yield self.finding(
                    f"The gradient norm ({ctx.column('grad_norm')}) is NaN/inf at "
                    f"{int(bad.sum())} {ctx.unit}(s), first at {ctx.at(step)}, but the loss "
                    "stays finite and the norm recovers: mixed-precision loss scaling skipping "
                    "overflowing steps does this. If you do not use loss scaling, this is a bug.",
                    severity=Severity.WARNING,
                    columns=(ctx.column("grad_norm"),),
                    n_affected=int(bad.sum()),
                    examples=ctx.example(steps[bad]),
                    metrics={"step": step, "nonfinite_steps": int(bad.sum())},
                    hint="with a GradScaler this is normal in moderation; otherwise run datavet "
                    "probe (M005) on that batch",
                )
                self.mark("grad_norm", step, "non-finite gradient norm")
                return
        before = []
        metrics: dict[str, float] = {"step": step}
        spike = ctx.spike_before(step, int(self.options["lookback"]))
        if spike is not None:
            s_step, s_value, s_ratio = spike
            before.append(
                f"the gradient norm spiked to {fmt(s_value)} ({s_ratio:.0f}x its recent median) "
                f"at {ctx.at(s_step)}, {step_text(step - s_step)} {ctx.unit}(s) before"
            )
            metrics.update(spike_step=s_step, spike_ratio=s_ratio)
            self.mark("grad_norm", s_step, "spike before the first NaN/inf")
        div = ctx.divergence()
        if div is not None:
            name, steps, values, d = div
            onset = float(steps[d.onset])
            if onset < step:
                before.append(f"the {_NAMES[name]} had been climbing since {ctx.at(onset)} (C002)")
                metrics["divergence_onset"] = onset
        lr_text = self._lr_jump(ctx, step)
        if lr_text:
            before.append(lr_text)
        if not before:
            before.append(
                "no gradient-norm spike and no climb of the loss before it"
                if ctx.log.has("grad_norm")
                else "no climb of the loss before it (log the gradient norm to see spikes)"
            )
        rest = [f"{_NAMES[k]} from {ctx.at(s)}" for k, (s, _) in first.items() if k != series]
        cols = tuple(ctx.column(k) for k in first)
        bad_steps, bad_values = ctx.points(series)
        yield self.finding(
            f"The {_NAMES[series]} ({ctx.column(series)}) is {word} at {ctx.at(step)}"
            + (f" ({'; '.join(rest)})" if rest else "")
            + ": "
            + "; ".join(before)
            + ". Every value after it is noise.",
            columns=cols,
            n_affected=int((~np.isfinite(bad_values)).sum()),
            examples=ctx.example(bad_steps[~np.isfinite(bad_values)]),
            metrics=metrics,
            hint="datavet probe on that batch (M004/M005) finds where the NaN starts"
            + ("; lower the lr or clip gradients" if spike or div else ""),
        )
        self.mark(series, step, f"first {word}")

    def _recovered(self, ctx: CurveContext, names: list[str]):
        """The warning for NaN/inf losses the run got over (:meth:`CurveContext.recovered`)."""
        parts, cols, bad_steps = [], [], []
        for name in names:
            steps, values = ctx.points(name)
            bad = ~np.isfinite(values)
            parts.append(
                f"the {_NAMES[name]} ({ctx.column(name)}) is NaN/inf at {int(bad.sum())} "
                f"isolated {ctx.unit}(s), first at {ctx.at(float(steps[bad][0]))}"
            )
            cols.append(ctx.column(name))
            bad_steps.extend(float(x) for x in steps[bad])
            self.mark(name, float(steps[bad][0]), "non-finite, recovered")
        bad_steps.sort()
        text = "; ".join(parts)
        return self.finding(
            text[0].upper() + text[1:] + ", but the run recovered: the loss is finite "
            f"for at least {int(self.options['lookback'])} {ctx.unit}s after the last one and "
            "picks up where it left off. Skipped or guarded steps (mixed-precision loss "
            "scaling, an `if not torch.isfinite(loss)` guard) do this; if nothing in your loop "
            "skips steps, those batches hold a bad value.",
            severity=Severity.WARNING,
            columns=tuple(cols),
            n_affected=len(bad_steps),
            examples=ctx.example(bad_steps),
            metrics={"step": bad_steps[0], "nonfinite_steps": len(bad_steps)},
            hint="with a GradScaler or a NaN guard this is normal in moderation; otherwise run "
            "datavet probe (M004) on the batch of that step",
        )

    def _lr_jump(self, ctx: CurveContext, step: float) -> str | None:
        """The learning rate at ``step`` against the highest one in use until ``lookback`` rows
        before it: a jump, not a warm-up ramp (whose earlier values are all smaller)."""
        if not ctx.log.has("lr"):
            return None
        steps, lr = ctx.points("lr")
        ok = np.isfinite(lr) & (lr > 0) & (steps <= step)
        steps, lr = steps[ok], lr[ok]
        earlier = lr[: max(0, len(lr) - int(self.options["lookback"]))]
        if not len(earlier):
            return None
        ref, now = float(earlier.max()), float(lr[-1])
        if now >= self.options["lr_jump"] * ref:
            return f"the learning rate there ({now:g}) is {now / ref:.0f}x the highest before it"
        return None
