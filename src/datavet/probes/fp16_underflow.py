from __future__ import annotations

from datavet.findings import Severity
from datavet.probes.base import Probe, ProbeContext, Skip

FP16_TINY = 2.0**-24  # the smallest float16 subnormal, 6e-8


def _to_float(obj):
    import torch

    if isinstance(obj, torch.Tensor):
        return obj.float() if obj.is_floating_point() else obj
    if isinstance(obj, dict):
        return {k: _to_float(v) for k, v in obj.items()}
    if isinstance(obj, (tuple, list)):
        return type(obj)(_to_float(v) for v in obj)
    return obj


class Fp16GradientUnderflow(Probe):
    """fp16 gradients that underflow to 0 where the same model in fp32 has non-zero ones.

    **What it checks**
    float16 models only. One backward pass of the loss on the batch in float16, as a training
    step without loss scaling computes it, and the same pass on a float32 copy with the same
    weights. Among the gradient values that are non-zero in float32, the share that are exactly
    0 in float16 is the underflow; it fires at ``max_share`` (1%) or more, and names the
    parameters with the most.

    **Why it matters**
    float16 has nothing between 0 and 6e-8: smaller gradients become 0, and those weights stop
    learning with no error and no NaN. Mixed-precision training exists for this: ``GradScaler``
    multiplies the loss (by 65,536 to start) before ``backward()`` so the gradients land in
    float16's range, and divides them back before the update. A float16 loop without it (or an
    AMP step that calls ``loss.backward()`` instead of ``scaler.scale(loss).backward()``) loses
    the small gradients.

    **How to fix**
    Keep the weights in float32 and run the forward under ``torch.autocast(device_type,
    dtype=torch.float16)`` with ``scaler = torch.amp.GradScaler()``:
    ``scaler.scale(loss).backward(); scaler.step(optimizer); scaler.update()``. Or use bfloat16,
    which has float32's range and needs no scaler.
    """

    code = "M016"
    name = "fp16-gradient-underflow"
    severity = Severity.WARNING
    summary = "float16 gradients underflow to 0 where float32 ones are not (no GradScaler)"
    thresholds = {"max_share": 0.01}

    def check(self, ctx: ProbeContext):
        import torch

        params = list(ctx.model.parameters())
        if not any(p.dtype == torch.float16 for p in params):
            raise Skip("no float16 parameter")
        grads = {}
        for name, dtype in (("fp16", None), ("fp32", torch.float32)):
            with ctx.isolated():
                model = ctx.copy(train=True)
                inputs, target = ctx.inputs, ctx.target
                if dtype is not None:
                    model = model.float()
                    inputs, target = _to_float(inputs), _to_float(target)
                loss = ctx.loss_fn(ctx.forward(model, inputs), target)
                if not loss.requires_grad:
                    raise Skip("the loss does not require grad")
                if not bool(torch.isfinite(loss.detach())):
                    raise Skip("the loss is not finite (see M004)")
                loss.backward()
                grads[name] = {
                    n: p.grad.detach().float()
                    for n, p in model.named_parameters()
                    if p.grad is not None
                }
        lost = total = 0
        per: dict[str, float] = {}
        for n, g32 in grads["fp32"].items():
            g16 = grads["fp16"].get(n)
            if g16 is None:
                continue
            live = g32 != 0
            gone = live & (g16 == 0)
            k, m = int(gone.sum()), int(live.sum())
            lost, total = lost + k, total + m
            if k:
                per[n] = k / m
        if not total:
            raise Skip("every float32 gradient is 0")
        share = lost / total
        worst = sorted(per, key=lambda n: -per[n])
        self.details = {
            "underflow_share": share,
            "per_parameter": per,
            "headline": f"{share:.1%} of the gradient values underflow in float16",
        }
        if share < float(self.options["max_share"]):
            return
        yield self.finding(
            f"{share:.1%} of the gradient values that are non-zero in float32 ({lost:,} of "
            f"{total:,}) are exactly 0 in float16 (below {FP16_TINY:.1e}): without loss scaling "
            f"those weights never update. Most in: "
            + ", ".join(f"{n} ({per[n]:.0%})" for n in worst[:5])
            + ".",
            columns=tuple(worst[:20]),
            n_affected=lost,
            metrics={"underflow_share": share, "values": lost},
            hint="keep float32 weights and use torch.autocast with torch.amp.GradScaler "
            "(scaler.scale(loss).backward()), or bfloat16",
        )
