from __future__ import annotations

import math

from datavet.findings import Severity
from datavet.probes.base import Probe, ProbeContext, Skip

CONFIDENT = 0.9  # the probability the crafted distribution gives the true class


def _candidates(ctx: ProbeContext, q):
    """(loss on probabilities, loss that re-applies log-softmax / sigmoid) for the crafted q."""
    import torch
    import torch.nn.functional as F

    y = ctx.target
    if ctx.task == "binary":
        yf = y.reshape(q.shape).to(q.dtype)
        return F.binary_cross_entropy(q, yf), F.binary_cross_entropy_with_logits(q, yf)
    q = q.movedim(ctx.class_dim, 1)  # torch's losses take the classes on dimension 1
    return F.nll_loss(torch.log(q), y.long()), F.cross_entropy(q, y.long())


def _crafted(ctx: ProbeContext, output):
    """Valid probabilities, confident (0.9) on the true class, shaped like the output."""
    import torch
    import torch.nn.functional as F

    y = ctx.target
    if ctx.task == "binary":
        return torch.where(y.reshape(output.shape) > 0.5, CONFIDENT, 1 - CONFIDENT).to(output.dtype)
    c = ctx.n_classes
    rest = (1 - CONFIDENT) / (c - 1)
    one_hot = F.one_hot(y.long().clamp(0, c - 1), c).movedim(-1, ctx.class_dim).to(output.dtype)
    return one_hot * (CONFIDENT - rest) + rest


class DoubleSoftmax(Probe):
    """The model already outputs probabilities and the loss applies (log-)softmax again.

    **What it checks**
    Classification only. Fires when both hold: (1) the model's output is a probability
    distribution (every value in [0, 1] and each row summing to 1 within ``sum_tolerance``; for a
    single-output binary model, a ``sigmoid`` as the last operation), and (2) the loss treats its
    input as logits: on crafted probabilities that give the true class 0.9, the loss is closer to
    ``cross_entropy`` of those probabilities (log-softmax applied again) than to their negative
    log-likelihood. This is the classic "softmax twice" bug: ``nn.Softmax`` at the end of a
    network trained with ``cross_entropy``.

    **Why it matters**
    ``cross_entropy`` computes ``log_softmax`` internally. Fed probabilities in [0, 1], the
    log-softmax can never be confident: with 5 classes the best reachable loss is
    ``log(1 + 4/e) = 0.905`` instead of 0. Training runs, the loss falls a little and stalls,
    nothing crashes. The initial loss looks normal (1.617 against ``ln 5 = 1.609`` for 5 classes),
    so only the one-batch overfit (M002: stuck at 0.9674) or this check catches it.

    **How to fix**
    Remove the final ``Softmax`` (``Sigmoid``) from the model and keep ``cross_entropy``
    (``binary_cross_entropy_with_logits``), applying softmax only at inference. A model that must
    return log-probabilities ends with ``log_softmax`` and trains with ``nll_loss``;
    ``nll_loss(torch.log(softmax(z)))`` is the unstable pattern (the log of a probability that
    underflowed to 0 is -inf).
    """

    code = "M003"
    name = "double-softmax"
    severity = Severity.ERROR
    summary = "softmax/sigmoid output fed to a loss that applies it again"
    thresholds = {"sum_tolerance": 1e-3}
    needs = ("model", "torch", "known_task")

    def check(self, ctx: ProbeContext):
        import torch

        if ctx.task not in ("classification", "binary"):
            raise Skip(f"the task is {ctx.task}, not classification")
        out = ctx.output
        if not isinstance(out, torch.Tensor) or not out.is_floating_point():
            raise Skip("the model's output is not one floating-point tensor")
        finite = bool(torch.isfinite(out).all())
        in_unit = finite and bool(((out >= 0) & (out <= 1)).all())
        if ctx.task == "binary":
            last = ctx.shared.get("output_grad_fn")
            is_dist = in_unit and last == "SigmoidBackward0"
            kind = "a sigmoid"
        else:
            err = (out.sum(ctx.class_dim) - 1).abs().max() if out.ndim >= 2 else math.inf
            is_dist = in_unit and float(err) <= float(self.options["sum_tolerance"])
            kind = "a softmax"
        self.details = {"output_is_distribution": is_dist}
        if not is_dist:
            self.details["headline"] = "outputs are logits"
            return
        q = _crafted(ctx, out)
        with torch.no_grad():
            seen = float(ctx.loss(q))
            on_probs, again = (float(v) for v in _candidates(ctx, q))
        if not (seen > 0 and math.isfinite(seen)):
            raise Skip(f"the loss on crafted probabilities is {seen}")
        reapplies = abs(math.log(seen / again)) < abs(math.log(seen / on_probs))
        self.details.update(
            {
                "loss_on_crafted": seen,
                "nll_of_probabilities": on_probs,
                "cross_entropy_of_probabilities": again,
                "loss_reapplies": reapplies,
            }
        )
        if not reapplies:
            self.details["headline"] = "probabilities, and the loss takes them as such"
            return
        self.details["headline"] = f"{kind} output, loss applies it again"
        floor = math.log(1 + (ctx.n_classes - 1) / math.e) if ctx.task == "classification" else None
        floor_text = (
            f"; the lowest loss it can reach is log(1 + {ctx.n_classes - 1}/e) = {floor:.3f}"
            if floor is not None
            else ""
        )
        yield self.finding(
            f"The model's output is already a probability distribution ({kind}: values in "
            f"[0, 1]{', rows summing to 1' if ctx.task == 'classification' else ''}) and the "
            f"loss applies {'log-softmax' if ctx.task == 'classification' else 'a sigmoid'} to "
            f"it again: on probabilities that give the true class {CONFIDENT}, it returns "
            f"{seen:.3f} (cross-entropy of the probabilities as logits: {again:.3f}; their "
            f"negative log-likelihood: {on_probs:.3f}){floor_text}.",
            metrics={
                "loss_on_crafted": seen,
                "cross_entropy_of_probabilities": again,
                "nll_of_probabilities": on_probs,
                **({"loss_floor": floor} if floor is not None else {}),
            },
            hint="remove the final softmax/sigmoid from the model (apply it only at inference); "
            "if the model must return log-probabilities, end it with log_softmax and use "
            "nll_loss (not nll_loss(log(softmax)): log of a softmax underflows to -inf)",
        )
