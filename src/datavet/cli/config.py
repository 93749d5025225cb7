"""``datavet config``: the settings an audit here would use (the config file, with any flags
given over it), as TOML or JSON."""

from __future__ import annotations

import argparse
import sys

from datavet import outputs
from datavet.cli import plan
from datavet.cli.audit import share
from datavet.config.text import display


def add_parser(sub, audit: argparse.ArgumentParser) -> argparse.ArgumentParser:
    cf = sub.add_parser(
        "config",
        help="print the resolved settings",
        description="Print the settings an audit here would use: the config file, with any "
        "flags given over it.",
    )
    cf.add_argument("--format", choices=("toml", "json"), default="toml")
    share(audit, cf, only={"config", "isolated", "select", "extend_select", "ignore", "fail_on"})
    return cf


def run(args: argparse.Namespace) -> int:
    from datavet.output.json import dumps

    # `datavet config > datavet.toml` (or `>> pyproject.toml`): the shell opens the file before
    # datavet reads it, so the settings printed would be an empty file's, or break the file
    path = plan.config_path(args)
    reads = outputs.reads(("config file", display(path) if path is not None else None))
    outputs.Outputs(reads).check_stdout(
        what="settings", remedy="print them to another file, then rename it"
    )
    settings = plan.from_args(args)
    if args.format == "json":
        payload = {"config": str(settings.config) if settings.config else None}
        payload.update(settings.to_dict())
        payload["rules"] = [r.code for r in settings.rules()]
        sys.stdout.write(dumps(payload) + "\n")
    else:
        sys.stdout.write(settings.to_toml())
    return 0
