"""A plain Python data-prep step that refuses to hand bad data to training.

    python examples/prepare_data.py --train RAW_TRAIN.csv --test RAW_TEST.csv --out DIR

It reads the raw splits, prepares them (here: drops rows that repeat an earlier row of the same
split and casts floats to float32, as a real step would do more), writes ``DIR/train.parquet``
and ``DIR/test.parquet``, then audits what it wrote. Whatever the verdict it writes
``DIR/datavet.json`` and ``DIR/datavet.html``; it exits 0 when nothing reached ``--fail-on``, 1
with the findings on stderr (so `make`, cron or a CI job stops before training), 2 when the
audit could not run. Try it on the sample data:

    python examples/prepare_data.py --train sample_data/planted_train.csv \\
        --test sample_data/planted_test.csv --out /tmp/prepared      # exit 1
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

import datavet


def prepare(raw: Path, out: Path) -> Path:
    df = pd.read_csv(raw).drop_duplicates()
    floats = df.select_dtypes("float64").columns
    df[floats] = df[floats].astype("float32")
    df.to_parquet(out, index=False)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--train", type=Path, required=True)
    parser.add_argument("--test", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--target", default="label")
    parser.add_argument("--fail-on", default="error", choices=("info", "warning", "error"))
    args = parser.parse_args(argv)

    args.out.mkdir(parents=True, exist_ok=True)
    train = prepare(args.train, args.out / "train.parquet")
    test = prepare(args.test, args.out / "test.parquet")
    try:
        report = datavet.audit(train, test, target=args.target, fail_on=args.fail_on)
    except datavet.DatavetError as exc:  # unreadable input, missing target: not a data verdict
        print(f"prepare_data: cannot audit: {exc}", file=sys.stderr)
        return 2
    (args.out / "datavet.json").write_text(report.to_json(), encoding="utf-8")
    report.save_html(args.out / "datavet.html")
    try:
        report.raise_for_findings()
    except datavet.AuditFailed as exc:
        print(f"prepare_data: {exc}", file=sys.stderr)
        for f in report.failing():
            print(f"  {f.code} {f.name} [{f.split}]: {f.message}", file=sys.stderr)
        print(f"  report: {args.out / 'datavet.html'}", file=sys.stderr)
        return exc.exit_code if not report.crashed else 2
    print(f"prepare_data: {args.out} is ready for training", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
