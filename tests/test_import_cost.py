"""What ``import datavet`` and the cheap CLI commands load: never pandas, SciPy, scikit-learn,
Jinja2 or PyTorch (each loads when a path that needs it runs), and the small-file audit never
SciPy or scikit-learn. Checked in a fresh interpreter: this process has them all loaded."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
HEAVY = ("pandas", "scipy", "sklearn", "jinja2", "torch")


def _python(code: str) -> subprocess.CompletedProcess:
    """``code`` run by a fresh interpreter that imports datavet from this checkout."""
    path = os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")])
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": path},
        cwd=ROOT,
        timeout=300,
    )


def _loaded(code: str) -> list[str]:
    """The heavy packages a fresh interpreter holds after running ``code``."""
    out = _python(f"{code}\nimport sys\nprint(sorted(m for m in {HEAVY!r} if m in sys.modules))")
    assert out.returncode == 0, out.stderr
    return eval(out.stdout.strip().splitlines()[-1])  # noqa: S307 - our own printed list


def _cli(*args: str) -> str:
    return (
        "import contextlib, io, sys\n"
        f"sys.argv = ['datavet', *{list(args)!r}]\n"
        "from datavet.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):\n"
        "    main()\n"
    )


def test_import_datavet_loads_no_heavy_package():
    assert _loaded("import datavet") == []


def test_public_api_still_reachable_from_the_package():
    code = (
        "import datavet\n"
        "from datavet import (RULES, Finding, Report, Severity, audit, probe, preflight,\n"
        "    AuditFailed, DatavetError, InputError, UsageError, Outcome, Journal, PROBES,\n"
        "    CURVE_RULES, GradientMonitor, diagnose_curves)\n"
        "assert callable(audit) and callable(probe) and callable(preflight)\n"
        "assert 'V001' in {r.code for r in RULES} and Severity.ERROR\n"
        "import datavet.preflight\n"
        "assert callable(datavet.preflight)\n"  # the function, not the submodule of that name
        "assert set(datavet.__all__) <= set(dir(datavet))\n"
    )
    assert _loaded(code) == []


@pytest.mark.parametrize("args", [("--help",), ("rules",), ("rule", "V001")])
def test_cheap_commands_load_no_heavy_package(args):
    assert _loaded(_cli(*args)) == []


def test_small_file_audit_imports_neither_scipy_nor_scikit_learn():
    """The pre-commit path: a 400-row CSV with a target, baselines included."""
    loaded = _loaded(_cli("audit", "sample_data/planted_train.csv", "--target", "label"))
    assert "scipy" not in loaded and "sklearn" not in loaded, loaded


def test_audit_with_a_test_split_imports_no_scikit_learn():
    """S011 (adversarial validation) and the baselines fit with datavet.linear."""
    args = ("audit", "sample_data/planted_train.csv", "--test", "sample_data/planted_test.csv")
    loaded = _loaded(_cli(*args, "--target", "label", "--select", "S011,B"))
    assert "sklearn" not in loaded, loaded


def test_submodules_reachable_as_attributes_after_a_bare_import():
    code = (
        "import datavet\n"
        "assert callable(datavet.output.render) and datavet.scan is not None\n"
        "try:\n"
        "    datavet.no_such_thing\n"
        "except AttributeError:\n"
        "    pass\n"
        "else:\n"
        "    raise SystemExit('no AttributeError')\n"
    )
    assert "torch" not in _loaded(code)


def test_default_audit_with_a_test_split_imports_neither_scipy_nor_scikit_learn():
    """Every default rule with a test split: S010's Kolmogorov-Smirnov test on the numeric
    features runs on datavet._stats, and nothing imports scipy.stats ahead for it."""
    code = (
        "import datavet\n"
        "report = datavet.audit('sample_data/planted_train.csv', 'sample_data/planted_test.csv',\n"
        "                       target='label')\n"
        "(drift,) = [o for o in report.outcomes if o.code == 'S010']\n"
        "assert drift.status.value in ('passed', 'failed'), drift\n"
    )
    loaded = _loaded(code)
    assert "scipy" not in loaded and "sklearn" not in loaded, loaded


_WITHOUT_SCIPY_SKLEARN = """
import sys

class Absent:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("scipy", "sklearn"):
            raise ModuleNotFoundError(f"No module named {name!r}")
        return None

sys.meta_path.insert(0, Absent())
"""


def test_audits_run_without_scipy_and_scikit_learn(tmp_path):
    """Neither is a dependency: an audit of every kind (a table with baselines and a test
    split, the CLI with HTML and JSON) runs in an interpreter that cannot import them, and the
    scikit-learn Pipeline step says which extra it needs."""
    train, test = (
        ROOT / "sample_data" / "planted_train.csv",
        ROOT / "sample_data" / "planted_test.csv",
    )
    code = (
        _WITHOUT_SCIPY_SKLEARN
        + f"""
import datavet
report = datavet.audit({str(train)!r}, {str(test)!r}, target="label")
codes = sorted({{f.code for f in report.findings}})
crashed = [o.code for o in report.outcomes if o.status.value == "crashed"]
assert report.baselines and report.baselines["models"], report.baselines
assert not crashed, crashed
from datavet.cli import main
rc = main(["audit", {str(train)!r}, "--test", {str(test)!r}, "--target", "label",
           "--html", {str(tmp_path / "r.html")!r}, "--format", "json",
           "--output", {str(tmp_path / "r.json")!r}])
assert rc == 1, rc
try:
    import datavet.sklearn
except ImportError as exc:
    assert "datavet[sklearn]" in str(exc), exc
else:
    raise AssertionError("datavet.sklearn imported without scikit-learn")
print(codes)
"""
    )
    out = _python(code)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "'S001'" in out.stdout and "'L002'" in out.stdout
    assert (tmp_path / "r.html").stat().st_size > 10_000
    assert "S001" in (tmp_path / "r.json").read_text()
