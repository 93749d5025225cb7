"""A validation loss whose jitter survives a learning-rate decay: evaluation in train mode."""

from __future__ import annotations

import numpy as np

from datavet.auditors.base import fmt
from datavet.curves.base import CurveContext, CurveRule, Skip
from datavet.curves.generalisation import _dropout_in_log
from datavet.findings import Severity


def _jitter(values: np.ndarray) -> float:
    """The median absolute second difference: evaluation-to-evaluation noise without the trend."""
    return float(np.median(np.abs(np.diff(values, 2))))


class ValidationInTrainMode(CurveRule):
    """The validation loss keeps jittering after the learning rate fell to a small fraction of its
    peak: validation runs in train mode (``model.eval()`` missing, dropout active).

    **What it checks**
    Needs a validation loss and a learning-rate column. The evaluations logged while the
    learning rate was at least half its peak (after the first third of that phase) and those
    logged after it fell to ``max_lr_ratio`` (1/30) of the peak or less, with at least
    ``min_evals`` (6) in each. Their jitter is the median absolute second difference between
    consecutive evaluations (the trend removed). It fires when the low-learning-rate jitter is
    still ``min_jitter_ratio`` (30%) or more of the high-learning-rate jitter.

    **Why it matters**
    In ``eval()`` mode a validation pass over a fixed validation set is a function of the
    weights alone; its evaluation-to-evaluation changes come from the weights moving, and those
    shrink with the learning rate (a small MLP with dropout 0.5 trained with Adam and two 10x
    step decays: the jitter fell to 1% of its earlier value). In train mode, dropout draws new
    masks (and BatchNorm uses batch statistics) at every pass: the validation loss carries a
    noise floor that does not care about the learning rate (the same run: 92%). A noisy
    validation loss picks the wrong checkpoint, hides overfitting and understates the model
    (dropout's noise is in every prediction); a validation loader that draws a random subset
    of the validation set each time shows the same floor.

    **How to fix**
    Call ``model.eval()`` before the validation loop and ``model.train()`` after it, and run it
    under ``torch.no_grad()``; evaluate the whole validation set (or the same fixed subset)
    each time. ``datavet probe`` with ``eval_step=`` checks the evaluation step itself (M017).
    """

    code = "C011"
    name = "validation-in-train-mode"
    severity = Severity.WARNING
    summary = "the validation loss keeps its jitter after the lr fell ~30x: model.eval() missing?"
    thresholds = {"min_evals": 6, "max_lr_ratio": 1 / 30, "min_jitter_ratio": 0.3}
    causes = (
        ("data", "a validation loader that draws a random subset of the validation set each time"),
        ("eval_mode", "validation in train mode: dropout masks / batch statistics at every pass"),
    )

    def check(self, ctx: CurveContext):
        ctx.require("val_loss")
        ctx.require("lr")
        o = self.options
        vs, vv = ctx.segment("val_loss")
        ls, lv = ctx.segment("lr")
        if len(ls) < 2 or len(vs) < 2 * o["min_evals"]:
            raise Skip(f"fewer than {2 * int(o['min_evals'])} readable evaluations")
        peak = float(np.max(lv))
        if not peak > 0:
            raise Skip("the learning rate is never above 0")
        at = np.clip(np.searchsorted(ls, vs, side="right") - 1, 0, len(ls) - 1)
        lr = lv[at]  # the learning rate in force at each evaluation
        high = np.flatnonzero(lr >= 0.5 * peak)
        high = high[len(high) // 3 :]
        low = np.flatnonzero(lr <= o["max_lr_ratio"] * peak)
        if len(high) < o["min_evals"] or len(low) < o["min_evals"]:
            raise Skip(
                f"the learning rate never stays at or below {o['max_lr_ratio']:.2g} of its peak "
                f"for {int(o['min_evals'])} evaluations (the check needs a decayed learning rate)"
            )
        # consecutive runs only: a second difference across the phase boundary is no jitter
        j_high, j_low = _jitter(vv[high]), _jitter(vv[low])
        if not j_high > 0:
            return
        ratio = j_low / j_high
        lr_ratio = float(np.median(lr[low])) / peak
        if ratio < o["min_jitter_ratio"]:
            return
        col = ctx.column("val_loss")
        first = float(vs[low[0]])
        shown = _dropout_in_log(ctx)
        dropout = f" (the log shows {shown})" if shown else ""
        yield self.finding(
            f"The validation loss ({col}) still jitters by {fmt(j_low)} between evaluations "
            f"after {ctx.at(first)}, where the learning rate is {lr_ratio:.2g} of its peak: "
            f"{ratio:.0%} of its jitter at the peak learning rate ({fmt(j_high)}). With "
            "model.eval() the validation loss only moves as the weights move; a noise floor "
            "that ignores the learning rate is dropout (or batch statistics) active during "
            f"validation{dropout}, or a random validation subset each time.",
            columns=(col,),
            examples=ctx.example([float(vs[i]) for i in low[:5]]),
            metrics={
                "jitter_low_lr": j_low,
                "jitter_high_lr": j_high,
                "ratio": ratio,
                "lr_ratio": lr_ratio,
                "from_step": first,
            },
            hint="call model.eval() before validation (and model.train() after), under "
            "torch.no_grad(); evaluate the same validation set each time",
        )
        self.mark("val_loss", first, f"jitter at lr x{lr_ratio:.2g}")
