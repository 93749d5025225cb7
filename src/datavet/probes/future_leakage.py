"""Future leakage in sequence models: outputs at position t that read inputs after t (M013)."""

from __future__ import annotations

import math

from datavet.auditors.base import fmt
from datavet.findings import Severity
from datavet.probes.base import Probe, ProbeContext, Skip

MAX_MODULE_CALLS = 2000  # module outputs compared when localising the leak


def _sequence_input(ctx: ProbeContext, td: int):
    """(the input tensor that carries the sequence, T) or Skip: the first non-bool tensor of the
    inputs with the batch as its first dimension, 3-D for features ((N, T, F) with ``time_dim``
    1, (N, F, T) with 2) or 2-D for token ids ((N, T))."""
    import torch

    from datavet.probes._torch import tensors

    for x in tensors(ctx.inputs):
        if x.ndim >= 2 and x.shape[0] == ctx.batch_size and x.dtype != torch.bool:
            break
    else:
        raise Skip("the inputs hold no batched tensor with a time dimension")
    floating = x.is_floating_point()
    want = 3 if floating else 2
    layout = "(N, T, F) or (N, F, T) features" if floating else "(N, T) token ids"
    if x.is_complex() or x.ndim != want or td >= want:
        raise Skip(
            f"the input {tuple(x.shape)} is not a sequence batch: M013 expects {layout}, the "
            f"time on dimension {td} (threshold time_dim)"
        )
    if x.shape[td] < 2:
        raise Skip(f"the sequence has {x.shape[td]} position(s): nothing comes after")
    return x, int(x.shape[td])


def _pick(output, n: int, td: int, length: int) -> int | None:
    """Index (in ``tensors(output)``) of the first floating tensor shaped (N, ..., T at td, ...)."""
    from datavet.probes._torch import tensors

    for i, t in enumerate(tensors(output)):
        if t.is_floating_point() and t.ndim > td and t.shape[0] == n and t.shape[td] == length:
            return i
    return None


def _replace(obj, old, new):
    """``obj`` with the tensor ``old`` (by identity) swapped for ``new``."""
    if obj is old:
        return new
    if isinstance(obj, dict):
        return {k: _replace(v, old, new) for k, v in obj.items()}
    if isinstance(obj, (tuple, list)):
        return type(obj)(_replace(v, old, new) for v in obj)
    return obj


def _perturb(x, td: int, cut: int, seed: int):
    """``x`` with every position after ``cut`` (along ``td``) changed, the rest untouched.

    Floats get Gaussian noise of the input's own spread; token ids become the next distinct id
    seen in the batch (so they stay valid indices and always differ). The noise is drawn from
    a private CPU generator: the user's and the device's RNG streams are not touched.
    """
    import torch

    future = x.narrow(td, cut + 1, x.shape[td] - cut - 1)
    if x.is_floating_point():
        gen = torch.Generator().manual_seed(seed + cut)
        spread = float(x.detach().float().std()) if x.numel() > 1 else 1.0
        scale = spread if math.isfinite(spread) and spread > 0 else 1.0
        noise = torch.randn(future.shape, generator=gen, dtype=torch.float64) * scale
        changed = future + noise.to(device=x.device, dtype=x.dtype)
    else:
        values = torch.unique(x)
        idx = torch.searchsorted(values, future.contiguous())
        changed = values[(idx + 1) % values.numel()]
    return torch.cat([x.narrow(td, 0, cut + 1), changed], dim=td)


def _past_change(base, other, td: int, cut: int):
    """Per position 0..cut: the largest |change| of ``other`` against ``base`` (NaN in both
    counts as no change; NaN in one only, as an infinite change)."""
    import torch

    a = base.narrow(td, 0, cut + 1).double()
    b = other.narrow(td, 0, cut + 1).double()
    diff = (b - a).abs()
    both_nan = torch.isnan(a) & torch.isnan(b)
    same_inf = torch.isinf(a) & (a == b)
    diff = torch.where(both_nan | same_inf, torch.zeros_like(diff), diff)
    diff = torch.nan_to_num(diff, nan=math.inf)
    return diff.movedim(td, 0).reshape(cut + 1, -1).amax(1)


def _scale(t) -> float:
    import torch

    finite = t.detach()[torch.isfinite(t.detach())]
    return float(finite.abs().max()) if finite.numel() else 0.0


def _cuts(length: int, most: int) -> list[int]:
    """The cut points: every position but the last, or ``most`` of them evenly spaced."""
    last = length - 2
    if last + 1 <= most:
        return list(range(last + 1))
    return sorted({round(i * last / (most - 1)) for i in range(most)})


class FutureLeakage(Probe):
    """A sequence model whose output at position t changes when only inputs after t change.

    **What it checks**
    For a model over sequences, inputs shaped ``(N, T, F)`` (features), ``(N, F, T)`` (with
    ``time_dim`` 2) or ``(N, T)`` (token ids), batch first, with an output that keeps the time
    dimension in the same place (``(N, T, ...)``), a copy in ``eval()`` mode is run on the batch and
    then, for each cut point t (every position, or ``max_cuts`` of them evenly spaced), on the
    batch with every input position after t changed (Gaussian noise of the input's spread for
    features; the next token id seen in the batch for ids). Outputs at positions 0..t must not
    move by more than ``atol + rtol * max|output|``. It fires with the first leaking position
    (the earliest output that reads a later input), how far ahead it reads, the cut points that
    leak, and the first module whose own output leaks (hooks on every module for one cut). This
    is the classic check of a mask that does not hide the future: "does the prediction change
    when the future is hidden?". The first non-bool input tensor is the one changed; other
    inputs (a padding mask) are passed unchanged. Models without a per-position output, and
    non-sequence inputs, are skipped.

    **Why it matters**
    An autoregressive model (a language model, a forecaster, a causal tagger) trained without
    its causal mask reads the answer: the output at t sees the input at t + 1, which is the
    target at t. Training and validation loss fall fast and look excellent, and the model fails
    at generation, where the future does not exist yet. Nothing crashes. Typical causes: no
    ``mask``/``is_causal`` passed to ``nn.TransformerEncoder`` or
    ``scaled_dot_product_attention``, a mask whose 0 and 1 are swapped (``True`` means *masked*
    for ``nn.MultiheadAttention``), ``triu`` with the wrong diagonal (one step ahead), a
    bidirectional RNN, a ``Conv1d`` with symmetric padding, a normalisation over the time axis.
    Encoders that are meant to see the whole sequence (BERT-style, sequence labelling with a
    bidirectional RNN) fire too: ignore M013 for them.

    **How to fix**
    Pass the causal mask: ``mask=nn.Transformer.generate_square_subsequent_mask(T)`` with
    ``is_causal=True`` for ``nn.TransformerEncoder``, ``is_causal=True`` for
    ``F.scaled_dot_product_attention``, ``torch.triu(torch.ones(T, T, dtype=torch.bool),
    diagonal=1)`` as a boolean mask (``True`` = hidden); use ``bidirectional=False`` RNNs; pad
    convolutions on the left only (``F.pad(x, (k - 1, 0))``). Check which module the message
    names first.
    """

    code = "M013"
    name = "future-leakage"
    severity = Severity.WARNING
    summary = "a sequence output at position t changes when only inputs after t change"
    thresholds = {"time_dim": 1, "max_cuts": 64, "rtol": 1e-5, "atol": 1e-6}
    sections = ("future_cuts",)

    def check(self, ctx: ProbeContext):
        import torch

        from datavet.probes._torch import tensors

        td = int(self.options["time_dim"])
        if td < 1:
            raise Skip("time_dim must be 1 or more: dimension 0 is the batch")
        x, length = _sequence_input(ctx, td)
        n = ctx.batch_size
        rtol, atol = float(self.options["rtol"]), float(self.options["atol"])

        with torch.no_grad():
            model = ctx.copy(train=False)

            def run(inputs):
                with ctx.isolated():
                    return tensors(ctx.forward(model, inputs))

            base = run(ctx.inputs)
            which = _pick(base, n, td, length)
            if which is None:
                shapes = ", ".join(str(tuple(t.shape)) for t in base[:3]) or "no tensor"
                raise Skip(
                    f"the output ({shapes}) has no per-position dimension of length {length} on "
                    f"dimension {td}: a whole-sequence output sees every position by design"
                )
            out = base[which]
            if not bool(torch.isfinite(out).all()):
                raise Skip("the output holds NaN or inf: no change can be measured (see M004)")
            scale = _scale(out)
            tol = atol + rtol * scale
            again = run(ctx.inputs)[which]
            noise = float(_past_change(out, again, td, length - 1).max())
            if noise > tol:
                raise Skip(
                    f"two eval()-mode passes on the same batch differ by {fmt(noise)} (see M008)"
                )
            rows = []
            reads_to: dict[int, int] = {}  # output position -> the farthest input it reads
            for cut in _cuts(length, max(int(self.options["max_cuts"]), 2)):
                changed_x = _perturb(x, td, cut, ctx.seed)
                moved = _past_change(out, run(_replace(ctx.inputs, x, changed_x))[which], td, cut)
                leaking = (moved > tol).nonzero().flatten().tolist()
                for p in leaking:
                    reads_to[p] = max(reads_to.get(p, p), cut + 1)
                rows.append(
                    {
                        "cut": cut,
                        "max_change": float(moved.max()),
                        "first_changed": leaking[0] if leaking else None,
                        "n_changed": len(leaking),
                        "leaks": bool(leaking),
                    }
                )
        leaky = [r for r in rows if r["leaks"]]
        self.details = {
            "sequence_length": length,
            "time_dim": td,
            "input_shape": list(x.shape),
            "output_shape": list(out.shape),
            "tolerance": tol,
            "output_scale": scale,
            "cuts": rows,
        }
        if not leaky:
            self.details["headline"] = (
                f"causal: {len(rows)} cut point(s) over {length} positions, no earlier output moved"
            )
            return
        first = min(reads_to)
        ahead = reads_to[first] - first
        worst = max(leaky, key=lambda r: r["max_change"])
        module = _localise(ctx, model, x, td, leaky[0]["cut"], rtol, atol)
        self.details.update(
            {
                "first_position": first,
                "reads_up_to": reads_to[first],
                "lookahead": ahead,
                "leaking_positions": sorted(reads_to),
                "module": module,
            }
        )
        where = f"; the first module whose output leaks is {module['label']}" if module else ""
        self.details["headline"] = f"position {first} reads position {reads_to[first]}" + (
            f" ({module['type']})" if module else ""
        )
        steps = "step" if ahead == 1 else "steps"
        yield self.finding(
            f"The model's output at earlier positions changes when only later inputs change: "
            f"position {first} already reads the input at position {reads_to[first]} "
            f"({ahead} {steps} ahead), and {len(leaky)} of {len(rows)} cut points leak "
            f"({len(reads_to)} of the {length - 1} positions that have a later input read it; "
            f"largest change "
            f"{fmt(worst['max_change'])} with inputs after position {worst['cut']} changed, "
            f"outputs up to {fmt(scale)} in size){where}. A model meant to be causal sees the "
            "future: a missing or inverted causal mask, or a bidirectional layer.",
            columns=(module["module"],) if module else (),
            n_affected=len(reads_to),
            metrics={
                "first_position": first,
                "lookahead": ahead,
                "max_change": worst["max_change"],
                "cuts_leaking": len(leaky),
                "cuts_tested": len(rows),
                "sequence_length": length,
            },
            hint="pass the causal mask (is_causal=True, a triu mask with True = hidden), use "
            "unidirectional RNNs, pad convolutions on the left; ignore M013 for encoders meant "
            "to see the whole sequence",
        )


def _localise(ctx, model, x, td, cut, rtol, atol) -> dict | None:
    """The first module (in the order modules return) whose own per-position output, at
    positions 0..cut, changes when the inputs after ``cut`` change."""
    import torch

    from datavet.probes._torch import tensors

    n, length = ctx.batch_size, x.shape[td]

    def record(into: list):
        def hook(name):
            def keep(module, args, output):
                if len(into) >= MAX_MODULE_CALLS:
                    return
                i = _pick(output, n, td, length)
                if i is not None:
                    t = tensors(output)[i]
                    into.append((name, type(module).__name__, t.narrow(td, 0, cut + 1).clone()))

            return keep

        return [m.register_forward_hook(hook(name)) for name, m in model.named_modules()]

    seen: list[list] = [[], []]
    changed = _perturb(x, td, cut, ctx.seed)
    for into, inputs in zip(seen, (ctx.inputs, _replace(ctx.inputs, x, changed))):
        handles = record(into)
        try:
            with ctx.isolated(), torch.no_grad():
                ctx.forward(model, inputs)
        finally:
            for h in handles:
                h.remove()
    for (name, kind, a), (name2, _, b) in zip(*seen):
        if name != name2 or a.shape != b.shape:
            return None  # the two passes took different paths: no reliable order
        tol = atol + rtol * _scale(a)
        if float(_past_change(a, b, td, cut).max()) > tol:
            label = f"{name!r} ({kind})" if name else f"the model's own forward ({kind})"
            return {"module": name or kind, "type": kind, "label": label}
    return None
