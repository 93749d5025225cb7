"""``datavet journal add|predict|result|search|list|show``: the debugging journal from the command
line (the journal itself is :mod:`datavet.journal`)."""

from __future__ import annotations

import argparse
import os
import sys

from datavet import outputs
from datavet.journal import (
    DEFAULT_NAME,
    ENV,
    VERDICTS,
    Journal,
    _change_text,
    config_diff,
    late_prediction,
    load_config,
    render_markdown,
)
from datavet.output.text import clean


def add_parser(sub) -> argparse.ArgumentParser:
    p = sub.add_parser(
        "journal",
        help="the debugging journal: one change per entry, prediction before result",
        description="Keep a debugging record in the project (JSON lines plus a Markdown "
        "view): what you saw, what you think, the one thing you change, what you predict, "
        "then what happened.",
    )
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--journal",
        metavar="PATH",
        help=f"the journal file (default ${ENV} or ./{DEFAULT_NAME})",
    )
    common.add_argument(
        "--force",
        action="store_true",
        help="replace a Markdown file beside the journal that is not its view (never a "
        "report; the journal itself is always a datavet journal, never a config file given to "
        "--config-diff)",
    )
    common.add_argument("--verbose", "-v", action="store_true", help="tracebacks on errors")
    js = p.add_subparsers(dest="journal_command", metavar="ACTION")
    js.required = True
    a = js.add_parser("add", parents=[common], help="write a new entry")
    a.add_argument("--hypothesis", required=True, help="what you think causes the symptom")
    a.add_argument(
        "--change", action="append", default=[], help="the one thing you change (repeatable)"
    )
    a.add_argument("--predict", help="what you expect to see, written before you run")
    a.add_argument("--symptom", help="what you saw, e.g. 'loss NaN at step 3000'")
    a.add_argument(
        "--config-diff",
        nargs=2,
        metavar=("OLD", "NEW"),
        help="two config files (JSON, TOML, YAML, INI, key=value): the keys that differ are "
        "recorded as the change",
    )
    a.add_argument(
        "--code",
        action="append",
        default=[],
        help="the finding that shows the symptom, e.g. C002 (a rule code or name; repeatable)",
    )
    a.add_argument(
        "--run",
        help="the run's log or command; a log older than the prediction is warned about when "
        "the result is recorded",
    )
    pr = js.add_parser("predict", parents=[common], help="write an entry's prediction")
    pr.add_argument("id", type=int, metavar="N")
    pr.add_argument("--predict", required=True)
    r = js.add_parser("result", parents=[common], help="close an entry with what happened")
    r.add_argument("id", type=int, metavar="N")
    r.add_argument("--observed", required=True, help="what the run showed")
    r.add_argument("--verdict", choices=VERDICTS, help="did the prediction hold?")
    s = js.add_parser("search", parents=[common], help="find past entries by symptom")
    s.add_argument("words", nargs="+", metavar="WORD")
    js.add_parser("list", parents=[common], help="one line per entry")
    js.add_parser("show", parents=[common], help="print the Markdown view")
    return p


def _line(e: dict) -> str:
    res = e.get("result")
    state = (
        (res.get("verdict") or "done") + f": {res['observed']}"
        if res
        else ("open" if e.get("prediction") else "no prediction")
    )
    symptom = e.get("symptom") or "-"
    codes = f" [{', '.join(e['codes'])}]" if e.get("codes") else ""
    return clean(
        f"#{e['id']} {(e.get('created') or '')[:10]} {symptom}{codes} | {e['hypothesis']} | "
        f"{_change_text(e)} | predict: {e.get('prediction') or '-'} | {state}"
    )


def run(args: argparse.Namespace) -> int:
    cmd = args.journal_command
    reads = []
    if cmd == "add":
        reads = [("config file", p) for p in args.config_diff or ()]
        if args.run and os.path.isfile(args.run):
            reads.append(("run log", args.run))
    journal = Journal(args.journal, force=getattr(args, "force", False), reads=reads)
    # `datavet journal list >> datavet-journal.jsonl` would append the listing to the journal
    outputs.Outputs(outputs.reads(("journal", journal.path))).check_stdout(
        what="output", remedy="redirect standard output elsewhere"
    )
    if cmd in ("search", "list", "show") and not journal.path.exists():
        journal.check_folder()
        # a misspelt file name in an existing folder must not pass for an empty journal
        print(
            f"datavet: note: no journal at {journal.path} yet (datavet journal add starts it)",
            file=sys.stderr,
        )
    if cmd == "add":
        config = None
        if args.config_diff:
            old, new = (load_config(p) for p in args.config_diff)
            config = config_diff(old, new)
            if not config:
                print("datavet: warning: the two configs do not differ", file=sys.stderr)
        entry, warnings = journal.add(
            hypothesis=args.hypothesis,
            changes=args.change,
            predict=args.predict,
            symptom=args.symptom,
            config=config,
            codes=args.code,
            run=args.run,
        )
        for w in warnings:
            print(f"datavet: warning: {w}", file=sys.stderr)
        print(entry["id"])
        print(f"datavet: wrote {journal.path} and {journal.markdown_path}", file=sys.stderr)
        return 0
    if cmd == "predict":
        journal.predict(args.id, args.predict)
        print(f"datavet: entry {args.id}: prediction written", file=sys.stderr)
        return 0
    if cmd == "result":
        entry = journal.result(args.id, args.observed, verdict=args.verdict)
        late = late_prediction(entry)
        if late:
            print(f"datavet: warning: {late}", file=sys.stderr)
        print(_line(entry))
        return 0
    if cmd == "search":
        found = journal.search(args.words)
        for e in found:
            print(_line(e))
        return 0 if found else 1
    if cmd == "list":
        for e in journal.entries():
            print(_line(e))
        bad = journal.unreadable()
        if bad:
            print(
                f"datavet: warning: {bad} line(s) of {journal.path} are not entries (kept)",
                file=sys.stderr,
            )
        return 0
    sys.stdout.write(render_markdown(journal.entries(), source=journal.path.name))
    return 0
