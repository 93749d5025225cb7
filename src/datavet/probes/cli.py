"""``datavet probe path/to/file.py:factory``: the model preflight from the command line.

The factory is a function in a Python file that returns the model, one batch and the loss:
``(model, batch, loss_fn)``, or a dict with the keys ``model``, ``batch``, ``loss_fn`` and
optionally ``optimizer_factory``, ``train_step``, ``task`` and, for sequence batches,
``padding_mask`` (a bool (N, T) tensor, True = padding) or ``pad_id`` (M014). Running the file
is running your code, as ``pytest`` does: point it only at files you trust.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import sys
import traceback
from pathlib import Path

from datavet.errors import InputError, UsageError

FORMATS = ("text", "json")
_KEYS = (
    "model",
    "batch",
    "loss_fn",
    "optimizer_factory",
    "train_step",
    "task",
    "padding_mask",
    "pad_id",
)


def add_parser(sub) -> argparse.ArgumentParser:
    p = sub.add_parser(
        "probe",
        help="run the model preflight probes (PyTorch) on one batch",
        description="Import FILE.py, call FACTORY() for (model, batch, loss_fn), run the model "
        "probes (M001-M010, M013-M014) on copies of the model; print findings; exit 0/1/2.",
    )
    p.add_argument("target", metavar="FILE.py:FACTORY", help="a Python file and a function in it")
    p.add_argument("--task", choices=("auto", "classification", "regression"), default=None)
    p.add_argument("--format", choices=FORMATS, default="text", help="output format (default text)")
    p.add_argument("--html", metavar="PATH", help="also write the HTML report to PATH")
    p.add_argument("--output", "-o", metavar="PATH", help="write the result here, atomically")
    p.add_argument(
        "--fail-on",
        choices=("info", "warning", "error"),
        default="error",
        help="exit 1 when findings reach this severity (default error)",
    )
    p.add_argument(
        "--exit-zero", action="store_true", help="exit 0 even with findings (never hides exit 2)"
    )
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
    p.add_argument("--verbose", "-v", action="store_true", help="tracebacks on errors")
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
    from datavet._io import write_atomic
    from datavet.output import render
    from datavet.probes.api import probe

    tuned = {}
    if args.steps is not None:
        tuned["steps"] = args.steps
    if args.lr is not None:
        tuned["lr"] = args.lr
    # stdout carries the result only: whatever the user's code prints goes to stderr
    with contextlib.redirect_stdout(sys.stderr):
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
        report = probe(
            parts["model"],
            parts["batch"],
            loss_fn=parts["loss_fn"],
            task=args.task or parts.get("task") or "auto",
            optimizer_factory=parts.get("optimizer_factory"),
            train_step=parts.get("train_step"),
            select=args.select,
            ignore=args.ignore,
            fail_on=args.fail_on,
            thresholds={"M002": tuned} if tuned else None,
            seed=args.seed,
            padding_mask=parts.get("padding_mask"),
            pad_id=parts.get("pad_id"),
            budget=args.budget,
        )
    if args.format == "text":
        from datavet.cli import _use_colour

        text = render(report, "text", colour=args.output is None and _use_colour(sys.stdout))
    else:
        text = render(report, args.format)
    if args.html:
        report.save_html(args.html)
        print(f"datavet: wrote {args.html}", file=sys.stderr)
    if args.output:
        write_atomic(args.output, text)
        print(f"datavet: wrote {args.output}", file=sys.stderr)
    else:
        sys.stdout.write(text)
        sys.stdout.flush()
    code = report.exit_code()
    if code == 1 and args.exit_zero:
        return 0
    return code
