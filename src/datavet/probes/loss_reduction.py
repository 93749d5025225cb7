from __future__ import annotations

import math

from datavet.findings import Severity
from datavet.probes.base import Probe, ProbeContext, Skip


class BatchSizeDependentLoss(Probe):
    """The loss's scale depends on the batch size (a sum where a mean was meant).

    **What it checks**
    With a copy in ``eval()`` mode (so dropout does not differ), the loss of the first
    ``2h`` samples of the batch is compared with the mean of the losses of its two halves of
    ``h``. A per-sample mean gives a ratio of 1 (exactly, for the usual mean reductions); a sum
    gives 2; a mean divided again by the batch size gives 1/2. It fires when the ratio is outside
    ``[1/max_ratio, max_ratio]``.

    **Why it matters**
    With ``reduction="sum"``, or gradient accumulation that forgets to divide, the gradient grows
    with the batch size, so the effective learning rate changes whenever the batch size (or the
    last, smaller batch of an epoch) does: a learning rate tuned at batch 32 diverges at 256.
    Losses that depend on the batch by design (contrastive losses over in-batch negatives) fire
    here too; ignore the rule for them.

    **How to fix**
    Use ``reduction="mean"`` (the default), or divide the summed loss by the number of samples
    (tokens, for sequence losses); with gradient accumulation divide each micro-batch's loss by
    the number of accumulation steps.
    """

    code = "M009"
    name = "batch-size-dependent-loss"
    severity = Severity.WARNING
    summary = "the loss scales with the batch size (sum vs mean)"
    thresholds = {"max_ratio": 1.5}

    def check(self, ctx: ProbeContext):
        import torch

        from datavet.probes._torch import take_rows

        half = ctx.batch_size // 2
        if half < 1:
            raise Skip("the batch has fewer than 2 samples")
        b = ctx.batch_size

        def loss_of(rows: slice) -> float:
            with ctx.isolated():
                out = ctx.forward(model, take_rows(ctx.inputs, rows, b))
                return float(ctx.loss(out, take_rows(ctx.target, rows, b)))

        with torch.no_grad():
            model = ctx.copy(train=False)
            full = loss_of(slice(0, 2 * half))
            a = loss_of(slice(0, half))
            c = loss_of(slice(half, 2 * half))
        mean_halves = (a + c) / 2
        if not all(math.isfinite(v) for v in (full, a, c)):
            raise Skip("the loss is not finite on this batch (see M004)")
        if mean_halves <= 1e-12 or full <= 1e-12:
            raise Skip("the loss is 0 on this batch")
        ratio = full / mean_halves
        limit = float(self.options["max_ratio"])
        self.details = {
            "loss_full": full,
            "loss_half_mean": mean_halves,
            "ratio": ratio,
            "samples": 2 * half,
            "headline": f"{2 * half} samples / {half}: loss ratio {ratio:.3g}",
        }
        if 1 / limit <= ratio <= limit:
            return
        if ratio > 1:
            what = "grows with the batch size (a sum over samples, or a missing division)"
        else:
            what = "shrinks as the batch grows (divided by the batch size twice?)"
        yield self.finding(
            f"The loss {what}: {full:.4g} on {2 * half} samples against {mean_halves:.4g} on "
            f"average for halves of {half} (ratio {ratio:.3g}; a per-sample mean gives 1). The "
            "gradient, and so the effective learning rate, changes with the batch size.",
            metrics={"loss_full": full, "loss_half_mean": mean_halves, "ratio": ratio},
            hint="use reduction='mean' or divide the summed loss by the number of samples",
        )
