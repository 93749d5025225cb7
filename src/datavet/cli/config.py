"""``datavet config``: the settings an audit here would use (the config file, with any flags
given over it), as TOML or JSON."""

from __future__ import annotations

import argparse
import sys

from datavet.cli import plan
from datavet.cli.audit import share


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

    settings = plan.from_args(args)
    if args.format == "json":
        payload = {"config": str(settings.config) if settings.config else None}
        payload.update(settings.to_dict())
        payload["rules"] = [r.code for r in settings.rules()]
        sys.stdout.write(dumps(payload) + "\n")
    else:
        sys.stdout.write(settings.to_toml())
    return 0
