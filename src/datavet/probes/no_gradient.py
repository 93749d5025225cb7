from __future__ import annotations

from datavet.findings import Severity
from datavet.probes.base import Probe, ProbeContext, Skip
from datavet.probes.nonfinite import forward_trace

MAX_NAMED = 8


class ParametersWithoutGradient(Probe):
    """Parameters that require a gradient but get none from the loss, named, with their share.

    **What it checks**
    One forward and backward pass of the loss on the batch (the trace M004/M005 share). A
    parameter with ``requires_grad=True`` whose ``.grad`` is still ``None`` afterwards is not
    connected to the loss: a ``.detach()`` or ``torch.no_grad()`` on its path, arithmetic on
    ``.data``, a module built but never called in ``forward``, a branch the batch does not take.
    The finding names them and gives their share of all trainable weights. Separately, when at
    least ``frozen_share`` of all weights have ``requires_grad=False``, an info finding says so
    (a frozen backbone is often intended; sometimes it is a forgotten ``requires_grad_(False)``).

    **Why it matters**
    The optimizer skips a parameter without a gradient: it keeps its initial random values for
    the whole run, with no error. The model trains a smaller network than the one written and the
    loss stalls higher, which looks like a capacity or data problem.

    **How to fix**
    Follow each named parameter to the loss: remove the ``.detach()``/``no_grad()``/``.data`` on
    its path, call the module in ``forward``, or, when it is meant to stay fixed, set
    ``requires_grad_(False)`` so the intent is explicit. Unfreeze a backbone you meant to train.
    """

    code = "M015"
    name = "parameters-without-gradient"
    severity = Severity.WARNING
    summary = "trainable parameters that get no gradient from the loss"
    thresholds = {"frozen_share": 0.5}

    def check(self, ctx: ProbeContext):
        t = ctx.cached("trace", lambda: forward_trace(ctx))
        if t.get("backward_error"):
            raise Skip(f"the backward pass failed: {t['backward_error']}")
        if not t["loss_requires_grad"]:
            raise Skip("the loss does not require grad: no trainable parameter reaches it")
        params = dict(ctx.model.named_parameters())
        total = sum(p.numel() for p in params.values()) or 1
        trainable = sum(p.numel() for p in params.values() if p.requires_grad) or 1
        missing = [n for n in t["no_gradient"] if n in params]
        share = sum(params[n].numel() for n in missing) / trainable
        frozen = sum(p.numel() for p in params.values() if not p.requires_grad) / total
        self.details = {
            "no_gradient": missing,
            "no_gradient_share": share,
            "frozen_share": frozen,
            "headline": (
                f"{len(missing)} parameter(s) without gradient ({share:.0%} of trainable)"
                if missing
                else "every trainable parameter gets a gradient"
            ),
        }
        if missing:
            more = f" (+{len(missing) - MAX_NAMED} more)" if len(missing) > MAX_NAMED else ""
            yield self.finding(
                f"{len(missing)} parameter(s) require a gradient but get none from the loss: "
                f"{', '.join(missing[:MAX_NAMED])}{more}; {share:.1%} of the trainable weights "
                "never train (a detach, no_grad or .data on their path, or a module forward "
                "never calls).",
                columns=tuple(missing[:20]),
                n_affected=len(missing),
                metrics={"parameters": len(missing), "share": share},
                hint="remove the .detach()/no_grad()/.data on their path, or requires_grad_"
                "(False) if they are meant to stay fixed",
            )
        if frozen >= float(self.options["frozen_share"]):
            yield self.finding(
                f"{frozen:.0%} of the model's weights have requires_grad=False: only "
                f"{1 - frozen:.0%} will train. Expected for a frozen backbone; if you meant to "
                "fine-tune it, unfreeze it.",
                severity=Severity.INFO,
                metrics={"frozen_share": frozen},
                hint="model.requires_grad_(True) on the parts you mean to train",
            )
