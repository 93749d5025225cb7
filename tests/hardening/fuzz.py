"""datavet's fuzzer, as a library: hostile inputs, types and output paths, run in process.

Each case is a small, deterministic recipe -- ``Case(family, variant, seed)`` -- that
``build(case, folder)`` turns into files in an empty folder plus the command line to run there
(``Spec``). The families:

- ``bytes``: a valid seed file (CSV, gzip CSV, Parquet, Arrow IPC, Feather/zstd, NPY, NPZ, and
  a training log, a JSON report, a TOML config, a ``.pt`` when torch is importable) with its
  bytes corrupted (truncate, flip bytes, cut the header, zero/0xFF runs, splices, huge numbers,
  and for text: quotes, NULs, invalid UTF-8, dropped newlines, ragged rows), audited as the train
  or the test split (CSV sometimes under another ``--encoding``), diffed, or read as a log/config;
- ``arrow``: every Arrow type (the whole type list, extension types included) as a feature and
  as the label, in Parquet and in Arrow IPC, with and without a test split, with values that are
  ordinary, partly null, all null or one value;
- ``numpy``: ``.npy``/``.npz`` of every NumPy dtype family (object, structured, datetime,
  timedelta, void, float16, complex, longdouble, strings) and awkward shapes (zero-length axes,
  0-d, 5-d), with odd label arrays beside them;
- ``torch``: ``.pt`` files of every tensor layout (nested, sparse COO/CSR, quantized, complex,
  meta, bfloat16, float8, non-contiguous, channels-last) and containers (dict, tuple, list);
- ``depth``: deep nesting where a reader recurses: JSON reports for ``diff``, TOML configs,
  JSON-lines logs for ``curves``, ``journal --config-diff`` files (JSON, TOML, YAML, including
  alias expansion), and ``/dev/zero`` given to ``diff`` and ``curves``;
- ``outputs``: every writing command's ``--output``/``--html``/``--journal`` (and
  ``GITHUB_STEP_SUMMARY``) pointed at each input of that command -- directly, through a
  symlink, a hard link, a ``..`` path, an absolute path -- which must be refused.

The cases run in long-lived worker processes (``Pool``): each worker imports datavet once and
runs ``datavet.cli.main(argv)`` in process, with file descriptors 1 and 2 redirected to files
(so C-level output is caught too) and Python's warning filters reset before each case (so a
warning shows every time, as in a fresh process). A worker that does not answer within the
per-case timeout is killed and replaced; one that dies (a segfault, the address-space limit) is
replaced too; both cases are breaks.

The contract each case is held to (``classify``):

- exit 0, 1 or 2; an exception never escapes ``main``;
- exit 2: exactly one stderr line, starting ``datavet: error:`` -- never ``internal error``, a
  traceback, a usage dump, a report on stdout with a crashed rule, nothing at all;
- exit 0/1 with ``--format json``: stdout is strict JSON (no NaN/Infinity) with no crashed rule;
  no traceback and no raw library warning on stderr;
- no hang, no death;
- no file in the case folder changes, appears or disappears except the declared outputs; an
  ``outputs`` case must exit 2 and leave every input as it was (checksums before and after).

Used by ``tests/hardening/test_fuzz.py`` (a few hundred cases in CI) and ``bench/fuzz.py``
(``make fuzz``: 100,000). ``python tests/hardening/fuzz.py --worker ...`` is the worker.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import json
import os
import random
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path

FAMILIES = ("bytes", "arrow", "numpy", "torch", "depth", "outputs")
# the share of each family in a plan: one period of this schedule (20 slots)
SCHEDULE = (
    "bytes arrow bytes numpy outputs bytes arrow depth bytes torch "
    "bytes arrow bytes numpy outputs bytes arrow depth outputs numpy"
).split()

FORMATS = ("csv", "csv.gz", "parquet", "arrow", "feather", "npy", "npz")
EXTRA_FORMATS = ("log.csv", "log.jsonl", "report.json", "config.toml", "pt")
BINARY_MUTATIONS = ("truncate", "flip", "cut-header", "zeros", "ones", "splice", "big-number")
TEXT_MUTATIONS = ("quote", "nul", "bad-utf8", "drop-newline", "ragged")
TEXT_FORMATS = ("csv", "log.csv", "log.jsonl", "report.json", "config.toml")
ENCODINGS = ("latin-1", "cp1252", "cp037", "utf-16", "utf-8-sig", "rot13", "base64", "nonsense")

OK_OUTCOMES = ("exit0", "exit1", "exit2", "unbuildable")
BREAKS = (
    "timeout",
    "died",
    "exception",
    "other-exit",
    "internal-error",
    "traceback",
    "exit2-bad-stderr",
    "crashed-rule",
    "bad-json",
    "warning-leak",
    "not-refused",
    "input-modified",
    "stray-file",
)
DEFAULT_MEMORY = 4 << 30  # address-space limit per worker: a runaway allocation fails there
DEFAULT_TIMEOUT = 20.0
STARTUP_TIMEOUT = 180.0  # a worker's imports, on a loaded machine
THIS = Path(__file__).resolve()


def torch_available() -> bool:
    import importlib.util

    return importlib.util.find_spec("torch") is not None


# ---------------------------------------------------------------------------------------------
# cases


@dataclass(frozen=True)
class Case:
    family: str
    variant: str
    seed: int

    @property
    def name(self) -> str:
        slug = re.sub(r"[^A-Za-z0-9_.=-]+", "_", self.variant)
        return f"{self.family}-{slug}-{self.seed}"


@dataclass
class Spec:
    """What a built case runs: ``argv`` in the case folder, the files it may write, whether it
    must be refused, extra environment, and a hint for grouping its breaks."""

    argv: list[str]
    outputs: tuple[str, ...] = ()
    refuse: bool = False
    json: bool = False
    env: dict = field(default_factory=dict)
    group: str | None = None  # outputs cases: "audit --output onto train"


class Unbuildable(Exception):
    """The case cannot be written (Parquet cannot store the type): counted, not a break."""


def variants(family: str) -> tuple[str, ...]:
    if family == "bytes":
        fmts = FORMATS + tuple(f for f in EXTRA_FORMATS if f != "pt" or torch_available())
        out = []
        for fmt in fmts:
            muts = BINARY_MUTATIONS + (TEXT_MUTATIONS if fmt in TEXT_FORMATS else ())
            out += [f"{fmt}:{m}" for m in muts]
        # interleave formats so that a short budget touches every format early
        return tuple(sorted(out, key=lambda v: (_rank(v), v)))
    if family == "arrow":
        # type fastest, then role, then container: the first 2 x len(types) cases hold every
        # type in both roles
        return tuple(
            f"{t}:{role}:{container}"
            for container in ("parquet", "arrow")
            for role in ("feature", "label")
            for t in ARROW_TYPES
        )
    if family == "numpy":
        return tuple(f"npy:{v}" for v in NUMPY_X) + tuple(f"npz:{v}" for v in NUMPY_NPZ)
    if family == "torch":
        return TORCH_VARIANTS if torch_available() else ()
    if family == "depth":
        return DEPTH_VARIANTS
    if family == "outputs":
        return OUTPUT_VARIANTS
    raise ValueError(family)


def _rank(variant: str) -> int:
    fmt, mutation = variant.split(":")
    muts = BINARY_MUTATIONS + TEXT_MUTATIONS
    return muts.index(mutation)


def plan(iterations: int, *, seed: int = 0, families: Iterable[str] = FAMILIES) -> list[Case]:
    """``iterations`` deterministic cases: families in the proportions of ``SCHEDULE``, each
    walking its variants in order (so a short budget covers the most variants), each case with
    its own seed for the random parts (values, positions, roles)."""
    families = [f for f in families if variants(f)]
    schedule = [f for f in SCHEDULE if f in families] or families
    counts: Counter = Counter()
    cases = []
    for i in range(iterations):
        family = schedule[i % len(schedule)]
        vs = variants(family)
        k = counts[family]
        counts[family] += 1
        variant = vs[(k + seed) % len(vs)]
        cases.append(Case(family, variant, seed * 1_000_003 + i))
    return cases


# ---------------------------------------------------------------------------------------------
# building a case


def build(case: Case, folder: str | os.PathLike, seeds: str | os.PathLike) -> Spec:
    """Write the case's files into the (empty) ``folder``; return what to run there. ``seeds``
    is a folder for the seed files, shared by the cases (written once)."""
    folder = Path(folder)
    rng = random.Random(case.seed)
    builder = {
        "selftest": _build_selftest,
        "bytes": _build_bytes,
        "arrow": _build_arrow,
        "numpy": _build_numpy,
        "torch": _build_torch,
        "depth": _build_depth,
        "outputs": _build_outputs,
    }[case.family]
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's prototype/deprecation notes while writing
        return builder(case.variant, folder, rng, Path(seeds))


def _build_selftest(variant: str, folder: Path, rng: random.Random, seeds: Path) -> Spec:
    """Cases that test the harness itself (not in FAMILIES): a hang, a death, a stray file."""
    if variant == "hang":
        time.sleep(3600)
    if variant == "segfault":
        os.kill(os.getpid(), signal.SIGSEGV)
    if variant == "stray":
        _good_train(folder)
        # the declared outputs are allowed; a file the command did not declare is a break
        return Spec(["audit", "good_train.csv", "--output", "r.txt", "--no-baselines"])
    if variant == "refused":
        _good_train(folder)
        return Spec(["audit", "good_train.csv", "--output", "good_train.csv"], refuse=True)
    raise ValueError(variant)


# --- seeds ---------------------------------------------------------------------------------


def _seed_frame(rows: int = 120):
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


def _log_rows(steps: int = 60) -> list[dict]:
    import math

    return [
        {
            "step": i,
            "train_loss": 2.3 * math.exp(-i / 20) + 0.05,
            "val_loss": 2.3 * math.exp(-i / 25) + 0.1 + (0.002 * i if i > 30 else 0),
            "lr": 1e-3,
            "grad_norm": 1.0 + 0.01 * i,
        }
        for i in range(steps)
    ]


def _report(findings: int = 2, extra: object = None) -> str:
    """A minimal datavet JSON report (what ``diff`` reads)."""
    payload = {
        "tool": "datavet",
        "schema_version": 1,
        "fail_on": "error",
        "findings": [
            {
                "code": f"V00{i + 1}",
                "severity": ("warning", "error", "info")[i % 3],
                "message": f"finding {i}",
                "split": "train",
                "columns": [f"c{i}"],
            }
            for i in range(findings)
        ],
        "outcomes": [],
    }
    if extra is not None:
        payload["extra"] = extra
    return json.dumps(payload, indent=1)


CONFIG_TOML = """[tool.datavet]
fail-on = "warning"
ignore = ["B"]
[tool.datavet.thresholds.V003]
max_ratio = 0.5
"""

_SEED_CACHE: dict[str, dict[str, Path]] = {}


def make_seeds(directory: str | os.PathLike) -> dict[str, Path]:
    """One valid file per format in ``directory`` (written once; deterministic bytes)."""
    d = Path(directory)
    key = str(d.resolve()) if d.exists() else str(d)
    if key in _SEED_CACHE:
        return _SEED_CACHE[key]
    import numpy as np
    import pyarrow as pa
    import pyarrow.feather as feather
    import pyarrow.ipc as ipc
    import pyarrow.parquet as pq

    d.mkdir(parents=True, exist_ok=True)
    frame = _seed_frame()
    table = pa.Table.from_pandas(frame, preserve_index=False)
    seeds: dict[str, Path] = {f: d / f"seed.{f}" for f in FORMATS + EXTRA_FORMATS}
    done = d / ".complete"
    if not done.exists():
        frame.to_csv(seeds["csv"], index=False)
        seeds["csv.gz"].write_bytes(gzip.compress(seeds["csv"].read_bytes(), mtime=0))
        pq.write_table(table, seeds["parquet"], row_group_size=50, compression="snappy")
        with pa.OSFile(str(seeds["arrow"]), "wb") as sink, ipc.new_file(sink, table.schema) as w:
            for batch in table.to_batches(max_chunksize=50):
                w.write_batch(batch)
        feather.write_feather(table, seeds["feather"], compression="zstd", chunksize=50)
        x = frame[["x", "n"]].to_numpy(dtype=np.float64)
        np.save(seeds["npy"], x)
        np.savez_compressed(seeds["npz"], x=x, y=frame["label"].to_numpy())
        rows = _log_rows()
        keys = list(rows[0])
        seeds["log.csv"].write_text(
            ",".join(keys) + "\n" + "".join(",".join(str(r[k]) for k in keys) + "\n" for r in rows)
        )
        seeds["log.jsonl"].write_text("".join(json.dumps(r) + "\n" for r in rows))
        seeds["report.json"].write_text(_report(3))
        seeds["config.toml"].write_text(CONFIG_TOML)
        if torch_available():
            import torch

            g = torch.Generator().manual_seed(0)
            torch.save(
                {"inputs": torch.randn(64, 3, 4, 4, generator=g), "labels": torch.arange(64) % 3},
                seeds["pt"],
            )
        done.write_text("ok")
    _SEED_CACHE[key] = seeds
    return seeds


_GOOD_TRAIN: list[bytes] = []


def _good_train(folder: Path) -> Path:
    path = folder / "good_train.csv"
    if not _GOOD_TRAIN:
        _GOOD_TRAIN.append(_seed_frame().to_csv(index=False).encode())
    path.write_bytes(_GOOD_TRAIN[0])
    return path


# --- bytes -------------------------------------------------------------------------------------


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
        if mutation in ("drop-newline", "ragged"):
            newlines = [m.start() for m in re.finditer(rb"\n", data)]
            i = rng.choice(newlines) if newlines else i
        if mutation == "drop-newline":
            return bytes(buf[:i] + buf[i + 1 :])
        insert = {
            "quote": b'"',
            "nul": b"\x00",
            "bad-utf8": rng.choice([b"\xff", b"\xc3", b"\xe9", b"\xed\xa0\x80", b"\xf8\x88"]),
            "ragged": b",extra",
        }[mutation]
        return bytes(buf[:i] + insert + buf[i:])
    raise ValueError(f"unknown mutation {mutation!r}")


def _build_bytes(variant: str, folder: Path, rng: random.Random, seeds: Path) -> Spec:
    fmt, mutation = variant.split(":")
    seed_files = make_seeds(seeds)
    data = mutate(seed_files[fmt].read_bytes(), mutation, rng)
    path = folder / f"bad.{fmt}"
    path.write_bytes(data)
    if fmt in ("log.csv", "log.jsonl"):
        return Spec(["curves", path.name, "--format", "json"], json=True)
    if fmt == "report.json":
        good = folder / "good.json"
        good.write_text(_report(2))
        pair = [path.name, good.name] if rng.random() < 0.5 else [good.name, path.name]
        return Spec(["diff", *pair, "--format", "json"], json=True)
    if fmt == "config.toml":
        _good_train(folder)
        return Spec(
            [
                "audit",
                "good_train.csv",
                "--config",
                path.name,
                "--format",
                "json",
                "--no-baselines",
            ],
            json=True,
        )
    if rng.random() < 0.25:
        _good_train(folder)
        argv = ["audit", "good_train.csv", "--test", path.name]
    else:
        argv = ["audit", path.name]
    if fmt == "csv" and rng.random() < 0.2:
        argv += ["--encoding", rng.choice(ENCODINGS)]
    if rng.random() < 0.1:
        argv += ["--max-memory", rng.choice(["1MB", "64MB", "1GB"])]
    return Spec([*argv, "--format", "json", "--no-baselines", "--isolated"], json=True)


# --- Arrow types ---------------------------------------------------------------------------


def _arrow_types() -> dict[str, Callable]:
    """name -> a function returning the pyarrow type (called lazily: pyarrow is imported late)."""
    import pyarrow as pa

    types = {
        "null": pa.null,
        "bool": pa.bool_,
        "int8": pa.int8,
        "int16": pa.int16,
        "int32": pa.int32,
        "int64": pa.int64,
        "uint8": pa.uint8,
        "uint16": pa.uint16,
        "uint32": pa.uint32,
        "uint64": pa.uint64,
        "float16": pa.float16,
        "float32": pa.float32,
        "float64": pa.float64,
        "decimal32": lambda: pa.decimal32(7, 2),
        "decimal64": lambda: pa.decimal64(12, 3),
        "decimal128": lambda: pa.decimal128(10, 2),
        "decimal256": lambda: pa.decimal256(40, 5),
        "string": pa.string,
        "large_string": pa.large_string,
        "string_view": pa.string_view,
        "binary": pa.binary,
        "large_binary": pa.large_binary,
        "binary_view": pa.binary_view,
        "fixed_size_binary": lambda: pa.binary(4),
        "date32": pa.date32,
        "date64": pa.date64,
        "time32_s": lambda: pa.time32("s"),
        "time32_ms": lambda: pa.time32("ms"),
        "time64_us": lambda: pa.time64("us"),
        "time64_ns": lambda: pa.time64("ns"),
        "timestamp_s": lambda: pa.timestamp("s"),
        "timestamp_ms": lambda: pa.timestamp("ms"),
        "timestamp_us": lambda: pa.timestamp("us"),
        "timestamp_ns": lambda: pa.timestamp("ns"),
        "timestamp_utc": lambda: pa.timestamp("us", tz="UTC"),
        "timestamp_tokyo": lambda: pa.timestamp("ns", tz="Asia/Tokyo"),
        "duration_s": lambda: pa.duration("s"),
        "duration_ms": lambda: pa.duration("ms"),
        "duration_us": lambda: pa.duration("us"),
        "duration_ns": lambda: pa.duration("ns"),
        "month_day_nano_interval": pa.month_day_nano_interval,
        "list_int64": lambda: pa.list_(pa.int64()),
        "list_string": lambda: pa.list_(pa.string()),
        "large_list_float64": lambda: pa.large_list(pa.float64()),
        "fixed_size_list_float32": lambda: pa.list_(pa.float32(), 3),
        "list_view_int32": lambda: pa.list_view(pa.int32()),
        "large_list_view_float64": lambda: pa.large_list_view(pa.float64()),
        "list_list_int8": lambda: pa.list_(pa.list_(pa.int8())),
        "struct": lambda: pa.struct([("a", pa.int64()), ("b", pa.string())]),
        "struct_empty_nested": lambda: pa.struct([("s", pa.struct([("z", pa.float64())]))]),
        "map_string_int64": lambda: pa.map_(pa.string(), pa.int64()),
        "dictionary_string": lambda: pa.dictionary(pa.int32(), pa.string()),
        "dictionary_int8_int64": lambda: pa.dictionary(pa.int8(), pa.int64()),
        "dictionary_ordered": lambda: pa.dictionary(pa.int16(), pa.string(), ordered=True),
        "run_end_encoded_string": lambda: pa.run_end_encoded(pa.int32(), pa.string()),
        "run_end_encoded_float64": lambda: pa.run_end_encoded(pa.int16(), pa.float64()),
        "sparse_union": lambda: pa.sparse_union(
            [pa.field("i", pa.int64()), pa.field("s", pa.string())]
        ),
        "dense_union": lambda: pa.dense_union(
            [pa.field("i", pa.int64()), pa.field("f", pa.float64())]
        ),
        "uuid": pa.uuid,
        "json": pa.json_,
        "bool8": pa.bool8,
        "fixed_shape_tensor": lambda: pa.fixed_shape_tensor(pa.float32(), [2, 2]),
        "opaque": lambda: pa.opaque(pa.int64(), "geometry", "postgis"),
    }
    return types


ARROW_TYPES = (
    "null bool int8 int16 int32 int64 uint8 uint16 uint32 uint64 float16 float32 float64 "
    "decimal32 decimal64 decimal128 decimal256 string large_string string_view binary "
    "large_binary binary_view fixed_size_binary date32 date64 time32_s time32_ms time64_us "
    "time64_ns timestamp_s timestamp_ms timestamp_us timestamp_ns timestamp_utc timestamp_tokyo "
    "duration_s duration_ms duration_us duration_ns month_day_nano_interval list_int64 "
    "list_string large_list_float64 fixed_size_list_float32 list_view_int32 "
    "large_list_view_float64 list_list_int8 struct struct_empty_nested map_string_int64 "
    "dictionary_string dictionary_int8_int64 dictionary_ordered run_end_encoded_string "
    "run_end_encoded_float64 sparse_union dense_union uuid json bool8 fixed_shape_tensor opaque"
).split()
VALUE_MODES = ("normal", "normal", "nulls", "all-null", "one-value", "extreme")


def _py_value(name: str, r: random.Random, extreme: bool):
    """One Python value for an Arrow type ``name`` (None for null)."""
    import datetime as dt
    from decimal import Decimal

    if name == "null":
        return None
    if name in ("bool", "bool8"):
        return r.random() < 0.5
    m = re.fullmatch(r"(u?)int(\d+)", name)
    if m:
        bits = int(m.group(2))
        lo, hi = (0, 2**bits - 1) if m.group(1) else (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)
        return r.choice([lo, hi]) if extreme else r.randint(max(lo, -50), min(hi, 50))
    if name.startswith("float") or name in ("opaque",):
        if name == "opaque":
            return r.randint(0, 9)
        if extreme:
            return r.choice([float("nan"), float("inf"), -float("inf"), 6.0e4, 1e-7, 1e307])
        return r.gauss(0, 1)
    if name.startswith("decimal"):
        scale = {"decimal32": 2, "decimal64": 3, "decimal128": 2, "decimal256": 5}[name]
        digits = {"decimal32": 5, "decimal64": 9, "decimal128": 8, "decimal256": 35}[name]
        v = r.randint(-(10**digits) + 1, 10**digits - 1) if extreme else r.randint(-999, 999)
        return Decimal(v).scaleb(-scale)
    if name in ("string", "large_string", "string_view", "json"):
        pool = ["a", "b", "é", "", "x" * 40, "\u202e\x1b[31m", "null", "1,5", "\ud7ff"]
        s = r.choice(pool) if extreme else r.choice(["cat", "dog", "emu"]) + str(r.randint(0, 3))
        return json.dumps(s) if name == "json" else s
    if name in ("binary", "large_binary", "binary_view"):
        return bytes(r.randrange(256) for _ in range(r.randint(0, 6)))
    if name == "fixed_size_binary":
        return (
            bytes(r.randrange(256) for _ in range(4))
            if extreme
            else b"ab" + bytes([97 + r.randrange(3)]) * 2
        )
    if name == "uuid":
        return bytes(r.randrange(256) for _ in range(16))
    if name.startswith("date"):
        if extreme:
            return r.choice([dt.date(1, 1, 1), dt.date(9999, 12, 31), dt.date(1970, 1, 1)])
        return dt.date(2020, 1, 1) + dt.timedelta(days=r.randint(0, 900))
    if name.startswith(("time32", "time64")):
        unit = name.split("_")[1]
        per_s = {"s": 1, "ms": 1000, "us": 10**6, "ns": 10**9}[unit]
        return r.randint(0, 86399 * per_s) if not extreme else r.choice([0, 86399 * per_s])
    if name.startswith("timestamp"):
        per_s = {"s": 1, "ms": 1000, "us": 10**6, "ns": 10**9, "utc": 10**6, "tokyo": 10**9}[
            name.split("_")[1]
        ]
        if extreme:
            return r.choice([0, -(2**62) // per_s * per_s, 2**62 // per_s * per_s, -1])
        return (1_700_000_000 + r.randint(0, 10**7)) * per_s
    if name.startswith("duration"):
        return r.choice([0, 2**63 - 1, -(2**63)]) if extreme else r.randint(-(10**6), 10**6)
    if name == "month_day_nano_interval":
        return (r.randint(-3, 3), r.randint(-40, 40), r.randint(-(10**12), 10**12))
    if name in ("list_int64", "list_view_int32"):
        return [r.randint(-9, 9) for _ in range(r.randint(0, 4))]
    if name == "list_string":
        return [r.choice(["a", "b", "c"]) for _ in range(r.randint(0, 3))]
    if name in ("large_list_float64", "large_list_view_float64"):
        return [r.gauss(0, 1) if not extreme else float("nan") for _ in range(r.randint(0, 4))]
    if name in ("fixed_size_list_float32", "fixed_shape_tensor"):
        k = 3 if name.startswith("fixed_size") else 4
        return [r.gauss(0, 1) if not extreme else float("inf") for _ in range(k)]
    if name == "list_list_int8":
        return [[r.randint(-5, 5)] * r.randint(0, 2) for _ in range(r.randint(0, 3))]
    if name == "struct":
        return {"a": r.randint(0, 3), "b": r.choice(["x", "y"])}
    if name == "struct_empty_nested":
        return {"s": {"z": r.gauss(0, 1)}}
    if name == "map_string_int64":
        return [(r.choice(["k1", "k2"]), r.randint(0, 9)) for _ in range(r.randint(0, 2))]
    if name in ("dictionary_string", "dictionary_ordered", "run_end_encoded_string"):
        return r.choice(["red", "green", "blue"])
    if name == "dictionary_int8_int64":
        return r.choice([7, 70, 700]) if not extreme else r.choice([2**63 - 1, -(2**63)])
    if name == "run_end_encoded_float64":
        return r.choice([0.5, 1.5]) if not extreme else float("nan")
    if name == "sparse_union":
        return r.choice([r.randint(0, 9), "s"])
    if name == "dense_union":
        return r.choice([r.randint(0, 9), r.gauss(0, 1)])
    raise ValueError(name)


def arrow_column(name: str, n: int, r: random.Random, mode: str, label: bool = False):
    """A pyarrow Array of type ``name`` with ``n`` values in ``mode`` (normal, nulls, all-null,
    one-value, extreme). As a label the values come from a pool of three."""
    import pyarrow as pa
    import pyarrow.compute as pc

    typ = _arrow_types()[name]()
    extreme = mode == "extreme"
    if label and mode not in ("all-null",):
        pool = [_py_value(name, r, extreme) for _ in range(3)]
        values = [r.choice(pool) for _ in range(n)]
    else:
        values = [_py_value(name, r, extreme) for _ in range(n)]
    if mode == "one-value":
        values = [values[0]] * n
    if mode == "all-null":
        values = [None] * n
    if mode == "nulls":
        values = [None if r.random() < 0.3 else v for v in values]
    if name in ("dictionary_string", "dictionary_int8_int64", "dictionary_ordered"):
        storage = pa.array(values, type=typ.value_type)
        arr = storage.dictionary_encode()
        return arr.cast(typ) if arr.type != typ else arr
    if name.startswith("run_end_encoded"):
        return pc.run_end_encode(
            pa.array(values, type=typ.value_type), run_end_type=typ.run_end_type
        )
    if name in ("sparse_union", "dense_union"):
        kinds = [0 if isinstance(v, int) or v is None else 1 for v in values]
        ints = pa.array([v if isinstance(v, int) else 0 for v in values], pa.int64())
        second = typ.field(1).type
        fill = "" if pa.types.is_string(second) else 0.0
        others = pa.array(
            [v if not isinstance(v, int) and v is not None else fill for v in values], second
        )
        type_ids = pa.array(kinds, pa.int8())
        if name == "sparse_union":
            return pa.UnionArray.from_sparse(type_ids, [ints, others], ["i", typ.field(1).name])
        offsets = pa.array(list(range(n)), pa.int32())
        return pa.UnionArray.from_dense(type_ids, offsets, [ints, others], ["i", typ.field(1).name])
    if isinstance(typ, pa.BaseExtensionType):
        if name == "bool8":
            values = [None if v is None else int(v) for v in values]
        return pa.ExtensionArray.from_storage(typ, pa.array(values, type=typ.storage_type))
    if name == "float16":
        import numpy as np

        mask = np.array([v is None for v in values])
        data = np.array([0.0 if v is None else v for v in values], dtype=np.float16)
        return pa.array(data, mask=mask, type=typ)
    return pa.array(values, type=typ)


def _write_table(table, path: Path, container: str) -> None:
    import pyarrow as pa
    import pyarrow.ipc as ipc
    import pyarrow.parquet as pq

    try:
        if container == "parquet":
            pq.write_table(table, path)
        else:
            with pa.OSFile(str(path), "wb") as sink, ipc.new_file(sink, table.schema) as w:
                w.write_table(table)
    except (pa.ArrowException, NotImplementedError, TypeError, ValueError) as exc:
        path.unlink(missing_ok=True)
        raise Unbuildable(f"{container} cannot store it: {type(exc).__name__}: {exc}") from None


def _build_arrow(variant: str, folder: Path, rng: random.Random, seeds: Path) -> Spec:
    import pyarrow as pa

    name, role, container = variant.split(":")
    mode = rng.choice(VALUE_MODES)
    with_test = rng.random() < 0.5
    argv = ["audit"]
    for split in ("train", "test") if with_test else ("train",):
        n = rng.choice([40, 80, 150]) if split == "train" else rng.choice([20, 40])
        x = pa.array([rng.gauss(0, 1) for _ in range(n)], pa.float64())
        y = pa.array([rng.randint(0, 9) for _ in range(n)], pa.int64())
        col = arrow_column(name, n, rng, mode, label=role == "label")
        if role == "feature":
            label = pa.array([rng.randint(0, 2) for _ in range(n)], pa.int64())
            table = pa.table({"x": x, "c": col, "label": label})
        else:
            table = pa.table({"x": x, "y": y, "label": col})
        ext = "parquet" if container == "parquet" else "arrow"
        path = folder / f"{split}.{ext}"
        _write_table(table, path, container)
        argv += [path.name] if split == "train" else ["--test", path.name]
    argv += ["--target", "label", "--format", "json", "--isolated"]
    if rng.random() < 0.75:  # the baselines are 10x the cost of the scan: a share of the cases
        argv.append("--no-baselines")
    return Spec(argv, json=True)


# --- NumPy dtypes ----------------------------------------------------------------------------

NUMPY_X = (
    "float16 float32_nan float64_inf complex64 complex128 longdouble bool int8 uint64_big "
    "int64_min datetime64 timedelta64 object structured void str bytes zero_rows zero_cols "
    "zero_1d scalar_0d one_d five_d many_unit_axes fortran images_nchw images_nhwc_uint8 "
    "sequences huge_values denormals"
).split()
NUMPY_NPZ = (
    NUMPY_X
    + (
        "y_str y_float_nan y_object y_zero y_len_mismatch y_2d y_bool y_datetime y_one_class "
        "no_arrays three_arrays odd_keys"
    ).split()
)


def numpy_array(kind: str, r: random.Random):
    """An array of ``kind`` (see NUMPY_X); may need allow_pickle to save (object)."""
    import numpy as np

    g = np.random.default_rng(r.randrange(2**32))
    n = r.choice([10, 40, 100])
    base = g.normal(size=(n, 4))
    if kind == "float16":
        return base.astype(np.float16)
    if kind == "float32_nan":
        a = base.astype(np.float32)
        a[g.random(a.shape) < 0.1] = np.nan
        return a
    if kind == "float64_inf":
        base[0, 0], base[1, 1] = np.inf, -np.inf
        return base
    if kind in ("complex64", "complex128"):
        return (base + 1j * base[::-1]).astype(kind)
    if kind == "longdouble":
        return base.astype(np.longdouble) * np.longdouble(10) ** 400
    if kind == "bool":
        return base > 0
    if kind == "int8":
        return g.integers(-128, 128, size=(n, 4)).astype(np.int8)
    if kind == "uint64_big":
        return g.integers(2**63, 2**64 - 1, size=(n, 3), dtype=np.uint64)
    if kind == "int64_min":
        a = g.integers(-5, 5, size=(n, 3))
        a[0] = np.iinfo(np.int64).min
        return a
    if kind == "datetime64":
        return np.array("2024-01-01", dtype="datetime64[ns]") + g.integers(
            0, 10**15, (n, 2)
        ).astype("timedelta64[ns]")
    if kind == "timedelta64":
        return g.integers(-(10**9), 10**9, (n, 2)).astype("timedelta64[ms]")
    if kind == "object":
        a = np.empty((n, 2), dtype=object)
        for i in range(n):
            a[i] = [r.choice([1, "a", None, 2.5, (1, 2)]), r.random()]
        return a
    if kind == "structured":
        a = np.zeros(n, dtype=[("a", "<f8"), ("b", "<i4"), ("c", "S3")])
        a["a"] = base[:, 0]
        return a
    if kind == "void":
        return np.frombuffer(g.bytes(n * 8), dtype="V8").copy()
    if kind == "str":
        return np.array([[r.choice(["a", "bb", "é"]) for _ in range(3)] for _ in range(n)])
    if kind == "bytes":
        return np.array([[r.choice([b"a", b"\xff\xfe"]) for _ in range(3)] for _ in range(n)])
    if kind == "zero_rows":
        return np.zeros((0, 3))
    if kind == "zero_cols":
        return np.zeros((n, 0))
    if kind == "zero_1d":
        return np.zeros((0,))
    if kind == "scalar_0d":
        return np.array(3.5)
    if kind == "one_d":
        return base[:, 0]
    if kind == "five_d":
        return g.normal(size=(n, 2, 2, 2, 2)).astype(np.float32)
    if kind == "many_unit_axes":
        return g.normal(size=(n, 1, 1, 1, 1, 1, 1, 3))
    if kind == "fortran":
        return np.asfortranarray(g.normal(size=(n, 3, 5)))
    if kind == "images_nchw":
        return g.random((n, 3, 6, 6)).astype(np.float32)
    if kind == "images_nhwc_uint8":
        return g.integers(0, 256, (n, 6, 6, 3)).astype(np.uint8)
    if kind == "sequences":
        return g.normal(size=(n, 7, 3))
    if kind == "huge_values":
        return base * 1e307
    if kind == "denormals":
        return base * 1e-310
    raise ValueError(kind)


def _numpy_labels(kind: str, n: int, r: random.Random):
    import numpy as np

    g = np.random.default_rng(r.randrange(2**32))
    if kind == "y_str":
        return np.array([r.choice(["cat", "dog"]) for _ in range(n)])
    if kind == "y_float_nan":
        y = g.integers(0, 3, n).astype(float)
        y[: max(1, n // 5)] = np.nan
        return y
    if kind == "y_object":
        return np.array([r.choice([0, "a", None]) for _ in range(n)], dtype=object)
    if kind == "y_zero":
        return np.zeros((0,), dtype=np.int64)
    if kind == "y_len_mismatch":
        return g.integers(0, 2, n + 3)
    if kind == "y_2d":
        return g.integers(0, 2, (n, 2))
    if kind == "y_bool":
        return g.random(n) < 0.5
    if kind == "y_datetime":
        return np.arange(n).astype("datetime64[D]")
    if kind == "y_one_class":
        return np.ones(n, dtype=np.int64)
    return g.integers(0, 3, n)


def _build_numpy(variant: str, folder: Path, rng: random.Random, seeds: Path) -> Spec:
    import numpy as np

    container, kind = variant.split(":")
    tail = ["--format", "json", "--no-baselines", "--isolated"]
    if container == "npy":
        x = numpy_array(kind, rng)
        np.save(folder / "x.npy", x, allow_pickle=x.dtype.hasobject)
        return Spec(["audit", "x.npy", *tail], json=True)
    if kind.startswith("y_"):
        x = numpy_array("float32_nan", rng)
        arrays = {"x": x, "y": _numpy_labels(kind, len(x), rng)}
    elif kind == "no_arrays":
        arrays = {}
    elif kind == "three_arrays":
        x = numpy_array("images_nchw", rng)
        arrays = {"a": x, "b": x[:, 0], "c": _numpy_labels("", len(x), rng)}
    elif kind == "odd_keys":
        x = numpy_array("float64_inf", rng)
        arrays = {"../x": x, "y\u202e": _numpy_labels("", len(x), rng)}
    else:
        x = numpy_array(kind, rng)
        n = len(x) if x.ndim else 1
        arrays = {"x": x, "y": _numpy_labels("", n, rng)}
    pickled = any(a.dtype.hasobject for a in arrays.values())
    with open(folder / "d.npz", "wb") as fh:  # savez with allow_pickle for object arrays
        if pickled:
            np.savez(fh, allow_pickle=True, **arrays)
        else:
            (np.savez_compressed if rng.random() < 0.5 else np.savez)(fh, **arrays)
    argv = ["audit", "d.npz"]
    if rng.random() < 0.3:
        shutil.copy(folder / "d.npz", folder / "t.npz")
        argv += ["--test", "t.npz"]
    if "x" in arrays and "y" in arrays and rng.random() < 0.5:
        argv += ["--inputs", "x", "--target", "y"]
    return Spec([*argv, *tail], json=True)


# --- torch layouts ---------------------------------------------------------------------------

TORCH_VARIANTS = (
    "dense dict tuple list nested sparse_coo sparse_csr quantized complex meta bfloat16 "
    "float8 bool uint8_images zero_length scalar non_contiguous channels_last requires_grad "
    "nested_dict labels_float_nan labels_2d mismatch int64_extreme"
).split()


def _build_torch(variant: str, folder: Path, rng: random.Random, seeds: Path) -> Spec:
    import torch

    g = torch.Generator().manual_seed(rng.randrange(2**31))
    n = rng.choice([8, 32])
    x = torch.randn(n, 3, 4, 4, generator=g)
    y = torch.randint(0, 3, (n,), generator=g)
    v = variant
    if v == "dense":
        obj = x
    elif v == "dict":
        obj = {"inputs": x, "labels": y}
    elif v == "tuple":
        obj = (x, y)
    elif v == "list":
        obj = [x[i] for i in range(n)]
    elif v == "nested":
        obj = {
            "inputs": torch.nested.nested_tensor(
                [torch.randn(k + 1, 3, generator=g) for k in range(n)]
            ),
            "labels": y,
        }
    elif v == "sparse_coo":
        obj = {"inputs": x.reshape(n, -1).to_sparse(), "labels": y}
    elif v == "sparse_csr":
        obj = {"inputs": x.reshape(n, -1).to_sparse_csr(), "labels": y}
    elif v == "quantized":
        obj = {"inputs": torch.quantize_per_tensor(x, 0.1, 10, torch.quint8), "labels": y}
    elif v == "complex":
        obj = {"inputs": torch.complex(x, x), "labels": y}
    elif v == "meta":
        obj = {"inputs": torch.empty(n, 3, device="meta"), "labels": y}
    elif v == "bfloat16":
        obj = {"inputs": x.to(torch.bfloat16), "labels": y}
    elif v == "float8":
        dtype = getattr(torch, "float8_e4m3fn", torch.float16)
        obj = {"inputs": x.to(dtype), "labels": y}
    elif v == "bool":
        obj = {"inputs": x > 0, "labels": y}
    elif v == "uint8_images":
        obj = {"inputs": (x.abs() * 60).clamp(0, 255).to(torch.uint8), "labels": y}
    elif v == "zero_length":
        obj = {"inputs": torch.empty(0, 3, 4, 4), "labels": torch.empty(0, dtype=torch.long)}
    elif v == "scalar":
        obj = torch.tensor(1.5)
    elif v == "non_contiguous":
        obj = {"inputs": x.transpose(1, 3), "labels": y}
    elif v == "channels_last":
        obj = {"inputs": x.contiguous(memory_format=torch.channels_last), "labels": y}
    elif v == "requires_grad":
        obj = {"inputs": x.requires_grad_(True), "labels": y}
    elif v == "nested_dict":
        obj = {"batch": {"inputs": x, "labels": y}, "meta": {"n": n}}
    elif v == "labels_float_nan":
        obj = {"inputs": x, "labels": torch.where(y > 1, float("nan"), y.float())}
    elif v == "labels_2d":
        obj = {"inputs": x, "labels": torch.nn.functional.one_hot(y, 3)}
    elif v == "mismatch":
        obj = {"inputs": x, "labels": y[: n // 2]}
    elif v == "int64_extreme":
        obj = {"inputs": torch.full((n, 3), torch.iinfo(torch.int64).min), "labels": y}
    else:
        raise ValueError(v)
    try:
        torch.save(obj, folder / "data.pt")
    except Exception as exc:  # e.g. a meta tensor torch cannot serialise
        raise Unbuildable(f"torch.save: {type(exc).__name__}: {exc}") from None
    argv = ["audit", "data.pt"]
    if rng.random() < 0.3:
        shutil.copy(folder / "data.pt", folder / "test.pt")
        argv += ["--test", "test.pt"]
    return Spec([*argv, "--format", "json", "--no-baselines", "--isolated"], json=True)


# --- nesting depth -------------------------------------------------------------------------

DEPTHS = (16, 200, 1500, 20000, 200000)
DEPTH_VARIANTS = tuple(
    f"{what}:{d}"
    for d in DEPTHS
    for what in (
        "diff-old-list",
        "diff-new-dict",
        "diff-finding-deep",
        "config-array",
        "config-table",
        "curves-line",
        "curves-field",
        "journal-json",
        "journal-toml",
        "journal-yaml",
    )
) + ("diff-dev-zero:0", "curves-dev-zero:0", "journal-yaml-laughs:9", "journal-yaml-tag:0")


def _deep_json(depth: int, kind: str = "list") -> str:
    if kind == "list":
        return "[" * depth + "1" + "]" * depth
    return '{"a":' * depth + "1" + "}" * depth


def _build_depth(variant: str, folder: Path, rng: random.Random, seeds: Path) -> Spec:
    what, d = variant.split(":")
    depth = int(d)
    if what == "diff-old-list":
        (folder / "old.json").write_text(_deep_json(depth))
        (folder / "new.json").write_text(_report(1))
        return Spec(["diff", "old.json", "new.json", "--format", "json"], json=True)
    if what == "diff-new-dict":
        (folder / "old.json").write_text(_report(1))
        (folder / "new.json").write_text(_deep_json(depth, "dict"))
        return Spec(["diff", "old.json", "new.json"])
    if what == "diff-finding-deep":
        (folder / "old.json").write_text(_report(1))
        text = _report(2).replace('"message": "finding 1"', '"message": ' + _deep_json(depth))
        (folder / "new.json").write_text(text)
        return Spec(["diff", "old.json", "new.json", "--format", "json"], json=True)
    if what == "diff-dev-zero":
        (folder / "new.json").write_text(_report(1))
        return Spec(["diff", "/dev/zero", "new.json"])
    if what == "curves-dev-zero":
        return Spec(["curves", "/dev/zero", "--format", "json"], json=True)
    if what in ("config-array", "config-table"):
        _good_train(folder)
        if what == "config-array":
            body = "[tool.datavet]\nselect = " + "[" * depth + '"V"' + "]" * depth + "\n"
        else:
            body = "[tool.datavet]\nthresholds = " + "{a = " * depth + "1" + "}" * depth + "\n"
        (folder / "pyproject.toml").write_text(body)
        argv = ["audit", "good_train.csv", "--format", "json", "--no-baselines"]
        if rng.random() < 0.5:
            argv += ["--config", "pyproject.toml"]
        return Spec(argv, json=True)
    if what in ("curves-line", "curves-field"):
        rows = _log_rows(30)
        lines = [json.dumps(r) for r in rows]
        at = rng.randrange(len(lines))
        if what == "curves-line":
            lines[at] = _deep_json(depth, rng.choice(["list", "dict"]))
        else:
            lines[at] = lines[at][:-1] + ', "extra": ' + _deep_json(depth) + "}"
        (folder / "log.jsonl").write_text("\n".join(lines) + "\n")
        return Spec(["curves", "log.jsonl", "--format", "json"], json=True)
    # journal --config-diff OLD NEW: the journal file is the declared output
    outputs = ("journal.jsonl", "journal.md", "journal.jsonl.lock")
    common = ["journal", "add", "--journal", "journal.jsonl", "--hypothesis", "h"]
    if what == "journal-json":
        (folder / "old.json").write_text(_deep_json(depth, rng.choice(["list", "dict"])))
        (folder / "new.json").write_text('{"lr": 0.1}')
        return Spec([*common, "--config-diff", "old.json", "new.json"], outputs=outputs)
    if what == "journal-toml":
        (folder / "old.toml").write_text("x = " + "[" * depth + "1" + "]" * depth + "\n")
        (folder / "new.toml").write_text("x = 1\n")
        return Spec([*common, "--config-diff", "old.toml", "new.toml"], outputs=outputs)
    if what == "journal-yaml":
        (folder / "old.yaml").write_text("x: " + "[" * depth + "1" + "]" * depth + "\n")
        (folder / "new.yaml").write_text("x: 1\n")
        return Spec([*common, "--config-diff", "old.yaml", "new.yaml"], outputs=outputs)
    if what == "journal-yaml-laughs":
        lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
        for i in range(1, depth + 1):
            lines.append(f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 9) + "]")
        (folder / "old.yaml").write_text("\n".join(lines) + "\n")
        (folder / "new.yaml").write_text("x: 1\n")
        return Spec([*common, "--config-diff", "old.yaml", "new.yaml"], outputs=outputs)
    if what == "journal-yaml-tag":
        (folder / "old.yaml").write_text("x: !!python/object/apply:os.system ['true']\n")
        (folder / "new.yaml").write_text("x: 1\n")
        return Spec([*common, "--config-diff", "old.yaml", "new.yaml"], outputs=outputs)
    raise ValueError(variant)


# --- outputs aimed at inputs -----------------------------------------------------------------

# command:option:input  (the input is what the output path names, through a path style)
_OUTPUT_TARGETS = (
    "audit:--output:train",
    "audit:--html:train",
    "audit:--output:test",
    "audit:--html:test",
    "audit:--output:config",
    "audit:--html:config",
    "audit:--output:parquet-dir",
    "audit:GITHUB_STEP_SUMMARY:train",
    "audit:GITHUB_STEP_SUMMARY:config",
    "check:--output:file",
    "check:--html:file",
    "diff:--output:old",
    "diff:--output:new",
    "render:--output:report",
    "render:--html:report",
    "curves:--output:log",
    "curves:--html:log",
    "probe:--output:model",
    "probe:--html:model",
    "preflight:--output:model",
    "preflight:--html:model",
    "preflight:--output:train",
    "preflight:--html:train",
    "journal:--journal:data",
    "journal:--journal:config-old",
    "journal:--journal:config-new",
    "journal:--journal:run-log",
    "journal:--journal:text",
)
PATH_STYLES = ("same", "symlink", "hardlink", "dotdot", "absolute")
OUTPUT_VARIANTS = tuple(
    f"{t}:{style}"
    for style in PATH_STYLES
    for t in _OUTPUT_TARGETS
    if torch_available() or not t.startswith(("probe", "preflight"))
)

MODEL_PY = """import torch


def factory():
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 3)
    batch = (torch.randn(8, 4), torch.randint(0, 3, (8,)))
    return model, batch, torch.nn.CrossEntropyLoss()
"""


def _styled(path: str, style: str, folder: Path) -> str:
    """A path naming ``path`` (relative to ``folder``) in ``style``."""
    if style == "same":
        return path
    if style == "symlink":
        link = f"link-{Path(path).name}"
        (folder / link).symlink_to(path)
        return link
    if style == "hardlink":
        if (folder / path).is_dir():
            return path
        link = f"hard-{Path(path).name}"
        os.link(folder / path, folder / link)
        return link
    if style == "dotdot":
        (folder / "sub").mkdir(exist_ok=True)
        return f"sub/../{path}"
    if style == "absolute":
        return str((folder / path).resolve())
    raise ValueError(style)


def _build_outputs(variant: str, folder: Path, rng: random.Random, seeds: Path) -> Spec:
    import pyarrow.parquet as pq

    command, option, target, style = variant.split(":")
    frame = _seed_frame(60)
    group = f"{command} {option} onto {target}"
    env: dict = {}
    if command in ("audit", "check"):
        frame.iloc[:40].to_csv(folder / "train.csv", index=False)
        frame.iloc[40:].to_csv(folder / "test.csv", index=False)
        (folder / "datavet.toml").write_text(CONFIG_TOML.replace("[tool.datavet", "[datavet"))
        if command == "check":
            inputs = {"file": "train.csv"}
            argv = ["check", "train.csv"]
        elif target == "parquet-dir":
            (folder / "data").mkdir()
            pq.write_table(
                __import__("pyarrow").Table.from_pandas(frame, preserve_index=False),
                folder / "data" / "part-0.parquet",
            )
            inputs = {"parquet-dir": "data"}
            argv = ["audit", "data"]
        else:
            inputs = {"train": "train.csv", "test": "test.csv", "config": "datavet.toml"}
            argv = ["audit", "train.csv", "--test", "test.csv", "--config", "datavet.toml"]
        argv += ["--no-baselines"]
        named = inputs[target]
        if target == "parquet-dir":
            out = _styled(named, style, folder) + "/report.json"
        else:
            out = _styled(named, style, folder)
        if option == "GITHUB_STEP_SUMMARY":
            env["GITHUB_STEP_SUMMARY"] = out
            argv += ["--format", "github"]
        else:
            argv += [option, out]
        return Spec(argv, refuse=True, env=env, group=group)
    if command == "diff":
        (folder / "old.json").write_text(_report(1))
        (folder / "new.json").write_text(_report(2))
        out = _styled(f"{target}.json", style, folder)
        return Spec(["diff", "old.json", "new.json", "--output", out], refuse=True, group=group)
    if command == "render":
        (folder / "report.json").write_text(_report(1))
        out = _styled("report.json", style, folder)
        return Spec(
            ["render", "report.json", "--format", "sarif", option, out], refuse=True, group=group
        )
    if command == "curves":
        rows = _log_rows()
        (folder / "log.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
        out = _styled("log.jsonl", style, folder)
        return Spec(["curves", "log.jsonl", option, out], refuse=True, group=group)
    if command == "probe":
        (folder / "model.py").write_text(MODEL_PY)
        out = _styled("model.py", style, folder)
        argv = ["probe", "model.py:factory", "--select", "M001", "--steps", "1", option, out]
        return Spec(argv, refuse=True, group=group)
    if command == "preflight":
        (folder / "model.py").write_text(MODEL_PY)
        frame.to_csv(folder / "train.csv", index=False)
        out = _styled("model.py" if target == "model" else "train.csv", style, folder)
        argv = ["preflight", "model.py:factory", "--train", "train.csv", option, out]
        return Spec(argv, refuse=True, group=group)
    if command == "journal":
        frame.to_csv(folder / "data.csv", index=False)
        (folder / "old.toml").write_text("lr = 0.1\nbatch = 32\n")
        (folder / "new.toml").write_text("lr = 0.01\nbatch = 32\n")
        rows = _log_rows(10)
        (folder / "run.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
        (folder / "notes.txt").write_text("my notes, not a journal\n")
        named = {
            "data": "data.csv",
            "config-old": "old.toml",
            "config-new": "new.toml",
            "run-log": "run.jsonl",
            "text": "notes.txt",
        }[target]
        out = _styled(named, style, folder)
        argv = ["journal", "add", "--journal", out, "--hypothesis", "lr too high"]
        argv += ["--config-diff", "old.toml", "new.toml", "--run", "run.jsonl"]
        if target == "data":
            argv += ["--symptom", "loss NaN"]
        return Spec(argv, refuse=True, group=group)
    raise ValueError(variant)


# ---------------------------------------------------------------------------------------------
# results and the contract


@dataclass
class Result:
    case: Case
    outcome: str
    exit_code: int | None
    stderr: str  # the first lines of stderr (or the escaped exception, the crashed rules)
    seconds: float
    detail: str = ""  # what changed on disk, why unbuildable, the crashed rules
    group: str | None = None

    @property
    def ok(self) -> bool:
        return self.outcome in OK_OUTCOMES

    @property
    def first_line(self) -> str:
        return self.stderr.splitlines()[0] if self.stderr.strip() else ""

    def signature(self) -> str:
        """What makes two breaks the same problem: family, outcome and the message with paths,
        numbers and quoted values blanked (an ``outputs`` break: the command, option and input)."""
        if self.group:
            return f"{self.case.family} | {self.outcome} | {self.group}"
        text = self.detail if self.outcome in ("crashed-rule", "stray-file") else self.first_line
        if self.outcome == "exception" or not text:
            text = text or self.detail
        return f"{self.case.family} | {self.outcome} | {_normalise(text)}"

    def describe(self) -> str:
        return (
            f"{self.case.name}: {self.outcome} (exit {self.exit_code}, {self.seconds:.2f} s): "
            f"{(self.detail or self.first_line)[:300]!r}"
        )

    def to_dict(self) -> dict:
        out = asdict(self)
        out["case"] = asdict(self.case) | {"name": self.case.name}
        out["signature"] = self.signature()
        return out


def _normalise(line: str) -> str:
    line = line.replace(" (rerun with --verbose for the traceback)", "")
    # the type in an Arrow message is the case's variable, not the problem
    line = re.sub(r"input types \((?:[^()]|\([^()]*\))*\)", "input types (<types>)", line)
    line = re.sub(r"cast from \S+ to \S+", "cast from <type> to <type>", line)
    line = re.sub(r"(?<![\w.])(/|\./|[\w.-]+/)[^\s:;,'\")]*", "<path>", line)
    line = re.sub(
        r"\b[\w.-]+\.(csv|gz|parquet|arrow|feather|npy|npz|pt|json|jsonl|toml|yaml|txt|html|py)\b",
        "<file>",
        line,
    )
    # quoted values are the case's; a quoted identifier (a function, a variable) is the problem's
    line = re.sub(r"'(?![A-Za-z_]\w*')[^']{0,80}'|\"(?![A-Za-z_]\w*\")[^\"]{0,80}\"", "<q>", line)
    line = re.sub(r"0x[0-9a-fA-F]+|\d+(\.\d+)?", "N", line)
    return line[:200]


def classify(code, stdout: str, stderr: str, *, spec: Spec, changed: list[str]) -> tuple[str, str]:
    """(outcome, detail) of one finished case (see the module docstring)."""
    if spec.refuse:
        if changed:
            return "input-modified", "changed: " + ", ".join(changed)
        if code != 2:
            return "not-refused", f"exit {code}"
    elif changed:
        return "stray-file", "changed: " + ", ".join(sorted(changed))
    if "Traceback (most recent call last)" in stderr:
        return "traceback", ""
    if code not in (0, 1, 2):
        return "other-exit", f"exit {code!r}"
    lines = stderr.splitlines()
    crashed = _crashed(stdout)
    if crashed:
        return "crashed-rule", "crashed " + "; ".join(crashed)
    if code == 2:
        if len(lines) == 1 and lines[0].startswith("datavet: internal error:"):
            return "internal-error", ""
        if len(lines) != 1 or not lines[0].startswith("datavet: error:") or stdout.strip():
            return "exit2-bad-stderr", f"{len(lines)} stderr lines, {len(stdout)} chars on stdout"
        return "exit2", ""
    if spec.json and stdout.strip():
        try:
            json.loads(stdout, parse_constant=_refuse_constant)
        except (ValueError, AssertionError) as exc:
            return "bad-json", str(exc)[:200]
    if re.search(r"\b\w*(Warning|Error)\b:", stderr) or any(
        not ln.startswith("datavet:") for ln in lines
    ):
        return "warning-leak", next((ln for ln in lines if not ln.startswith("datavet:")), "")
    return f"exit{code}", ""


def _refuse_constant(name: str):
    raise AssertionError(f"non-strict JSON constant {name}")


def _crashed(stdout: str) -> list[str]:
    if '"crashed"' not in stdout:
        return []
    try:
        payload = json.loads(stdout)
    except ValueError:
        return ["(unparsable report)"]
    found = []
    for report in payload if isinstance(payload, list) else [payload]:
        if not isinstance(report, dict):
            continue
        for o in report.get("outcomes") or []:
            if isinstance(o, dict) and o.get("status") == "crashed":
                reason = (o.get("reason") or "").strip().splitlines()
                found.append(f"{o.get('code')}: {reason[0] if reason else ''}"[:200])
    return found


# ---------------------------------------------------------------------------------------------
# the worker: one long-lived process, many cases in process


def _snapshot(folder: Path) -> dict[str, str]:
    """Every entry under ``folder``: a checksum of each file, the target of each link."""
    out = {}
    for root, dirs, files in os.walk(folder):
        for name in dirs + files:
            p = Path(root) / name
            rel = str(p.relative_to(folder))
            if p.is_symlink():
                out[rel] = "link:" + os.readlink(p)
            elif p.is_dir():
                out[rel] = "dir"
            elif p.is_file():
                h = hashlib.blake2b(digest_size=16)
                with open(p, "rb") as fh:
                    for chunk in iter(lambda: fh.read(1 << 20), b""):
                        h.update(chunk)
                st = p.stat()
                out[rel] = f"{h.hexdigest()}:{st.st_mode & 0o7777:o}"
            else:
                out[rel] = "special"
    return out


def _changes(before: dict, after: dict, allowed: Iterable[str]) -> list[str]:
    allowed = {os.path.normpath(a) for a in allowed}
    changed = []
    for rel in sorted(set(before) | set(after)):
        if before.get(rel) == after.get(rel) or os.path.normpath(rel) in allowed:
            continue
        what = "new" if rel not in before else "gone" if rel not in after else "modified"
        changed.append(f"{rel} ({what})")
    return changed


class _Captured:
    """Point file descriptors 1 and 2 (and sys.stdout/sys.stderr) at files for one case."""

    def __init__(self, folder: Path):
        self.out = open(folder / "stdout", "w+b")  # noqa: SIM115
        self.err = open(folder / "stderr", "w+b")  # noqa: SIM115

    def __enter__(self):
        sys.stdout.flush()
        sys.stderr.flush()
        self.saved = os.dup(1), os.dup(2)
        os.dup2(self.out.fileno(), 1)
        os.dup2(self.err.fileno(), 2)
        return self

    def __exit__(self, *exc):
        with contextlib.suppress(Exception):
            sys.stdout.flush()
        with contextlib.suppress(Exception):
            sys.stderr.flush()
        os.dup2(self.saved[0], 1)
        os.dup2(self.saved[1], 2)
        os.close(self.saved[0])
        os.close(self.saved[1])

    def read(self, limit: int = 4 << 20) -> tuple[str, str]:
        values = []
        for fh in (self.out, self.err):
            fh.seek(0)
            values.append(fh.read(limit).decode("utf-8", "replace"))
            fh.close()
        return values[0], values[1]


def run_in_process(case: Case, folder: Path, seeds: Path, scratch: Path) -> Result:
    """Build ``case`` in ``folder`` and run it in this process (the worker's body)."""
    import warnings

    from datavet.cli import main

    started = time.perf_counter()
    try:
        spec = build(case, folder, seeds)
    except Unbuildable as exc:
        return Result(case, "unbuildable", None, "", 0.0, detail=str(exc)[:300])
    before = _snapshot(folder)
    saved_env = {k: os.environ.get(k) for k in spec.env}
    os.environ.update(spec.env)
    cwd = os.getcwd()
    os.chdir(folder)
    warnings.filters[:] = _WARNING_FILTERS
    warnings._filters_mutated()  # forget which warnings were shown: each case is a fresh run
    escaped = None
    started = time.perf_counter()
    capture = _Captured(scratch)
    with capture:
        try:
            code = main(list(spec.argv))
        except SystemExit as exc:  # argparse
            code = exc.code if isinstance(exc.code, int) else 2
        except BaseException as exc:  # noqa: BLE001 -- anything escaping main is the break
            code = None
            escaped = f"{type(exc).__name__}: {exc}"[:500]
    seconds = time.perf_counter() - started
    os.chdir(cwd)
    for k, v in saved_env.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v
    stdout, stderr = capture.read()
    after = _snapshot(folder)
    changed = _changes(before, after, () if spec.refuse else spec.outputs)
    if escaped is not None:
        return Result(case, "exception", None, stderr[:2000], seconds, escaped, spec.group)
    outcome, detail = classify(code, stdout, stderr, spec=spec, changed=changed)
    kept = stderr[:2000] if outcome not in OK_OUTCOMES else stderr[:300]
    return Result(case, outcome, code, kept, seconds, detail, spec.group)


_WARNING_FILTERS: list = []


def worker_main(root: str, req_fd: int, resp_fd: int) -> None:
    """Read cases (JSON lines) from ``req_fd``, answer results (JSON lines) on ``resp_fd``."""
    import warnings

    root_path = Path(root)
    scratch = root_path / f"w{os.getpid()}"
    scratch.mkdir(parents=True, exist_ok=True)
    seeds = root_path / "seeds"
    import numpy  # noqa: F401
    import pandas  # noqa: F401
    import pyarrow.parquet  # noqa: F401

    import datavet.api  # noqa: F401 -- import once: the point of a worker
    import datavet.cli  # noqa: F401

    make_seeds(seeds)
    _WARNING_FILTERS[:] = list(warnings.filters)
    requests = os.fdopen(req_fd, "r", encoding="utf-8")
    responses = os.fdopen(resp_fd, "w", encoding="utf-8")
    responses.write("ready\n")
    responses.flush()
    for n, line in enumerate(requests):
        case = Case(**json.loads(line))
        folder = scratch / f"case{n}"
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir()
        try:
            result = run_in_process(case, folder, seeds, scratch)
        except BaseException as exc:  # noqa: BLE001 -- a fuzzer bug, reported as such
            result = Result(
                case, "exception", None, "", 0.0, f"harness: {type(exc).__name__}: {exc}"
            )
        shutil.rmtree(folder, ignore_errors=True)
        responses.write(json.dumps(result.to_dict()) + "\n")
        responses.flush()


# ---------------------------------------------------------------------------------------------
# the pool: workers started, fed, killed on a hang, replaced on a death


def worker_env() -> dict:
    """The worker imports the same datavet as this process, whatever the working directory."""
    import importlib.util

    env = dict(os.environ)
    spec = importlib.util.find_spec("datavet")
    if spec and spec.origin:
        src = str(Path(spec.origin).resolve().parents[1])
        env["PYTHONPATH"] = os.pathsep.join(p for p in (src, env.get("PYTHONPATH", "")) if p)
    for k in (
        "GITHUB_ACTIONS",
        "GITHUB_STEP_SUMMARY",
        "DATAVET_JOURNAL",
        "NO_COLOR",
        "FORCE_COLOR",
    ):
        env.pop(k, None)
    env["PYTHONHASHSEED"] = "0"
    env["PYTHONIOENCODING"] = "utf-8"
    env.setdefault("OMP_NUM_THREADS", "1")
    env.setdefault("OPENBLAS_NUM_THREADS", "1")
    env.setdefault("MKL_NUM_THREADS", "1")
    return env


class _Worker:
    def __init__(self, root: Path, memory_bytes: int | None):
        req_r, self.req_w = os.pipe()
        self.resp_r, resp_w = os.pipe()

        def limit() -> None:
            if memory_bytes:
                import resource

                resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))

        self.log = open(root / f"worker-{time.monotonic_ns()}.log", "wb")  # noqa: SIM115
        self.proc = subprocess.Popen(
            [sys.executable, str(THIS), "--worker", str(root), str(req_r), str(resp_w)],
            pass_fds=(req_r, resp_w),
            stdin=subprocess.DEVNULL,
            stdout=self.log,
            stderr=self.log,
            env=worker_env(),
            start_new_session=True,
            preexec_fn=limit,
        )
        os.close(req_r)
        os.close(resp_w)
        self.buffer = b""
        self.ready = False
        self.case: Case | None = None
        self.deadline = time.perf_counter() + STARTUP_TIMEOUT
        self.started = 0.0
        self.scratch = root / f"w{self.proc.pid}"

    def send(self, case: Case, timeout: float) -> None:
        self.case = case
        self.started = time.perf_counter()
        self.deadline = self.started + timeout
        os.write(self.req_w, (json.dumps(asdict(case)) + "\n").encode())

    def kill(self) -> int | None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        code = self.proc.wait()
        for fd in (self.req_w, self.resp_r):
            with contextlib.suppress(OSError):
                os.close(fd)
        self.log.close()
        return code

    def last_stderr(self) -> str:
        with contextlib.suppress(OSError):
            return (self.scratch / "stderr").read_bytes()[-4000:].decode("utf-8", "replace")
        return ""


class Pool:
    """``jobs`` worker processes under ``root``; ``run(cases)`` yields Results as they finish."""

    def __init__(
        self,
        root: str | os.PathLike,
        *,
        jobs: int = 2,
        timeout: float = DEFAULT_TIMEOUT,
        memory_bytes: int | None = DEFAULT_MEMORY,
    ):
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        make_seeds(self.root / "seeds")  # once, before the workers read them
        self.jobs = max(1, jobs)
        self.timeout = timeout
        self.memory_bytes = memory_bytes
        self.workers: list[_Worker] = []
        self.replaced = 0

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self) -> None:
        for w in self.workers:
            w.kill()
        self.workers = []

    def _spawn(self) -> _Worker:
        w = _Worker(self.root, self.memory_bytes)
        self.workers.append(w)
        return w

    def _retire(self, w: _Worker, case: Case, outcome: str, code, detail: str) -> Result:
        stderr = w.last_stderr()
        seconds = time.perf_counter() - w.started
        w.kill()
        self.workers.remove(w)
        self.replaced += 1
        shutil.rmtree(w.scratch, ignore_errors=True)
        return Result(case, outcome, code, stderr, seconds, detail)

    def run(self, cases: Iterable[Case]):
        pending = iter(cases)
        exhausted = False
        while True:
            while not exhausted and len(self.workers) < self.jobs:
                self._spawn()
            idle = [w for w in self.workers if w.ready and w.case is None]
            for w in idle:
                case = next(pending, None)
                if case is None:
                    exhausted = True
                    break
                w.send(case, self.timeout)
            busy = [w for w in self.workers if w.case is not None or not w.ready]
            if exhausted and not any(w.case is not None for w in busy):
                return
            now = time.perf_counter()
            wait = max(0.0, min(w.deadline for w in busy) - now)
            ready, _, _ = select.select([w.resp_r for w in busy], [], [], wait)
            for w in busy:
                if w.resp_r in ready:
                    chunk = os.read(w.resp_r, 1 << 20)
                    if not chunk:  # the worker died mid-case (or while starting)
                        case = w.case
                        if case is None:
                            raise RuntimeError(f"a fuzz worker could not start: see {w.log.name}")
                        code = w.proc.wait()
                        detail = (
                            f"worker killed by signal {-code} ({signal.Signals(-code).name})"
                            if code < 0
                            else f"worker exited {code}"
                        )
                        yield self._retire(w, case, "died", code, detail)
                        continue
                    w.buffer += chunk
                    while b"\n" in w.buffer:
                        line, w.buffer = w.buffer.split(b"\n", 1)
                        if line == b"ready":
                            w.ready = True
                            continue
                        w.case = None
                        yield _result_from(json.loads(line))
                elif time.perf_counter() > w.deadline:
                    if w.case is None:
                        raise RuntimeError(f"a fuzz worker did not start: see {w.log.name}")
                    yield self._retire(
                        w, w.case, "timeout", None, f"no answer within {self.timeout:.0f} s"
                    )


def _result_from(d: dict) -> Result:
    c = d.pop("case")
    d.pop("signature", None)
    return Result(case=Case(c["family"], c["variant"], c["seed"]), **d)


# ---------------------------------------------------------------------------------------------
# running a plan, grouping breaks, saving reproducers


def fuzz(
    cases: list[Case],
    *,
    workdir: str | os.PathLike | None = None,
    jobs: int = 2,
    timeout: float = DEFAULT_TIMEOUT,
    memory_bytes: int | None = DEFAULT_MEMORY,
    on_result: Callable[[Result], None] | None = None,
) -> list[Result]:
    """Run ``cases`` on a pool of ``jobs`` workers; results in case order."""
    own = None
    if workdir is None:
        own = tempfile.TemporaryDirectory(prefix="datavet-fuzz-")
        workdir = own.name
    try:
        order = {c: i for i, c in enumerate(cases)}
        results: list[Result | None] = [None] * len(cases)
        with Pool(workdir, jobs=jobs, timeout=timeout, memory_bytes=memory_bytes) as pool:
            for r in pool.run(cases):
                results[order[r.case]] = r
                if on_result is not None:
                    on_result(r)
        return [r for r in results if r is not None]
    finally:
        if own is not None:
            own.cleanup()


def group_breaks(results: Iterable[Result]) -> dict[str, list[Result]]:
    """Breaks grouped by distinct problem (``Result.signature``), most frequent first."""
    groups: dict[str, list[Result]] = {}
    for r in results:
        if not r.ok:
            groups.setdefault(r.signature(), []).append(r)
    return dict(sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])))


def save_reproducer(result: Result, folder: str | os.PathLike, seeds: str | os.PathLike) -> Path:
    """Rebuild ``result``'s case in ``folder``/<case name> with a ``repro.sh`` that runs it."""
    target = Path(folder) / result.case.name
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    try:
        spec = build(result.case, target, seeds)
    except Exception as exc:  # noqa: BLE001
        (target / "README.txt").write_text(f"could not rebuild: {exc}\n")
        return target
    import shlex

    env = " ".join(f"{k}={shlex.quote(v)}" for k, v in spec.env.items())
    argv = " ".join(shlex.quote(a) for a in spec.argv)
    (target / "repro.sh").write_text(
        "#!/bin/sh\n# datavet fuzz reproducer: run from this folder (changes files here)\n"
        f"# case: {json.dumps(asdict(result.case))}\n"
        f"# outcome: {result.outcome}: {(result.detail or result.first_line)[:500]}\n"
        f'cd "$(dirname "$0")" && {env + " " if env else ""}python -m datavet {argv}\n'
    )
    (target / "repro.sh").chmod(0o755)
    (target / "stderr.txt").write_text(result.stderr)
    return target


def summarize(results: list[Result]) -> dict:
    per_outcome = Counter(r.outcome for r in results)
    per_family: dict[str, Counter] = {}
    for r in results:
        per_family.setdefault(r.case.family, Counter())[r.outcome] += 1
    return {
        "cases": len(results),
        "outcomes": dict(sorted(per_outcome.items())),
        "families": {f: dict(sorted(c.items())) for f, c in sorted(per_family.items())},
        "breaks": sum(not r.ok for r in results),
        "distinct": len(group_breaks(results)),
    }


if __name__ == "__main__" and len(sys.argv) == 5 and sys.argv[1] == "--worker":
    worker_main(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
