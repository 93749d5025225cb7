"""``datavet probe path/to/file.py:factory``: the model preflight from the command line.

The factory is a function in a Python file that returns the model, one batch and the loss:
``(model, batch, loss_fn)``, or a dict with the keys ``model``, ``batch``, ``loss_fn`` and
optionally ``optimizer_factory``, ``train_step``, ``eval_step``, ``task`` and, for sequence batches,
``padding_mask`` (a bool (N, T) tensor, True = padding) or ``pad_id`` (M014). Running the file
is running your code, as ``pytest`` does: point it only at files you trust.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import os
import sys
import traceback
from pathlib import Path

from datavet import outputs
from datavet.cli import options
from datavet.errors import InputError, UsageError

_KEYS = (
    "model",
    "batch",
    "loss_fn",
    "optimizer_factory",
    "train_step",
    "eval_step",
    "task",
    "padding_mask",
    "pad_id",
)


def add_parser(sub) -> argparse.ArgumentParser:
    p = sub.add_parser(
        "probe",
        help="run the model preflight probes (PyTorch) on one batch",
        description="Import FILE.py, call FACTORY() for (model, batch, loss_fn), run the model "
        "probes (the M rules; those that read a GradientMonitor excepted) on copies of the model; "
        "print findings; exit 0/1/2.",
    )
    p.add_argument("target", metavar="FILE.py:FACTORY", help="a Python file and a function in it")
    p.add_argument("--task", choices=("auto", "classification", "regression"), default=None)
    options.add_output_options(p)
    options.add_gate_options(p)
    p.add_argument("--select", metavar="CODES", action="append", help="probes to run")
    p.add_argument("--ignore", metavar="CODES", action="append", help="probes to leave out")
    p.add_argument("--steps", type=int, metavar="N", help="M002's training steps (default 300)")
    p.add_argument(
        "--lr", type=float, metavar="LR", help="M002's Adam learning rate (default 1e-2)"
    )
    p.add_argument(
        "--budget",
        type=float,
        default=500,
        metavar="STEPS",
        help="the most the probes may spend, in training steps of the model (default 500)",
    )
    p.add_argument("--seed", type=int, default=0, help="the seed the probes run under (default 0)")
    options.add_verbose_option(p)
    return p


def load_factory(spec: str):
    """The callable named by ``path/to/file.py:factory``."""
    path_text, sep, name = spec.rpartition(":")
    if not sep or not path_text or not name.isidentifier():
        raise UsageError(f"expected FILE.py:FACTORY, got {spec!r}")
    path = Path(path_text)
    if not path.is_file():
        raise InputError(path_text, "no such file")
    module_name = f"_datavet_probe_{abs(hash(str(path.resolve())))}"
    loader = importlib.util.spec_from_file_location(module_name, path)
    if loader is None or loader.loader is None:
        raise InputError(path_text, "not a Python file")
    module = importlib.util.module_from_spec(loader)
    sys.modules[module_name] = module  # dataclasses and pickling look the module up by name
    sys.path.insert(0, str(path.resolve().parent))  # so the file can import its neighbours
    try:
        loader.loader.exec_module(module)
    except Exception as exc:
        raise InputError(path_text, f"importing it raised {type(exc).__name__}: {exc}") from exc
    finally:
        sys.path.remove(str(path.resolve().parent))
    factory = getattr(module, name, None)
    if not callable(factory):
        raise UsageError(f"{path_text} has no function {name!r}")
    return factory


class _UserExit(BaseException):
    """``os._exit(code)`` called by the user's code while datavet runs it."""

    def __init__(self, code) -> None:
        super().__init__(code)
        self.code = code


@contextlib.contextmanager
def exits_are_errors(source: str):
    """Run the user's code (the import, the factory, the model under the probes) so that any
    exit from it is an InputError naming ``source``, never a silent exit 0 of the gate.

    ``sys.exit`` raises SystemExit, caught here. ``os._exit`` cannot be caught: it ends the
    process at once, skipping ``finally`` and atexit. So while the user's code runs,
    ``os._exit`` is replaced by a function that raises instead (in this process only: a child
    forked by a DataLoader still exits as it must). Code that bound ``os._exit`` before datavet
    ran, or that exits from C, is out of reach; it is documented."""
    real, pid = os._exit, os.getpid()

    def _exit(code=0, *_args):
        if os.getpid() != pid:  # a forked child (multiprocessing) ends as it always did
            real(code)
        raise _UserExit(code)

    os._exit = _exit
    hint = (
        "the probes cannot run to their verdict; remove the exit from the code that builds the "
        "model, or guard it with `if __name__ == '__main__':`"
    )
    try:
        yield
    except SystemExit as exc:
        raise InputError(source, f"the model code called sys.exit({exc.code!r}): {hint}") from None
    except _UserExit as exc:
        raise InputError(source, f"the model code called os._exit({exc.code!r}): {hint}") from None
    finally:
        os._exit = real


def _unpack(result, spec: str) -> dict:
    if isinstance(result, dict):
        unknown = set(result) - set(_KEYS)
        missing = {"model", "batch", "loss_fn"} - set(result)
        if unknown or missing:
            raise UsageError(
                f"{spec} returned a dict with "
                + "; ".join(
                    part
                    for part in (
                        f"unknown keys {sorted(unknown)}" if unknown else "",
                        f"missing keys {sorted(missing)}" if missing else "",
                    )
                    if part
                )
                + f" (allowed: {', '.join(_KEYS)})"
            )
        return dict(result)
    if isinstance(result, (tuple, list)) and len(result) == 3:
        return dict(zip(("model", "batch", "loss_fn"), result))
    raise UsageError(
        f"{spec} must return (model, batch, loss_fn) or a dict with those keys, not "
        f"{type(result).__name__}"
    )


def run(args: argparse.Namespace) -> int:
    from datavet.api.probes import ModelFailed, probe
    from datavet.output import render

    source = args.target.rpartition(":")[0]
    plan = options.plan_outputs(args, outputs.reads(("model source file", source)))
    tuned = {}
    if args.steps is not None:
        tuned["steps"] = args.steps
    if args.lr is not None:
        tuned["lr"] = args.lr
    # stdout carries the result only: whatever the user's code prints goes to stderr
    with contextlib.redirect_stdout(sys.stderr), exits_are_errors(source or args.target):
        factory = load_factory(args.target)
        try:
            made = factory()
        except Exception as exc:
            if getattr(args, "verbose", False):
                traceback.print_exc()
            raise InputError(
                args.target, f"the factory raised {type(exc).__name__}: {exc}"
            ) from exc
        parts = _unpack(made, args.target)
        try:
            report = probe(
                parts["model"],
                parts["batch"],
                loss_fn=parts["loss_fn"],
                task=args.task or parts.get("task") or "auto",
                optimizer_factory=parts.get("optimizer_factory"),
                train_step=parts.get("train_step"),
                eval_step=parts.get("eval_step"),
                select=args.select,
                ignore=args.ignore,
                fail_on=args.fail_on,
                thresholds={"M002": tuned} if tuned else None,
                seed=args.seed,
                padding_mask=parts.get("padding_mask"),
                pad_id=parts.get("pad_id"),
                budget=args.budget,
            )
        except ModelFailed as exc:
            raise InputError(args.target, str(exc)) from None
    options.mark_exit_zero([report], args)
    text = render(report, args.format, **options.text_options(args))
    if args.html:
        options.write_html(plan, args.html, report.to_html())
    options.emit(plan, args, text)
    return options.gate(report.exit_code(), args)
