"""Every example runs: the plain Python step, the Airflow and Dagster examples' datavet side (and
the real orchestrators when a Python that has them is given), the pytest helper, the example
project config, the pre-commit hooks and the GitHub Actions workflow."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

import datavet
from datavet.cli import _parser
from datavet.sources import ARROW_SUFFIXES, CSV_SUFFIXES
from datavet.sources.parquet import PARQUET_SUFFIXES
from datavet.testing import assert_clean

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
SAMPLE = ROOT / "sample_data"
PLANTED = (SAMPLE / "planted_train.csv", SAMPLE / "planted_test.csv")
CLEAN = (SAMPLE / "clean_train.csv", SAMPLE / "clean_test.csv")


def load_example(name: str):
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def env(**extra) -> dict:
    out = {k: v for k, v in os.environ.items() if not k.startswith(("DATAVET_", "GITHUB_"))}
    out.update({k: str(v) for k, v in extra.items()})
    return out


# --------------------------------------------------------------------------------------------
# a plain Python data-prep step


def test_prepare_data_fails_on_findings(tmp_path):
    out = tmp_path / "prepared"
    proc = subprocess.run(
        [sys.executable, EXAMPLES / "prepare_data.py", "--train", PLANTED[0], "--test",
         PLANTED[1], "--out", out],
        capture_output=True, text=True, env=env(), timeout=300,
    )  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    assert "datavet audit failed" in proc.stderr and "S001 train-test-overlap" in proc.stderr
    payload = json.loads((out / "datavet.json").read_text())
    assert payload["exit_code"] == 1
    assert (out / "datavet.html").is_file() and (out / "train.parquet").is_file()


def test_prepare_data_passes_clean_data(tmp_path):
    proc = subprocess.run(
        [sys.executable, EXAMPLES / "prepare_data.py", "--train", CLEAN[0], "--test", CLEAN[1],
         "--out", tmp_path],
        capture_output=True, text=True, env=env(), timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "ready for training" in proc.stderr


def test_prepare_data_cannot_audit_is_exit_2(tmp_path):
    proc = subprocess.run(
        [sys.executable, EXAMPLES / "prepare_data.py", "--train", CLEAN[0], "--test", CLEAN[1],
         "--out", tmp_path, "--target", "lable"],
        capture_output=True, text=True, env=env(), timeout=300,
    )  # fmt: skip
    assert proc.returncode == 2 and "did you mean 'label'" in proc.stderr


# --------------------------------------------------------------------------------------------
# Airflow: the task body without Airflow (the module imports it lazily)


def test_airflow_example_task_body():
    mod = load_example("airflow_dag")
    if importlib.util.find_spec("airflow") is None:
        assert not hasattr(mod, "datavet_dag")  # the DAG is built only where Airflow is
    with pytest.raises(datavet.AuditFailed, match=r"3 finding\(s\) at or above error"):
        mod.vet(*PLANTED)
    summary = mod.vet(*CLEAN)
    assert summary["exit_code"] == 0
    assert json.loads(json.dumps(summary, allow_nan=False)) == summary  # XCom-serialisable


# --------------------------------------------------------------------------------------------
# Dagster: the AssetCheckResult fields without Dagster


def test_dagster_example_check_result():
    mod = load_example("dagster_assets")
    failed = mod.check_result(datavet.audit(*PLANTED, target="label"))
    assert failed["passed"] is False and failed["severity"] == "ERROR"
    assert failed["metadata"]["errors"] == 3 and failed["metadata"]["failing_rules"] == "S001, V001"
    assert "S001 test" in failed["description"]
    # warnings at fail-on warning fail the check, but as WARN: Dagster shows it, does not block
    warned = mod.check_result(
        datavet.audit(*PLANTED, target="label", select="F", fail_on="warning")
    )
    assert warned["passed"] is False and warned["severity"] == "WARN"
    clean = mod.check_result(datavet.audit(*CLEAN, target="label"))
    assert clean["passed"] is True and clean["metadata"]["failing_rules"] == "none"


# --------------------------------------------------------------------------------------------
# the real orchestrators, where a Python that has them is given (they are too heavy for the
# dev extra): DATAVET_AIRFLOW_PYTHON=/path/to/python, DATAVET_DAGSTER_PYTHON=/path/to/python

AIRFLOW_PYTHON = os.environ.get("DATAVET_AIRFLOW_PYTHON")
DAGSTER_PYTHON = os.environ.get("DATAVET_DAGSTER_PYTHON")


@pytest.mark.slow
@pytest.mark.skipif(not AIRFLOW_PYTHON, reason="set DATAVET_AIRFLOW_PYTHON to run real Airflow")
@pytest.mark.parametrize(("data", "expected"), [(PLANTED, "failed"), (CLEAN, "success")])
def test_airflow_dag_run(tmp_path, data, expected):
    home = tmp_path / "airflow"
    e = env(
        AIRFLOW_HOME=home,
        AIRFLOW__CORE__DAGS_FOLDER=EXAMPLES,
        AIRFLOW__CORE__LOAD_EXAMPLES="False",
        DATAVET_TRAIN=data[0],
        DATAVET_TEST=data[1],
    )
    migrate = subprocess.run(
        [AIRFLOW_PYTHON, "-m", "airflow", "db", "migrate"], env=e, capture_output=True, timeout=600
    )
    assert migrate.returncode == 0, migrate.stderr[-2000:]
    proc = subprocess.run(
        [AIRFLOW_PYTHON, EXAMPLES / "airflow_dag.py"],
        env=e, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    (line,) = [ln for ln in proc.stdout.splitlines() if ln.startswith("dag run ")]
    assert line.startswith(f"dag run {expected}")
    if expected == "failed":
        assert "'vet_training_data': 'failed'" in line
        assert "'train_model': 'upstream_failed'" in line
        assert "AirflowFailException: datavet audit failed" in proc.stdout + proc.stderr


@pytest.mark.slow
@pytest.mark.skipif(not DAGSTER_PYTHON, reason="set DATAVET_DAGSTER_PYTHON to run real Dagster")
@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (PLANTED, "run success=False checks=[('datavet_audit', False, 'ERROR')] "
         "materialized=['training_data']"),
        (CLEAN, "run success=True checks=[('datavet_audit', True, 'WARN')] "
         "materialized=['model', 'training_data']"),
    ],
)  # fmt: skip
def test_dagster_asset_check_run(tmp_path, data, expected):
    e = env(DAGSTER_HOME=tmp_path, DATAVET_TRAIN=data[0], DATAVET_TEST=data[1])
    proc = subprocess.run(
        [DAGSTER_PYTHON, EXAMPLES / "dagster_assets.py"],
        env=e, capture_output=True, text=True, timeout=600, cwd=tmp_path,
    )  # fmt: skip
    assert expected in proc.stdout.splitlines(), proc.stdout[-2000:] + proc.stderr[-2000:]


# --------------------------------------------------------------------------------------------
# pytest helper


def run_pytest(**extra):
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
         EXAMPLES / "test_training_data.py"],
        capture_output=True, text=True, env=env(**extra), cwd=ROOT, timeout=300,
    )  # fmt: skip


def test_pytest_example_passes_on_clean_data():
    proc = run_pytest()
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert "2 passed" in proc.stdout


def test_pytest_example_fails_with_the_findings():
    proc = run_pytest(DATAVET_TRAIN=PLANTED[0], DATAVET_TEST=PLANTED[1])
    assert proc.returncode == 1
    assert "2 failed" in proc.stdout
    assert "AssertionError: datavet: 3 findings at or above 'error'" in proc.stdout
    assert "error V001 nan-values [train]: Column 'x1' has 3 NaN/missing values" in proc.stdout
    assert "datavet/testing.py" not in proc.stdout  # __tracebackhide__: the user's frame only


def test_assert_clean_returns_the_report_and_takes_a_report():
    report = assert_clean(*CLEAN, target="label")
    assert report.passed
    assert assert_clean(report) is report
    failed = datavet.audit(*PLANTED, target="label")
    with pytest.raises(AssertionError, match="datavet: 3 findings at or above 'error'"):
        assert_clean(failed)
    with pytest.raises(AssertionError, match="warning F001 constant-feature"):
        assert_clean(failed, fail_on="warning")


def test_assert_clean_uses_the_project_config(monkeypatch):
    monkeypatch.chdir(EXAMPLES / "project")
    with pytest.raises(AssertionError, match="S001 train-test-overlap"):
        assert_clean(dataset="planted", config=True)
    report = assert_clean(dataset="clean")
    assert report.fail_on.label == "error" and "F002" not in {o.code for o in report.outcomes}


# --------------------------------------------------------------------------------------------
# the example project config


def test_example_project_audits_its_datasets(capsys, monkeypatch):
    from datavet.cli import main

    monkeypatch.chdir(EXAMPLES / "project")
    code = main(["audit"])
    out = capsys.readouterr().out
    assert code == 1
    assert "== dataset planted ==" in out and "== dataset clean ==" in out
    assert "x3 is the sensor's bias input: constant by design" in out
    assert main(["config", "--format", "json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["severity"] == {"S002": "error"} and "F002" not in payload["rules"]


# --------------------------------------------------------------------------------------------
# pre-commit hooks


@pytest.fixture(scope="module")
def hooks():
    return yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))


def test_hooks_have_pre_commits_required_keys(hooks):
    assert [h["id"] for h in hooks] == ["datavet", "datavet-project"]
    for h in hooks:
        assert {"id", "name", "entry", "language"} <= set(h)
        assert h["language"] == "python"
        argv = shlex.split(h["entry"])
        assert argv[0] == "datavet"
        _parser().parse_args([*argv[1:], *(["x.csv"] if argv[1] == "check" else [])])
    assert hooks[1]["pass_filenames"] is False


def test_hook_file_patterns_cover_every_tabular_format(hooks):
    pattern = re.compile(hooks[0]["files"])
    for suffix in CSV_SUFFIXES | ARROW_SUFFIXES | PARQUET_SUFFIXES:
        assert pattern.search(f"data/train{suffix}"), suffix
    assert pattern.search("data/train.csv.gz")
    for other in ("src/app.py", "README.md", "data/train.csv.bak", "pyproject.toml"):
        assert not pattern.search(other), other
    project = re.compile(hooks[1]["files"])
    assert project.search("pyproject.toml") and project.search("sub/datavet.toml")
    assert project.search("data/x.parquet") and not project.search("setup.py")


def test_hook_entry_runs_as_pre_commit_runs_it(hooks, monkeypatch):
    """pre-commit runs `entry + args + changed files` and fails the commit on a non-zero exit."""
    monkeypatch.chdir(EXAMPLES / "project")
    base = [sys.executable, "-m", *shlex.split(hooks[0]["entry"])]
    bad = subprocess.run(
        [*base, *map(str, PLANTED)],
        capture_output=True,
        text=True,
        env=env(PRE_COMMIT=1),
        timeout=300,
    )
    assert bad.returncode == 1
    assert bad.stdout.count("== dataset") == 0  # both files belong to one dataset: one audit
    assert "S001 train-test-overlap" in bad.stdout  # so overlap is still checked
    good = subprocess.run(
        [*base, str(CLEAN[0])], capture_output=True, text=True, env=env(), timeout=300
    )
    assert good.returncode == 0, good.stderr


# --------------------------------------------------------------------------------------------
# GitHub Actions example workflow


@pytest.fixture(scope="module")
def workflow():
    text = (ROOT / ".github" / "workflows" / "example-datavet.yml").read_text(encoding="utf-8")
    return yaml.safe_load(text)


def test_workflow_does_not_run_ci_here(workflow):
    triggers = workflow[True]  # YAML 1.1 reads the key `on` as True
    assert list(triggers) == ["workflow_dispatch"]


def test_workflow_commands_are_valid_datavet_commands(workflow):
    steps = workflow["jobs"]["vet-data"]["steps"]
    commands = [
        line.split("||")[0].strip()
        for step in steps
        for line in step.get("run", "").splitlines()
        if line.strip().startswith("datavet ")
    ]
    assert len(commands) == 1  # one audit, every output
    args = _parser().parse_args(shlex.split(commands[0])[1:])
    formats = {args.format, *(fmt for fmt, _ in args.output_formats)}
    assert formats == {"github", "sarif", "junit"}
    assert args.html == "reports/datavet.html"
    sarif = dict(args.output_formats)["sarif"]
    uploads = [s["with"]["sarif_file"] for s in steps if "upload-sarif" in s.get("uses", "")]
    assert uploads == [sarif]
    uses = [s.get("uses", "") for s in steps]
    assert any(u.startswith("github/codeql-action/upload-sarif@") for u in uses)
    assert workflow["permissions"]["security-events"] == "write"


def test_workflow_audit_step_writes_every_report_from_one_audit(
    workflow, tmp_path, monkeypatch, capsys
):
    """The workflow's one `datavet audit` run in the example project: annotations on stdout,
    the job summary, and the SARIF, JUnit and HTML files the later steps upload."""
    import shutil

    import datavet.api
    from datavet.cli import main

    project = tmp_path / "examples" / "project"
    project.mkdir(parents=True)
    shutil.copy(EXAMPLES / "project" / "pyproject.toml", project)
    (tmp_path / "sample_data").symlink_to(ROOT / "sample_data")
    monkeypatch.chdir(project)
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    calls = []
    real = datavet.api.audit
    monkeypatch.setattr(datavet.api, "audit", lambda *a, **k: calls.append(a) or real(*a, **k))
    steps = workflow["jobs"]["vet-data"]["steps"]
    (run,) = [s["run"] for s in steps if s.get("run", "").startswith("datavet audit")]
    assert main(shlex.split(run)[1:]) == 1
    out = capsys.readouterr().out
    assert len(calls) == 2  # the two datasets, once each
    assert out.splitlines()[-1].startswith("datavet clean:")
    assert summary.read_text().count("### datavet: ") == 2
    sarif = json.loads((project / "reports" / "datavet.sarif").read_text())
    assert len(sarif["runs"]) == 2
    assert "<testsuites" in (project / "reports" / "datavet-junit.xml").read_text()
    assert sorted(p.name for p in (project / "reports").glob("*.html")) == [
        "datavet-clean.html",
        "datavet-planted.html",
    ]
