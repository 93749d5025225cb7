"""The corruption fuzzer for datavet's readers, long budget.

    python bench/fuzz_readers.py --iterations 2000            # or: make fuzz
    python bench/fuzz_readers.py -n 200 --formats parquet,arrow --seed 7 --keep fuzz-failures

Mutates seed files (CSV, gzip CSV, Parquet, Arrow IPC, Feather, NPY, NPZ: truncate, flip bytes,
cut the header, zero/0xFF runs, splices, huge numbers, quotes/NULs/invalid UTF-8 in text) and
audits each in a child process (``python -m datavet audit ... --format json``) with a timeout and
an address-space limit; prints the count of each outcome, per format, and every failure. Exit
status 1 when any case broke the contract (see tests/hardening/fuzz.py), else 0. The same
``--seed`` and ``--iterations`` give the same cases. The short CI budget is
tests/hardening/test_fuzz.py.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _load_fuzz():
    spec = importlib.util.spec_from_file_location(
        "datavet_fuzz", ROOT / "tests" / "hardening" / "fuzz.py"
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules["datavet_fuzz"] = module
    spec.loader.exec_module(module)
    return module


def main(argv: list[str] | None = None) -> int:
    fuzz = _load_fuzz()
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--iterations", "-n", type=int, default=2000)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument(
        "--formats",
        default=",".join(fuzz.FORMATS),
        help="comma-separated subset of " + ", ".join(fuzz.FORMATS),
    )
    p.add_argument("--timeout", type=float, default=30.0, help="seconds per case (default 30)")
    p.add_argument(
        "--jobs", "-j", type=int, default=None, help="cases at a time (default: cores, max 4)"
    )
    p.add_argument(
        "--memory-gb", type=float, default=4.0, help="address-space limit per child (0: none)"
    )
    p.add_argument("--keep", metavar="DIR", help="keep every failing input (and its stderr) here")
    p.add_argument("--baselines", action="store_true", help="fit the baselines too (slower)")
    p.add_argument("--json", metavar="PATH", help="also write every result as JSON")
    args = p.parse_args(argv)

    formats = [f.strip() for f in args.formats.split(",") if f.strip()]
    unknown = set(formats) - set(fuzz.FORMATS)
    if unknown:
        p.error(f"unknown formats: {', '.join(sorted(unknown))}")
    done = 0
    lock = threading.Lock()
    started = time.perf_counter()

    def progress(result) -> None:
        nonlocal done
        with lock:
            done += 1
            if not result.ok:
                print(f"  FAIL {result.describe()}", file=sys.stderr, flush=True)
            if done % 50 == 0 or done == args.iterations:
                rate = done / (time.perf_counter() - started)
                print(
                    f"  {done}/{args.iterations} cases ({rate:.1f}/s)", file=sys.stderr, flush=True
                )

    results = fuzz.fuzz(
        args.iterations,
        formats=formats,
        seed=args.seed,
        timeout=args.timeout,
        jobs=args.jobs,
        memory_bytes=int(args.memory_gb * (1 << 30)) or None,
        keep_dir=args.keep,
        extra_args=() if args.baselines else ("--no-baselines",),
        on_result=progress,
    )
    elapsed = time.perf_counter() - started
    s = fuzz.summarize(results)
    print(
        f"datavet reader fuzz: {s['cases']} cases, seed {args.seed}, {elapsed:.0f} s "
        f"(slowest case {s['max_seconds']:.1f} s)"
    )
    print("outcomes:")
    for outcome, n in s["outcomes"].items():
        flag = "" if outcome in fuzz.OK_OUTCOMES else "   <- contract broken"
        print(f"  {outcome:<18} {n:>6}{flag}")
    print("per format:")
    for fmt, counts in s["formats"].items():
        print(f"  {fmt:<8} " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    print(f"failures: {len(s['failures'])} cases, {len(s['distinct_failures'])} distinct")
    for fmt, outcome, signature in s["distinct_failures"]:
        print(f"  {fmt:<8} {outcome:<16} {signature}")
    if args.json:
        Path(args.json).write_text(
            json.dumps(
                {
                    "summary": {k: v for k, v in s.items() if k != "failures"},
                    "results": [r.to_dict() for r in results],
                },
                indent=1,
                default=str,
            )
        )
    return 1 if s["failures"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
