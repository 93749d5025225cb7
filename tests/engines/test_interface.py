"""One engine interface runs every pass: the table scan, the tensor pass and the second passes
(row keys, near duplicates). ``engine=`` is honoured or refused with a UsageError for every
kind of input, and ``scan/`` holds statistics only (no threads, no reading)."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import datavet
from datavet.cli import main
from datavet.engines import ENGINES, get_engine
from datavet.engines.base import Engine
from datavet.engines.local import LocalEngine
from datavet.errors import UsageError
from datavet.sources import open_source

SCAN = Path(datavet.__file__).parent / "scan"


def tensors(n=200, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, 3, 8, 8)).astype(np.float32)
    x[7, 0, 2, 2] = np.nan
    x[60:70] = x[0:10]  # duplicates
    return x, rng.integers(0, 3, n)


# --- choosing an engine ----------------------------------------------------------------------


@pytest.mark.parametrize("name", ENGINES)
def test_every_named_engine_is_an_engine(name):
    engine = get_engine(name, batch_rows=100, workers=2)
    assert isinstance(engine, Engine) and engine.name == name
    assert (engine.batch_rows, engine.workers) == (100, 2)


def test_an_unknown_engine_names_the_choices():
    with pytest.raises(UsageError, match=r"unknown engine 'bogus' \(choose local, dask or spark\)"):
        get_engine("bogus")


def test_a_bogus_engine_on_tensors_is_a_usage_error():
    with pytest.raises(UsageError, match="choose local, dask or spark"):
        datavet.audit(tensors(), engine="bogus")


@pytest.mark.parametrize("name", ["dask", "spark"])
def test_a_table_engine_refuses_tensors_in_one_line(name):
    """Before, engine= was ignored for tensor inputs: the audit ran locally and said nothing."""
    with pytest.raises(UsageError) as info:
        datavet.audit(tensors(), engine=name, baselines=False)
    message = str(info.value)
    assert f"engine {name!r} audits tables only" in message and "engine='local'" in message
    assert "\n" not in message


def test_the_cli_refuses_a_table_engine_on_tensors(tmp_path, capsys):
    x, y = tensors()
    path = tmp_path / "train.npz"
    np.savez(path, x=x, label=y)
    code = main(["audit", str(path), "--engine", "dask"])
    out, err = capsys.readouterr()
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("datavet: error:"), err
    assert "audits tables only" in err


# --- the tensor pass is the engine's ---------------------------------------------------------


def test_tensor_pass_threads_give_the_serial_profile():
    x, y = tensors(600)
    runs = []
    for workers in (1, 3):
        engine = LocalEngine(batch_rows=64, workers=workers)
        train = open_source((x, y), role="train")
        runs.append(engine.profile_tensors(train, sample_rows=1000))
    (serial, threaded) = (r.profiles["train"] for r in runs)
    assert serial.rows == threaded.rows == 600
    for name, s in serial.columns.items():
        t = threaded.columns[name]
        assert (s.missing, s.missing_rows, s.min, s.max, s.finite) == (
            t.missing,
            t.missing_rows,
            t.min,
            t.max,
            t.finite,
        )
    np.testing.assert_array_equal(serial.hashes.arrays()[1], threaded.hashes.arrays()[1])


def test_audit_runs_the_tensor_pass_through_the_engine(monkeypatch):
    calls = []
    real = LocalEngine.profile_tensors
    monkeypatch.setattr(
        LocalEngine,
        "profile_tensors",
        lambda self, *a, **k: calls.append(self.workers) or real(self, *a, **k),
    )
    report = datavet.audit(tensors(), workers=2, baselines=False)
    assert calls == [2]
    assert {"V001", "S002"} <= {f.code for f in report.findings}


# --- the second passes are the engine's ------------------------------------------------------


def test_near_duplicate_and_row_key_passes_run_through_the_engine(tmp_path, monkeypatch):
    """CSV cannot read columns alone, so S007 needs a second pass: the engine streams it."""
    rng = np.random.default_rng(0)
    n = 300
    train = pd.DataFrame(
        {
            "order_id": [f"o{i:05d}" for i in range(n)],
            "a": rng.normal(size=n),
            "b": rng.normal(size=n),
            "label": rng.integers(0, 2, n),
        }
    )
    test = train.iloc[:40].copy()
    test["order_id"] = [f"t{i:05d}" for i in range(40)]  # copies under fresh keys
    test["a"] = test["a"] * (1 + 1e-9)
    train.to_csv(tmp_path / "train.csv", index=False)
    test.to_csv(tmp_path / "test.csv", index=False)
    near, keyless = [], []
    real_near, real_keyless = LocalEngine.near_rows, LocalEngine.keyless_rows
    monkeypatch.setattr(
        LocalEngine,
        "near_rows",
        lambda self, src, **k: near.append(src.name) or real_near(self, src, **k),
    )
    monkeypatch.setattr(
        LocalEngine,
        "keyless_rows",
        lambda self, src, *a: keyless.append(src.name) or real_keyless(self, src, *a),
    )
    report = datavet.audit(
        str(tmp_path / "train.csv"), str(tmp_path / "test.csv"), target="label", baselines=False
    )
    assert len(near) == 2 and len(keyless) == 2
    assert "S007" in {f.code for f in report.findings}


# --- scan/ is statistics only ----------------------------------------------------------------


def _calls_and_imports(path: Path):
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (("import", a.name) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            yield "import", node.module or ""
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            yield "call", node.func.attr
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            yield "call", node.func.id


def test_scan_modules_start_no_threads_and_read_no_source():
    """Before, scan/tensors.py ran its own thread pool over ``source.blocks`` and
    scan/neardup.py and scan/rowchecks.py streamed ``source.batches`` a second time."""
    bad = []
    for path in sorted(SCAN.glob("*.py")):
        for kind, name in _calls_and_imports(path):
            if kind == "import" and name.split(".")[0] in (
                "threading",
                "concurrent",
                "multiprocessing",
            ):
                bad.append(f"{path.name}: import {name}")
            if kind == "call" and name in ("batches", "blocks", "column_batches", "open"):
                bad.append(f"{path.name}: {name}()")
    assert not bad, bad
