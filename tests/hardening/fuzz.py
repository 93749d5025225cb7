"""A corruption fuzzer for datavet's readers, as a library.

Seed files (CSV, gzip CSV, Parquet, Arrow IPC, Feather/zstd, NPY, NPZ) are written once; each
case takes one, mutates its bytes (truncate, flip bytes, cut the header, overwrite a run with
zeros or 0xFF, splice a chunk, blow up a number, or -- for text -- insert quotes, NULs and
invalid UTF-8) and runs ``python -m datavet audit`` on it in a child process, with a wall-clock
timeout and an address-space limit, as the train split or as the test split beside a good train
file. Every case is deterministic: the same (format, mutation, seed) gives the same bytes.

The contract each case is held to (``Result.ok``):

- exit 0 or 1: stdout is the JSON report (strict JSON), stderr has no traceback;
- exit 2: nothing on stdout, exactly one stderr line, starting ``datavet: error:``;
- never a timeout, a signal (segfault, abort, the memory limit), another exit code, a
  traceback, ``datavet: internal error:`` (a bug caught by the last-resort handler), a report
  with a crashed rule, or a Python warning leaking onto stderr.

Used by ``tests/hardening/test_fuzz.py`` (a short budget in CI) and ``bench/fuzz_readers.py``
(a long one: ``python bench/fuzz_readers.py --iterations 2000``, or ``make fuzz``).
"""

from __future__ import annotations

import gzip
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

FORMATS = ("csv", "csv.gz", "parquet", "arrow", "feather", "npy", "npz")
BINARY_MUTATIONS = ("truncate", "flip", "cut-header", "zeros", "ones", "splice", "big-number")
TEXT_MUTATIONS = ("quote", "nul", "bad-utf8", "drop-newline", "ragged")
OUTCOMES = (
    "exit0",
    "exit1",
    "exit2",
    "exit2-bad-stderr",
    "internal-error",
    "crashed-rule",
    "bad-json",
    "warning-leak",
    "traceback",
    "timeout",
    "signal",
    "other-exit",
)
OK_OUTCOMES = {"exit0", "exit1", "exit2"}
DEFAULT_MEMORY = 4 << 30  # address-space limit per child: a runaway allocation fails there


# ---------------------------------------------------------------------------------------------
# seeds


def _seed_frame(rows: int = 300):
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(20240601)
    x = rng.normal(size=rows)
    x[[3, 17]] = np.nan
    x[5] = np.inf
    return pd.DataFrame(
        {
            "x": x,
            "n": rng.integers(-1000, 1000, rows),
            "s": rng.choice(["alpha", "beta", "gamma", "é"], rows),
            "b": rng.integers(0, 2, rows).astype(bool),
            "t": pd.date_range("2024-01-01", periods=rows, freq="h", tz="UTC"),
            "label": rng.integers(0, 3, rows),
        }
    )


def make_seeds(directory: str | os.PathLike) -> dict[str, Path]:
    """Write one valid file per format into ``directory``; return {format: path}."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.feather as feather
    import pyarrow.ipc as ipc
    import pyarrow.parquet as pq

    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    frame = _seed_frame()
    table = pa.Table.from_pandas(frame, preserve_index=False)
    seeds: dict[str, Path] = {}

    seeds["csv"] = d / "seed.csv"
    frame.to_csv(seeds["csv"], index=False)
    seeds["csv.gz"] = d / "seed.csv.gz"
    seeds["csv.gz"].write_bytes(gzip.compress(seeds["csv"].read_bytes(), mtime=0))
    seeds["parquet"] = d / "seed.parquet"
    pq.write_table(table, seeds["parquet"], row_group_size=100, compression="snappy")
    seeds["arrow"] = d / "seed.arrow"
    with pa.OSFile(str(seeds["arrow"]), "wb") as sink, ipc.new_file(sink, table.schema) as w:
        for batch in table.to_batches(max_chunksize=100):
            w.write_batch(batch)
    seeds["feather"] = d / "seed.feather"
    feather.write_feather(table, seeds["feather"], compression="zstd", chunksize=100)
    x = frame[["x", "n"]].to_numpy(dtype=np.float64)
    seeds["npy"] = d / "seed.npy"
    np.save(seeds["npy"], x)
    seeds["npz"] = d / "seed.npz"
    np.savez_compressed(seeds["npz"], x=x, y=frame["label"].to_numpy())
    return seeds


def good_train(directory: str | os.PathLike) -> Path:
    """An intact train split for the cases that put the mutated file on the test side."""
    path = Path(directory) / "good_train.csv"
    if not path.exists():
        _seed_frame().to_csv(path, index=False)
    return path


# ---------------------------------------------------------------------------------------------
# mutations


def mutations_for(fmt: str) -> tuple[str, ...]:
    return BINARY_MUTATIONS + (TEXT_MUTATIONS if fmt == "csv" else ())


def mutate(data: bytes, mutation: str, rng: random.Random) -> bytes:
    """One deterministic corruption of ``data`` (never the unchanged bytes)."""
    n = len(data)
    buf = bytearray(data)
    if mutation == "truncate":
        return bytes(buf[: rng.randrange(0, n)])
    if mutation == "flip":
        for _ in range(rng.randint(1, 16)):
            i = rng.randrange(n)
            buf[i] ^= rng.randint(1, 255)
        return bytes(buf)
    if mutation == "cut-header":
        return bytes(buf[rng.randint(1, min(n - 1, 512)) :])
    if mutation in ("zeros", "ones"):
        start = rng.randrange(n)
        length = rng.randint(1, 64)
        fill = 0 if mutation == "zeros" else 0xFF
        for i in range(start, min(n, start + length)):
            buf[i] = fill
        if bytes(buf) == data:
            buf[start] ^= 0x55
        return bytes(buf)
    if mutation == "splice":
        a = rng.randrange(n)
        b = min(n, a + rng.randint(1, 256))
        at = rng.randrange(n)
        chunk = buf[a:b] if rng.random() < 0.5 else bytearray(rng.randbytes(b - a))
        return bytes(buf[:at] + chunk + buf[at:])
    if mutation == "big-number":
        runs = [m.span() for m in re.finditer(rb"\d+", data[:4096])]
        big = str(rng.choice([2**31, 2**32 + 1, 2**63 - 1, 2**64, 10**30, 99999999999])).encode()
        if not runs:
            i = rng.randrange(n)
            return bytes(buf[:i] + big + buf[i:])
        lo, hi = rng.choice(runs)
        return bytes(buf[:lo] + big + buf[hi:])
    if mutation in TEXT_MUTATIONS:
        i = rng.randrange(n)
        insert = {
            "quote": b'"',
            "nul": b"\x00",
            "bad-utf8": rng.choice([b"\xff", b"\xc3", b"\xe9", b"\xed\xa0\x80", b"\xf8\x88"]),
            "drop-newline": b"",
            "ragged": b",extra",
        }[mutation]
        if mutation == "drop-newline":
            newlines = [m.start() for m in re.finditer(rb"\n", data)]
            i = rng.choice(newlines) if newlines else i
            return bytes(buf[:i] + buf[i + 1 :])
        if mutation == "ragged":
            newlines = [m.start() for m in re.finditer(rb"\n", data)]
            i = rng.choice(newlines) if newlines else i
        return bytes(buf[:i] + insert + buf[i:])
    raise ValueError(f"unknown mutation {mutation!r}")


# ---------------------------------------------------------------------------------------------
# cases and results


@dataclass(frozen=True)
class Case:
    fmt: str
    mutation: str
    seed: int
    role: str  # "train" or "test"

    @property
    def name(self) -> str:
        return f"{self.fmt}-{self.mutation}-{self.role}-{self.seed}"


@dataclass
class Result:
    case: Case
    exit_code: int | None  # None: timed out
    outcome: str
    stderr_first_line: str
    traceback: bool
    seconds: float
    size: int
    path: str | None = None  # where the mutated file was kept (failures, with keep_dir)

    @property
    def ok(self) -> bool:
        return self.outcome in OK_OUTCOMES

    def describe(self) -> str:
        return (
            f"{self.case.name}: {self.outcome} (exit {self.exit_code}, {self.seconds:.1f} s, "
            f"{self.size} bytes): {self.stderr_first_line[:200]!r}"
        )

    def to_dict(self) -> dict:
        out = asdict(self)
        out["case"] = asdict(self.case) | {"name": self.case.name}
        return out


def plan(
    iterations: int, *, formats: Iterable[str] = FORMATS, seed: int = 0, test_share: float = 0.25
) -> list[Case]:
    """``iterations`` cases spread evenly over ``formats`` and their mutations."""
    formats = tuple(formats)
    period_offset = random.Random(seed).randrange(max(1, round(1 / test_share)))
    cases = []
    for i in range(iterations):
        fmt = formats[i % len(formats)]
        muts = mutations_for(fmt)
        # each format starts at another mutation, so a short budget still covers all of them
        mutation = muts[(i // len(formats) + formats.index(fmt)) % len(muts)]
        # every 1/test_share-th case puts the damaged file on the test side (a good train)
        role = "test" if i % max(1, round(1 / test_share)) == period_offset else "train"
        cases.append(Case(fmt, mutation, seed * 1_000_003 + i, role))
    return cases


def mutated_bytes(case: Case, seeds: dict[str, Path]) -> bytes:
    data = seeds[case.fmt].read_bytes()
    return mutate(data, case.mutation, random.Random(case.seed))


def child_env() -> dict:
    """The child imports the same datavet as this process, whatever the working directory."""
    import datavet

    env = dict(os.environ)
    src = str(Path(datavet.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (src, env.get("PYTHONPATH", "")) if p)
    env.pop("GITHUB_ACTIONS", None)
    env["PYTHONHASHSEED"] = "0"
    env.setdefault("OMP_NUM_THREADS", "1")
    env.setdefault("OPENBLAS_NUM_THREADS", "1")
    return env


def _limit(memory_bytes: int | None) -> Callable[[], None] | None:
    if not memory_bytes:
        return None

    def apply() -> None:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))

    return apply


def classify(code: int | None, stdout: str, stderr: str) -> str:
    """The outcome of one run (see the module docstring for the contract)."""
    if code is None:
        return "timeout"
    if "Traceback" in stderr:
        return "traceback"
    if code < 0:
        return "signal"
    if code not in (0, 1, 2):
        return "other-exit"
    lines = stderr.splitlines()
    if code == 2:
        if stdout.strip():
            return "crashed-rule" if '"status": "crashed"' in stdout else "exit2-bad-stderr"
        if len(lines) == 1 and lines[0].startswith("datavet: internal error:"):
            return "internal-error"
        if len(lines) != 1 or not lines[0].startswith("datavet: error:"):
            return "exit2-bad-stderr"
        return "exit2"
    try:
        json.loads(stdout, parse_constant=_refuse)
    except (ValueError, AssertionError):
        return "bad-json"
    if re.search(r"\b\w*Warning\b:", stderr):  # e.g. a numpy RuntimeWarning on stderr
        return "warning-leak"
    return f"exit{code}"


def _refuse(name: str):
    raise AssertionError(name)


def run_case(
    case: Case,
    seeds: dict[str, Path],
    workdir: str | os.PathLike,
    *,
    timeout: float = 30.0,
    memory_bytes: int | None = DEFAULT_MEMORY,
    keep_dir: str | os.PathLike | None = None,
    extra_args: Iterable[str] = ("--no-baselines",),
) -> Result:
    """Mutate, audit in a child process, classify. The mutated file is deleted afterwards unless
    the case failed and ``keep_dir`` is given."""
    data = mutated_bytes(case, seeds)
    workdir = Path(workdir)
    path = workdir / f"{case.name}.{case.fmt}"
    path.write_bytes(data)
    if case.role == "train":
        args = ["audit", str(path)]
    else:
        args = ["audit", str(good_train(workdir)), "--test", str(path)]
    args += ["--format", "json", *extra_args]
    started = time.perf_counter()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "datavet", *args],
            stdout=out,
            stderr=err,
            stdin=subprocess.DEVNULL,
            cwd=workdir,
            env=child_env(),
            preexec_fn=_limit(memory_bytes),
        )
        try:
            code: int | None = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            code = None
        seconds = time.perf_counter() - started
        out.seek(0)
        err.seek(0)
        stdout = out.read().decode("utf-8", "replace")
        stderr = err.read().decode("utf-8", "replace")
    outcome = classify(code, stdout, stderr)
    first = stderr.splitlines()[0] if stderr.strip() else ""
    if outcome == "crashed-rule":
        try:
            crashed = [
                f"{o['code']}: {(o['reason'] or '').splitlines()[0]}"
                for o in json.loads(stdout)["outcomes"]
                if o["status"] == "crashed"
            ]
            first = "crashed " + "; ".join(crashed)
        except (ValueError, KeyError):
            pass
    kept = None
    if outcome not in OK_OUTCOMES and keep_dir is not None:
        keep = Path(keep_dir)
        keep.mkdir(parents=True, exist_ok=True)
        kept = str(keep / path.name)
        Path(kept).write_bytes(data)
        (keep / f"{path.name}.stderr.txt").write_text(stderr)
    path.unlink(missing_ok=True)
    return Result(
        case=case,
        exit_code=code,
        outcome=outcome,
        stderr_first_line=first,
        traceback="Traceback" in stderr,
        seconds=seconds,
        size=len(data),
        path=kept,
    )


def fuzz(
    iterations: int,
    *,
    formats: Iterable[str] = FORMATS,
    seed: int = 0,
    timeout: float = 30.0,
    jobs: int | None = None,
    memory_bytes: int | None = DEFAULT_MEMORY,
    workdir: str | os.PathLike | None = None,
    keep_dir: str | os.PathLike | None = None,
    extra_args: Iterable[str] = ("--no-baselines",),
    on_result: Callable[[Result], None] | None = None,
) -> list[Result]:
    """Run ``iterations`` cases (``jobs`` child processes at a time); results in case order."""
    cases = plan(iterations, formats=formats, seed=seed)
    jobs = jobs or max(1, min(4, os.cpu_count() or 1))
    own = None
    if workdir is None:
        own = tempfile.TemporaryDirectory(prefix="datavet-fuzz-")
        workdir = own.name
    try:
        seeds = make_seeds(Path(workdir) / "seeds")
        good_train(workdir)
        extra = tuple(extra_args)

        def one(case: Case) -> Result:
            result = run_case(
                case,
                seeds,
                workdir,
                timeout=timeout,
                memory_bytes=memory_bytes,
                keep_dir=keep_dir,
                extra_args=extra,
            )
            if on_result is not None:
                on_result(result)
            return result

        with ThreadPoolExecutor(max_workers=jobs) as pool:
            return list(pool.map(one, cases))
    finally:
        if own is not None:
            own.cleanup()


def summarize(results: Iterable[Result]) -> dict:
    """Counts per outcome, per format x outcome, and the failures."""
    results = list(results)
    per_outcome = Counter(r.outcome for r in results)
    per_format: dict[str, Counter] = {}
    for r in results:
        per_format.setdefault(r.case.fmt, Counter())[r.outcome] += 1
    failures = [r for r in results if not r.ok]
    return {
        "cases": len(results),
        "outcomes": {k: per_outcome.get(k, 0) for k in OUTCOMES if per_outcome.get(k)},
        "formats": {f: dict(c) for f, c in sorted(per_format.items())},
        "failures": failures,
        "distinct_failures": sorted(
            {(r.case.fmt, r.outcome, _signature(r.stderr_first_line)) for r in failures}
        ),
        "max_seconds": max((r.seconds for r in results), default=0.0),
    }


def _signature(line: str) -> str:
    """The failure's message with paths and numbers blanked, to count distinct failures."""
    line = re.sub(r"/\S+", "<path>", line)
    return re.sub(r"\d+", "N", line)[:160]
