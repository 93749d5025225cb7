"""Where a NaN or inf first appears: in the forward pass (hooks) or only in the backward pass
(anomaly mode)."""

from __future__ import annotations

import os
import re
import warnings

from datavet.auditors.base import fmt
from datavet.findings import Severity
from datavet.probes.base import Probe, ProbeContext, Skip

_ANOMALY = re.compile(r"Function '(?P<fn>\w+)' returned nan values in its (?P<idx>\d+)\w* output")
_FRAME = re.compile(
    r'File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<func>\S+)\n\s*(?P<code>.*)'
)


def forward_trace(ctx: ProbeContext) -> dict:
    """One training step's forward and backward on a copy, with a forward hook on every module.

    Shared by M004 and M005 (``ctx.cached("trace", ...)``). Hooks fire when a module's forward
    returns, so the first hook that sees a non-finite output belongs to the innermost module that
    produced it (the innermost culprit first).
    """
    import torch

    from datavet.probes._torch import bad_gradients, nonfinite, tensors

    trace: dict = {"inputs": nonfinite(ctx.inputs, ctx.batch_size), "first": None}
    with ctx.isolated():
        model = ctx.copy(train=True)

        modules = dict(model.named_modules())

        def hook(name):
            def record(module, args, output):
                if trace["first"] is None:
                    bad = nonfinite(output, ctx.batch_size)
                    if bad is not None:
                        parent = name.rpartition(".")[0] if name else None
                        trace["first"] = {
                            "module": name,
                            "type": type(module).__name__,
                            "leaf": next(module.children(), None) is None,
                            # its input was already bad: code in the caller's forward made it
                            "inherited": nonfinite(args, ctx.batch_size) is not None,
                            "dtype": next(
                                (
                                    str(t.dtype).replace("torch.", "")
                                    for t in tensors(output)
                                    if t.is_floating_point()
                                ),
                                None,
                            ),
                            "parent": parent,
                            "parent_type": (
                                type(modules[parent]).__name__ if parent is not None else None
                            ),
                            **bad,
                        }

            return record

        handles = [m.register_forward_hook(hook(n)) for n, m in model.named_modules()]
        try:
            output = ctx.forward(model)
            loss = ctx.loss(output)
        finally:
            for h in handles:
                h.remove()
        trace["loss"] = float(loss.detach())
        trace["loss_finite"] = bool(torch.isfinite(loss.detach()))
        trace["loss_requires_grad"] = bool(loss.requires_grad)
        trace["backward_error"] = None
        if loss.requires_grad:
            try:
                loss.backward()
            except RuntimeError as exc:  # e.g. a double backward through a user's cached graph
                trace["backward_error"] = f"{type(exc).__name__}: {exc}"
        trace["bad_gradients"] = bad_gradients(model)
        trace["no_gradient"] = [
            n for n, p in model.named_parameters() if p.requires_grad and p.grad is None
        ]
    trace["forward_finite"] = (
        trace["inputs"] is None and trace["first"] is None and trace["loss_finite"]
    )
    return trace


def _what(bad: dict) -> str:
    parts = []
    if bad["nan"]:
        parts.append(f"{bad['nan']:,} NaN")
    if bad["inf"]:
        parts.append(f"{bad['inf']:,} inf")
    return " and ".join(parts) + (" values" if bad["nan"] + bad["inf"] != 1 else " value")


class NonFiniteForward(Probe):
    """The first module whose output holds NaN or inf, and the batch rows that carry it.

    **What it checks**
    One training step on a copy of the model with a forward hook on every module. The first module
    whose output holds NaN or inf is named with the sample rows of the batch that carry the
    non-finite values (e.g. ``LogFeature (rows [4])``). The loss is checked too, and after
    ``backward()`` every parameter whose gradient is non-finite is listed. Non-finite values
    already in the batch's inputs are reported before any module. Only ``nn.Module`` calls are
    hooked: a ``torch.log`` inside a module's own ``forward`` is reported as that module.
    When the train-mode pass is finite, an eval-mode pass of a copy is checked the same way:
    output that is non-finite only in eval mode (the path validation and inference take) is a
    finding, with the key-padding-mask polarity as the usual cause.

    **Why it matters**
    The loss can stay finite while the network is already broken: when ``log(0) = -inf``
    passes a linear layer, a ``tanh`` squashes it to -1 and the loss reads 0.1516, but the first
    layer's weight gradient is ``0 * -inf = NaN`` and one update turns the whole weight to NaN.
    Watching the loss alone finds nothing; the hook points at the module and the sample.

    **How to fix**
    Fix the data at the named rows, or protect the operation's domain in the named module:
    ``log(x + eps)``, ``clamp`` before ``exp``, a safe division, no ``sqrt`` of a negative.
    """

    code = "M004"
    name = "nonfinite-forward"
    severity = Severity.ERROR
    summary = "first module whose output holds NaN/inf, with the sample rows"
    thresholds = {}

    def check(self, ctx: ProbeContext):
        from datavet.probes._torch import MAX_ROWS, rows_phrase

        t = ctx.cached("trace", lambda: forward_trace(ctx))
        grads = t["bad_gradients"]
        self.details = {
            "loss": t["loss"],
            "first": t["first"],
            "inputs": t["inputs"],
            "nonfinite_gradients": grads,
        }
        loss_text = (
            f"the loss stayed finite ({t['loss']:.4g})"
            if t["loss_finite"]
            else f"the loss is {fmt(t['loss'])}"
        )
        grad_text = (
            f"gradients are non-finite in {', '.join(grads[:10])}"
            + (f" (+{len(grads) - 10} more)" if len(grads) > 10 else "")
            if grads
            else "no gradient is non-finite"
        )
        if t["inputs"] is not None:
            bad = t["inputs"]
            where = rows_phrase(bad["rows"], bad["n_rows"])
            self.details["headline"] = f"inputs: {where or 'non-finite'}"
            yield self.finding(
                f"The batch's inputs already hold {_what(bad)}"
                + (f" in {where}" if where else "")
                + f", before any module runs; {loss_text}, {grad_text}.",
                n_affected=bad["n_rows"] or None,
                examples=(bad["rows"] or [])[:MAX_ROWS],
                columns=tuple(grads),
                metrics={"nan": bad["nan"], "inf": bad["inf"]},
                hint="fix or drop those samples (datavet audit flags them as V001/V002)",
            )
            return
        first = t["first"]
        if first is not None:
            where = rows_phrase(first["rows"], first["n_rows"])
            if first["inherited"] and first["parent"] is not None:
                caller = (
                    f"{first['parent']!r} ({first['parent_type']})"
                    if first["parent"]
                    else (f"the model ({first['parent_type']})")
                )
                inside = (
                    f", but its input already held them: they come from code in the forward of "
                    f"{caller}, outside its submodules"
                )
            elif not first["leaf"]:
                inside = f" (in {first['type']}.forward itself, outside its submodules)"
            else:
                inside = ""
            label = f"{first['module']!r} ({first['type']})" if first["module"] else first["type"]
            self.details["headline"] = f"{first['type']} ({where or 'non-finite output'})"
            yield self.finding(
                f"Module {label} is the first to output non-finite values{inside}: "
                f"{_what(first)}"
                + (f" in {where}" if where else "")
                + f". Then {loss_text}, and {grad_text}.",
                columns=(first["module"] or first["type"], *grads),
                n_affected=first["n_rows"] or None,
                examples=(first["rows"] or [])[:MAX_ROWS],
                metrics={
                    "nan": first["nan"],
                    "inf": first["inf"],
                    "loss": t["loss"],
                    "nonfinite_gradients": len(grads),
                },
                hint=(
                    "float16 overflows above 65,504: run the model under torch.autocast (it "
                    "keeps softmax, norms and reductions in float32) with a GradScaler, or use "
                    "bfloat16; keep activations small (normalisation, smaller init)"
                    if first.get("dtype") == "float16" and first["inf"] and not first["inherited"]
                    else "fix the data at those rows or protect the operation's domain "
                    "(log(x + eps), clamp before exp)"
                ),
            )
            return
        if not t["loss_finite"]:
            self.details["headline"] = f"loss {fmt(t['loss'])}"
            yield self.finding(
                f"Every module's output is finite but the loss function returns "
                f"{fmt(t['loss'])}; {grad_text}.",
                columns=tuple(grads),
                metrics={"loss": t["loss"], "nonfinite_gradients": len(grads)},
                hint="check the loss for log(0), division by a zero count (an empty mask), "
                "or targets outside the loss's domain",
            )
            return
        bad_eval = ctx.cached("eval_trace", lambda: eval_trace(ctx))
        if bad_eval is not None:
            where = rows_phrase(bad_eval["rows"], bad_eval["n_rows"])
            label = (
                f"{bad_eval['module']!r} ({bad_eval['type']})"
                if bad_eval["module"]
                else bad_eval["type"]
            )
            self.details["headline"] = f"eval mode only: {bad_eval['type']}"
            self.details["eval_first"] = bad_eval
            yield self.finding(
                f"The forward pass is finite in train mode (loss {t['loss']:.4g}) but not in "
                + (
                    f"eval mode: {label} is the first to output {_what(bad_eval)}"
                    if bad_eval["module"]
                    else f"eval mode: the model's output holds {_what(bad_eval)}"
                )
                + (f" in {where}" if where else "")
                + ". Validation and inference run this path. The usual cause is a key-padding "
                "mask with the wrong polarity: a Hugging Face attention_mask (1 = keep) passed "
                "as key_padding_mask / src_key_padding_mask (True = ignore) masks every real "
                "token, and PyTorch's eval-mode attention returns NaN for rows with no key left.",
                columns=(bad_eval["module"] or bad_eval["type"],),
                n_affected=bad_eval["n_rows"] or None,
                examples=(bad_eval["rows"] or [])[:MAX_ROWS],
                metrics={"nan": bad_eval["nan"], "inf": bad_eval["inf"], "loss": t["loss"]},
                hint="pass key_padding_mask=(attention_mask == 0); then look for other "
                "eval-only paths (BatchNorm running statistics, dropout-free branches)",
            )
            return
        self.details["headline"] = f"finite (loss {t['loss']:.4g})"


def eval_trace(ctx: ProbeContext) -> dict | None:
    """Where an eval-mode forward pass of a copy (no gradients) turns non-finite, or None when
    its output is finite. The first pass runs without hooks (a forward hook switches PyTorch's
    eval-mode fast paths off, and they are what can differ); when its output is bad, a second
    pass with hooks names the first module, if the hooked path is bad too."""
    import torch

    from datavet.probes._torch import nonfinite

    with ctx.isolated(), torch.no_grad():
        output = ctx.forward(ctx.copy(train=False))
    bad = nonfinite(output, ctx.batch_size)
    if bad is None:
        return None
    first: dict = {}

    def hook(name):
        def record(module, args, out):
            if not first:
                found = nonfinite(out, ctx.batch_size)
                if found is not None:
                    first.update({"module": name, "type": type(module).__name__, **found})

        return record

    with ctx.isolated(), torch.no_grad():
        model = ctx.copy(train=False)
        handles = [m.register_forward_hook(hook(n)) for n, m in model.named_modules()]
        try:
            ctx.forward(model)
        finally:
            for h in handles:
                h.remove()
    return first or {"module": "", "type": "the model's output", **bad}


def _source_line(text: str) -> dict | None:
    """The innermost frame of anomaly mode's forward traceback that is not in torch itself."""
    import torch

    frames = [m.groupdict() for m in _FRAME.finditer(text)]
    if not frames:
        return None
    torch_dir = os.path.dirname(torch.__file__)
    own = [f for f in frames if not os.path.abspath(f["file"]).startswith(torch_dir)]
    frame = (own or frames)[-1]
    return {
        "file": frame["file"],
        "line": int(frame["line"]),
        "function": frame["func"],
        "code": frame["code"].strip(),
    }


def anomaly_rerun(ctx: ProbeContext) -> dict:
    """The trace's step again, on a fresh copy with the same seed, under anomaly mode only here."""
    import torch

    out: dict = {"function": None, "output_index": None, "source": None, "error": None}
    with ctx.isolated(), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = ctx.copy(train=True)
        with torch.autograd.detect_anomaly(check_nan=True):
            try:
                loss = ctx.loss(ctx.forward(model))
                loss.backward()
            except RuntimeError as exc:
                out["error"] = str(exc).splitlines()[0]
                m = _ANOMALY.search(str(exc))
                if m:
                    out["function"], out["output_index"] = m["fn"], int(m["idx"])
    for w in caught:
        text = str(w.message)
        if out["function"] and f"Error detected in {out['function']}" in text:
            out["source"] = _source_line(text)
    return out


class NonFiniteBackward(Probe):
    """Gradients that turn NaN in the backward pass while the forward pass is finite.

    **What it checks**
    When the step of M004 has a finite forward pass and a finite loss but some parameter's
    gradient is NaN or inf, that one step is re-run on a fresh copy under
    ``torch.autograd.detect_anomaly``. The report names the first backward function that returned
    NaN (``PowBackward0`` for ``sqrt((w ** 2).sum())`` at ``w = 0``) and the line of
    forward code that created it. Anomaly mode is switched on for that re-run only and is off
    again afterwards.

    **Why it matters**
    Some operations are finite forward and infinite backward: ``sqrt`` at 0 (a norm of a zero
    vector), ``x ** 0.5``, ``acos`` at 1, ``log`` near 0. Forward hooks see nothing and the loss
    looks normal, but one update writes NaN into the weights. Anomaly mode finds the operation,
    but it checks every operation, so it is far too slow to leave on in training.

    **How to fix**
    Keep the derivative finite at the boundary: ``sqrt(x + eps)``, ``torch.linalg.vector_norm``
    of ``x + eps``, clamp the argument away from the singular point, or use a stable formulation
    (``logsumexp``, ``log1p``).
    """

    code = "M005"
    name = "nonfinite-backward"
    severity = Severity.ERROR
    summary = "NaN gradients with a finite forward: the backward function (anomaly mode)"
    thresholds = {}

    def check(self, ctx: ProbeContext):
        t = ctx.cached("trace", lambda: forward_trace(ctx))
        if not t["forward_finite"]:
            raise Skip("the forward pass is already non-finite (see M004)")
        if not t["loss_requires_grad"]:
            raise Skip("the loss does not require grad: no trainable parameter reaches it")
        if t["backward_error"]:
            raise RuntimeError(f"backward() failed: {t['backward_error']}")
        grads = t["bad_gradients"]
        if not grads:
            self.details = {"headline": "gradients finite"}
            return
        found = anomaly_rerun(ctx)
        self.details = {"headline": found["function"] or "non-finite gradients", **found}
        names = ", ".join(grads[:10]) + (f" (+{len(grads) - 10} more)" if len(grads) > 10 else "")
        head = (
            f"Gradients are non-finite in {names} although the forward pass and the loss "
            f"({t['loss']:.4g}) are finite."
        )
        if found["function"]:
            src = found["source"]
            where = (
                f"; it was created at {os.path.basename(src['file'])}:{src['line']} in "
                f"{src['function']}: `{src['code']}`"
                if src
                else ""
            )
            tail = (
                f" Anomaly mode, re-running that step, found {found['function']!r} the first "
                f"backward function to return NaN (output {found['output_index']}){where}."
            )
        else:
            tail = (
                " Anomaly mode named no backward function: it reports NaN only, so these "
                "gradients are infinite (look for sqrt/log/pow at 0 feeding the loss)."
            )
        yield self.finding(
            head + tail,
            columns=tuple(grads),
            n_affected=len(grads),
            metrics={"loss": t["loss"], "nonfinite_gradients": len(grads)},
            hint="keep the derivative finite at the boundary: sqrt(x + eps), clamp away from "
            "the singular point",
        )
