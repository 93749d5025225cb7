from __future__ import annotations

from datavet.auditors.base import fmt
from datavet.findings import Severity
from datavet.probes.base import Probe, ProbeContext, Skip


class EvalNondeterminism(Probe):
    """In ``eval()`` mode the same input gives a different output the second time.

    **What it checks**
    A copy of the model in ``eval()`` mode is run twice on the same batch without gradients,
    the random generators advancing in between as they would. The outputs must agree to
    ``rtol``/``atol``; it fires with the largest difference otherwise.

    **Why it matters**
    Evaluation must be a function of the input. A difference means something random is still
    active in eval mode: ``F.dropout(x, p)`` whose ``training`` argument defaults to True, a
    custom layer that ignores ``self.training``, noise injection, or sampling in the forward.
    Validation scores then jitter from run to run, and checkpoints are compared on noise.

    **How to fix**
    Use ``nn.Dropout`` modules, or pass ``training=self.training`` to functional dropout; guard
    noise and sampling with ``if self.training``. (GPU kernels that are not bitwise
    deterministic give differences near ``1e-7``, below the default tolerance.)
    """

    code = "M008"
    name = "eval-nondeterminism"
    severity = Severity.WARNING
    summary = "two eval()-mode passes on the same input disagree"
    thresholds = {"rtol": 1e-5, "atol": 1e-6}

    def check(self, ctx: ProbeContext):
        import torch

        from datavet.probes._torch import tensors

        with ctx.isolated(), torch.no_grad():
            model = ctx.copy(train=False)
            first = [t.detach().clone() for t in tensors(ctx.forward(model))]
            second = [t.detach() for t in tensors(ctx.forward(model))]
        pairs = [(a, b) for a, b in zip(first, second) if a.is_floating_point()]
        if not pairs:
            raise Skip("the model's output has no floating-point tensor")
        if [a.shape for a in first] != [b.shape for b in second]:
            diff = float("inf")
        else:
            diff = max(
                float(torch.nan_to_num((a - b).abs(), nan=0.0, posinf=0.0).max())
                if a.numel()
                else 0.0
                for a, b in pairs
            )
        same = all(
            a.shape == b.shape
            and torch.allclose(
                a,
                b,
                rtol=float(self.options["rtol"]),
                atol=float(self.options["atol"]),
                equal_nan=True,
            )
            for a, b in pairs
        )
        self.details = {"max_abs_diff": diff, "headline": f"max |diff| {fmt(diff)}"}
        if same:
            return
        yield self.finding(
            f"Two eval()-mode passes on the same batch disagree (largest difference "
            f"{fmt(diff)}): something random is active in eval mode.",
            metrics={"max_abs_diff": diff},
            hint="use nn.Dropout or F.dropout(..., training=self.training); guard noise with "
            "`if self.training`",
        )
