from datavet.cli import run

raise SystemExit(run())
