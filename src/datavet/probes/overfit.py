from __future__ import annotations

import math

from datavet.findings import Severity
from datavet.probes.base import Probe, ProbeContext, Skip

MAX_CURVE_POINTS = 101


def _curve(losses: list[float]) -> list[list[float]]:
    """[[step, loss], ...], at most MAX_CURVE_POINTS, always with the first and the last step."""
    n = len(losses)
    if n <= MAX_CURVE_POINTS:
        idx = range(n)
    else:
        step = (n - 1) / (MAX_CURVE_POINTS - 1)
        idx = sorted({round(i * step) for i in range(MAX_CURVE_POINTS)})
    return [[i, losses[i]] for i in idx]


class OverfitBatch(Probe):
    """A copy of the model, trained on the one batch, cannot drive the loss toward 0.

    **What it checks**
    A copy of the model is trained on the batch alone for ``steps`` updates (Adam, ``lr``, or
    the ``optimizer_factory`` you pass) and fails when the final loss is above ``max_ratio`` of
    the initial loss, or turns non-finite. Parameters that never changed are named. In the seed,
    the normal model goes from 1.663 to 0.0003 in 300 steps; the same model with a second softmax
    stalls at 0.9674.

    This checks that the training path is wired (model, loss, backward, update), **not** that
    the data is right: with labels shuffled at random the seed's model still reaches 0.0004,
    because a network memorises a few dozen samples whatever their labels. Data problems are
    ``datavet audit``'s job and the baselines'.

    **Why it matters**
    It is the cheapest test of the whole loop: seconds on one batch instead of hours on the
    dataset. A model that cannot memorise 16 samples will not learn from a million. Typical
    causes: softmax before a loss that applies log-softmax again (M003), a detached tensor or
    frozen layer that blocks the gradient, targets of the wrong shape broadcast by the loss,
    an output layer squashed into a narrow range, a learning rate far too small.

    **How to fix**
    Read the message's list of parameters that never changed (detached or frozen paths); remove
    a final softmax when the loss is ``cross_entropy``; check target shapes against the output;
    then try a larger ``lr``. A loss with a floor above 0 (label smoothing, a regulariser in the
    loss) needs a larger ``max_ratio``.
    """

    code = "M002"
    name = "cannot-overfit-batch"
    severity = Severity.ERROR
    summary = "a copy trained on one batch does not drive the loss toward 0"
    thresholds = {"steps": 300, "lr": 1e-2, "max_ratio": 0.05}

    def check(self, ctx: ProbeContext):
        import torch

        steps = int(self.options["steps"])
        if steps < 1:
            raise Skip("steps < 1")
        with ctx.isolated():
            model = ctx.copy(train=True)
            named = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
            if not named:
                raise Skip("the model has no trainable parameter")
            params = [p for _, p in named]
            before = [p.detach().clone() for p in params]
            if ctx.optimizer_factory is not None:
                opt = ctx.optimizer_factory(params)
                opt_name = type(opt).__name__
            else:
                opt = torch.optim.Adam(params, lr=float(self.options["lr"]))
                opt_name = f"Adam, lr {self.options['lr']:g}"
            losses: list[float] = []
            bad_step = None
            for step in range(steps + 1):  # the last pass only measures, as in the seed
                if step == steps:
                    with torch.no_grad():
                        loss = ctx.loss(ctx.forward(model))
                else:
                    loss = ctx.loss(ctx.forward(model))
                value = float(loss.detach())
                losses.append(value)
                if not math.isfinite(value):
                    bad_step = step
                    break
                if step == steps:
                    break
                if not loss.requires_grad:
                    raise Skip("the loss does not require grad: no trainable parameter reaches it")
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
            frozen = [n for (n, p), b in zip(named, before) if torch.equal(p.detach(), b)]

        first, last = losses[0], losses[-1]
        ratio = last / first if first > 0 and math.isfinite(first) else math.nan
        self.details = {
            "steps": steps,
            "optimizer": opt_name,
            "initial_loss": first,
            "final_loss": last,
            "ratio": ratio,
            "never_updated": frozen,
            "curve": _curve(losses),
            "nonfinite_step": bad_step,
        }
        stuck = (
            f" {len(frozen)} trainable parameter(s) never changed: {', '.join(frozen[:8])}"
            + (f" (+{len(frozen) - 8} more)" if len(frozen) > 8 else "")
            + " (detached or not connected to the loss)."
            if frozen
            else ""
        )
        setup = f"on this one batch of {ctx.batch_size} samples"
        hint = (
            "remove a softmax before cross_entropy (M003), look for detached or frozen paths, "
            "check target shapes, then raise the lr"
        )
        if bad_step is not None:
            self.details["headline"] = f"{first:.4g} -> {last} at step {bad_step}"
            yield self.finding(
                f"Training a copy of the model {setup} ({opt_name}) turned the loss {last} at "
                f"step {bad_step} (it started at {first:.4g}).{stuck}",
                metrics={"initial_loss": first, "final_loss": last, "nonfinite_step": bad_step},
                columns=tuple(frozen),
                hint="run M004/M005 on the batch; lower the lr or clip gradients",
            )
            return
        if first <= 1e-12:
            raise Skip(f"the initial loss is already {first:.3g}")
        self.details["headline"] = f"{first:.4g} -> {last:.4g} in {steps} steps"
        if ratio <= float(self.options["max_ratio"]):
            return
        yield self.finding(
            f"A copy of the model trained {setup} for {steps} steps ({opt_name}) only brought "
            f"the loss from {first:.4g} to {last:.4g} ({ratio:.0%} of the start; it must fall "
            f"below {self.options['max_ratio']:.0%}): the path from output to loss to update is "
            f"broken.{stuck}",
            metrics={"initial_loss": first, "final_loss": last, "ratio": ratio, "steps": steps},
            columns=tuple(frozen),
            hint=hint,
        )
