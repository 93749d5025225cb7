"""``datavet preflight FILE.py:FACTORY --train ...``: the staged preflight from the command line
(the logic is in :mod:`datavet.preflight`). Running the file is running your code: point it only at
files you trust."""

from __future__ import annotations

import contextlib
import sys
from typing import TYPE_CHECKING

from datavet import outputs
from datavet.cli import options, plan
from datavet.cli.probe import exits_are_errors, load_factory
from datavet.errors import InputError, UsageError

if TYPE_CHECKING:
    from datavet.preflight import PreflightReport


def add_parser(sub):
    """``datavet preflight FILE.py:FACTORY --train ...``."""
    p = sub.add_parser(
        "preflight",
        help="data audit, baselines, initial loss, overfit one batch: stop at the first failure",
        description="Import FILE.py and call FACTORY() for the model and the loss: (model, "
        "loss_fn), (model, batch, loss_fn), or a dict with model, loss_fn and optionally "
        "batch, optimizer_factory, task. Audit the data, fit the baselines, then probe the "
        "initial loss and overfit one batch (from --train's numeric columns unless the factory "
        "gives a batch); stop at the first stage that fails; exit 0/1/2.",
    )
    p.add_argument("model", metavar="FILE.py:FACTORY", help="a Python file and a function in it")
    p.add_argument("--train", required=True, metavar="PATH", help="the training split")
    p.add_argument("--test", metavar="PATH", help="the test split")
    p.add_argument(
        "--target", metavar="COL", help="the label column (default: the config's, as for audit)"
    )
    p.add_argument(
        "--task",
        choices=("auto", "classification", "regression"),
        help="default: the factory's, else the config's, else auto",
    )
    p.add_argument("--batch-size", type=int, default=32, metavar="N", help="default 32")
    options.add_output_options(p)
    p.add_argument(
        "--fail-on",
        choices=options.SEVERITIES,
        help="a stage fails when its findings reach this severity (default: the config's "
        "fail-on, else error)",
    )
    options.add_config_options(p, ", as for audit")
    p.add_argument("--seed", type=int, default=0)
    options.add_verbose_option(p)
    return p


def _parts(made, spec: str) -> dict:
    if isinstance(made, dict):
        allowed = {"model", "loss_fn", "batch", "optimizer_factory", "task"}
        unknown = set(made) - allowed
        missing = {"model", "loss_fn"} - set(made)
        if unknown or missing:
            raise UsageError(
                f"{spec} returned a dict with unknown keys {sorted(unknown)} / missing keys "
                f"{sorted(missing)} (allowed: {', '.join(sorted(allowed))})"
            )
        return dict(made)
    if isinstance(made, (tuple, list)) and len(made) == 2:
        return {"model": made[0], "loss_fn": made[1]}
    if isinstance(made, (tuple, list)) and len(made) == 3:
        return {"model": made[0], "batch": made[1], "loss_fn": made[2]}
    raise UsageError(
        f"{spec} must return (model, loss_fn), (model, batch, loss_fn) or a dict, not "
        f"{type(made).__name__}"
    )


def run(args) -> int:
    from datavet.api.probes import ModelFailed
    from datavet.output import render
    from datavet.preflight import preflight

    if args.batch_size < 1:
        raise UsageError("--batch-size must be at least 1")
    # the project's settings apply to the data audit as they do to `datavet audit`: the rule
    # selection, severities, thresholds, per-column ignores, fail-on, and the target, group,
    # time and delimiter of a config dataset whose paths these are
    settings = plan.from_args(args)
    own = settings.dataset_options(plan.dataset_for(settings, args.train, args.test))
    audit_options = settings.audit_options()
    for key in ("fail_on", "severity", "thresholds"):  # preflight's own arguments
        del audit_options[key]
    audit_options.update(
        {k: own[k] for k in ("group", "time", "inputs", "delimiter") if own[k] is not None}
    )
    source = args.model.rpartition(":")[0]
    # nothing written onto what is read: the model's source, the data, the config
    reads = outputs.reads(
        ("model source file", source),
        ("train input", args.train),
        ("test input", args.test),
        ("config file", settings.config),
    )
    policy = options.plan_outputs(args, reads)
    # the user's prints never reach the result; an exit from their code is an error
    with contextlib.redirect_stdout(sys.stderr), exits_are_errors(source or args.model):
        factory = load_factory(args.model)
        try:
            made = factory()
        except Exception as exc:
            raise InputError(args.model, f"the factory raised {type(exc).__name__}: {exc}") from exc
        parts = _parts(made, args.model)
        try:
            report = preflight(
                parts["model"],
                args.train,
                args.test,
                loss_fn=parts["loss_fn"],
                target=args.target if args.target is not None else own["target"],
                batch=parts.get("batch"),
                batch_size=args.batch_size,
                task=args.task or parts.get("task") or own["task"],
                optimizer_factory=parts.get("optimizer_factory"),
                fail_on=settings.fail_on,
                severity=dict(settings.severity),
                thresholds={k: dict(v) for k, v in settings.thresholds.items()},
                seed=args.seed,
                **audit_options,
            )
        except ModelFailed as exc:
            raise InputError(args.model, str(exc)) from None
    text = render(report, args.format)
    if args.format == "text":
        text = text.rstrip("\n") + "\n" + stages_text(report) + "\n"
    if args.html:
        options.write_html(policy, args.html, report.to_html())
    options.emit(policy, args, text)
    return report.exit_code()


def stages_text(report: PreflightReport) -> str:
    from datavet.output.text import clean

    marks = {"passed": "ok  ", "failed": "FAIL", "not run": "--  "}
    lines = ["", "preflight stages:"]
    for i, s in enumerate(report.stages, 1):
        lines.append(f"  {i}. [{marks[s['verdict']]}] {s['title']:<18} {clean(s['summary'])}")
    return "\n".join(lines)
