from __future__ import annotations

import math

from datavet.findings import Severity
from datavet.probes.base import Probe, ProbeContext, Skip
from datavet.probes.nonfinite import forward_trace

CONFIDENT = 0.9  # the probability the crafted distribution gives the true class
LOG_PROB_TOLERANCE = 1e-3  # |logsumexp| over the classes of log-probabilities, at most


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


def not_log_probabilities(ctx: ProbeContext) -> dict | None:
    """Evidence that the loss reads the output as log-probabilities that it is not, or None.

    A negative initial loss on class labels is evidence. So is a loss that falls linearly when a
    constant is added to every output score (nll_loss; cross_entropy normalises and does not
    move) while the output's logsumexp over the classes is not 0 (it is not log_softmax's).
    Shared by M003, which reports it, and M001, which then has no theory to compare with.
    """
    import torch

    def compute():
        loss = ctx.cached("trace", lambda: forward_trace(ctx))["loss"]
        if ctx.task not in ("classification", "binary") or not math.isfinite(loss):
            return None
        if loss < 0:
            return {"initial_loss": loss}
        out = ctx.output
        if ctx.task != "classification" or not isinstance(out, torch.Tensor):
            return None
        if not out.is_floating_point() or not bool(torch.isfinite(out).all()):
            return None
        try:
            with torch.no_grad():
                base, one, two = (float(ctx.loss(out + k)) for k in (0.0, 1.0, 2.0))
        except Exception:  # a loss that refuses shifted outputs: no evidence
            return None
        drop = base - one
        if not drop > 1e-6 or not math.isclose(base - two, 2 * drop, rel_tol=1e-3):
            return None
        lse = float(torch.logsumexp(out.float(), dim=ctx.class_dim).abs().max())
        if lse <= LOG_PROB_TOLERANCE:
            return None
        return {"initial_loss": loss, "logsumexp": lse}

    return ctx.cached("not_log_probabilities", compute)


class DoubleSoftmax(Probe):
    """The model already outputs probabilities and the loss applies (log-)softmax again.

    **What it checks**
    Classification only. Fires when both hold: (1) the model's output is a probability
    distribution (every value in [0, 1] and each row summing to 1 within ``sum_tolerance``; for a
    single-output binary model, a ``sigmoid`` as the last operation), and (2) the loss treats its
    input as logits: on crafted probabilities that give the true class 0.9, the loss is closer to
    ``cross_entropy`` of those probabilities (log-softmax applied again) than to their negative
    log-likelihood. This is the classic "softmax twice" bug: ``nn.Softmax`` at the end of a
    network trained with ``cross_entropy``. It also fires for the opposite mistake, a loss that
    reads log-probabilities (``nll_loss``) fed logits or probabilities: when the untrained
    model's loss is negative (a negative log-likelihood of log-probabilities never is), or when
    the loss falls linearly as a constant is added to every output score while the output's
    logsumexp over the classes is not 0.

    **Why it matters**
    ``cross_entropy`` computes ``log_softmax`` internally. Fed probabilities in [0, 1], the
    log-softmax can never be confident: with 5 classes the best reachable loss is
    ``log(1 + 4/e) = 0.905`` instead of 0. Training runs, the loss falls a little and stalls,
    nothing crashes. The initial loss looks normal (1.617 against ``ln 5 = 1.609`` for 5 classes),
    so only the one-batch overfit (M002: stuck at 0.9674) or this check catches it. The
    opposite mistake, ``nll_loss`` on logits, has no lower bound: the loss falls toward -infinity
    and the model never learns a distribution.

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
    summary = "softmax/sigmoid output fed to a loss that applies it again, or not log-probabilities"
    thresholds = {"sum_tolerance": 1e-3}
    needs = ("model", "torch", "known_task")

    def _not_log_probabilities(self, ctx: ProbeContext, evidence: dict):
        """The loss reads the output as log-probabilities, and the output is not."""
        import torch

        out = ctx.output
        probs = (
            isinstance(out, torch.Tensor)
            and out.is_floating_point()
            and bool(torch.isfinite(out).all())
            and bool(((out >= 0) & (out <= 1)).all())
        )
        given = (
            "probabilities (values in [0, 1]): the loss takes -p of the true class, not -log p"
            if probs
            else "raw scores: the loss takes minus the true class's score, which training drives "
            "toward -infinity instead of learning a distribution"
        )
        loss = evidence["initial_loss"]
        if "logsumexp" in evidence:
            why = (
                f"The loss ({loss:.4g} before training) falls by exactly what is added to every "
                "output score, as nll_loss does, but the output is not log-probabilities: its "
                f"logsumexp over the classes is up to {evidence['logsumexp']:.3g} away from 0."
            )
        else:
            why = (
                f"The loss before training is {loss:.4g}, below 0. The negative log-likelihood "
                "(or cross-entropy) of log-probabilities is never negative, so the model's "
                "output is not log-probabilities."
            )
        self.details = {**evidence, "headline": "the loss does not get log-probabilities"}
        return self.finding(
            f"{why} The output is {given}. This is nll_loss without log_softmax.",
            metrics=evidence,
            hint="end the model with log_softmax for nll_loss, or remove the final softmax "
            "and train with cross_entropy on the logits",
        )

    def check(self, ctx: ProbeContext):
        import torch

        if ctx.task not in ("classification", "binary"):
            raise Skip(f"the task is {ctx.task}, not classification")
        evidence = not_log_probabilities(ctx)
        if evidence is not None:
            yield self._not_log_probabilities(ctx, evidence)
            return
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
