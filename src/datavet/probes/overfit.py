from __future__ import annotations

import math
import warnings

from datavet.findings import Severity
from datavet.probes.base import Probe, ProbeContext, Skip

MAX_CURVE_POINTS = 101
SWEEP_FACTORS = (0.1, 0.3, 3.0)  # learning rates tried, as multiples of ``lr``
MIN_STEPS = 20  # the fewest steps a budget trims a run to
LOW_PRECISION = ("float16", "bfloat16")


def _curve(losses: list[float]) -> list[list[float]]:
    """[[step, loss], ...], at most MAX_CURVE_POINTS, always with the first and the last step."""
    n = len(losses)
    if n <= MAX_CURVE_POINTS:
        idx = range(n)
    else:
        step = (n - 1) / (MAX_CURVE_POINTS - 1)
        idx = sorted({round(i * step) for i in range(MAX_CURVE_POINTS)})
    return [[i, losses[i]] for i in idx]


class _Run:
    """One training run of a copy of the model on the batch, which can be continued.

    Low-precision (fp16/bf16) weights trained by datavet's own Adam get an fp32 master copy and
    a dynamic loss scale (mixed-precision training): Adam's ``eps`` (1e-8) is 0 in fp16, so
    Adam stepping fp16 weights directly divides by 0 and turns them NaN.
    """

    def __init__(self, ctx: ProbeContext, *, lr: float | None, label: str) -> None:
        import torch

        self.ctx, self.label, self.lr = ctx, label, lr
        self.model = ctx.copy(train=True)
        self.named = [(n, p) for n, p in self.model.named_parameters() if p.requires_grad]
        self.params = [p for _, p in self.named]
        self.before = [p.detach().clone() for p in self.params]
        self.master = None
        low = any(str(p.dtype).replace("torch.", "") in LOW_PRECISION for p in self.params)
        if lr is None:  # the user's optimizer, on the model's own weights
            self.opt = ctx.optimizer_factory(self.params)
            self.label = type(self.opt).__name__
        elif low:
            self.master = [p.detach().float().clone().requires_grad_(True) for p in self.params]
            self.opt = torch.optim.Adam(self.master, lr=lr)
            self.label = f"{label}, fp32 master weights"
        else:
            self.opt = torch.optim.Adam(self.params, lr=lr)
        self.scale = 2.0**12
        self.losses: list[float] = []
        self.bad_step: int | None = None
        self.steps = 0
        self.no_grad: list[str] | None = None  # parameters the first backward gave no gradient
        self.detached = False  # the loss did not require grad: no trainable parameter reaches it

    def _record_grads(self) -> None:
        if self.no_grad is None:
            self.no_grad = [
                n for n, p in self.named if p.grad is None or not bool(p.grad.detach().any())
            ]

    def _measure(self) -> float:
        import torch

        with torch.no_grad():
            return float(self.ctx.loss(self.ctx.forward(self.model)).detach().float())

    def advance(self, n: int) -> None:
        """n more updates, measuring the loss before each."""
        import torch

        for _ in range(n):
            if self.bad_step is not None:
                return
            loss = self.ctx.loss(self.ctx.forward(self.model))
            value = float(loss.detach().float())
            self.losses.append(value)
            if not math.isfinite(value):
                self.bad_step = self.steps
                return
            if not loss.requires_grad:
                self.detached = True
                return
            if self.master is None:
                self.opt.zero_grad(set_to_none=True)
                loss.backward()
                self._record_grads()
                self.opt.step()
            else:
                for p in self.params:
                    p.grad = None
                (loss.float() * self.scale).backward()
                self._record_grads()
                grads = [
                    None if p.grad is None else p.grad.float() / self.scale for p in self.params
                ]
                if any(g is not None and not bool(torch.isfinite(g).all()) for g in grads):
                    self.scale /= 2  # overflow in the scaled backward: skip the step
                else:
                    for m, g in zip(self.master, grads):
                        m.grad = g
                    self.opt.step()
                    with torch.no_grad():
                        for p, m in zip(self.params, self.master):
                            p.copy_(m)
            self.steps += 1

    def final(self) -> float:
        """The loss after the last update (a measuring pass)."""
        if self.bad_step is None:
            value = self._measure()
            self.losses.append(value)
            if not math.isfinite(value):
                self.bad_step = self.steps
        return self.losses[-1]

    def never_updated(self) -> list[str]:
        import torch

        return [n for (n, p), b in zip(self.named, self.before) if torch.equal(p.detach(), b)]


def loss_floor(ctx: ProbeContext, output, steps: int = 300) -> float | None:
    """The lowest loss the loss function allows on this batch: the loss of a free output tensor
    (no model) optimised directly. 0 for cross-entropy or MSE; the entropy of the smoothed labels
    with label smoothing. None when the loss cannot take a free output."""
    import torch

    if output is None or not output.is_floating_point():
        return None
    z = output.detach().float().clone().requires_grad_(True)
    opt = torch.optim.Adam([z], lr=0.5)
    best = math.inf
    try:
        for _ in range(steps):
            loss = ctx.loss(z)
            value = float(loss.detach())
            if not math.isfinite(value):
                return None
            best = min(best, value)
            opt.zero_grad()
            loss.backward()
            opt.step()
    except Exception:
        return None
    return max(best, 0.0) if math.isfinite(best) else None


def broadcast_mismatch(ctx: ProbeContext) -> dict | None:
    """The output and the target differ in shape but not in size, and the loss broadcasts them:
    its value changes when the target takes the output's shape ((N, 1) against (N,) compares
    every output with every target). None when the shapes agree or the loss does not care."""
    import torch

    out, y = ctx.output, ctx.target
    if (
        not isinstance(out, torch.Tensor)
        or not out.is_floating_point()
        or out.shape == y.shape
        or out.numel() != y.numel()
    ):
        return None
    try:
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch's "target size different to input size"
            given = float(ctx.loss(out))
            reshaped = float(ctx.loss(out, y.reshape(out.shape)))
            paired = tuple(torch.broadcast_shapes(out.shape, y.shape))
    except Exception:  # the loss refuses one of the two: it does not broadcast silently
        return None
    if not (math.isfinite(given) and math.isfinite(reshaped)) or math.isclose(
        given, reshaped, rel_tol=1e-4, abs_tol=1e-8
    ):
        return None
    return {
        "output_shape": tuple(out.shape),
        "target_shape": tuple(y.shape),
        "broadcast_shape": paired,
        "loss": given,
        "loss_reshaped": reshaped,
    }


def linear_baseline(ctx: ProbeContext, output, steps: int) -> float | None:
    """The lowest loss a linear map from the flattened inputs to the output reaches on the batch
    (Adam at two learning rates); None for non-float inputs or a huge map."""
    import torch

    from datavet.probes._torch import tensors

    xs = [t for t in tensors(ctx.inputs) if t.is_floating_point() and t.ndim >= 1]
    if len(xs) != 1 or output is None or not output.is_floating_point():
        return None
    n = ctx.batch_size
    if xs[0].shape[0] != n or output.ndim < 1 or output.shape[0] != n:
        return None
    x = xs[0].detach().float().reshape(n, -1)
    x = (x - x.mean(0)) / (x.std(0, unbiased=False) + 1e-6)
    d_out = int(output[0].numel())
    if x.shape[1] * d_out > 4_000_000:
        return None
    best = math.inf
    for lr in (1e-2, 1e-1):
        gen = torch.Generator(device=x.device).manual_seed(ctx.seed)
        w = torch.randn(x.shape[1], d_out, generator=gen, device=x.device) * 0.01
        w.requires_grad_(True)
        b = torch.zeros(d_out, device=x.device, requires_grad=True)
        opt = torch.optim.Adam([w, b], lr=lr)
        try:
            for _ in range(steps + 1):
                out = (x @ w + b).reshape(output.shape)
                loss = ctx.loss(out)
                value = float(loss.detach())
                if not math.isfinite(value):
                    break
                best = min(best, value)
                opt.zero_grad()
                loss.backward()
                opt.step()
        except Exception:
            return None
    return best if math.isfinite(best) else None


def _still_falling(losses: list[float], floor: float, min_drop: float) -> bool:
    """The last third of the run lowered the loss by more than ``min_drop`` of its gap to the
    floor."""
    if len(losses) < 6:
        return True
    k = len(losses) // 3
    start, end = min(losses[: len(losses) - k]), losses[-1]
    gap = end - floor
    return math.isfinite(end) and start - end > min_drop * max(gap, 1e-12)


class OverfitBatch(Probe):
    """A copy of the model, trained on the one batch, cannot drive the loss toward its floor.

    **What it checks**
    A copy of the model is trained on the batch alone for ``steps`` updates (Adam, ``lr``, or
    the ``optimizer_factory`` you pass). It passes when the final loss falls below ``max_ratio``
    of the way from the initial loss to the loss's floor. The floor is what the loss function
    allows on this batch, found by optimising a free output tensor: 0 for cross-entropy or MSE,
    the entropy of the smoothed labels with label smoothing. For example, a healthy 5-class MLP
    goes from 1.663 to 0.0003 in 300 steps; the same model with a second softmax stalls at 0.9674.

    Three errors need no training run: a model with no trainable parameter (none at all, or all
    frozen); an output and a target of different shapes that the loss broadcasts (its value
    changes when the target takes the output's shape: ``mse_loss`` on an ``(N, 1)`` output and
    an ``(N,)`` target compares every output with every target, and its "floor" is ``var(y)``);
    and a loss that does not require a gradient (no trainable weight reaches it). A loss that
    starts below 0 is trained and judged like any other; only an initial loss of 0 is skipped.

    When the default recipe does not get there, the probe gathers evidence before it speaks:
    parameters that never changed (named: a detached or frozen path is conclusive); a short
    learning-rate sweep with Adam (``lr`` x 0.1, 0.3, 3; your optimizer's run is the first
    when you pass one); more steps while the loss is still falling (up to ``max_steps``); and a
    linear map from the flattened inputs trained on the same batch, which says whether the batch
    can be memorised by a model of little capacity at all. The verdict is then one of:

    - *stuck* (error): no learning rate fits, the loss no longer falls, and the model does worse
      than the linear baseline, or parameters never change;
    - *fits at another learning rate* (info): the fix says which, lower or higher (a deep
      ``tanh`` stack often needs a lower one);
    - *slow* (info): still falling when the step cap is reached, with the figures;
    - *too little capacity* (info): neither the model nor the linear baseline can memorise the
      batch (a logistic regression, a narrow bottleneck), and the model does at least as well.

    fp16/bf16 models are trained by the probe with an fp32 master copy of the weights and a loss
    scale, as mixed-precision training does (Adam stepping fp16 weights directly turns them NaN).

    This checks that the training path is wired (model, loss, backward, update), **not** that
    the data is right: with labels shuffled at random that model still reaches 0.0004,
    because a network memorises a few dozen samples whatever their labels. Data problems are
    ``datavet audit``'s job and the baselines'.

    **Why it matters**
    It is the cheapest test of the whole loop: seconds on one batch instead of hours on the
    dataset. A model that cannot memorise 16 samples will not learn from a million. Typical
    causes: softmax before a loss that applies log-softmax again (M003), a detached tensor or
    frozen layer that blocks the gradient, targets of the wrong shape broadcast by the loss,
    an output layer squashed into a narrow range.

    **How to fix**
    Read the message: it names parameters that never changed (detached or frozen paths) and the
    learning rate that worked, if one did. Remove a final softmax when the loss is
    ``cross_entropy``; check target shapes against the output. ``steps``, ``lr``,
    ``max_ratio``, ``max_steps`` and ``sweep`` (0 turns the evidence runs off) are thresholds.
    """

    code = "M002"
    name = "cannot-overfit-batch"
    severity = Severity.ERROR
    summary = "a copy trained on one batch does not drive the loss toward its floor"
    thresholds = {"steps": 300, "lr": 1e-2, "max_ratio": 0.05, "max_steps": 1200, "sweep": 1}
    sections = ("overfit_curve",)

    def check(self, ctx: ProbeContext):
        steps = int(self.options["steps"])
        if steps < 1:
            raise Skip("steps < 1")
        asked = steps
        left = ctx.steps_left()
        if left < steps * 1.2:  # the default run and its measuring passes must fit the budget
            steps = max(MIN_STEPS, int(left / 1.2))
        lr = float(self.options["lr"])
        max_ratio = float(self.options["max_ratio"])
        if not any(p.requires_grad for p in ctx.model.parameters()):
            yield self._untrainable(ctx)
            return
        shapes = broadcast_mismatch(ctx)
        if shapes is not None:
            yield self._broadcast(shapes)
            return
        with ctx.isolated():
            user = ctx.optimizer_factory is not None
            main = _Run(ctx, lr=None if user else lr, label=f"Adam, lr {lr:g}")
            main.advance(steps)
            main.final()
            frozen = main.no_grad or []
            unchanged = main.never_updated()
            floor = loss_floor(ctx, ctx.output) or 0.0
        losses = main.losses
        first, last = losses[0], losses[-1]
        ratio = last / first if first > 0 and math.isfinite(first) else math.nan
        n_params = sum(p.numel() for p in main.params)
        frozen_share = (
            sum(p.numel() for (n, p) in main.named if n in set(frozen)) / n_params
            if n_params
            else 0.0
        )
        self.details = {
            "steps": steps,
            "optimizer": main.label,
            "initial_loss": first,
            "final_loss": last,
            "ratio": ratio,
            "floor": floor,
            "never_updated": unchanged,
            "no_gradient": frozen,
            "no_gradient_share": frozen_share,
            "curve": _curve(losses),
            "nonfinite_step": main.bad_step,
            "sweep": [],
            "model_steps": main.steps,
        }
        if steps < asked:
            self.details["budget_note"] = f"trimmed from {asked} to {steps} steps by the budget"
        if main.detached:
            self.details["headline"] = "the loss does not depend on any trainable parameter"
            yield self.finding(
                f"The loss ({first:.4g}) does not require a gradient: no trainable parameter "
                "reaches it, so training changes nothing. The output is computed under "
                "torch.no_grad(), detached, or built from frozen parts only.",
                metrics={"initial_loss": first},
                hint="remove the .detach()/torch.no_grad()/.data between the weights and the "
                "loss; requires_grad_(True) on the parts you mean to train",
            )
            return
        # a negative loss is not "already at the floor": it is trained and judged like any other
        if main.bad_step is None and 0 <= first <= 1e-12:
            raise Skip(f"the initial loss is already {first:.3g}")

        def target(start: float) -> float:
            return floor + max_ratio * (start - floor)

        fits = main.bad_step is None and last <= target(first)
        self.details["headline"] = (
            f"{first:.4g} -> {last} at step {main.bad_step}"
            if main.bad_step is not None
            else f"{first:.4g} -> {last:.4g} in {steps} steps"
            + (f" (floor {floor:.4g})" if floor > 1e-3 * abs(first) else "")
        )
        if fits:
            return
        setup = f"on this one batch of {ctx.batch_size} samples"
        opt_name = main.label
        stuck = (
            f" {len(frozen)} trainable parameter(s), {frozen_share:.0%} of the trainable "
            f"weights, never changed: {', '.join(frozen[:8])}"
            + (f" (+{len(frozen) - 8} more)" if len(frozen) > 8 else "")
            + " (no gradient reaches them: detached or not connected to the loss)."
            if frozen
            else ""
        )
        if main.bad_step is not None:
            what = (
                f"Training a copy of the model {setup} ({opt_name}) turned the loss {last} at "
                f"step {main.bad_step} (it started at {first:.4g})."
            )
        else:
            what = (
                f"A copy of the model trained {setup} for {steps} steps ({opt_name}) only "
                f"brought the loss from {first:.4g} to {last:.4g} ({ratio:.0%} of the start; it "
                + (
                    f"must fall below {max_ratio:.0%})."
                    if floor <= 1e-3 * abs(first)
                    else f"must close {1 - max_ratio:.0%} of the gap to the loss's floor "
                    f"{floor:.4g})."
                )
            )
        metrics = {"initial_loss": first, "final_loss": last, "steps": steps, "floor": floor}
        if main.bad_step is not None:
            metrics["nonfinite_step"] = main.bad_step
        else:
            metrics["ratio"] = ratio
        if frozen or not int(self.options["sweep"]):
            hint = (
                "make every parameter you train reach the loss: no .detach(), .data or "
                "torch.no_grad() on the path, requires_grad=True"
                if frozen
                else "remove a softmax before cross_entropy (M003), look for detached or "
                "frozen paths, check target shapes, then try another lr"
            )
            if main.bad_step is not None and not frozen:
                hint = "run M004/M005 on the batch; lower the lr or clip gradients"
            yield self.finding(
                f"{what}{stuck}"
                + (" The path from output to loss to update is broken." if frozen else ""),
                metrics=metrics,
                columns=tuple(frozen),
                hint=hint,
            )
            return
        yield from self._evidence(ctx, main, what, metrics, target, floor, steps, lr)

    def _untrainable(self, ctx: ProbeContext):
        params = list(ctx.model.parameters())
        if params:
            weights = sum(p.numel() for p in params)
            what = (
                f"None of the model's {len(params)} parameter tensor(s) ({weights:,} weights) "
                "has requires_grad=True: the whole model is frozen (a requires_grad_(False) "
                "or a backbone freeze with nothing left to train)"
            )
        else:
            what = f"The model ({type(ctx.model).__name__}) has no parameter at all"
        self.details = {"trainable_parameters": 0, "headline": "no trainable parameter"}
        return self.finding(
            f"{what}, so no optimizer step can change it and the loss cannot fall: "
            "there is nothing to overfit the batch with.",
            metrics={"parameters": len(params), "trainable_parameters": 0},
            hint="model.requires_grad_(True) on the parts you mean to train, and pass them to "
            "the optimizer",
        )

    def _broadcast(self, shapes: dict):
        out, y, pair = shapes["output_shape"], shapes["target_shape"], shapes["broadcast_shape"]
        self.details = {**shapes, "headline": f"output {out} vs target {y}: the loss broadcasts"}
        return self.finding(
            f"The model's output {out} and the target {y} have different shapes and the loss "
            f"broadcasts them to {pair}: it compares every output with every target, so the "
            "model can at best learn the target's mean, and overfitting the batch cannot work. "
            f"The loss is {shapes['loss']:.4g} as given and {shapes['loss_reshaped']:.4g} with "
            "the target reshaped to the output's shape.",
            metrics={"loss": shapes["loss"], "loss_reshaped": shapes["loss_reshaped"]},
            hint="make the shapes equal before the loss: loss_fn(output, target.view_as(output)), "
            "or squeeze the extra dimension of size 1",
        )

    def _evidence(self, ctx, main, what, metrics, target, floor, steps, lr):
        """The default recipe did not fit: sweep the lr, extend a falling run, compare with a
        linear map, and say which of stuck / other lr / slow / capacity it is."""
        max_steps = max(int(self.options["max_steps"]), steps)
        first = main.losses[0]
        runs = [main]
        # each run costs about 1.5 training steps per step (Adam's update, the measuring pass)
        reserve = 10 + 0.1 * min(ctx.steps_left(), 1000)  # for the probes that run after M002
        per_run = int(min(steps, (ctx.steps_left() - reserve) / (2 * len(SWEEP_FACTORS))))
        if per_run < MIN_STEPS:
            per_run = 0
            self.details["budget_note"] = "no learning-rate sweep: the budget is spent"
        elif per_run < steps:
            self.details["budget_note"] = f"sweep trimmed to {per_run} steps a run by the budget"
        with ctx.isolated():
            for factor in SWEEP_FACTORS if per_run else ():
                if ctx.steps_left() < reserve + 1.5 * per_run:
                    self.details["budget_note"] = "sweep cut short by the budget"
                    break
                r = _Run(ctx, lr=lr * factor, label=f"Adam, lr {lr * factor:g}")
                r.advance(per_run)
                r.final()
                runs.append(r)
            ok = [r for r in runs if r.bad_step is None]
            best = min(ok, key=lambda r: r.losses[-1]) if ok else None
            # more steps while the best run's loss still falls
            while (
                best is not None
                and best.losses[-1] > target(first)
                and best.steps < max_steps
                and _still_falling(best.losses, floor, 0.1)
                and ctx.steps_left() > 2 * MIN_STEPS + reserve
            ):
                best.losses.pop()  # the measuring pass is redone after the extension
                more = int(min(steps, max_steps - best.steps, (ctx.steps_left() - reserve) / 2))
                best.advance(more)
                best.final()
            linear = linear_baseline(ctx, ctx.output, steps)
        sweep = [
            {
                "optimizer": r.label,
                "lr": r.lr,
                "steps": r.steps,
                "final_loss": r.losses[-1],
                "nonfinite_step": r.bad_step,
            }
            for r in runs
        ]
        self.details["sweep"] = sweep
        self.details["linear_baseline"] = linear
        self.details["model_steps"] = sum(r.steps for r in runs)
        tried = "; ".join(
            f"{s['optimizer']}: {s['final_loss']:.4g} after {s['steps']} steps"
            if s["nonfinite_step"] is None
            else f"{s['optimizer']}: non-finite at step {s['nonfinite_step']}"
            for s in sweep[1:]
        )
        if best is None:
            metrics = {**metrics, "best_loss": math.nan}
            self.details["verdict"] = "stuck"
            yield self.finding(
                f"{what} Every learning rate tried turned the loss non-finite ({tried}).",
                metrics=metrics,
                hint="run M004/M005 on the batch; look for log/sqrt/division at 0, clip gradients",
            )
            return
        b_loss, b_lr = best.losses[-1], best.lr
        metrics = {**metrics, "best_loss": b_loss, "best_steps": best.steps}
        if b_lr is not None:
            metrics["best_lr"] = b_lr
        if linear is not None:
            metrics["linear_baseline"] = linear
        figures = f"best {b_loss:.4g} ({best.label}, {best.steps} steps)"
        if b_loss <= target(first):
            if best is main:
                verdict, msg = (
                    "slow",
                    (
                        f"{what} With more steps the same recipe gets there: {figures}. Training "
                        "works; it is slow on this batch."
                    ),
                )
                hint = f"train longer, or raise the lr (it needed {best.steps} steps)"
            else:
                lower = b_lr is not None and b_lr < lr
                verdict = "lower lr" if lower else "higher lr"
                msg = (
                    f"{what} At another learning rate it fits: {figures}. The path is wired; "
                    f"the learning rate is too {'high' if lower else 'low'} for this model."
                )
                hint = (
                    f"lower the lr to about {b_lr:g} (deep tanh/sigmoid stacks and unnormalised "
                    "layers need smaller steps), or add normalisation / warm-up"
                    if lower
                    else f"raise the lr to about {b_lr:g}, or train longer"
                )
            level = Severity.INFO
            if main.lr is None and best is not main:  # the user's optimizer is what fails
                verdict, level = "optimizer", Severity.WARNING
                msg = (
                    f"{what} datavet's Adam fits the same batch: {figures}. The path is wired; "
                    f"your optimizer ({main.label}) or its settings do not train this model."
                )
                hint = f"check your optimizer's lr and settings; Adam at lr {b_lr:g} works"
            self.details["verdict"] = verdict
            yield self.finding(msg, severity=level, metrics=metrics, hint=hint)
            return
        if _still_falling(best.losses, floor, 0.1):
            self.details["verdict"] = "slow"
            yield self.finding(
                f"{what} The loss is still falling after {best.steps} steps: {figures}. "
                "Training works but is slow on this batch"
                + (
                    f" (more steps were not run: {self.details['budget_note']})."
                    if "budget_note" in self.details
                    else "."
                ),
                severity=Severity.INFO,
                metrics=metrics,
                hint=f"raise max_steps, --budget or the lr; the best lr tried was {best.label}",
            )
            return
        gap = first - floor
        if linear is not None and linear > target(first) and b_loss <= linear + 0.05 * gap:
            self.details["verdict"] = "capacity"
            yield self.finding(
                f"{what} Neither this model nor a linear map of the inputs can memorise the "
                f"batch: {figures}, linear baseline {linear:.4g}. This is the capacity of a "
                "small model, not a broken path.",
                severity=Severity.INFO,
                metrics=metrics,
                hint="expected for a linear or very narrow model; to test the wiring, "
                "probe a smaller batch or widen the model",
            )
            return
        self.details["verdict"] = "stuck"
        versus = f"; a linear map of the inputs reaches {linear:.4g}" if linear is not None else ""
        softmax = ctx.shared.get("output_grad_fn") in ("SoftmaxBackward0", "SigmoidBackward0")
        hint = (
            "remove the final softmax/sigmoid: the loss applies it again (M003)"
            if softmax
            else "look for a detached or frozen path, an output squashed into a narrow range "
            "(tanh/sigmoid/clamp at the end), targets broadcast to the wrong shape"
        )
        yield self.finding(
            f"{what} No learning rate tried does better ({tried}){versus}, and the loss no "
            "longer falls: the path from output to loss to update is broken.",
            metrics=metrics,
            hint=hint,
        )
