"""Padding that leaks into a sequence loss or through attention (M014)."""

from __future__ import annotations

import math

from datavet.auditors.base import fmt
from datavet.findings import Severity
from datavet.probes.base import Probe, ProbeContext, Skip


def padding_from_pad_id(inputs, batch_size: int, pad_id: int):
    """The (N, T) bool mask ``tokens == pad_id`` of the first (N, T) integer tensor of the
    inputs, or None when the inputs hold no token ids."""
    import torch

    from datavet.probes._torch import tensors

    for t in tensors(inputs):
        if (
            t.ndim == 2
            and t.shape[0] == batch_size
            and t.dtype != torch.bool
            and not (t.is_floating_point() or t.is_complex())
        ):
            return t == pad_id
    return None


def _select(t, td: int, keep):
    """``t``'s positions where ``keep`` (N, T) is True, as a batch of M length-1 sequences: the
    layout (time on dimension ``td``) stays the same, so any loss_fn takes it."""
    return t.movedim(td, 1)[keep].unsqueeze(1).movedim(1, td)


def _output_time_dim(ctx: ProbeContext, out, length: int) -> int | None:
    """Where the positions are in the output: 1 ((N, T, ...)) or 2 (PyTorch's (N, C, T) logits
    for (N, T) class targets)."""
    if ctx.task == "classification" and ctx.class_dim == 1 and out.ndim == ctx.target.ndim + 1:
        return 2 if out.ndim > 2 and out.shape[2] == length else None
    if out.ndim > 1 and out.shape[1] == length:
        return 1
    return None


def _close(a: float, b: float, rtol: float) -> bool:
    if not (math.isfinite(a) and math.isfinite(b)):
        return a == b or (math.isnan(a) and math.isnan(b))
    return abs(a - b) <= rtol * max(abs(a), abs(b), 1e-12)


def _suffix_lengths(mask) -> list[int] | None:
    """Per row, the number of real positions when the padding is a suffix of every row (right
    padding); None when some row has a real position after a padded one."""
    import torch

    length = mask.shape[1]
    real = (~mask).sum(1)
    expected = torch.arange(length, device=mask.device)[None, :] >= real[:, None]
    if not bool((expected == mask).all()):
        return None
    return [int(v) for v in real.tolist()]


def _truncate(obj, rows, length: int, n: int, t_full: int):
    """``obj`` with every batched tensor cut to ``rows`` and, where it has the sequence on
    dimension 1, to its first ``length`` positions."""
    import torch

    if isinstance(obj, torch.Tensor):
        if not obj.ndim or obj.shape[0] != n:
            return obj
        obj = obj[rows]
        if obj.ndim >= 2 and obj.shape[1] == t_full:
            obj = obj[:, :length]
        return obj
    if isinstance(obj, dict):
        return {k: _truncate(v, rows, length, n, t_full) for k, v in obj.items()}
    if isinstance(obj, (tuple, list)):
        return type(obj)(_truncate(v, rows, length, n, t_full) for v in obj)
    return obj


def _perturb_padded(obj, mask, seed: int):
    """``obj`` with the values of every batched (N, T, ...) non-bool tensor changed at the padded
    positions only: Gaussian noise of the tensor's spread for floats, the next distinct value
    seen in the tensor for integer ids. Bool tensors (padding masks) pass unchanged."""
    import torch

    n, length = mask.shape

    def change(t):
        if not isinstance(t, torch.Tensor) or t.dtype == torch.bool or t.is_complex():
            return t
        if t.ndim < 2 or t.shape[0] != n or t.shape[1] != length:
            return t
        where = mask.reshape(n, length, *([1] * (t.ndim - 2))).expand_as(t)
        if t.is_floating_point():
            gen = torch.Generator().manual_seed(seed)
            spread = float(t.detach().float().std()) if t.numel() > 1 else 1.0
            scale = spread if math.isfinite(spread) and spread > 0 else 1.0
            noise = torch.randn(t.shape, generator=gen, dtype=torch.float64) * scale
            return torch.where(where, t + noise.to(device=t.device, dtype=t.dtype), t)
        values = torch.unique(t)
        if values.numel() < 2:
            return t
        nxt = values[(torch.searchsorted(values, t.contiguous()) + 1) % values.numel()]
        return torch.where(where, nxt, t)

    def walk(o):
        if isinstance(o, dict):
            return {k: walk(v) for k, v in o.items()}
        if isinstance(o, (tuple, list)):
            return type(o)(walk(v) for v in o)
        return change(o)

    return walk(obj)


class PaddingInLoss(Probe):
    """Padded positions of a sequence batch that count in the loss or change real outputs.

    **What it checks**
    For a batch with declared padding, ``datavet.probe(..., padding_mask=mask)`` (a bool
    ``(N, T)`` tensor, ``True`` = padding, as ``src_key_padding_mask``) or ``pad_id=ID``
    (padding wherever the ``(N, T)`` token ids in the inputs equal ``ID``), a copy of the model
    in ``eval()`` mode is run on the batch (RNG seeded, then restored), and then:
    (1) the loss is computed as your ``loss_fn`` computes it; (2) it is recomputed from the real
    (unpadded) positions only, by calling ``loss_fn`` on those positions as a batch of
    length-1 sequences (the layout stays ``(N, T, ...)`` or ``(N, C, T)``, so a loss that
    flattens works too), and the two are compared; (3) the gradient of the loss with respect to
    the outputs at padded positions is measured: a loss that ignores padding gives them exactly
    zero; (4) the outputs at real positions are compared with a run where the padding cannot
    matter: the batch cut to each row's real length when every row is right-padded (the model
    needs no mask for that), otherwise the batch with its padded inputs changed (noise for
    features, other ids for tokens; bool mask tensors in the inputs passed unchanged). It
    fires when padded outputs carry gradient (padding in the loss), when the loss equals the
    real positions' loss scaled by the share of real positions (a masked sum divided by all
    ``N * T`` positions), or when real outputs move (padding leaks through attention), with the
    loss with and without padding, the share of padded positions and the largest change.
    Targets at padded positions are not changed: an ``ignore_index`` value such as -100 is
    itself the mask. Without declared padding, or a batch with no padded position, it is
    skipped. ``check_inputs: 0`` turns step (4) off.
    Thresholds: padding is in the loss when the padded positions carry more than
    ``gradient_share`` of the output gradient; the two losses are the same within ``loss_rtol``
    (relative); real outputs moved when they change by more than ``atol + rtol * max|output|``.

    **Why it matters**
    Padding is filler, not data. A plain ``nn.CrossEntropyLoss()`` over padded targets trains
    the model to predict the pad token (easy, so the loss looks good), weights every batch by
    how much padding it happens to hold, and makes the validation loss depend on the batch
    size and the sort order. Dividing a masked sum by ``N * T`` shrinks the loss and the
    gradient with the padding share. An encoder without ``src_key_padding_mask`` lets real
    tokens attend to pads, so a sentence's representation changes with the length of the
    longest sentence in its batch: training and inference (batch of one, no padding) disagree.
    None of this crashes.

    **How to fix**
    Set the padded targets to the loss's ignore value and keep it: ``nn.CrossEntropyLoss(
    ignore_index=-100)`` with ``target[padding] = -100`` (or ``ignore_index=PAD``); for other
    losses use ``reduction="none"``, multiply by ``~padding`` and divide by
    ``(~padding).sum()``, not by the element count. Pass the padding to attention:
    ``src_key_padding_mask=padding`` (``True`` = pad) for ``nn.TransformerEncoder``,
    ``key_padding_mask`` for ``nn.MultiheadAttention``, and ``pack_padded_sequence`` for RNNs.
    """

    code = "M014"
    name = "padding-in-loss"
    severity = Severity.ERROR
    summary = "padded positions count in the loss or change the outputs at real positions"
    thresholds = {
        "gradient_share": 1e-6,
        "loss_rtol": 1e-4,
        "rtol": 1e-5,
        "atol": 1e-6,
        "check_inputs": 1,
    }
    sections = ("padding_figures",)

    def check(self, ctx: ProbeContext):
        import torch

        mask = ctx.padding_mask
        if mask is None:
            raise Skip("no padding declared: pass padding_mask= (True = padding) or pad_id=")
        n, length = mask.shape
        n_pad = int(mask.sum())
        if n_pad == 0:
            raise Skip(f"the batch has no padded position ({ctx.padding_source})")
        if n_pad == mask.numel():
            raise Skip(f"every position of the batch is padding ({ctx.padding_source})")
        y = ctx.target
        if y.ndim < 2 or y.shape[1] != length:
            raise Skip(
                f"the target {tuple(y.shape)} has no sequence dimension of length {length} on "
                "dimension 1, where the padding mask puts it"
            )
        share = n_pad / mask.numel()
        keep = ~mask
        model = ctx.copy(train=False)
        with torch.no_grad(), ctx.isolated():
            out = ctx.forward(model)
        if not isinstance(out, torch.Tensor) or not out.is_floating_point():
            raise Skip("the model's output is not one floating-point tensor")
        otd = _output_time_dim(ctx, out, length)
        if otd is None:
            raise Skip(
                f"the output {tuple(out.shape)} has no per-position dimension of length {length}"
            )
        if not bool(torch.isfinite(out).all()):
            raise Skip("the output holds NaN or inf: no loss can be compared (see M004)")

        # (1) the loss as given, and its gradient on the outputs
        leaf = out.detach().clone().requires_grad_(True)
        with ctx.isolated():
            loss = ctx.loss_fn(leaf, y)
        full = float(loss.detach())
        grad = torch.autograd.grad(loss, leaf, allow_unused=True)[0] if loss.requires_grad else None
        if grad is None:
            grad = torch.zeros_like(leaf)
        g = grad.detach().double().movedim(otd, 1).abs()
        g = g.reshape(n, length, -1).sum(-1)
        total = float(g.sum())
        on_pad = float(g[mask].sum())
        grad_share = on_pad / total if total > 0 else 0.0
        padded_rows = mask.any(1).nonzero().flatten().tolist()

        # (2) the loss from the real positions only
        try:
            with torch.no_grad(), ctx.isolated():
                real = float(ctx.loss_fn(_select(out, otd, keep), _select(y, 1, keep)))
        except Exception as exc:  # a loss_fn that cannot take M length-1 sequences
            real, real_error = None, f"{type(exc).__name__}: {exc}"
        else:
            real_error = None
        rtol = float(self.options["loss_rtol"])
        in_loss = grad_share > float(self.options["gradient_share"])
        diluted = (
            real is not None
            and not in_loss
            and not _close(full, real, rtol)
            and _close(full, real * (1 - share), rtol)
        )

        # (4) outputs at real positions against a run where padding cannot matter
        attention = (
            self._attention(ctx, model, out, otd, mask) if self.options["check_inputs"] else None
        )
        leaks = bool(attention and attention["leaks"])

        self.details = {
            "padding_source": ctx.padding_source,
            "positions": mask.numel(),
            "padded_positions": n_pad,
            "padded_share": share,
            "padded_rows": len(padded_rows),
            "loss": full,
            "loss_real_positions": real,
            "loss_real_error": real_error,
            "gradient_share_on_padding": grad_share,
            "padding_in_loss": in_loss,
            "diluted": diluted,
            "attention": attention,
        }
        parts = []
        if in_loss:
            parts.append(f"padding counts in the loss ({grad_share:.1%} of the gradient)")
        if diluted:
            parts.append("the loss is divided by padded positions too")
        if leaks:
            parts.append("padding changes real outputs")
        loss_text = f"loss {fmt(full)}, real positions only {fmt(real)}"
        self.details["headline"] = (
            "; ".join(parts) if parts else "padding ignored"
        ) + f": {loss_text}, {share:.0%} padded"
        if not parts:
            return
        said = []
        if in_loss:
            said.append(
                f"the loss reads the outputs at padded positions: {grad_share:.1%} of its "
                "gradient on the outputs falls on them (0 when padding is ignored)"
            )
        if diluted:
            said.append(
                f"the loss equals the real positions' loss times their share ({1 - share:.0%}): "
                "a masked sum divided by every position, padded ones included"
            )
        if leaks:
            said.append(
                f"outputs at real positions change by up to {fmt(attention['max_change'])} "
                f"(tolerance {fmt(attention['tolerance'])}) when {attention['method_text']}: "
                "real positions read the padding (no key padding mask)"
            )
        real_text = "could not be recomputed" if real is None else f"is {fmt(real)}"
        yield self.finding(
            f"Padding leaks: {'; '.join(said)}. The loss on the batch is {fmt(full)}; over the "
            f"{mask.numel() - n_pad} real positions only it {real_text}; {n_pad} of "
            f"{mask.numel()} positions ({share:.1%}) are padding ({ctx.padding_source}).",
            examples=tuple(padded_rows[:20]),
            n_affected=len(padded_rows),
            metrics={
                k: v
                for k, v in {
                    "loss": full,
                    "loss_real_positions": real,
                    "padded_share": share,
                    "padded_positions": n_pad,
                    "gradient_share_on_padding": grad_share,
                    "max_output_change": attention["max_change"] if attention else None,
                }.items()
                if v is not None
            },
            hint="ignore padded targets (ignore_index, or a mask and a mean over real positions); "
            "pass src_key_padding_mask / key_padding_mask to attention",
        )

    def _attention(self, ctx: ProbeContext, model, out, otd: int, mask) -> dict | None:
        """The largest change of the outputs at real positions when the padding is cut off (right
        padding) or changed (otherwise); None when neither can be run."""
        import torch

        n, length = mask.shape
        scale = float(out.abs().max())
        tol = float(self.options["atol"]) + float(self.options["rtol"]) * scale
        with torch.no_grad(), ctx.isolated():
            again = ctx.forward(model)
        if not isinstance(again, torch.Tensor) or float((again - out).abs().max()) > tol:
            return None  # eval() passes differ by themselves (M008): nothing to compare
        base = out.movedim(otd, 1)
        lengths = _suffix_lengths(mask)
        changes: list[float] = []
        method = None
        if lengths is not None:
            method = "truncate"
            try:
                for cut in sorted(set(lengths) - {0, length}):
                    rows = [i for i, v in enumerate(lengths) if v == cut]
                    idx = torch.tensor(rows, device=mask.device)
                    inputs = _truncate(ctx.inputs, idx, cut, n, length)
                    with torch.no_grad(), ctx.isolated():
                        short = ctx.forward(model, inputs)
                    short = short.movedim(otd, 1)
                    diff = (short[:, :cut] - base[idx, :cut]).abs()
                    changes.append(float(torch.nan_to_num(diff, nan=math.inf).max()))
            except Exception:  # a model with a fixed length: change the padded inputs instead
                method, changes = None, []
        if method is None:
            method = "perturb"
            inputs = _perturb_padded(ctx.inputs, mask, ctx.seed)
            with torch.no_grad(), ctx.isolated():
                moved = ctx.forward(model, inputs)
            if not isinstance(moved, torch.Tensor) or moved.shape != out.shape:
                return None
            diff = (moved.movedim(otd, 1) - base).abs()
            diff = torch.nan_to_num(diff, nan=math.inf).reshape(n, length, -1).amax(-1)
            changes.append(float(diff[~mask].max()))
        worst = max(changes) if changes else 0.0
        return {
            "method": method,
            "method_text": (
                "each row is cut to its real length"
                if method == "truncate"
                else "only the padded inputs change"
            ),
            "max_change": worst,
            "tolerance": tol,
            "output_scale": scale,
            "leaks": worst > tol,
        }
