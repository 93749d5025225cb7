"""``datavet.probe``: the model-side preflight, from (model, batch, loss) to a Report."""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping

from datavet.errors import UsageError
from datavet.findings import Severity, Status
from datavet.framework import run_rules
from datavet.pipeline.arguments import rule_map
from datavet.probes.base import ProbeContext, isolated_rng
from datavet.rules import probe_by_key as lookup
from datavet.rules import select_probes

TASKS = ("auto", "classification", "regression")
DEFAULT_BUDGET = 500  # training steps' worth of the user's model that all probes may spend
MIN_BUDGET_S = 5.0  # a small model's budget is never below this: its steps cost microseconds
BCE_FUNCTIONS = ("binary_cross_entropy", "binary_cross_entropy_with_logits")


class ModelFailed(UsageError):
    """The model or the loss raised on the batch: the user's code, not datavet's arguments."""


def _torch():
    try:
        import torch
    except ImportError:
        raise UsageError("datavet.probe needs PyTorch: pip install 'datavet[torch]'") from None
    return torch


def _is_bce(loss_fn) -> bool:
    from torch import nn

    if isinstance(loss_fn, (nn.BCEWithLogitsLoss, nn.BCELoss)):
        return True
    return getattr(loss_fn, "__name__", None) in BCE_FUNCTIONS


def class_dim(out, y) -> int:
    """Where the classes are in ``out``: 1 (PyTorch's (N, C, d1, ...) convention), or -1 for a
    sequence model's (N, T, C) logits with (N, T) integer targets (flattened by the loss)."""
    import torch

    if not isinstance(out, torch.Tensor) or not isinstance(y, torch.Tensor):
        return 1
    int_y = not (y.is_floating_point() or y.is_complex())
    shape = tuple(y.shape)
    if int_y and out.ndim >= 3 and out.shape[-1] >= 2 and shape == tuple(out.shape[:-1]):
        return 1 if shape == (out.shape[0], *out.shape[2:]) else -1
    return 1


def detect_task(task: str, out, y, loss_fn) -> tuple[str | None, int | None, str]:
    """(task, number of classes, why): "classification", "binary", "regression", or None."""
    import torch

    if not isinstance(out, torch.Tensor) or not isinstance(y, torch.Tensor) or not out.ndim:
        return None, None, "the model's output is not one batched tensor"
    if task != "regression" and class_dim(out, y) == -1:
        c = int(out.shape[-1])
        given = (
            "task='classification' given"
            if task == "classification"
            else (
                f"integer targets {tuple(y.shape)} and {c} classes on the output's last dimension"
            )
        )
        return "classification", c, given
    int_y = not (y.is_floating_point() or y.is_complex())
    multi = out.ndim >= 2 and out.shape[1] >= 2
    indices = int_y and multi and y.ndim == out.ndim - 1
    same = y.shape == out.shape
    if task == "regression":
        return "regression", None, "task='regression' given"
    if task == "classification":
        if indices or (multi and same):
            return "classification", int(out.shape[1]), "task='classification' given"
        if out.numel() == y.numel():
            return "binary", 2, "task='classification' given, one output per sample"
        raise UsageError(
            f"task='classification' but the output {tuple(out.shape)} does not fit the targets "
            f"{tuple(y.shape)}: expected (N, C) logits with (N,) class indices"
        )
    if indices:
        return (
            "classification",
            int(out.shape[1]),
            (f"integer targets and {out.shape[1]} output columns"),
        )
    if _is_bce(loss_fn) and out.numel() == y.numel():
        return "binary", 2, "a binary cross-entropy loss"
    if y.is_floating_point() and same and multi:
        y_ = y.detach()
        soft = bool((y_ >= 0).all()) and bool(torch.allclose(y_.sum(1), torch.ones_like(y_.sum(1))))
        if soft:
            return "classification", int(out.shape[1]), "targets are class distributions"
    if y.is_floating_point():
        return "regression", None, "floating-point targets"
    if out.numel() == y.numel():
        return "regression", None, "integer targets and one output per sample"
    return None, None, f"targets {tuple(y.shape)} do not fit the output {tuple(out.shape)}"


def _split_batch(batch):
    if isinstance(batch, dict):
        missing = {"inputs", "target"} - set(batch)
        if missing:
            raise UsageError(
                f"a dict batch needs the keys 'inputs' and 'target' (missing {missing})"
            )
        return batch["inputs"], batch["target"]
    if isinstance(batch, (tuple, list)) and len(batch) == 2:
        return batch[0], batch[1]
    raise UsageError(
        "batch must be (inputs, target): a pair, or a dict with 'inputs' and 'target'; inputs "
        "are passed as model(x), model(*x) for a tuple, model(**x) for a dict"
    )


def _padding(torch, padding_mask, pad_id, inputs, n: int):
    """(the (N, T) bool padding mask or None, how it was given)."""
    if padding_mask is not None and pad_id is not None:
        raise UsageError("pass padding_mask or pad_id, not both")
    if pad_id is not None:
        if isinstance(pad_id, bool) or not isinstance(pad_id, int):
            raise UsageError(f"pad_id must be an int (the pad token id), not {pad_id!r}")
        from datavet.probes.padding_loss import padding_from_pad_id

        mask = padding_from_pad_id(inputs, n, pad_id)
        if mask is None:
            raise UsageError(
                f"pad_id={pad_id} needs (N, T) integer token ids in the inputs; for other inputs "
                "pass padding_mask= (a bool (N, T) tensor, True = padding)"
            )
        return mask, f"inputs equal to pad_id {pad_id}"
    if padding_mask is None:
        return None, ""
    if not isinstance(padding_mask, torch.Tensor):
        raise UsageError(
            f"padding_mask must be a bool tensor (N, T), not {type(padding_mask).__name__}"
        )
    if padding_mask.dtype != torch.bool:
        raise UsageError(
            f"padding_mask must be a bool tensor with True = padding, not {padding_mask.dtype} "
            "(for a 1 = real token attention_mask pass attention_mask == 0)"
        )
    if padding_mask.ndim != 2 or padding_mask.shape[0] != n:
        raise UsageError(
            f"padding_mask must be (N, T) with N = {n}, the batch size, not "
            f"{tuple(padding_mask.shape)}"
        )
    return padding_mask, "padding_mask given"


def probe(
    model,
    batch,
    *,
    loss_fn: Callable,
    task: str = "auto",
    optimizer_factory: Callable | None = None,
    train_step: Callable | None = None,
    eval_step: Callable | None = None,
    select=None,
    ignore=None,
    fail_on: str | Severity = "error",
    severity: Mapping[str, str | Severity] | None = None,
    thresholds: Mapping[str, Mapping[str, float]] | None = None,
    seed: int = 0,
    padding_mask=None,
    pad_id: int | None = None,
    budget: float | None = DEFAULT_BUDGET,
):
    """Run the model preflight probes (M001-M010, M013-M017) on one batch; return a Report.

    The probes are the training-side steps of a staged diagnosis: the initial loss against
    theory, overfitting the one batch, softmax applied twice, where a NaN/inf first appears
    (forward hooks, then anomaly mode for the backward pass), per-layer activation statistics,
    eval-mode determinism, loss scaling with the batch size, stale gradients in your train
    step, and, for sequence models, outputs that read later positions (a missing causal mask)
    and padding that counts in the loss or reaches real positions (M014, with ``padding_mask``
    or ``pad_id``).
    The model is never changed: every probe works on a deep copy, on the model's device, with
    the torch/NumPy/``random`` RNG states saved, seeded and restored.

    Parameters
    ----------
    model : torch.nn.Module
        The untrained model (CPU or CUDA: the batch is moved to its device).
    batch : (inputs, target) or {"inputs": ..., "target": ...}
        One small batch (16-64 samples). ``inputs`` may be a tensor (``model(x)``), a tuple
        (``model(*x)``) or a dict (``model(**x)``); the first dimension is the batch.
    loss_fn : callable
        ``loss_fn(model(inputs), target) -> scalar tensor``, the loss your training uses.
    task : {"auto", "classification", "regression"}
        "auto" decides from the targets and the output (integer targets with C output columns:
        classification; a BCE loss: binary; float targets: regression) and says why.
    optimizer_factory : callable, optional
        ``optimizer_factory(params) -> torch.optim.Optimizer`` for M002 and M010 (default Adam;
        for M002 with M002's ``lr``).
    train_step : callable, optional
        ``train_step(model, optimizer, batch)``: one step of your loop, for M010 (skipped
        without it).
    eval_step : callable, optional
        ``eval_step(model, batch)``: your evaluation of one batch, for M017 (does it change
        BatchNorm statistics? skipped without it).
    select, ignore : str or list of str
        Probe codes, prefixes or names, as for the audit rules.
    fail_on : {"info", "warning", "error"}
        The severity at or above which the report fails.
    severity : mapping, optional
        Per-probe severity overrides, e.g. ``{"M001": "error"}``.
    thresholds : mapping, optional
        Per-probe thresholds, e.g. ``{"M002": {"steps": 500, "lr": 3e-3}}``.
    seed : int
        The seed every probe runs under (results are reproducible; your RNG state is restored).
    padding_mask : torch.Tensor, optional
        For sequence batches, a bool ``(N, T)`` tensor, ``True`` = padding (the convention of
        ``src_key_padding_mask``; a Hugging Face ``attention_mask`` is the opposite: pass
        ``attention_mask == 0``). Targets padded with an ignore value give it as
        ``padding_mask=(target == -100)``. M014 is skipped without padding.
    pad_id : int, optional
        Instead of ``padding_mask``: the pad token; padding is wherever the first ``(N, T)``
        integer tensor of the inputs (the token ids) equals it.
    budget : float, optional
        The most the probes may spend, in training steps of your model on this batch (one
        forward, backward and Adam update, timed before the probes start; default 500, and
        never less than 5 seconds). M002 trims its runs to fit: its default run first, then the
        learning-rate sweep and the longer runs it uses as evidence when the default run does
        not fit. The report gives the cost (``report.probes["cost"]``, and a note in the text).
        ``None``: no limit.

    Returns
    -------
    Report
        Findings and outcomes as for an audit, plus ``report.probes`` (per-probe details, the
        per-layer activation table). ``report.exit_code()`` is the same 0/1/2 contract.

    Examples
    --------
    >>> import torch, datavet
    >>> from torch import nn
    >>> _ = torch.manual_seed(0)
    >>> model = nn.Sequential(nn.Linear(10, 64), nn.ReLU(), nn.Linear(64, 5), nn.Softmax(dim=1))
    >>> x, y = torch.randn(16, 10), torch.randint(0, 5, (16,))
    >>> report = datavet.probe(model, (x, y), loss_fn=nn.functional.cross_entropy)
    >>> sorted({f.code for f in report.findings})
    ['M002', 'M003']
    """
    started = time.perf_counter()
    torch = _torch()
    if not isinstance(model, torch.nn.Module):
        raise UsageError(f"model must be a torch.nn.Module, not {type(model).__name__}")
    if not callable(loss_fn):
        raise UsageError("loss_fn must be callable: loss_fn(output, target) -> scalar tensor")
    if task not in TASKS:
        raise UsageError(f"task must be one of {', '.join(TASKS)}, not {task!r}")
    for name, fn in (
        ("optimizer_factory", optimizer_factory),
        ("train_step", train_step),
        ("eval_step", eval_step),
    ):
        if fn is not None and not callable(fn):
            raise UsageError(f"{name} must be callable")
    try:
        fail_level = Severity.parse(fail_on)
        overrides = {
            lookup(k).code: Severity.parse(v)
            for k, v in rule_map(severity, "severity", lookup).items()
        }
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    tuned = {lookup(k).code: dict(v) for k, v in rule_map(thresholds, "thresholds", lookup).items()}
    probes = [
        p(severity=overrides.get(p.code), thresholds=tuned.get(p.code))
        for p in select_probes(select, ignore)
    ]

    from datavet.probes._torch import device_of, first_dim, tensors, to_device

    inputs, target = _split_batch(batch)
    if not isinstance(target, torch.Tensor):
        raise UsageError(f"the batch's target must be a tensor, not {type(target).__name__}")
    device = device_of(model)
    inputs, target = to_device(inputs, device), target.to(device)
    n = first_dim(inputs)
    if n is None:
        raise UsageError("the batch's inputs hold no tensor with a batch dimension")
    if n == 0:
        raise UsageError("the batch is empty (0 samples): pass a batch of 16-64 samples")
    if not target.ndim or target.shape[0] != n:
        raise UsageError(
            f"the target's first dimension {tuple(target.shape)} is not the batch size {n}"
        )

    padding, padding_source = _padding(torch, padding_mask, pad_id, inputs, n)
    if padding is not None:
        padding = padding.to(device)
    ctx = ProbeContext(
        model=model,
        inputs=inputs,
        target=target,
        loss_fn=loss_fn,
        task="unknown",
        task_reason="",
        n_classes=None,
        device=device,
        batch_size=n,
        seed=int(seed),
        optimizer_factory=optimizer_factory,
        train_step=train_step,
        eval_step=eval_step,
        padding_mask=padding,
        padding_source=padding_source,
    )
    if budget is not None and (isinstance(budget, bool) or not budget > 0):
        raise UsageError(f"budget must be a positive number of steps, not {budget!r}")
    with isolated_rng(ctx.seed):
        try:
            clone = ctx.copy(train=True)
        except Exception as exc:
            raise UsageError(
                f"cannot deep-copy the model ({type(exc).__name__}: {exc}); datavet never "
                "trains the model itself, only copies"
            ) from None
        try:
            out = ctx.forward(clone)
            loss = ctx.loss(out)
        except Exception as exc:
            raise ModelFailed(
                f"the model or loss_fn failed on the batch: {type(exc).__name__}: {exc}"
            ) from None
    if not isinstance(loss, torch.Tensor) or loss.numel() != 1:
        shape = tuple(loss.shape) if isinstance(loss, torch.Tensor) else type(loss).__name__
        raise UsageError(f"loss_fn must return a scalar tensor, not {shape}")
    main = out if isinstance(out, torch.Tensor) else None
    ctx.shared["output_grad_fn"] = (
        main.grad_fn.name() if main is not None and main.grad_fn is not None else None
    )
    ctx.output = main.detach() if main is not None else None
    kind, n_classes, reason = detect_task(task, main, target, loss_fn)
    ctx.task, ctx.n_classes, ctx.task_reason = kind or "unknown", n_classes, reason
    ctx.class_dim = class_dim(main, target) if kind == "classification" else 1

    step_s = _step_seconds(ctx)
    ctx.shared["budget"] = {
        "seconds": max(budget * step_s, MIN_BUDGET_S) if budget is not None else math.inf,
        "step_s": step_s,
        "started": time.perf_counter(),
    }
    checks: dict[str, dict] = {}

    def keep_details(p, outcome) -> None:
        if outcome.status is Status.SKIPPED:
            checks[p.code] = {"headline": f"skipped: {outcome.reason}", **p.details}
        elif outcome.status is Status.CRASHED:
            checks[p.code] = {"headline": f"crashed: {outcome.reason.split(':')[0]}"}
        else:
            checks[p.code] = dict(p.details)

    ran = run_rules(probes, ctx, after=keep_details)
    findings, outcomes, per_probe = ran.findings, ran.outcomes, ran.seconds
    spent = sum(per_probe.values())
    cost = {
        "seconds": spent,
        "step_seconds": step_s,
        "steps": spent / step_s if step_s > 0 else None,
        "budget_steps": float(budget) if budget is not None else None,
        "budget_seconds": ctx.shared["budget"]["seconds"] if budget is not None else None,
        "per_probe_steps": {k: (v / step_s if step_s > 0 else None) for k, v in per_probe.items()},
    }

    from datavet.report import Report

    params = list(model.parameters())
    dtypes = sorted({str(t.dtype).replace("torch.", "") for t in params}) or ["none"]
    layers = ctx.shared.get("layers")
    summary = {
        "class": type(model).__name__,
        "parameters": sum(t.numel() for t in params),
        "trainable": sum(t.numel() for t in params if t.requires_grad),
        "device": str(device),
        "dtype": ", ".join(dtypes),
        "batch_size": n,
        "inputs": [list(t.shape) for t in tensors(inputs)][:8],
        "output_shape": list(main.shape) if main is not None else None,
        "task": ctx.task,
        "n_classes": n_classes,
        "seed": ctx.seed,
    }
    duration = time.perf_counter() - started
    return Report(
        findings=findings,
        outcomes=outcomes,
        datasets={},
        fail_on=fail_level,
        target="batch[1]",
        task={"binary": "classification", "unknown": None}.get(ctx.task, ctx.task),
        task_reason=reason if kind != "binary" else f"binary: {reason}",
        notes=[
            f"model probes on {summary['class']} ({summary['parameters']:,} parameters, "
            f"{summary['device']}, {summary['dtype']}) with one batch of {n}; every probe used "
            "a deep copy, so the model's weights, gradients, mode and RNG state are unchanged",
            _cost_note(cost),
        ],
        probes={
            "kind": "model",
            "model": summary,
            "checks": checks,
            "layers": layers["rows"] if layers else None,
            "monitor": None,
            "cost": cost,
        },
        duration_s=duration if math.isfinite(duration) else None,
    )


def _step_seconds(ctx: ProbeContext) -> float:
    """Seconds of one training step of the model on the batch (forward, backward, Adam update of
    a copy), the unit of the probes' budget: the fastest of three timed steps after one warm-up
    step (allocators, kernels, Adam's state)."""
    torch = _torch()
    times = []
    with isolated_rng(ctx.seed):
        try:
            model = ctx.copy(train=True)
            params = [p for p in model.parameters() if p.requires_grad]
            opt = torch.optim.Adam(params, lr=0.0) if params else None
            for _ in range(4):
                if ctx.device.type == "cuda":
                    torch.cuda.synchronize(ctx.device)
                t0 = time.perf_counter()
                loss = ctx.loss(ctx.forward(model))
                if opt is not None and loss.requires_grad:
                    opt.zero_grad(set_to_none=True)
                    loss.backward()
                    opt.step()
                if ctx.device.type == "cuda":
                    torch.cuda.synchronize(ctx.device)
                times.append(time.perf_counter() - t0)
        except Exception:  # the probes report what fails; the unit then falls back
            pass
    return max(min(times[1:]) if len(times) > 1 else (times[0] if times else 0.0), 1e-6)


def _cost_note(cost: dict) -> str:
    steps = cost["steps"]
    budget = cost["budget_steps"]
    worth = f", about {steps:,.0f} training steps of this model" if steps is not None else ""
    limit = f" (budget {budget:,.0f})" if budget is not None else " (no budget)"
    return f"probe cost: {cost['seconds']:.2f} s{worth}{limit}"


__all__ = ["ModelFailed", "class_dim", "detect_task", "probe"]
