from __future__ import annotations

from datavet.findings import Severity
from datavet.probes.base import Probe, ProbeContext, Skip


class EvalPassChangesModel(Probe):
    """Your evaluation step changes the model: BatchNorm statistics updated by validation data.

    **What it checks**
    Needs ``eval_step=``: a function ``eval_step(model, batch)`` that evaluates the way your
    validation loop does. It is called on a copy of the model in train mode (as it is when a
    training epoch ends), and afterwards every buffer (BatchNorm ``running_mean``,
    ``running_var``, ``num_batches_tracked``) and every parameter is compared with before. It
    fires when any changed, and names them.

    **Why it matters**
    In train mode BatchNorm normalises with the batch's own statistics and updates its running
    averages with every forward pass, gradients or not. A validation loop without
    ``model.eval()`` (``torch.no_grad()`` alone does not switch it) pulls the running statistics
    toward the validation data: the validation score is computed with the wrong normalisation,
    and the model you save has absorbed the validation set. Dropout stays on too.

    **How to fix**
    Call ``model.eval()`` at the start of the evaluation step and ``model.train()`` before the
    next training step; ``torch.no_grad()`` (or ``torch.inference_mode()``) is needed as well,
    for memory, but does not replace ``eval()``.
    """

    code = "M017"
    name = "eval-pass-changes-model"
    severity = Severity.ERROR
    summary = "an evaluation step updates BatchNorm statistics or weights (model.eval() missing)"
    thresholds = {}

    def check(self, ctx: ProbeContext):
        import torch

        if ctx.eval_step is None:
            raise Skip("no eval_step given (pass eval_step=fn(model, batch))")
        with ctx.isolated():
            model = ctx.copy(train=True)
            before = {n: t.detach().clone() for n, t in model.state_dict().items()}
            ctx.eval_step(model, (ctx.inputs, ctx.target))
            after = model.state_dict()
        changed = [
            n for n, t in before.items() if n in after and not torch.equal(t, after[n].detach())
        ]
        buffers = {n for n, _ in model.named_buffers()}
        self.details = {
            "changed": changed,
            "headline": f"{len(changed)} tensor(s) changed by eval_step"
            if changed
            else "eval_step leaves the model unchanged",
        }
        if not changed:
            return
        stats = [n for n in changed if n in buffers]
        weights = [n for n in changed if n not in buffers]
        what = []
        if stats:
            what.append(
                f"{len(stats)} buffer(s) such as BatchNorm running statistics "
                f"({', '.join(stats[:6])}{' ...' if len(stats) > 6 else ''})"
            )
        if weights:
            what.append(f"{len(weights)} parameter(s) ({', '.join(weights[:6])})")
        yield self.finding(
            f"Your eval_step changed {' and '.join(what)}: the evaluation runs the model in "
            "train mode, so BatchNorm updates its running statistics with validation data (and "
            "dropout stays on); the validation score and the saved model are both affected.",
            columns=tuple(changed[:20]),
            n_affected=len(changed),
            metrics={"buffers_changed": len(stats), "parameters_changed": len(weights)},
            hint="call model.eval() at the start of evaluation and model.train() before "
            "training resumes; torch.no_grad() does not switch the mode",
        )
