from __future__ import annotations

import contextlib

from datavet.findings import Severity
from datavet.probes.base import Probe, ProbeContext, Skip

FP16_TINY = 2.0**-24  # the smallest float16 subnormal, 6e-8


@contextlib.contextmanager
def _count_scale_calls(torch, calls: list):
    """Count ``GradScaler.scale`` calls (every GradScaler class derives from torch.amp's)."""
    cls = torch.amp.GradScaler
    original = cls.scale

    def scale(self, outputs):
        calls.append(float(self.get_scale()) if self.is_enabled() else 1.0)
        return original(self, outputs)

    cls.scale = scale
    try:
        yield
    finally:
        cls.scale = original


class AmpWithoutGradScaler(Probe):
    """Your train step runs the forward under float16 autocast but never scales the loss.

    **What it checks**
    Needs ``train_step=`` (``train_step(model, optimizer, batch)``, one step of your loop). It
    is called once on a copy of the model with the optimizer's learning rate set to 0. A
    forward pre-hook on the model reads whether ``torch.autocast`` was on, and with which
    dtype, when the model ran; ``GradScaler.scale`` calls are counted while the step runs. It
    fires when the forward ran under float16 autocast and no ``GradScaler.scale`` was called
    (or the scaler was created with ``enabled=False``). bfloat16 autocast needs no scaler and
    is quiet. The message adds the share of gradient values that are non-zero in float32 but
    arrived at ``optimizer.step()`` as exactly 0 (the underflow this batch already shows).

    **Why it matters**
    Under float16 autocast the backward runs in float16 too: a gradient below 6e-8 becomes 0
    and its weight stops learning, with no error and no NaN. ``GradScaler`` multiplies the loss
    (by 65,536 to start) before ``backward()`` so the gradients stay in range, unscales them
    before the update, and skips steps whose gradients overflowed. An AMP loop that calls
    ``loss.backward()`` directly has none of this; the harm grows as the loss and its
    gradients shrink during training, so a healthy first batch does not prove the loop safe.

    **How to fix**
    ``scaler = torch.amp.GradScaler(device_type)`` once; in the step
    ``scaler.scale(loss).backward(); scaler.step(optimizer); scaler.update()`` (call
    ``scaler.unscale_(optimizer)`` before gradient clipping). Or use ``dtype=torch.bfloat16``,
    which has float32's range and needs no scaler.
    """

    code = "M019"
    name = "amp-without-grad-scaler"
    severity = Severity.WARNING
    summary = "a float16 autocast train step that never scales the loss (no GradScaler)"
    thresholds = {}

    def check(self, ctx: ProbeContext):
        import torch

        model, named = ctx.train_step_copy()
        params = [p for _, p in named]
        opt = (
            ctx.optimizer_factory(params)
            if ctx.optimizer_factory is not None
            else torch.optim.SGD(params, lr=0.0)
        )
        for group in opt.param_groups:
            group["lr"] = 0.0
        device_type = torch.device(ctx.device).type
        modes: list[tuple[bool, object]] = []
        grads: list[list] = []

        def pre(module, args, kwargs=None):
            try:
                on = torch.is_autocast_enabled(device_type)
                dtype = torch.get_autocast_dtype(device_type) if on else None
            except (TypeError, RuntimeError):  # an older torch: the CPU/CUDA-only spellings
                on = torch.is_autocast_enabled()
                dtype = torch.get_autocast_gpu_dtype() if on else None
            modes.append((bool(on), dtype))

        def before_step(optimizer, args, kwargs):
            grads.append([None if p.grad is None else p.grad.detach().clone() for p in params])

        hooks = [model.register_forward_pre_hook(pre), opt.register_step_pre_hook(before_step)]
        scales: list[float] = []
        try:
            with _count_scale_calls(torch, scales), ctx.isolated():
                ctx.train_step(model, opt, (ctx.inputs, ctx.target))
        finally:
            for h in hooks:
                h.remove()
        if not modes:
            raise Skip("the train step did not call the model it was given")
        fp16 = any(on and dtype == torch.float16 for on, dtype in modes)
        scaled = any(s > 1.0 for s in scales)
        self.details = {
            "autocast_float16": fp16,
            "scale_calls": len(scales),
            "headline": (
                "no float16 autocast"
                if not fp16
                else f"float16 autocast, loss scaled by {max(scales):g}"
                if scaled
                else "float16 autocast without loss scaling"
            ),
        }
        if not fp16:
            raise Skip("the train step does not run the model under float16 autocast")
        if scaled:
            return
        lost = total = 0
        if grads:
            ref = self._fp32_gradients(ctx, [n for n, _ in named])
            for g16, g32 in zip(grads[0], ref):
                if g32 is None:
                    continue
                live = g32 != 0
                total += int(live.sum())
                if g16 is None:
                    lost += int(live.sum())
                else:
                    lost += int((live & (g16 == 0)).sum())
        share = lost / total if total else 0.0
        self.details["underflow_share"] = share
        why = (
            "GradScaler.scale was called with the scaler disabled"
            if scales
            else "GradScaler.scale was never called: backward() ran on the unscaled loss"
        )
        yield self.finding(
            f"The train step runs the model under float16 autocast, but {why}. Gradients below "
            f"{FP16_TINY:.1e} become 0 in float16; on this batch {share:.1%} of the gradient "
            f"values that are non-zero in float32 ({lost:,} of {total:,}) reached "
            "optimizer.step() as 0, and the share grows as the loss falls.",
            n_affected=lost,
            metrics={"underflow_share": share, "values": lost, "scale_calls": len(scales)},
            hint="scaler = torch.amp.GradScaler(); scaler.scale(loss).backward(); "
            "scaler.step(optimizer); scaler.update() (or autocast to bfloat16)",
        )

    @staticmethod
    def _fp32_gradients(ctx: ProbeContext, names: list[str]) -> list:
        with ctx.isolated():
            model = ctx.copy(train=True).float()
            params = dict(model.named_parameters())
            loss = ctx.loss(ctx.forward(model))
            if not loss.requires_grad:
                return [None for _ in names]
            loss.backward()
        return [None if params[n].grad is None else params[n].grad.detach() for n in names]
