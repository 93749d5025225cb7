from __future__ import annotations

import math

from datavet.findings import Severity
from datavet.probes.base import Probe, ProbeContext, Skip
from datavet.probes.double_softmax import not_log_probabilities
from datavet.probes.nonfinite import forward_trace


def _entropy(p: list[float]) -> float:
    return -sum(x * math.log(x) for x in p if x > 0)


def references(ctx: ProbeContext, output) -> list[dict]:
    """The losses theory expects before training: uniform logits and the batch's class prior
    (classification), or the loss of predicting 0, mean(y^2) for MSE (regression)."""
    import torch

    y = ctx.target.detach()
    refs = []
    if ctx.task == "classification":
        c = ctx.n_classes
        refs.append({"name": "uniform logits", "formula": f"ln {c}", "value": math.log(c)})
        if y.is_floating_point() and y.shape == output.shape:  # soft labels
            prior = y.float().movedim(ctx.class_dim, -1).reshape(-1, c).mean(0).tolist()
        else:
            labels = y.long().flatten()
            labels = labels[(labels >= 0) & (labels < c)]  # ignore_index (-100) and strays
            counts = torch.bincount(labels, minlength=c).tolist()
            total = sum(counts) or 1
            prior = [n / total for n in counts]
        refs.append(
            {"name": "class-prior entropy", "formula": "H(batch prior)", "value": _entropy(prior)}
        )
    elif ctx.task == "binary":
        refs.append({"name": "uniform logits", "formula": "ln 2", "value": math.log(2)})
        p = float(y.float().mean())
        refs.append(
            {
                "name": "class-prior entropy",
                "formula": "H(batch prior)",
                "value": _entropy([p, 1 - p]),
            }
        )
    else:
        mean_sq = float(y.double().pow(2).mean())
        try:
            with torch.no_grad():
                zero = float(ctx.loss(torch.zeros_like(output)))
        except Exception:  # a loss that cannot take zeros: fall back to the MSE theory
            zero = mean_sq
        is_mse = math.isclose(zero, mean_sq, rel_tol=1e-4, abs_tol=1e-12)
        refs.append(
            {
                "name": "predicting 0",
                "formula": "mean(y^2)" if is_mse else "loss(0, y)",
                "value": zero,
            }
        )
        try:
            with torch.no_grad():
                mean = y.float().mean(0, keepdim=True).expand_as(y).reshape(output.shape)
                at_mean = float(ctx.loss(mean.to(output.dtype)))
        except Exception:
            at_mean = math.nan
        if math.isfinite(at_mean):
            refs.append(
                {
                    "name": "predicting the mean",
                    "formula": "var(y)" if is_mse else "loss(mean(y), y)",
                    "value": at_mean,
                    "scale_only": True,  # what a standardised target's untrained loss is
                }
            )
    return refs


class InitialLoss(Probe):
    """The loss before training, against the value theory gives for an untrained model.

    **What it checks**
    The loss of one forward pass of the untrained model (train mode, seeded) against the theory:
    for C-class classification ``ln C`` (uniform logits) and the entropy of the batch's class
    prior; for binary classification ``ln 2`` and the prior's entropy; for regression the loss of
    predicting 0, ``mean(y^2)`` with MSE. The check is two-sided: it fires when the loss is more
    than ``tolerance`` times above or below every reference, and says which reference matched
    when one does. A healthy 5-class model starts near ``ln 5 = 1.609`` (1.663, say).
    For regression it also fires when predicting 0 costs more than ``tolerance`` times predicting
    the target's mean (``var(y)`` with MSE): an untrained model outputs about 0, so its loss
    "matches" the predicting-0 reference exactly when the target is far from standard scale.
    When the excess is about the batch size, the message says the loss is a sum over the batch
    (M009). A negative initial loss is skipped, and so is a loss fed outputs that are not the
    log-probabilities it expects (``nll_loss`` on logits), which M003 reports.

    **Why it matters**
    A loss far above theory means the initial outputs are large and confident: unnormalised
    inputs, a last layer initialised too large, targets on the wrong scale. The first hundreds of
    steps are then spent shrinking the outputs, or training diverges. A loss far below theory
    before any training means the model already knows the labels: a label leaking into the
    inputs, or (then it is expected) a pretrained model. The check is cheap but weak: a
    softmax-twice model starts at 1.617, well inside tolerance (M002 and M003 catch it).

    **How to fix**
    Standardise inputs (and regression targets); initialise the last layer small (or zero) and
    its bias to the log class prior; check the loss's reduction and that the targets are what the
    loss expects (class indices vs one-hot, 0/1 vs -1/1).
    """

    code = "M001"
    name = "initial-loss-mismatch"
    severity = Severity.WARNING
    summary = "initial loss far from ln C / prior entropy / mean(y^2)"
    thresholds = {"tolerance": 2.0}
    needs = ("model", "torch", "known_task")

    def check(self, ctx: ProbeContext):
        t = ctx.cached("trace", lambda: forward_trace(ctx))
        loss = t["loss"]
        if not math.isfinite(loss):
            raise Skip(f"the initial loss is {loss} (see M004)")
        if not_log_probabilities(ctx) is not None:
            raise Skip(
                f"the initial loss {loss:.4g} is not a cross-entropy of log-probabilities: the "
                "output is not what the loss expects (see M003)"
            )
        if loss < 0:  # no ratio to a positive theory value means anything
            raise Skip(f"the initial loss {loss:.4g} is negative")
        refs = [
            r
            for r in references(ctx, ctx.output)
            if r["value"] > 1e-12 and math.isfinite(r["value"])
        ]
        if not refs:
            raise Skip("every reference loss is 0 (one class in the batch, or all-zero targets)")
        tol = float(self.options["tolerance"])
        for r in refs:
            r["ratio"] = loss / r["value"]
            r["matched"] = 1 / tol <= r["ratio"] <= tol
        scale = next((r for r in refs if r.get("scale_only")), None)
        zero = next((r for r in refs if r["name"] == "predicting 0"), None)
        if scale is not None and zero is not None and zero["value"] > tol * scale["value"]:
            # predicting 0 costs far more than predicting the mean: the target sits far from 0
            # (unscaled), so "matching predicting 0" is what an unscaled target gives
            self.details = {
                "initial_loss": loss,
                "references": refs,
                "matched": None,
                "tolerance": tol,
                "headline": f"{loss:.4g} vs {scale['formula']} = {scale['value']:.4g}",
            }
            yield self.finding(
                f"Initial loss {loss:.4g} is {scale['ratio']:.3g}x the loss of predicting the "
                f"target's mean ({scale['formula']} = {scale['value']:.4g}): the target is far "
                f"from standard scale (predicting 0 costs {zero['value']:.4g}), so the network "
                "spends its first steps learning the target's offset and scale.",
                metrics={
                    "initial_loss": loss,
                    "reference": scale["value"],
                    "ratio": scale["ratio"],
                },
                hint="standardise the regression target ((y - mean) / std, undo at inference), "
                "or initialise the output bias to mean(y)",
            )
            return
        refs = [r for r in refs if not r.get("scale_only")]
        best = min(refs, key=lambda r: abs(math.log(r["ratio"])) if r["ratio"] > 0 else math.inf)
        listed = "; ".join(f"{r['name']} {r['formula']} = {r['value']:.4g}" for r in refs)
        self.details = {
            "initial_loss": loss,
            "references": refs,
            "matched": best["name"] if best["matched"] else None,
            "tolerance": tol,
        }
        metrics = {"initial_loss": loss, "reference": best["value"], "ratio": best["ratio"]}
        if best["matched"]:
            self.details["headline"] = (
                f"{loss:.4g} vs {best['formula']} = {best['value']:.4g} ({best['name']})"
            )
            return
        self.details["headline"] = f"{loss:.4g}: {best['ratio']:.3g}x {best['formula']}"
        per_sample = best["ratio"] / ctx.batch_size
        if best["ratio"] > 1 and ctx.batch_size > tol and 2 / 3 <= per_sample <= 1.5:
            # the excess is the batch size: the loss adds the samples up instead of averaging
            why = (
                f"the ratio is about the batch size ({ctx.batch_size}), so the loss is most "
                "likely a sum over the batch (reduction='sum'), not a mean (see M009)"
            )
            hint = "use reduction='mean' (or divide the summed loss by the batch size)"
        elif best["ratio"] > 1:
            why = (
                "the untrained model's outputs are too large or confident: standardise the "
                "inputs (and regression targets), initialise the last layer smaller"
            )
            hint = "standardise inputs/targets; initialise the last layer small"
        else:
            why = (
                "before any training the model already predicts the targets: a label leaking "
                "into the inputs, or a pretrained model (then expected)"
            )
            hint = "look for the label among the inputs (unless the model is pretrained)"
        yield self.finding(
            f"Initial loss {loss:.4g} is {best['ratio']:.3g}x the closest theory value "
            f"({listed}), outside the tolerance of {tol:g}x either way: {why}.",
            metrics=metrics,
            hint=hint,
        )
