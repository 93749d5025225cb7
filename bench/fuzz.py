"""datavet's fuzzer, long budget: ``make fuzz`` (100,000 cases; ``FUZZ_ITERATIONS`` overrides).

    python bench/fuzz.py                                  # 100,000 cases, 2 workers
    python bench/fuzz.py -n 2000 --families arrow,numpy --seed 7 --keep /tmp/fuzz-out

Cases (hostile bytes in every input format, every Arrow type as feature and label, every NumPy
dtype family, every torch tensor layout, deep nesting, outputs aimed at inputs: see
tests/hardening/fuzz.py) run in process in long-lived worker processes, each with a per-case
timeout and an address-space limit; a worker that hangs or dies is replaced and its case is a
break. Prints progress with cases/s, then the outcomes per family and the breaks grouped by
distinct problem, each with its count, its first stderr line and a reproducer folder (the case's
files and a ``repro.sh``) under ``--keep``. Exit status 1 when anything broke the contract, else
0. The same ``--seed`` and ``--iterations`` give the same cases. The CI budget is
tests/hardening/test_fuzz.py.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def load_fuzz():
    """tests/hardening/fuzz.py as a module (the tests are not an installed package)."""
    spec = importlib.util.spec_from_file_location(
        "datavet_fuzz", ROOT / "tests" / "hardening" / "fuzz.py"
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules["datavet_fuzz"] = module
    spec.loader.exec_module(module)
    return module


def main(argv: list[str] | None = None) -> int:
    fuzz = load_fuzz()
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--iterations",
        "-n",
        type=int,
        default=int(os.environ.get("FUZZ_ITERATIONS") or 100_000),
        help="cases to run (default $FUZZ_ITERATIONS or 100000)",
    )
    p.add_argument("--seed", type=int, default=1)
    p.add_argument(
        "--families",
        default=",".join(fuzz.FAMILIES),
        help="comma-separated subset of " + ", ".join(fuzz.FAMILIES),
    )
    p.add_argument("--jobs", "-j", type=int, default=min(2, os.cpu_count() or 1))
    p.add_argument("--timeout", type=float, default=fuzz.DEFAULT_TIMEOUT, help="s per case")
    p.add_argument("--memory-gb", type=float, default=4.0, help="address space per worker")
    p.add_argument(
        "--keep",
        metavar="DIR",
        default=str(Path(tempfile.gettempdir()) / "datavet-fuzz-out"),
        help="reproducers and summary.json go here (default: %(default)s)",
    )
    p.add_argument("--per-problem", type=int, default=3, help="reproducers kept per problem")
    p.add_argument("--every", type=int, default=1000, help="progress every N cases")
    args = p.parse_args(argv)

    families = [f.strip() for f in args.families.split(",") if f.strip()]
    unknown = set(families) - set(fuzz.FAMILIES)
    if unknown:
        p.error(f"unknown families: {', '.join(sorted(unknown))}")
    keep = Path(args.keep)
    keep.mkdir(parents=True, exist_ok=True)
    cases = fuzz.plan(args.iterations, seed=args.seed, families=families)
    print(
        f"datavet fuzz: {len(cases)} cases, seed {args.seed}, {args.jobs} workers, "
        f"timeout {args.timeout:.0f} s, reproducers in {keep}",
        flush=True,
    )
    saved: dict[str, list[str]] = {}
    seen_breaks = 0
    done = 0
    started = time.perf_counter()

    with tempfile.TemporaryDirectory(prefix="datavet-fuzz-") as work:
        seeds = Path(work) / "seeds"

        def progress(r) -> None:
            nonlocal done, seen_breaks
            done += 1
            if not r.ok:
                seen_breaks += 1
                sig = r.signature()
                paths = saved.setdefault(sig, [])
                if len(paths) < args.per_problem:
                    folder = keep / f"problem-{list(saved).index(sig) + 1:03d}"
                    paths.append(str(fuzz.save_reproducer(r, folder, seeds)))
                    if len(paths) == 1:
                        print(f"  NEW {sig[:220]}  -> {paths[0]}", flush=True)
            if done % args.every == 0 or done == len(cases):
                rate = done / (time.perf_counter() - started)
                print(
                    f"  {done}/{len(cases)} cases, {rate:.1f} cases/s, {seen_breaks} breaks, "
                    f"{len(saved)} distinct",
                    flush=True,
                )

        results = fuzz.fuzz(
            cases,
            workdir=work,
            jobs=args.jobs,
            timeout=args.timeout,
            memory_bytes=int(args.memory_gb * (1 << 30)) or None,
            on_result=progress,
        )
    elapsed = time.perf_counter() - started
    s = fuzz.summarize(results)
    groups = fuzz.group_breaks(results)
    print(
        f"\n{s['cases']} cases in {elapsed:.0f} s: {s['cases'] / elapsed:.1f} cases/s "
        f"({args.jobs} workers); {s['breaks']} breaks, {s['distinct']} distinct problems"
    )
    print("outcomes per family:")
    for family, counts in s["families"].items():
        print(f"  {family:<8} " + ", ".join(f"{k} {v}" for k, v in counts.items()))
    if groups:
        print("breaks, by distinct problem:")
    for i, (sig, rs) in enumerate(groups.items(), 1):
        first = rs[0]
        print(f"{i:3d}. [{len(rs)}x] {sig}")
        print(f"     e.g. {first.describe()}")
        for path in saved.get(sig, [])[:1]:
            print(f"     reproducer: {path}/repro.sh")
    (keep / "summary.json").write_text(
        json.dumps(
            {
                "seed": args.seed,
                "seconds": elapsed,
                "cases_per_s": s["cases"] / elapsed,
                "summary": s,
                "problems": [
                    {
                        "signature": sig,
                        "count": len(rs),
                        "cases": [r.case.name for r in rs[:20]],
                        "example": rs[0].to_dict(),
                        "reproducers": saved.get(sig, []),
                    }
                    for sig, rs in groups.items()
                ],
            },
            indent=1,
        )
    )
    print(f"summary: {keep / 'summary.json'}")
    return 1 if s["breaks"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
