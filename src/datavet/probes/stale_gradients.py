from __future__ import annotations

import math

from datavet.findings import Severity
from datavet.probes.base import Probe, ProbeContext, Skip


def _reference_gradients(ctx: ProbeContext, names: list[str]) -> list:
    """The gradient of ``loss_fn`` on the whole batch, one backward on a fresh copy."""
    with ctx.isolated():
        model = ctx.copy(train=True)
        params = dict(model.named_parameters())
        loss = ctx.loss(ctx.forward(model))
        if not loss.requires_grad:
            return [None for _ in names]
        loss.backward()
    return [None if params[n].grad is None else params[n].grad.detach() for n in names]


class StaleGradients(Probe):
    """Your train step lets gradients accumulate across steps (``zero_grad`` is missing).

    **What it checks**
    Needs ``train_step=``: a function ``train_step(model, optimizer, batch)`` that does one
    training step the way your loop does (forward, loss, backward, ``optimizer.step()``, and
    wherever you put it, ``zero_grad``). It is called twice on a copy of the model with the
    same batch and the same random seed, with the optimizer's learning rate set to 0 so the
    weights do not move. The gradients the optimizer sees at its two ``step()`` calls must be
    the same; they are recorded by a step pre-hook, so it does not matter where ``zero_grad``
    sits. It fires when they differ by more than ``rtol`` (a ratio of 2 means accumulation), or
    when the train step never calls ``optimizer.step()``.

    **Why it matters**
    PyTorch adds each ``backward()`` into ``.grad``. Without ``zero_grad`` the update at step t
    is the sum of all gradients so far: the effective learning rate grows every step and
    training diverges or wanders, with no error. The check is exactly this: learning rate
    0, the same batch twice, compare the gradients.

    **How to fix**
    Call ``optimizer.zero_grad(set_to_none=True)`` once per step, before ``backward()`` (or after
    ``step()``); with gradient accumulation, call it every ``k`` micro-batches and divide the loss
    by ``k``.
    """

    code = "M010"
    name = "stale-gradients"
    severity = Severity.ERROR
    summary = "a user train step accumulates gradients across steps (no zero_grad)"
    thresholds = {"rtol": 1e-3}

    def check(self, ctx: ProbeContext):
        import torch

        model, named = ctx.train_step_copy()
        params = [p for _, p in named]
        if ctx.optimizer_factory is not None:
            opt = ctx.optimizer_factory(params)
        else:
            opt = torch.optim.Adam(params, lr=1e-3)
        for group in opt.param_groups:
            group["lr"] = 0.0  # the weights stay put: only the gradients can differ
        seen: list[list] = []

        def snapshot(optimizer, args, kwargs):
            seen.append([None if p.grad is None else p.grad.detach().clone() for p in params])

        handle = opt.register_step_pre_hook(snapshot)
        batch = (ctx.inputs, ctx.target)
        try:
            for _ in range(2):
                with ctx.isolated():  # the same dropout masks both times
                    ctx.train_step(model, opt, batch)
        finally:
            handle.remove()
        if len(seen) < 2:
            self.details = {"headline": f"optimizer.step() called {len(seen)} times in 2 steps"}
            yield self.finding(
                f"Two calls of train_step called optimizer.step() {len(seen)} time(s): the "
                "train step does not update the model through the optimizer it is given.",
                metrics={"step_calls": len(seen)},
                hint="call optimizer.step() once per train_step, on the optimizer passed in",
            )
            return
        first, second = seen[0], seen[1]
        num = den = 0.0
        dot = 0.0
        changed = []
        for (n, _), g1, g2 in zip(named, first, second):
            a = torch.zeros(()) if g1 is None else g1.double()
            b = torch.zeros(()) if g2 is None else g2.double()
            d = float((b - a).pow(2).sum())
            num += d
            den += float(a.pow(2).sum())
            dot += float((a * b).sum())
            if d > 0:
                changed.append(n)
        ref = _reference_gradients(ctx, [n for n, _ in named])
        ref_sq = sum(float(g.double().pow(2).sum()) for g in ref if g is not None)
        if den == 0:
            if ref_sq == 0:
                raise Skip("the first step's gradients are all zero")
            self.details = {"headline": "optimizer.step() saw zero gradients"}
            yield self.finding(
                "optimizer.step() saw all-zero (or no) gradients, although backward() of the "
                "loss on this batch gives non-zero ones: zero_grad() runs between backward() "
                "and step(), so the update never sees a gradient and the model does not train.",
                metrics={"reference_gradient_norm": math.sqrt(ref_sq)},
                hint="call optimizer.zero_grad() before backward() (or after step()), never "
                "between them",
            )
            return
        rel = math.sqrt(num / den)
        ratio = dot / den  # the projection of step 2's gradient on step 1's: 2 for accumulation
        self.details = {
            "relative_difference": rel,
            "ratio": ratio,
            "headline": f"step 2 / step 1 gradient: {ratio:.3g}",
        }
        if rel <= float(self.options["rtol"]) and ref_sq > 0:
            k_dot = sum(
                float((g1.double() * g.double()).sum())
                for g1, g in zip(first, ref)
                if g1 is not None and g is not None
            )
            k = k_dot / ref_sq  # the step's gradient in units of the full-batch gradient
            self.details["full_batch_ratio"] = k
            near = round(k)
            if near >= 2 and abs(k - near) <= 0.1 * near:
                self.details["headline"] = f"step gradient = {k:.3g} x the full-batch gradient"
                yield self.finding(
                    f"The gradient optimizer.step() sees is {k:.3g} x the gradient of the loss "
                    f"on the whole batch: the train step looks like gradient accumulation over "
                    f"{near} micro-batches without dividing each micro-batch's loss by {near}, "
                    f"which multiplies the learning rate by {near}.",
                    metrics={"full_batch_ratio": k, "micro_batches": near},
                    hint=f"divide each micro-batch loss by the number of micro-batches "
                    f"(loss / {near}) before backward()",
                )
            return
        if rel <= float(self.options["rtol"]):
            return
        why = (
            "the second is the first plus itself: gradients accumulate, zero_grad() is missing"
            if abs(ratio - 2) < 0.05
            else "something in the step is not a function of the batch"
        )
        yield self.finding(
            f"Two train steps on the same batch with learning rate 0 handed the optimizer "
            f"different gradients (relative difference {rel:.3g}; step 2 = {ratio:.3g} x "
            f"step 1): {why}.",
            columns=tuple(changed[:20]),
            metrics={"relative_difference": rel, "ratio": ratio},
            hint="call optimizer.zero_grad(set_to_none=True) once per step",
        )
