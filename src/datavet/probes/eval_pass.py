from __future__ import annotations

from datavet.findings import Severity
from datavet.probes.base import Probe, ProbeContext, Skip


class EvalPassChangesModel(Probe):
    """Your evaluation step changes the model: BatchNorm statistics updated by validation data.

    **What it checks**
    Needs ``eval_step=``: a function ``eval_step(model, batch)`` that evaluates the way your
    validation loop does. It is called on a copy of the model in train mode (as it is when a
    training epoch ends), with a hook recording which modules run in train mode, and afterwards
    every buffer (BatchNorm ``running_mean``, ``running_var``, ``num_batches_tracked``) and every
    parameter is compared with before. It fires when any changed, and names them: an error when
    modules ran in train mode (``model.eval()`` missing) or parameters changed; a warning when
    every module ran in eval mode and only buffers changed (a forward that updates a cache or a
    counter in any mode).

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
        from torch.nn.modules.batchnorm import _NormBase

        if ctx.eval_step is None:
            raise Skip("no eval_step given (pass eval_step=fn(model, batch))")
        in_train: set[str] = set()  # modules the eval step ran in train mode

        def hook(name):
            def record(module, args):
                if module.training:
                    in_train.add(name)

            return record

        with ctx.isolated():
            model = ctx.copy(train=True)
            before = {n: t.detach().clone() for n, t in model.state_dict().items()}
            handles = [m.register_forward_pre_hook(hook(n)) for n, m in model.named_modules()]
            try:
                ctx.eval_step(model, (ctx.inputs, ctx.target))
            finally:
                for h in handles:
                    h.remove()
            after = model.state_dict()
        changed = [
            n for n, t in before.items() if n in after and not torch.equal(t, after[n].detach())
        ]
        buffers = {n for n, _ in model.named_buffers()}
        norms = [n for n, m in model.named_modules() if isinstance(m, _NormBase) and n in in_train]
        self.details = {
            "changed": changed,
            "train_mode_modules": sorted(in_train),
            "headline": f"{len(changed)} tensor(s) changed by eval_step"
            if changed
            else "eval_step leaves the model unchanged",
        }
        if not changed:
            return
        stats = [n for n in changed if n in buffers]
        weights = [n for n in changed if n not in buffers]
        named = [
            f"{len(stats)} buffer(s) ({', '.join(stats[:6])}{' ...' if len(stats) > 6 else ''})"
            if stats
            else "",
            f"{len(weights)} parameter(s) ({', '.join(weights[:6])})" if weights else "",
        ]
        what = " and ".join(part for part in named if part)
        columns, metrics = (
            tuple(changed[:20]),
            {
                "buffers_changed": len(stats),
                "parameters_changed": len(weights),
                "modules_in_train_mode": len(in_train),
            },
        )
        if in_train:
            norm = (
                f"BatchNorm ({', '.join(map(repr, norms[:4]))}) updates its running "
                "statistics with validation data and dropout stays on"
                if norms
                else "model.eval() is missing, so dropout and every mode-dependent layer "
                "behave as in training"
            )
            yield self.finding(
                f"Your eval_step changed {what}, and it ran {len(in_train)} module(s) in train "
                f"mode: {norm}; the validation score and the saved model are both affected.",
                columns=columns,
                n_affected=len(changed),
                metrics=metrics,
                hint="call model.eval() at the start of evaluation and model.train() before "
                "training resumes; torch.no_grad() does not switch the mode",
            )
            return
        if weights:
            yield self.finding(
                f"Your eval_step changed {what} although every module ran in eval mode: "
                "evaluation updates weights (an optimizer step or an in-place edit in the "
                "evaluation loop), so the validation data trains the model.",
                columns=columns,
                n_affected=len(changed),
                metrics=metrics,
                hint="take the optimizer step and any in-place weight edit out of the "
                "evaluation loop",
            )
            return
        yield self.finding(
            f"Your eval_step changed {what} although every module ran in eval mode: the "
            "model's forward updates them in any mode (a cache, a counter, a quantisation "
            "observer). Harmless for a cache; check that evaluating should change them.",
            severity=Severity.WARNING,
            columns=columns,
            n_affected=len(changed),
            metrics=metrics,
            hint="make forward update these buffers only when self.training is True, if "
            "evaluation should leave them as they are",
        )
