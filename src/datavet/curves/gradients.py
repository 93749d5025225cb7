"""Gradient-norm spikes: steps whose gradient norm is many times its recent median."""

from __future__ import annotations

import numpy as np

from datavet.auditors.base import fmt
from datavet.curves import signals
from datavet.curves.base import CurveContext, CurveRule, Skip, step_text
from datavet.findings import Severity


class GradientSpikes(CurveRule):
    """Steps whose gradient norm is many times the median of the recent normal ones.

    **What it checks**
    The global gradient norm, step by step, before any divergence or NaN (those are C002 and
    C001, which mention the spikes that led to them). A step is a spike when its norm is above
    ``factor`` ({factor:g}) x the median of the last ``window`` ({window}) normal values, once
    ``min_history`` ({min_history}) are known; spikes are left out of the history. This is the
    classic spike rule, and the one ``datavet.GradientMonitor`` applies during training.

    **Why it matters**
    Divergence shows in the gradient norm before the loss, and a long log is
    more than anyone can read, so the steps far above the recent normal are marked
    automatically. A few isolated spikes usually come from a few bad samples (an outlier, a
    mislabelled or corrupt row) or from rare long sequences; regular spikes with a rising
    baseline announce a divergence.

    **How to fix**
    Look at the batches of the flagged steps (``datavet audit``: V002 inf values, F003 scale
    mismatch find extreme values). Clip the gradient norm (``clip_grad_norm_``), add warm-up or
    lower the learning rate if the spikes grow.
    """

    code = "C009"
    name = "gradient-spikes"
    severity = Severity.WARNING
    summary = "gradient norm above a multiple of its recent median (GradientMonitor's rule)"
    thresholds = {
        "factor": signals.SPIKE_FACTOR,
        "window": signals.SPIKE_WINDOW,
        "min_history": signals.SPIKE_MIN_HISTORY,
    }
    causes = (
        ("data", "a few bad samples: outliers, corrupt rows, wrong units (V002, F003)"),
        ("normalisation", "rare inputs far outside the scale of the rest"),
        ("learning_rate", "too high, or no warm-up: spikes grow into a divergence"),
        ("mask", "a fully masked or very long sequence in the batch"),
        ("aggregation", "a summed loss on batches of very different sizes"),
    )

    def check(self, ctx: CurveContext):
        ctx.require("grad_norm")
        steps, g = ctx.points("grad_norm")
        end = ctx.end_step()
        first = ctx.first_nonfinite()
        if "grad_norm" in first and not any(k != "grad_norm" for k in first):
            end = min(end, first["grad_norm"][0])  # C001 reports what led to it
        keep = steps < end
        steps, g = steps[keep], g[keep]
        if np.isfinite(g).sum() <= self.options["min_history"]:
            raise Skip(f"fewer than {int(self.options['min_history']) + 1} gradient norms")
        found = signals.spikes(g, **ctx.spike_options())
        if np.isfinite(end):
            # spikes just before a NaN or a divergence are reported with them (C001/C002)
            lookback = int(ctx.options.get("C001", {}).get("lookback", 20))
            found = [s for s in found if s.index < len(g) - lookback]
        if not found:
            return
        at = [float(steps[s.index]) for s in found]
        top = max(found, key=lambda s: s.ratio)
        shown = ", ".join(f"{step_text(a)} ({s.ratio:.0f}x)" for a, s in list(zip(at, found))[:5])
        more = f" (+{len(found) - 5} more)" if len(found) > 5 else ""
        col = ctx.column("grad_norm")
        o = ctx.spike_options()
        yield self.finding(
            f"The gradient norm ({col}) spikes above {o['factor']:g}x its recent median at "
            f"{len(found)} {ctx.unit}(s): {shown}{more}; the largest is {fmt(top.value)} against a "
            f"median of {fmt(top.median)}.",
            columns=(col,),
            n_affected=len(found),
            examples=ctx.example(at),
            metrics={
                "spikes": len(found),
                "max_ratio": top.ratio,
                "max_step": float(steps[top.index]),
                "first_step": at[0],
            },
            hint="look at the batches of those steps; clip the gradient norm",
        )
        for a in at[:50]:
            self.mark("grad_norm", a, "spike")


# the thresholds are GradientMonitor's (M011): the text reads them, so it cannot drift from them
GradientSpikes.__doc__ = GradientSpikes.__doc__.format(**GradientSpikes.thresholds)
