"""datavet side by side with the floor script and its peers, on the same planted Parquet files.

One run generates, for each size, a train file of N rows and a test file of N/5 rows (20 numeric
features, two string categorical features, an integer label; Parquet, row groups of 65,536 rows,
written chunk by chunk so that 10M rows never sit in memory), plants seven problems in them, and
measures in fresh processes:

- floor: pyarrow read + the minimal numpy/pandas pass every auditor must do (NaN/inf counts,
  moments, label counts per position bin, row hashes, ``isin`` for overlap). Finds nothing by
  itself: it is the time and memory yardstick.
- datavet scan: ``datavet.audit(train, test, target="label", baselines=False,
  select=<every non-B rule>)``: the one streaming pass and the auditors, no baselines.
- datavet full: ``datavet.audit(train, test, target="label")``, baselines included.
- with ``--peers`` (100k and 1M rows only): ydata-profiling (profile train and test, compare,
  write the HTML) and Deepchecks (data_integrity + train_test_validation suites on train/test,
  save both HTML reports), each in a venv of its own under /tmp/bench-venvs, created on first use.

Wall time is measured around the child process (interpreter start and imports included); peak RSS
is the child's ``ru_maxrss`` from ``os.wait4``. Each tool's findings are mapped to the planted
problems (datavet: rule code and column; peers: their own result objects, see ``PEER_RULES``).
The results are printed and written to bench/RESULTS.md.

    python bench/bench_compare.py                         # 100k, 1M, 10M rows; no peers
    python bench/bench_compare.py --peers                 # + ydata-profiling and Deepchecks
    python bench/bench_compare.py --rows 100000 --repeat 5 --output /tmp/r.md
    python bench/bench_compare.py --data-dir /tmp/bench_data --reuse-peers bench/RESULTS.md

``--data-dir`` keeps the generated files (and reuses them on the next run: the 10M files take
about two minutes to write); ``--reuse-peers`` copies the peers' rows from an earlier
RESULTS.md instead of running them again (half an hour), and the new RESULTS.md says so.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

HERE = Path(__file__).resolve().parent
ROW_GROUP = 65_536
CHUNK = 1_000_000  # rows generated and written at a time
N_FEATURES = 20
CATS = {
    "color": ["red", "green", "blue", "black", "white"],
    "region": [f"r{i:02d}" for i in range(12)],
}
PEER_MAX_ROWS = 1_000_000  # ydata-profiling and Deepchecks take hours at 10M rows
FLOOR_MAX_ROWS = 10_000_000  # the floor loads the whole table: 7.5 GB of RAM at 10M rows

# The planted problems, in report order: key -> (datavet rule, column it must name, description).
ISSUES = {
    "nan": ("V001", "f1", "NaN in `f1` (0.05% of rows, both splits)"),
    "inf": ("V002", "f2", "+inf/-inf in `f2` (0.01% of rows, both splits)"),
    "constant": ("F001", "f3", "`f3` constant (7.0)"),
    "scale": ("F003", "f5", "`f5` at 300x the scale of the other features (std 300 vs 1)"),
    "imbalance": ("L001", "label", "class 1 of `label` is ~3% of rows"),
    "overlap": ("S001", None, "150 test rows are exact copies of train rows"),
    "drift": ("L002", "label", "first 2% of train rows are 50% class 1 (3% in the rest)"),
}


# --------------------------------------------------------------------------------------------
# Planted data, generated and written chunk by chunk


def _chunk_arrays(rng, n, start, *, drift_rows):
    """Features, categorical codes and labels of rows [start, start + n)."""
    x = rng.standard_normal((n, N_FEATURES))
    pos = np.arange(start, start + n)
    rate = np.where(pos < drift_rows, 0.5, 0.03)
    y = (rng.random(n) < rate).astype(np.int64)
    x[:, 0] += 1.5 * y  # some real signal, so the baselines have something to find
    x[:, 4] -= 1.0 * y
    x[:, 3] = 7.0  # constant
    x[:, 5] *= 300.0  # 300x the scale of the others
    cats = np.stack(
        [rng.integers(0, len(CATS["color"]), n), _skewed(rng, n, len(CATS["region"]))], axis=1
    )
    return x, cats, y


def _skewed(rng, n, k):
    p = 1.0 / np.arange(1, k + 1)
    return rng.choice(k, size=n, p=p / p.sum())


def _table(x, cats, y):
    cols = {f"f{i}": pa.array(x[:, i]) for i in range(N_FEATURES)}
    for j, (name, values) in enumerate(CATS.items()):
        cols[name] = pa.array(np.asarray(values)[cats[:, j]])
    cols["label"] = pa.array(y)
    return pa.table(cols)


def _plant_nonfinite(start, n, x, nan_rows, inf_rows):
    lo, hi = start, start + n
    r = nan_rows[(nan_rows >= lo) & (nan_rows < hi)] - lo
    x[r, 1] = np.nan
    r = inf_rows[(inf_rows >= lo) & (inf_rows < hi)] - lo
    x[r, 2] = np.where(np.arange(len(r)) % 2 == 0, np.inf, -np.inf)


def make_data(rows: int, folder: Path, seed: int = 0) -> tuple[Path, Path, dict]:
    """Write train (``rows``) and test (``rows // 5``) Parquet files with every planted problem."""
    n_test = rows // 5
    master = np.random.default_rng([seed, rows])
    drift_rows = rows // 50
    plan = {}
    for split, n in (("train", rows), ("test", n_test)):
        plan[split] = (
            np.sort(master.choice(n, max(20, n // 2000), replace=False)),  # NaN rows in f1
            np.sort(master.choice(n, max(10, n // 10000), replace=False)),  # inf rows in f2
        )
    # 150 train rows (none of them a planted NaN/inf row) copied over 150 test rows (none of
    # them planted either), so every planted count stays exact.
    bad = np.union1d(*plan["train"])
    src = np.sort(np.setdiff1d(master.choice(rows, 400, replace=False), bad)[:150])
    test_ok = np.setdiff1d(np.arange(n_test), np.union1d(*plan["test"]))
    dest = master.choice(test_ok, len(src), replace=False)
    copied = {"x": [], "cats": [], "y": []}
    paths = {}
    for split, n in (("train", rows), ("test", n_test)):
        path = folder / f"{split}_{rows}.parquet"
        writer = None
        for k, start in enumerate(range(0, n, CHUNK)):
            m = min(CHUNK, n - start)
            rng = np.random.default_rng([seed, rows, 0 if split == "train" else 1, k])
            x, cats, y = _chunk_arrays(
                rng, m, start, drift_rows=drift_rows if split == "train" else 0
            )
            _plant_nonfinite(start, m, x, *plan[split])
            if split == "train":
                r = src[(src >= start) & (src < start + m)] - start
                copied["x"].append(x[r].copy())
                copied["cats"].append(cats[r].copy())
                copied["y"].append(y[r].copy())
            else:
                if k == 0:
                    cx, cc, cy = (np.concatenate(copied[key]) for key in ("x", "cats", "y"))
                sel = (dest >= start) & (dest < start + m)
                r = dest[sel] - start
                x[r], cats[r], y[r] = cx[sel], cc[sel], cy[sel]
            table = _table(x, cats, y)
            if writer is None:
                writer = pq.ParquetWriter(path, table.schema)
            writer.write_table(table, row_group_size=ROW_GROUP)
            del x, cats, y, table
        writer.close()
        paths[split] = path
    meta = {
        "train_rows": rows,
        "test_rows": n_test,
        "nan": {s: int(len(plan[s][0])) for s in plan},
        "inf": {s: int(len(plan[s][1])) for s in plan},
        "copied_rows": int(len(src)),
        "drift_rows": drift_rows,
        "train_bytes": paths["train"].stat().st_size,
        "test_bytes": paths["test"].stat().st_size,
    }
    return paths["train"], paths["test"], meta


# --------------------------------------------------------------------------------------------
# The children: each prints one JSON line on stdout


FLOOR = r"""
import json, sys
import numpy as np, pandas as pd, pyarrow.parquet as pq
hashes, out = {}, {}
for split, path in (("train", sys.argv[1]), ("test", sys.argv[2])):
    df = pq.read_table(path).to_pandas()
    num = [c for c in df.columns if c != "label" and df[c].dtype.kind == "f"]
    x = df[num].to_numpy(dtype=np.float64)
    nan = np.isnan(x).sum(0)
    inf = np.isinf(x).sum(0)
    fin = np.where(np.isfinite(x), x, np.nan)
    mean, std = np.nanmean(fin, 0), np.nanstd(fin, 0)
    del x, fin
    nulls = df[[c for c in df.columns if c not in num]].isna().sum()
    codes, classes = pd.factorize(df["label"])
    bins = np.arange(len(df)) * 1024 // len(df)  # label counts per position bin
    per_bin = np.bincount(bins * len(classes) + codes, minlength=1024 * len(classes))
    hashes[split] = pd.util.hash_pandas_object(df.drop(columns="label"), index=False)
    out[split] = {"nan": int(nan.sum()), "inf": int(inf.sum()), "classes": len(classes)}
    del df
out["overlap"] = int(hashes["test"].isin(hashes["train"]).sum())
print(json.dumps(out))
"""

DATAVET = r"""
import json, sys, time
import datavet
kw = {}
if sys.argv[3] == "scan":
    kw = dict(baselines=False, select=[r.code for r in datavet.RULES if not r.code.startswith("B")])
wall, cpu = time.perf_counter(), time.process_time()
report = datavet.audit(sys.argv[1], sys.argv[2], target="label", **kw)
wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
print(json.dumps({
    "module": datavet.__file__,
    "audit_wall": wall,
    "audit_cpu": cpu,
    "findings": [
        {"code": f.code, "split": f.split, "columns": list(f.columns), "n": f.n_affected,
         "message": f.message}
        for f in report.findings
    ],
    "not_passed": [
        {"code": o.code, "status": o.status.value, "reason": o.reason}
        for o in report.outcomes if o.status.value in ("skipped", "crashed")
    ],
}))
"""

YDATA = r"""
import json, sys, time, warnings
from importlib.metadata import version
warnings.filterwarnings("ignore")
import pandas as pd
from ydata_profiling import ProfileReport
train, test = pd.read_parquet(sys.argv[1]), pd.read_parquet(sys.argv[2])
reports = {"train": ProfileReport(train, title="train", progress_bar=False),
           "test": ProfileReport(test, title="test", progress_bar=False)}
desc = {split: r.get_description() for split, r in reports.items()}
compared = reports["train"].compare(reports["test"])
t = time.perf_counter()
compared.to_file(sys.argv[3] + "/ydata_compare.html")
t_html = time.perf_counter() - t
out = {"version": version("ydata-profiling"), "t_html": t_html, "alerts": [], "variables": {}}
for split, d in desc.items():
    for a in d.alerts:
        out["alerts"].append([split, a.alert_type.name, a.column_name])
    out["variables"][split] = {
        col: {"type": str(v.get("type")), "n_missing": float(v.get("n_missing", 0) or 0),
              "n_infinite": float(v.get("n_infinite", 0) or 0)}
        for col, v in d.variables.items()
    }
print(json.dumps(out))
"""

DEEPCHECKS = r"""
import json, sys, time, warnings
from importlib.metadata import version
warnings.filterwarnings("ignore")
import pandas as pd
from deepchecks.tabular import Dataset
from deepchecks.tabular.suites import data_integrity, train_test_validation
train, test = pd.read_parquet(sys.argv[1]), pd.read_parquet(sys.argv[2])
cat = [c for c in train.columns if c != "label" and train[c].dtype.kind not in "fiub"]
ds = {s: Dataset(df, label="label", cat_features=cat)
      for s, df in (("train", train), ("test", test))}
suites = {"data_integrity": data_integrity(), "train_test_validation": train_test_validation()}
results = {name: suite.run(train_dataset=ds["train"], test_dataset=ds["test"])
           for name, suite in suites.items()}
t = time.perf_counter()
for name, r in results.items():
    r.save_as_html(sys.argv[3] + f"/deepchecks_{name}.html")
t_html = time.perf_counter() - t
def _small(v):
    if isinstance(v, dict):
        return {str(k): _small(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_small(x) for x in v[:50]]
    return v[:200] if isinstance(v, str) else v
checks = []
for suite, r in results.items():
    for res in r.results:
        item = {"suite": suite, "header": res.get_header(), "conditions": [], "error": None,
                "value": None}
        if hasattr(res, "exception"):
            item["error"] = repr(res.exception)[:300]
        else:
            item["conditions"] = [
                {"category": c.category.name, "name": c.name, "details": c.details}
                for c in res.conditions_results
            ]
            item["value"] = _small(json.loads(json.dumps(res.value, default=str)))
        checks.append(item)
print(json.dumps({"version": version("deepchecks"), "t_html": t_html, "checks": checks},
                 default=str))
"""


# --------------------------------------------------------------------------------------------
# Running a child: wall time, peak RSS, stdout, with a timeout


@dataclass
class Run:
    wall: float
    rss_mb: float
    rc: int
    cpu: float = 0.0  # user + system seconds of the child
    timed_out: bool = False
    out: dict | None = None
    error: str | None = None


PYCACHE: Path | None = None  # where every child keeps its byte code (set by main)
WARMED: set[str] = set()  # the tools whose byte code is compiled (one untimed run each)


def child_env(extra: dict | None = None) -> dict[str, str]:
    """A child's environment: byte code cached in :data:`PYCACHE`, as after an install (with
    PYTHONDONTWRITEBYTECODE set, as on some CI machines, every run would compile datavet's
    modules again while NumPy's, pandas' and pyarrow's come compiled with their wheels)."""
    env = {**os.environ, "MPLBACKEND": "Agg", "TQDM_DISABLE": "1", **(extra or {})}
    if PYCACHE is not None:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(PYCACHE)
    return env


# The floor and datavet run with BLAS on one thread. NumPy's OpenBLAS starts a thread per core
# on import, and each spins about 0.1 s of CPU waiting for work that never comes: counted as a
# busy core, it would inflate both CPU / wall figures (the floor's from 1.0 to 1.2) with no work
# done. datavet's own fits run on one BLAS thread anyway (datavet._blas).
SIDE_BY_SIDE_ENV = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def side_by_side_env(args, name: str) -> dict[str, str]:
    """The environment of a floor or datavet run: one BLAS thread, datavet's ``--datavet-ref``."""
    env = dict(SIDE_BY_SIDE_ENV)
    if args.datavet_src and name != "floor":
        env["PYTHONPATH"] = args.datavet_src
    return env


def run_child(argv: list[str], timeout: float, log: Path, env: dict | None = None) -> Run:
    """Run ``argv`` in a fresh process; its stderr goes to ``log``, its stdout is one JSON line."""
    killed = threading.Event()

    with open(log, "w") as err:
        start = time.perf_counter()
        proc = subprocess.Popen(
            argv,
            stdout=subprocess.PIPE,
            stderr=err,
            text=True,
            start_new_session=True,
            env=child_env(env),
        )

        def kill():
            killed.set()
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

        timer = threading.Timer(timeout, kill)
        timer.start()
        stdout = proc.stdout.read()
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        timer.cancel()
    proc.returncode = os.waitstatus_to_exitcode(status)
    run = Run(
        wall=wall,
        rss_mb=usage.ru_maxrss / 1024,
        rc=proc.returncode,
        cpu=usage.ru_utime + usage.ru_stime,
    )
    if killed.is_set():
        run.timed_out = True
        run.error = f"> {timeout:.0f} s timeout"
        return run
    lines = [ln for ln in stdout.splitlines() if ln.startswith("{")]
    if proc.returncode != 0 or not lines:
        tail = log.read_text(errors="replace").strip().splitlines()[-3:]
        run.error = f"exit {proc.returncode}: " + " | ".join(tail)[-400:]
        return run
    run.out = json.loads(lines[-1])
    return run


# --------------------------------------------------------------------------------------------
# The peers' venvs

VENV_ROOT = Path("/tmp/bench-venvs")
PEERS = {
    # name: (pip requirements, import check, distribution whose version is reported)
    "ydata": (["ydata-profiling==4.18.4", "pyarrow"], "import ydata_profiling, pyarrow"),
    # Deepchecks 0.19.1 needs numpy 1 (np.Inf), scikit-learn < 1.9 (max_error scorer) and
    # plotly 5 (its HTML); pyarrow >= 20 needs numpy 2, so pyarrow is pinned below 20.
    "deepchecks": (
        [
            "deepchecks==0.19.1",
            "numpy<2",
            "pandas==2.2.3",
            "scikit-learn==1.6.1",
            "plotly==5.24.1",
            "pyarrow<20",
        ],
        "import deepchecks.tabular, pyarrow",
    ),
}


def ensure_venv(name: str) -> tuple[Path | None, str]:
    """The peer's python (created and installed on first use), or None and the reason."""
    reqs, check = PEERS[name]
    venv = VENV_ROOT / name
    python = venv / "bin" / "python"
    ok = (
        python.exists()
        and subprocess.run([python, "-c", check], capture_output=True, timeout=300).returncode == 0
    )
    if ok:
        return python, f"reused {venv}"
    VENV_ROOT.mkdir(parents=True, exist_ok=True)
    log = VENV_ROOT / f"{name}-install.log"
    print(f"  installing {name} into {venv} (log: {log}) ...", flush=True)
    started = time.perf_counter()
    with open(log, "w") as fh:
        if not python.exists():
            subprocess.run([sys.executable, "-m", "venv", venv], stdout=fh, stderr=fh, check=False)
        rc = (
            subprocess.run(
                [python, "-m", "pip", "install", "--quiet", *reqs],
                stdout=fh,
                stderr=fh,
                timeout=3600,
                check=False,
            ).returncode
            if python.exists()
            else 1
        )
    took = time.perf_counter() - started
    probe = (
        subprocess.run([python, "-c", check], capture_output=True, text=True)
        if python.exists()
        else None
    )
    if rc != 0 or probe is None or probe.returncode != 0:
        why = (probe.stderr.strip().splitlines() or ["?"])[-1] if probe else "venv not created"
        return None, f"install failed (pip exit {rc}; {why}); see {log}"
    return python, f"installed into {venv} in {took:.0f} s: pip install {' '.join(reqs)}"


# --------------------------------------------------------------------------------------------
# Which planted problems each tool found: "found" (flagged: a finding, an alert, a failed or
# warned condition), "shown" (the number is in the report but nothing flags it), "missed".

FOUND, SHOWN, MISSED = "found", "shown", "missed"


def detect_datavet(out: dict) -> tuple[dict, list[str]]:
    found = {}
    for key, (code, col, _) in ISSUES.items():
        hit = any(
            f["code"] == code and (col is None or col in f["columns"]) for f in out["findings"]
        )
        found[key] = FOUND if hit else MISSED
    planted = {code for code, _, _ in ISSUES.values()}
    other = sorted({f["code"] for f in out["findings"]} - planted)
    other += [
        f"{o['code']} CRASHED: {o['reason']}" for o in out["not_passed"] if o["status"] == "crashed"
    ]
    skipped = [o["code"] for o in out["not_passed"] if o["status"] == "skipped"]
    if skipped:
        other.append("skipped: " + ", ".join(skipped))
    return found, other


def detect_ydata(out: dict) -> tuple[dict, list[str]]:
    alerts = {(t, c) for _, t, c in out["alerts"]}
    var = out["variables"]

    def count(col, key):
        return sum(v.get(col, {}).get(key, 0) for v in var.values())

    def flag(alert, col, shown=False):
        return FOUND if (alert, col) in alerts else SHOWN if shown else MISSED

    found = {
        "nan": flag("MISSING", "f1", count("f1", "n_missing") > 0),
        "inf": flag("INFINITE", "f2", count("f2", "n_infinite") > 0),
        "constant": flag("CONSTANT", "f3"),
        # No alert compares scales across columns; any alert on f5 other than UNIQUE would do.
        "scale": FOUND if any(c == "f5" and t != "UNIQUE" for t, c in alerts) else MISSED,
        "imbalance": flag("IMBALANCE", "label"),
        # The comparison report puts the two profiles side by side; no alert spans both splits.
        "overlap": MISSED,
        # NON_STATIONARY / SEASONAL exist for time-series mode only.
        "drift": FOUND if {("NON_STATIONARY", "label"), ("SEASONAL", "label")} & alerts else MISSED,
    }
    kinds = sorted({t for t, _ in alerts})
    other = [f"{t} x{sum(1 for _, tt, _ in out['alerts'] if tt == t)}" for t in kinds]
    return found, other


def detect_deepchecks(out: dict) -> tuple[dict, list[str]]:
    checks = out["checks"]

    def base(h):
        return h.replace(" - Train Dataset", "").replace(" - Test Dataset", "")

    def flagged(name, col=None):
        for c in checks:
            if base(c["header"]) != name:
                continue
            for cond in c["conditions"]:
                if cond["category"] != "PASS" and (col is None or col in str(cond["details"])):
                    return True
        return False

    def values(name):
        return [c["value"] for c in checks if base(c["header"]) == name and c["value"] is not None]

    def any_flag_mentions(col):
        return any(
            cond["category"] != "PASS" and f"'{col}'" in str(cond["details"])
            for c in checks
            for cond in c["conditions"]
        )

    nan_shown = any(
        isinstance(v, dict) and v.get("columns", {}).get("f1") for v in values("Mixed Nulls")
    )
    mix = [v.get("ratio", 0) for v in values("Train Test Samples Mix") if isinstance(v, dict)]
    found = {
        "nan": FOUND
        if flagged("Mixed Nulls", "f1") or flagged("Percent Of Nulls", "f1")
        else SHOWN
        if nan_shown
        else MISSED,
        "inf": FOUND if any_flag_mentions("f2") else MISSED,  # no check looks for inf
        "constant": FOUND if flagged("Single Value in Column", "f3") else MISSED,
        "scale": FOUND if any_flag_mentions("f5") else MISSED,  # no check compares scales
        "imbalance": FOUND if flagged("Class Imbalance") else MISSED,  # not in these suites
        "overlap": FOUND
        if flagged("Train Test Samples Mix")
        else SHOWN
        if any(r > 0 for r in mix)
        else MISSED,
        "drift": FOUND
        if flagged("Identifier Label Correlation") or flagged("Index Train Test Leakage")
        else MISSED,
    }
    other = sorted(
        {
            f"{base(c['header'])}: {cond['category']}"
            for c in checks
            for cond in c["conditions"]
            if cond["category"] != "PASS"
        }
    )
    # A check that needs an index or a datetime column says so (DatasetValidationError): not
    # a crash. Anything else that raised is listed.
    other += sorted(
        {
            f"{base(c['header'])} crashed: {c['error'][:80]}"
            for c in checks
            if c["error"] and "DatasetValidationError" not in c["error"]
        }
    )
    return found, other


# --------------------------------------------------------------------------------------------
# The run


@dataclass
class Tool:
    name: str
    runs: list[Run] = field(default_factory=list)
    found: dict | None = None
    other: list[str] = field(default_factory=list)
    note: str = ""
    html_s: float = 0.0  # peers: seconds of the wall spent writing the HTML report
    html_mb: float | None = None

    @property
    def ok(self) -> list[Run]:
        return [r for r in self.runs if r.out is not None]

    @property
    def wall(self) -> float | None:
        return statistics.median(r.wall for r in self.ok) if self.ok else None

    @property
    def rss(self) -> float | None:
        return statistics.median(r.rss_mb for r in self.ok) if self.ok else None

    @property
    def busy(self) -> float | None:
        """Median CPU seconds per wall second (2.0 = both cores busy the whole run)."""
        return statistics.median(r.cpu / r.wall for r in self.ok) if self.ok else None

    @property
    def audit_busy(self) -> float | None:
        """The same, of the ``audit()`` call alone (datavet's runs): the process without its
        start, its imports and its exit, which any Python program spends on one core."""
        xs = [r.out["audit_cpu"] / r.out["audit_wall"] for r in self.ok if "audit_cpu" in r.out]
        return statistics.median(xs) if xs else None


def _versions(python: str, dists: list[str]) -> dict:
    code = (
        "import json, sys; from importlib.metadata import version\n"
        "out = {'python': sys.version.split()[0]}\n"
        f"for d in {dists!r}:\n"
        "    try: out[d] = version(d)\n"
        "    except Exception: out[d] = None\n"
        "print(json.dumps(out))"
    )
    res = subprocess.run([python, "-c", code], capture_output=True, text=True)
    return json.loads(res.stdout) if res.returncode == 0 else {}


def machine() -> dict:
    info = {"cores": os.cpu_count(), "platform": platform.platform()}
    try:
        mem = Path("/proc/meminfo").read_text().split("\n")[0].split()
        info["ram_gb"] = round(int(mem[1]) / 1024**2, 1)
        cpu = [
            ln
            for ln in Path("/proc/cpuinfo").read_text().splitlines()
            if ln.startswith("model name")
        ]
        info["cpu"] = cpu[0].split(":", 1)[1].strip() if cpu else "?"
    except OSError:
        pass
    info["versions"] = _versions(
        sys.executable, ["datavet", "numpy", "pandas", "pyarrow", "scipy", "scikit-learn"]
    )
    git = subprocess.run(
        ["git", "-C", str(HERE.parent), "describe", "--always", "--dirty"],
        capture_output=True,
        text=True,
    )
    info["git"] = f"working tree {git.stdout.strip() or '?'}"
    return info


def checkout_ref(ref: str, into: Path) -> str:
    """Extract ``src/`` of git ``ref`` into ``into``; the children import datavet from there."""
    repo = str(HERE.parent)
    commit = subprocess.run(
        ["git", "-C", repo, "rev-parse", "--short", ref], capture_output=True, text=True, check=True
    ).stdout.strip()
    into.mkdir(parents=True)
    archive = subprocess.run(
        ["git", "-C", repo, "archive", ref, "src"], capture_output=True, check=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return commit


def cached_data(rows: int, data_dir: Path | None, folder: Path) -> tuple[Path, Path, dict]:
    """The planted files for ``rows``: from ``data_dir`` when an earlier run left them there
    (with their meta), else generated (into ``data_dir`` when given, to be kept)."""
    where = data_dir or folder
    meta_path = where / f"meta_{rows}.json"
    train, test = where / f"train_{rows}.parquet", where / f"test_{rows}.parquet"
    if data_dir is not None and meta_path.exists() and train.exists() and test.exists():
        meta = json.loads(meta_path.read_text())
        if (meta["train_bytes"], meta["test_bytes"]) == (train.stat().st_size, test.stat().st_size):
            meta["reused"] = str(data_dir)
            return train, test, meta
    t0 = time.perf_counter()
    train, test, meta = make_data(rows, where)
    meta["generate_s"] = time.perf_counter() - t0
    if data_dir is not None:
        meta_path.write_text(json.dumps(meta))
    return train, test, meta


def bench_size(rows, args, folder, peer_pythons, reused_peers=None) -> dict:
    train, test, meta = cached_data(rows, args.data_dir, folder)
    print(
        f"\n== {rows:,} train rows + {meta['test_rows']:,} test rows: generated in "
        f"{meta['generate_s']:.1f} s ({(meta['train_bytes'] + meta['test_bytes']) / 1e6:.0f} MB)"
        + (f", reused from {meta['reused']}" if meta.get("reused") else ""),
        flush=True,
    )
    repeat = args.repeat if rows < 10_000_000 else args.repeat_10m
    files = [str(train), str(test)]
    tools = {k: Tool(k) for k in ("floor", "datavet scan", "datavet full")}
    argvs = {
        "floor": [sys.executable, "-c", FLOOR, *files],
        "datavet scan": [sys.executable, "-c", DATAVET, *files, "scan"],
        "datavet full": [sys.executable, "-c", DATAVET, *files, "full"],
    }
    if rows > FLOOR_MAX_ROWS:
        # the floor holds the whole table in pandas (7.5 GB at 10M rows): past this it would
        # run the machine out of memory. The scan-only run is left out too (time).
        del argvs["floor"], argvs["datavet scan"]
        tools[
            "floor"
        ].note = f"not run: it loads the whole table (about {7.5 * rows / 1e7:.0f} GB at this size)"
    for name, argv in argvs.items():  # byte code compiled by one untimed run of each tool
        if name not in WARMED:
            run_child(argv, args.peer_timeout, folder / "child.log", side_by_side_env(args, name))
            WARMED.add(name)
    for i in range(repeat):  # interleaved, so a noisy neighbour hits every tool alike
        for name, argv in argvs.items():
            env = side_by_side_env(args, name)
            run = run_child(argv, args.peer_timeout, folder / "child.log", env)
            tools[name].runs.append(run)
            status = run.error or f"{run.wall:.2f} s, {run.rss_mb:.0f} MB"
            print(f"  [{i + 1}/{repeat}] {name:<13} {status}", flush=True)
    for name in ("datavet scan", "datavet full"):
        t = tools[name]
        if t.ok and args.datavet_src and not t.ok[0].out["module"].startswith(args.datavet_src):
            raise SystemExit(f"datavet imported from {t.ok[0].out['module']}, not --datavet-ref")
        if t.ok:
            t.found, t.other = detect_datavet(t.ok[0].out)
    if reused_peers and rows in reused_peers:
        for name, tool in reused_peers[rows].items():
            tools[name] = tool
            print(f"  {name:<15} {tool.wall:.1f} s, {tool.rss:.0f} MB (earlier run)", flush=True)
    elif args.peers and rows <= PEER_MAX_ROWS:
        for name, script, detect in (
            ("ydata-profiling", YDATA, detect_ydata),
            ("Deepchecks", DEEPCHECKS, detect_deepchecks),
        ):
            t = tools[name] = Tool(name)
            python, why = peer_pythons[name]
            if python is None:
                t.note = why
                print(f"  {name:<15} not run: {why}", flush=True)
                continue
            runner = folder / f"run_{name}.py"
            runner.write_text(script)
            html = folder / "html"
            html.mkdir(exist_ok=True)
            run = run_child(
                [str(python), str(runner), *files, str(html)],
                args.peer_timeout,
                folder / f"{name}.log",
            )
            t.runs.append(run)
            if run.out is not None:
                t.found, t.other = detect(run.out)
                t.note = f"{run.out['version']}; HTML {run.out['t_html']:.1f} s of the wall"
                t.html_s = run.out["t_html"]
                t.html_mb = sum(p.stat().st_size for p in html.iterdir()) / 1e6
                for p in html.iterdir():
                    p.unlink()
            print(
                f"  {name:<15} {run.error or f'{run.wall:.1f} s, {run.rss_mb:.0f} MB'}", flush=True
            )
    if args.data_dir is None:
        for p in (train, test):
            p.unlink()
    return {"rows": rows, "meta": meta, "repeat": repeat, "tools": tools}


# --------------------------------------------------------------------------------------------
# Peers' figures from an earlier RESULTS.md (--reuse-peers)

PEER_NAMES = ("ydata-profiling", "Deepchecks")
_CELL = {"found": FOUND, "shown": SHOWN, "**missed**": MISSED}


def _parse_size(text: str) -> float:
    value, unit = text.split()
    return float(value) * (1024 if unit == "GB" else 1)


def load_peers(path: Path) -> tuple[dict[int, dict[str, Tool]], str]:
    """{rows: {peer: Tool}} from the tables of an earlier RESULTS.md, and what that run was."""
    text = path.read_text()
    out: dict[int, dict[str, Tool]] = {}
    rows = None
    for line in text.splitlines():
        m = re.match(r"### ([\d,]+) train rows", line)
        if m:
            rows = int(m.group(1).replace(",", ""))
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if rows is None or not cells or cells[0] not in PEER_NAMES or len(cells) < 5 + len(ISSUES):
            continue
        name, wall, rss = cells[0], cells[1], cells[2]
        if not wall.endswith(" s") or rss == "—":
            continue
        notes = [n.strip() for n in cells[4 + len(ISSUES)].split(";") if n.strip()]
        t = Tool(name)
        t.runs = [Run(wall=float(wall.split()[0]), rss_mb=_parse_size(rss), rc=0, out={})]
        t.found = {k: _CELL.get(c, MISSED) for k, c in zip(ISSUES, cells[4 : 4 + len(ISSUES)])}
        html = [n for n in notes if re.fullmatch(r"HTML [\d.]+ s of the wall", n)]
        t.html_s = float(html[0].split()[1]) if html else 0.0
        sizes = [n for n in notes if re.fullmatch(r"HTML [\d.]+ MB", n)]
        t.html_mb = float(sizes[0].split()[1]) if sizes else None
        t.note = "; ".join(notes[:1] + html[:1])
        t.other = [n for n in notes[1:] if n not in sizes and n not in html]
        out.setdefault(rows, {})[name] = t
    chained = re.search(r"copied from an earlier run\*\* \(([^)]*)\)", text)
    if chained:  # that file's peers came from a yet earlier run: name that one
        return out, chained.group(1)
    m = re.search(r"\(commit ([0-9a-f]+)[^)]*\)", text)
    load = re.search(r"load average ([\d.]+) at the start, ([\d.]+) at the end", text)
    about = f"{path}" + (f", datavet commit {m.group(1)}" if m else "")
    if load:
        about += f", load average {load.group(1)}–{load.group(2)}"
    return out, about


# --------------------------------------------------------------------------------------------
# RESULTS.md

MARK = {FOUND: "found", SHOWN: "shown", MISSED: "**missed**", None: "—"}


def _fmt_wall(t: Tool) -> str:
    if not t.runs:
        return "not run"
    if t.runs[0].timed_out:
        return t.runs[0].error
    if not t.ok:
        return "failed"
    if len(t.ok) == 1:
        return f"{t.wall:.2f} s"
    lo, hi = min(r.wall for r in t.ok), max(r.wall for r in t.ok)
    return f"{t.wall:.2f} s ({lo:.2f}–{hi:.2f})"


def _mb(x: float | None) -> str:
    if x is None:
        return "—"
    return f"{x / 1024:.2f} GB" if x >= 1024 else f"{x:.0f} MB"


def args_timeout(t: Tool) -> float:
    """The wall of a run that was killed at the timeout (at least the timeout itself)."""
    return max(r.wall for r in t.runs)


def _ratio_row(what, num, den, limit):
    if not (num and den):
        return (what, "not measured", None)
    return (what, f"{num:.2f} s vs {den:.2f} s = {num / den:.2f}x", num / den <= limit)


def _rows_per_s(res: dict, name: str = "datavet full") -> float | None:
    wall = res["tools"][name].wall
    return (res["rows"] + res["meta"]["test_rows"]) / wall if wall else None


def targets(results: list[dict], extra=None) -> list[tuple[str, str, bool | None]]:
    """Every target of the scale work: (what, measured, met); met None = not measured.
    ``extra``: {"dask": bench_dask.py's JSON, "cold": rows from bench_cold.targets}."""
    extra = extra or {}
    out = []
    by = {r["rows"]: r["tools"] for r in results}
    res_by = {r["rows"]: r for r in results}
    if 1_000_000 in by:
        t = by[1_000_000]
        f = t["floor"].wall
        out.append(
            _ratio_row("1M rows: full audit ≤ 1.0x the floor's wall", t["datavet full"].wall, f, 1)
        )
        out.append(
            _ratio_row(
                "1M rows: scan alone (no baselines, no B rules) ≤ 0.8x the floor's wall",
                t["datavet scan"].wall,
                f,
                0.8,
            )
        )
        for name in ("datavet scan", "datavet full"):
            busy = t[name].busy
            out.append(
                (
                    f"1M rows: both cores busy ({name}: CPU seconds / wall ≥ 1.5 on 2 cores)",
                    "not measured"
                    if busy is None
                    else f"{busy:.2f} (floor {t['floor'].busy or 0:.2f}; "
                    f"{t[name].audit_busy or 0:.2f} inside audit())",
                    None if busy is None else busy >= 1.5,
                )
            )
    else:
        out.append(("1M rows: full audit ≤ 1.0x / scan ≤ 0.8x the floor", "not measured", None))
    if 10_000_000 in by:
        t = by[10_000_000]
        for name in ("datavet full", "datavet scan"):
            r = t[name].rss
            if r is not None:
                out.append((f"10M rows: {name} peak RSS < 1.5 GB", _mb(r), r < 1.5 * 1024))
            elif t[name].runs:
                out.append((f"10M rows: {name} peak RSS < 1.5 GB", "run failed", False))
    if 1_000_000 in by and 10_000_000 in by:
        for name in ("datavet full", "datavet scan"):
            small, big = by[1_000_000][name].rss, by[10_000_000][name].rss
            if small and big:
                per_row = (big - small) * 1024**2 / (9_000_000 * 1.2)  # train + test rows
                out.append(
                    (
                        f"{name}: peak RSS grows by ≤ 24 bytes a row (1M → 10M rows, train + test)",
                        f"{per_row:.0f} bytes a row ({_mb(small)} → {_mb(big)})",
                        per_row <= 24,
                    )
                )
    else:
        out.append(("peak RSS grows by ≤ 24 bytes a row (1M → 10M rows)", "not measured", None))
    big = max((r for r in by if r > 10_000_000), default=None)
    if big is None:
        out.append(
            ("100M rows: peak RSS < 4 GB, rows/s within 20% of 1M, all found", "not measured", None)
        )
    else:
        label = "100M rows" if big == 100_000_000 else f"{big / 1e6:.0f}M rows (largest run)"
        a = by[big]["datavet full"]
        out.append(
            (f"{label}: full audit peak RSS < 4 GB", _mb(a.rss), bool(a.rss) and a.rss < 4096)
        )
        if 1_000_000 in by:
            fast, slow = _rows_per_s(res_by[1_000_000]), _rows_per_s(res_by[big])
            if fast and slow:
                out.append(
                    (
                        f"{label}: rows/s within 20% of the 1M run (full audit)",
                        f"{slow:,.0f} vs {fast:,.0f} rows/s = {slow / fast:.2f}x",
                        slow >= 0.8 * fast,
                    )
                )
    for rows, t in by.items():
        a = t["datavet full"]
        missed = [k for k, v in (a.found or {}).items() if v != FOUND]
        out.append(
            (
                f"{rows:,} rows: datavet finds every planted problem",
                "all 7"
                if a.found and not missed
                else f"missed: {', '.join(missed) or 'run failed'}",
                bool(a.found) and not missed,
            )
        )
        for peer in ("ydata-profiling", "Deepchecks"):
            if peer not in t:
                continue
            p = t[peer]
            if p.runs and p.runs[0].timed_out and a.wall:
                at_least = args_timeout(p) / a.wall
                out.append(
                    (
                        f"{rows:,} rows: ≥ 30x faster than {peer}",
                        f"> {at_least:.0f}x ({peer} {p.runs[0].error}; datavet {a.wall:.2f} s)",
                        at_least >= 30,
                    )
                )
            elif p.wall and a.wall:
                ratio = p.wall / a.wall
                no_html = (p.wall - p.html_s) / a.wall
                out.append(
                    (
                        f"{rows:,} rows: ≥ 30x faster than {peer}",
                        f"{ratio:.0f}x ({p.wall:.0f} s vs {a.wall:.2f} s); "
                        f"{no_html:.0f}x without its HTML step",
                        ratio >= 30,
                    )
                )
    out += dask_targets(extra.get("dask"))
    out += extra.get("cold") or [
        ("small files (bench/bench_cold.py): cold CLI ≤ 2.0x the floor", "not measured", None)
    ]
    return out


def dask_targets(d: dict | None) -> list[tuple[str, str, bool | None]]:
    """The Dask rows, from ``bench/bench_dask.py --json`` (None: not measured)."""
    if not d:
        return [("Dask: partition profile size does not grow with rows", "not measured", None)]
    out = []
    sizes = {int(k): v for k, v in d.get("sizes", {}).items()}
    if 1_000_000 in sizes and 10_000_000 in sizes:
        a, b = sizes[1_000_000], sizes[10_000_000]
        out.append(
            (
                "Dask: a partition's Profile (65,536 rows) does not grow with rows (1M → 10M)",
                f"{a['partition_profile_bytes'] / 1e3:,.0f} kB → "
                f"{b['partition_profile_bytes'] / 1e3:,.0f} kB; hash buckets "
                f"{b['partition_buckets_bytes'] / 1e6:.1f} MB (worker to worker)",
                b["partition_profile_bytes"] <= a["partition_profile_bytes"] * 1.05,
            )
        )
    for rows, w in sorted((int(k), v) for k, v in d.get("walls", {}).items()):
        one, two = w.get("1") or w.get(1), w.get("2") or w.get(2)
        out.append(
            (
                f"Dask: {rows / 1e6:g}M rows, wall with 1 and 2 worker processes (LocalCluster)",
                f"{one:.1f} s and {two:.1f} s ({one / two:.2f}x)",
                None,
            )
        )
    return out


def cold_targets() -> list[tuple[str, str, bool | None]] | None:
    """The small-file rows of ``bench/bench_cold.py`` (its ``targets(runs)``), when it exists."""
    try:
        import bench_cold  # noqa: PLC0415
    except ImportError:
        return None
    return [
        (name if target == "-" else f"{name}: {target}", measured, met if target != "-" else None)
        for name, measured, target, met in bench_cold.targets(runs=5)
    ]


def write_results(
    path: Path,
    results: list[dict],
    info: dict,
    args,
    command: str,
    peer_notes: dict,
    started: float,
    load: tuple,
) -> None:
    v = info["versions"]
    lines = [
        "# datavet vs the floor and its peers",
        "",
        "Written by `bench/bench_compare.py`; do not edit by hand. Command:",
        "",
        "```",
        command,
        "```",
        "",
        f"Machine: {info.get('cpu', '?')}, {info['cores']} cores, "
        f"{info.get('ram_gb', '?')} GB RAM, "
        f"{info['platform']}; shared with other work during the run (load average "
        f"{load[0]:.1f} at the start, {load[1]:.1f} at the end), so wall times are noisy. "
        f"Python {v.get('python')}, datavet {v.get('datavet')} ({info['git']}), numpy "
        f"{v.get('numpy')}, pandas {v.get('pandas')}, pyarrow {v.get('pyarrow')}, scipy "
        f"{v.get('scipy')}, scikit-learn {v.get('scikit-learn')}. Whole run: "
        f"{(time.perf_counter() - started) / 60:.1f} min.",
        "",
        "## The data",
        "",
        "Per size N: a train file of N rows and a test file of N/5 rows, Parquet (snappy), row "
        f"groups of {ROW_GROUP:,} rows, written {CHUNK:,} rows at a time. Columns: `f0`..`f19` "
        "(float64, standard normal; `f0` and `f4` shifted by the label), `color` (5 values) and "
        "`region` (12 values, skewed) as strings, and `label` (int64, 0/1). Planted:",
        "",
    ]
    lines += [f"- **{k}** ({code}): {desc}" for k, (code, _, desc) in ISSUES.items()]
    lines += [
        "",
        "## What was run (fresh process each, wall time includes interpreter start and imports)",
        "",
        "- **floor**: pyarrow read to pandas, numpy NaN/inf counts and moments of the float "
        "columns, null counts of the others, label counts per 1,024 position bins, pandas row "
        "hashes, `isin` for overlap. It flags nothing itself: it is the yardstick.",
        '- **datavet scan**: `datavet.audit(train, test, target="label", baselines=False, '
        "select=<every rule but B001-B003>)`: the streaming pass and the auditors.",
        '- **datavet full**: `datavet.audit(train, test, target="label")`: every rule, '
        "baselines included (fitted on a 50,000-row sample per split).",
        "- **ydata-profiling**: `ProfileReport` of train and of test (default settings), "
        "`train.compare(test)`, `to_file(html)`; findings read from each profile's "
        "`description_set.alerts` and variable counts.",
        '- **Deepchecks**: `Dataset(df, label="label", cat_features=[color, region])` for each '
        "split, the `data_integrity()` and `train_test_validation()` suites as shipped, run on "
        "(train, test), both saved as HTML; findings read from each check's condition results "
        "(FAIL or WARN = found) and values.",
        "",
        f"datavet and the floor run {args.repeat} times each below 10M rows and "
        f"{args.repeat_10m} time(s) at 10M, interleaved; the table gives the median and (range). "
        "The peers run once, at 100k and 1M rows only: at 10M rows each would take hours. "
        + (
            f"**The peers' rows are copied from an earlier run** ({args.peers_from}), not "
            "measured in this one: same script, same data generator and sizes, same machine "
            "type; their ratios to datavet compare a wall time from that run with one from "
            "this run. "
            if args.peers_from
            else ""
        )
        + "Every tool's Python byte code is compiled by one untimed run first and kept (as "
        "after a `pip install`, which compiles it; with PYTHONDONTWRITEBYTECODE set, each run "
        "would compile datavet's modules again while NumPy's, pandas' and pyarrow's come "
        "compiled). The floor and datavet run with `OPENBLAS_NUM_THREADS=1`: after NumPy's import "
        "its BLAS threads spin about 0.1 s of CPU with no work, which would count as a busy "
        "core. Peak RSS is the child's `ru_maxrss` from `os.wait4`. "
        "`found` = flagged (finding, alert, failed/warned condition); `shown` = the count is in "
        "the report but nothing flags it; `missed` = neither.",
        "",
        "## Results",
        "",
    ]
    for res in results:
        m, tools = res["meta"], res["tools"]
        floor = tools["floor"].wall
        lines += [
            f"### {res['rows']:,} train rows + {m['test_rows']:,} test rows",
            "",
            f"Files: {(m['train_bytes'] + m['test_bytes']) / 1e6:.0f} MB, generated in "
            f"{m['generate_s']:.0f} s"
            + (" (by an earlier run, reused)" if m.get("reused") else "")
            + f". Planted counts: NaN {m['nan']['train']:,} train / "
            f"{m['nan']['test']:,} test, inf {m['inf']['train']:,} / {m['inf']['test']:,}, "
            f"{m['copied_rows']} copied rows, drift block of {m['drift_rows']:,} rows.",
            "",
            "| tool | wall, median (range) | peak RSS | wall / floor | "
            + " | ".join(ISSUES)
            + " | other findings / notes |",
            "|---|---|---|---|" + "---|" * len(ISSUES) + "---|",
        ]
        for name, t in tools.items():
            ratio = f"{t.wall / floor:.2f}x" if floor and t.wall else "—"
            found = t.found or {}
            cells = [MARK[found.get(k)] if name != "floor" else "—" for k in ISSUES]
            notes = list(t.other)
            if t.note:
                notes.insert(0, t.note)
            if not t.ok and t.runs and not t.runs[0].timed_out:
                notes.append(t.runs[0].error or "")
            if t.html_mb is not None:
                notes.append(f"HTML {t.html_mb:.1f} MB")
            lines.append(
                f"| {name} | {_fmt_wall(t)} | {_mb(t.rss)} | {ratio} | "
                + " | ".join(cells)
                + f" | {'; '.join(notes).replace('|', '/') or ''} |"
            )
        lines.append("")
    lines += ["## Targets", "", "| target | measured | met |", "|---|---|---|"]
    for what, measured, met in targets(results, getattr(args, "extra", None)):
        mark = "—" if met is None else ("yes" if met else "**no**")
        lines.append(f"| {what} | {measured} | {mark} |")
    lines += [
        "",
        "What datavet keeps per row: a 16-byte hash of the row's features (S001-S003), an "
        "8-byte hash of its label (S002/S003 compare labels), its position and, when a test "
        "split is given and S007 runs, the near-duplicate hashes and their per-row detail. "
        "Up to 1,500,000 rows a split keeps them in memory; above, the scan writes them to a "
        "temporary file, sorted by 256 hash partitions within each batch, and the row checks "
        "read a few partitions at a time (about 2M rows of train + test), so the hash tables "
        "never cover everything at once. S007 reads back only the test rows a bitmap of the "
        "train near hashes may match, and the train rows equal to those. The per-row growth "
        "above is the difference of two peaks divided by the extra rows.",
        "",
    ]
    dask = (getattr(args, "extra", None) or {}).get("dask")
    if dask:
        lines += ["## Dask engine", ""]
        for rows, d in sorted((int(k), v) for k, v in dask.get("sizes", {}).items()):
            lines.append(
                f"- {rows:,} train rows: a partition's Profile ({d['partition_rows']:,} rows, "
                f"what a worker sends up the reduction tree) pickles to "
                f"{d['partition_profile_bytes'] / 1e3:,.0f} kB; its hash buckets (worker to "
                f"worker, to the bucket tasks) to {d['partition_buckets_bytes'] / 1e6:.1f} MB"
                + (
                    f"; the merged Profile of the split (what reaches the client) to "
                    f"{d['merged_profile_bytes'] / 1e6:.1f} MB"
                    if "merged_profile_bytes" in d
                    else ""
                )
                + "."
            )
        for rows, w in sorted((int(k), v) for k, v in dask.get("walls", {}).items()):
            lines.append(
                f'- {rows:,} train rows, full audit with `engine="dask"` on a LocalCluster '
                f"(cluster start excluded): {w['1']:.1f} s with 1 worker process, "
                f"{w['2']:.1f} s with 2."
            )
        lines.append("")
    if peer_notes:
        lines += ["## Peers' installs", ""]
        lines += [f"- {k}: {v}" for k, v in peer_notes.items()]
        lines.append("")
    kept = _kept_sections(path)
    path.write_text("\n".join(lines) + "\n" + kept)


KEPT = ("## Small files",)  # sections other scripts write into the same file


def _kept_sections(path: Path) -> str:
    """The sections of ``path`` that another script writes (bench/bench_cold.py's "Small
    files"): carried over, not dropped, when this script rewrites the file."""
    if not path.exists():
        return ""
    out, keep = [], False
    for line in path.read_text().splitlines():
        if line.startswith("## "):
            keep = line.startswith(KEPT)
        if keep:
            out.append(line)
    return ("\n" + "\n".join(out) + "\n") if out else ""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, nargs="+", default=[100_000, 1_000_000, 10_000_000])
    ap.add_argument(
        "--repeat", type=int, default=3, help="runs of datavet and the floor below 10M rows"
    )
    ap.add_argument(
        "--repeat-10m", type=int, default=1, help="runs of datavet and the floor at 10M rows"
    )
    ap.add_argument("--peers", action="store_true", help="also run ydata-profiling and Deepchecks")
    ap.add_argument("--peer-timeout", type=float, default=1800.0, help="seconds per child run")
    ap.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()))
    ap.add_argument("--output", type=Path, default=HERE / "RESULTS.md")
    ap.add_argument(
        "--data-dir",
        type=Path,
        help="keep the generated Parquet files here and reuse them on later runs",
    )
    ap.add_argument(
        "--reuse-peers",
        type=Path,
        metavar="RESULTS_MD",
        help="take ydata-profiling's and Deepchecks' rows from this earlier RESULTS.md "
        "instead of running them",
    )
    ap.add_argument(
        "--datavet-ref",
        help="measure datavet as committed at this git ref (e.g. HEAD) instead of the "
        "installed package / working tree",
    )
    ap.add_argument(
        "--dask-json",
        type=Path,
        help="the Dask figures written by bench/bench_dask.py --json (else run it with --dask)",
    )
    ap.add_argument(
        "--dask",
        action="store_true",
        help="run bench/bench_dask.py (partition profile sizes at 1M and 10M rows, walls at 1M "
        "with 1 and 2 worker processes) on the --data-dir files",
    )
    ap.add_argument(
        "--cold", action="store_true", help="also run bench/bench_cold.py's small-file targets"
    )
    args = ap.parse_args()
    args.datavet_src = None
    args.extra = {}
    reused_peers, args.peers_from = None, None
    if args.reuse_peers:
        reused_peers, args.peers_from = load_peers(args.reuse_peers)  # before --output is written
        if not reused_peers:
            raise SystemExit(f"no peer rows found in {args.reuse_peers}")
    if args.data_dir:
        args.data_dir.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    command = " ".join(["python", "bench/bench_compare.py", *sys.argv[1:]])
    load0 = os.getloadavg()[0]
    info = machine()
    print(f"{info.get('cpu')}, {info['cores']} cores, {info.get('ram_gb')} GB; {info['versions']}")
    peer_pythons, peer_notes = {}, {}
    if args.peers and not reused_peers and any(r <= PEER_MAX_ROWS for r in args.rows):
        for name, venv in (("ydata-profiling", "ydata"), ("Deepchecks", "deepchecks")):
            python, why = ensure_venv(venv)
            peer_pythons[name] = (python, why)
            peer_notes[name] = why
            print(f"  {name}: {why}", flush=True)
    results = []

    def save() -> None:
        write_results(
            args.output,
            results,
            info,
            args,
            command,
            peer_notes,
            started,
            (load0, os.getloadavg()[0]),
        )

    args.workdir.mkdir(parents=True, exist_ok=True)
    global PYCACHE
    with tempfile.TemporaryDirectory(prefix="bench_compare_", dir=args.workdir) as tmp:
        PYCACHE = Path(tmp) / "pycache"
        if args.datavet_ref:
            args.datavet_src = str(Path(tmp) / "datavet_src" / "src")
            commit = checkout_ref(args.datavet_ref, Path(args.datavet_src).parent)
            info["git"] = f"commit {commit} ({args.datavet_ref}), src/ extracted with git archive"
        for rows in args.rows:
            results.append(bench_size(rows, args, Path(tmp), peer_pythons, reused_peers))
            save()  # after each size: a long run keeps what it measured
    if args.dask and args.data_dir:
        args.dask_json = args.workdir / "bench_dask.json"
        subprocess.run(
            [
                sys.executable,
                str(HERE / "bench_dask.py"),
                "--data-dir",
                str(args.data_dir),
                "--json",
                str(args.dask_json),
            ],
            check=False,
        )
    if args.dask_json and args.dask_json.exists():
        args.extra["dask"] = json.loads(args.dask_json.read_text())
    if args.cold:
        args.extra["cold"] = cold_targets()
    save()
    print(f"\nwrote {args.output}")
    for what, measured, met in targets(results, args.extra):
        mark = "n/a    " if met is None else ("MET    " if met else "NOT MET")
        print(f"  {mark}  {what}: {measured}")


if __name__ == "__main__":
    main()
