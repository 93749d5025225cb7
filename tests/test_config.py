"""Configuration: discovery, every key, errors that name the file and the key (exit 2), CLI flags
over the file, per-column ignores, named datasets, and `datavet config`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

import datavet
from datavet import Severity
from datavet.cli import main
from datavet.config import (
    ColumnIgnore,
    ConfigError,
    Settings,
    apply_column_ignores,
    find_config,
    load,
    tomllib,
)
from datavet.output.json import schema

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_data"
PLANTED_TRAIN = json.dumps(str(SAMPLE / "planted_train.csv"))
PLANTED_TEST = json.dumps(str(SAMPLE / "planted_test.csv"))
CLEAN_TRAIN = json.dumps(str(SAMPLE / "clean_train.parquet"))

FULL = f"""
[project]
name = "demo"

[tool.datavet]
select = ["V", "F", "L", "S"]
extend-select = ["B003"]
ignore = ["F002"]
fail-on = "warning"
target = "label"
task = "classification"
baselines = true

[tool.datavet.severity]
S002 = "error"
class-imbalance = "info"

[tool.datavet.thresholds.L001]
max_ratio = 5

[tool.datavet.per-column-ignores]
x3 = {{ rules = ["F001"], reason = "x3 is a bias input, constant on purpose" }}
"id_*" = {{ rules = ["S", "F002"], reason = "identifiers" }}

[tool.datavet.datasets.planted]
train = {PLANTED_TRAIN}
test = {PLANTED_TEST}
target = "label"

[tool.datavet.datasets]
clean = {{ train = {CLEAN_TRAIN}, task = "classification" }}
"""


def write(folder: Path, text: str, name: str = "pyproject.toml") -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def run(capsys, argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A project folder with the full pyproject.toml, as the working directory."""
    write(tmp_path, FULL)
    monkeypatch.chdir(tmp_path)
    return tmp_path


# --------------------------------------------------------------------------------------------
# discovery


def test_find_config_walks_up_to_the_first_file_with_our_table(tmp_path):
    write(tmp_path, "[tool.datavet]\nfail-on = 'info'\n")
    deep = tmp_path / "a" / "b"
    deep.mkdir(parents=True)
    write(tmp_path / "a", "[project]\nname = 'no-datavet-here'\n")  # skipped: no table
    assert find_config(deep) == (tmp_path / "pyproject.toml").resolve()
    assert load(start=deep).fail_on is Severity.INFO


def test_datavet_toml_wins_in_the_same_folder(tmp_path):
    write(tmp_path, "[tool.datavet]\nfail-on = 'info'\n")
    write(tmp_path, "fail-on = 'warning'\n", name="datavet.toml")
    assert find_config(tmp_path).name == "datavet.toml"
    assert load(start=tmp_path).fail_on is Severity.WARNING


def test_no_config_gives_defaults(tmp_path):
    assert find_config(tmp_path) is None or find_config(tmp_path).parent != tmp_path
    assert Settings().fail_on is Severity.ERROR and Settings().select is None


# --------------------------------------------------------------------------------------------
# every key


def test_full_config_is_read(tmp_path):
    s = load(write(tmp_path, FULL))
    assert s.select == ("V", "F", "L", "S") and s.extend_select == ("B003",)
    assert s.ignore == ("F002",)
    assert s.fail_on is Severity.WARNING
    assert s.target == "label" and s.task == "classification" and s.baselines is True
    assert dict(s.severity) == {"S002": Severity.ERROR, "L001": Severity.INFO}  # name -> code
    assert dict(s.thresholds["L001"]) == {"max_ratio": 5}
    assert s.per_column_ignores == (
        ColumnIgnore("x3", ("F001",), "x3 is a bias input, constant on purpose"),
        ColumnIgnore("id_*", ("S", "F002"), "identifiers"),
    )
    assert set(s.datasets) == {"planted", "clean"}
    planted = s.datasets["planted"]
    assert Path(planted.train).resolve() == SAMPLE / "planted_train.csv"
    assert planted.target == "label"
    assert planted.lines == {"table": 25, "train": 26, "test": 27}
    assert s.datasets["clean"].lines == {"table": 31}  # an inline table under [datasets]
    codes = [r.code for r in s.rules()]
    assert "B003" in codes and "F002" not in codes and "B001" not in codes


def test_audit_options_feed_audit(tmp_path):
    s = load(write(tmp_path, FULL))
    report = datavet.audit(
        SAMPLE / "planted_train.csv",
        SAMPLE / "planted_test.csv",
        target="label",
        **s.audit_options(),
    )
    assert report.fail_on is Severity.WARNING
    outcomes = {o.code for o in report.outcomes}
    assert "F002" not in outcomes and "B003" in outcomes and "B001" not in outcomes
    assert [i.finding.code for i in report.ignored] == ["F001"]


def test_relative_dataset_paths_are_relative_to_the_config(tmp_path, monkeypatch):
    (tmp_path / "data").mkdir()
    write(tmp_path, "[tool.datavet.datasets.d]\ntrain = 'data/train.csv'\n")
    elsewhere = tmp_path / "sub"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    s = load()
    assert (elsewhere / s.datasets["d"].train).resolve() == tmp_path / "data" / "train.csv"


# --------------------------------------------------------------------------------------------
# errors: one line, the file and the key, exit 2

BAD = [
    ("fail_on = 'warning'", "tool.datavet.fail_on", "did you mean 'fail-on'?"),
    ("selct = ['V']", "tool.datavet.selct", "did you mean 'select'?"),
    ("select = ['V0O1']", "tool.datavet.select", "'V0O1'"),
    ("ignore = ['Z']", "tool.datavet.ignore", "'Z'"),
    ("extend-select = 'B00X'", "tool.datavet.extend-select", "'B00X'"),
    ("fail-on = 'fatal'", "tool.datavet.fail-on", "unknown severity 'fatal'"),
    ("fail-on = 3", "tool.datavet.fail-on", "expected a severity name"),
    ("task = 'ranking'", "tool.datavet.task", "unknown task 'ranking'"),
    ("baselines = 'no'", "tool.datavet.baselines", "expected true or false"),
    ("[tool.datavet.severity]\nS0002 = 'error'", "tool.datavet.severity.S0002", "unknown rule"),
    ("[tool.datavet.severity]\nS002 = 'bad'", "tool.datavet.severity.S002", "unknown severity"),
    ("[tool.datavet.thresholds.L001]\nmax_ration = 5", "thresholds.L001.max_ration", "max_ratio"),
    ("[tool.datavet.thresholds.L001]\nmax_ratio = 'x'", "L001.max_ratio", "expected a number"),
    ("[tool.datavet.thresholds.L001]\nmax_ratio = true", "L001.max_ratio", "expected a number"),
    ("[tool.datavet.thresholds]\nL0001 = { a = 1 }", "tool.datavet.thresholds.L0001", "unknown"),
    (
        "[tool.datavet.per-column-ignores]\nx = { rules = ['F0001'], reason = 'r' }",
        "per-column-ignores.x.rules",
        "'F0001'",
    ),
    (
        "[tool.datavet.per-column-ignores]\nx = { rules = ['F001'] }",
        "per-column-ignores.x",
        "missing 'reason'",
    ),
    (
        "[tool.datavet.per-column-ignores]\nx = { rules = ['F001'], reason = ' ' }",
        "per-column-ignores.x.reason",
        "non-empty",
    ),
    (
        "[tool.datavet.per-column-ignores]\nx = { rule = ['F001'], reason = 'r' }",
        "per-column-ignores.x.rule",
        "did you mean 'rules'?",
    ),
    ("[tool.datavet.per-column-ignores]\nx = ['F001']", "per-column-ignores.x", "expected"),
    ("[tool.datavet.datasets.d]\ntest = 't.csv'", "tool.datavet.datasets.d", "missing 'train'"),
    ("[tool.datavet.datasets.d]\ntrain = 'a'\ntraget = 'y'", "datasets.d.traget", "'target'"),
    ("[tool.datavet.datasets]\nd = 'a.csv'", "tool.datavet.datasets.d", "expected"),
]


@pytest.mark.parametrize(("body", "key", "detail"), BAD, ids=[b[1] for b in BAD])
def test_bad_config_names_file_and_key(tmp_path, body, key, detail):
    if not body.startswith("["):
        body = "[tool.datavet]\n" + body
    path = write(tmp_path, body + "\n")
    with pytest.raises(ConfigError) as info:
        load(path)
    message = str(info.value)
    assert message.startswith("pyproject.toml: ") or message.startswith(str(path))
    assert key in message and detail in message
    assert "\n" not in message


@pytest.mark.parametrize(("body", "key", "detail"), BAD[:3] + BAD[15:17], ids=lambda x: x[:12])
def test_bad_config_is_exit_2_with_one_line(tmp_path, monkeypatch, capsys, body, key, detail):
    if not body.startswith("["):
        body = "[tool.datavet]\n" + body
    write(tmp_path, body + "\n")
    monkeypatch.chdir(tmp_path)
    argv = ["audit", SAMPLE / "clean_train.csv", "--target", "label"]
    code, out, err = run(capsys, argv)
    assert code == 2
    assert out == ""
    assert err.startswith("datavet: error: pyproject.toml: ") and key in err and detail in err
    assert len(err.strip().splitlines()) == 1


def test_datavet_toml_errors_have_no_tool_prefix(tmp_path):
    path = write(tmp_path, "fail_on = 'x'\n", name="datavet.toml")
    with pytest.raises(ConfigError, match=r"datavet.toml: fail_on: unknown key 'fail_on'"):
        load(path)


def test_invalid_toml_and_missing_file(tmp_path, monkeypatch, capsys):
    write(tmp_path, "[tool.datavet]\nselect = [\n")
    monkeypatch.chdir(tmp_path)
    code, _, err = run(capsys, ["config"])
    assert code == 2 and err.startswith("datavet: error: pyproject.toml: invalid TOML")
    code, _, err = run(capsys, ["config", "--config", tmp_path / "nope.toml"])
    assert code == 2 and "nope.toml: config file not found" in err


def test_config_flag_takes_a_pyproject_under_another_name(tmp_path, capsys):
    path = write(tmp_path, "[tool.datavet]\nfail-on = 'info'\n", name="ci-pyproject.toml")
    assert load(path).fail_on is Severity.INFO
    code, out, _ = run(capsys, ["config", "--format", "json", "--config", path])
    assert code == 0 and json.loads(out)["fail-on"] == "info"


def test_explicit_pyproject_without_table(tmp_path, capsys):
    path = write(tmp_path, "[project]\nname = 'x'\n")
    code, _, err = run(capsys, ["config", "--config", path])
    assert code == 2 and "no [tool.datavet] table" in err


# --------------------------------------------------------------------------------------------
# CLI flags over the file


def test_cli_fail_on_overrides_config(project, capsys):
    argv = ["audit", SAMPLE / "clean_train.parquet", "--test", SAMPLE / "clean_test.parquet"]
    code, out, _ = run(capsys, [*argv, "--format", "json"])
    assert json.loads(out)["fail_on"] == "warning"
    code, out, _ = run(capsys, [*argv, "--format", "json", "--fail-on", "error"])
    assert json.loads(out)["fail_on"] == "error"


def test_cli_select_replaces_config_selection_and_ignore_adds(project, capsys):
    code, out, _ = run(capsys, ["config", "--format", "json", "--select", "V001,F002"])
    payload = json.loads(out)
    assert code == 0
    assert payload["rules"] == ["V001", "F002"]  # the file's ignore of F002 is replaced too
    code, out, _ = run(capsys, ["config", "--format", "json", "--ignore", "S"])
    rules = json.loads(out)["rules"]
    assert not any(r.startswith("S") for r in rules) and "F002" not in rules and "V001" in rules


def test_isolated_ignores_the_config(project, capsys):
    code, out, _ = run(capsys, ["config", "--format", "json", "--isolated"])
    payload = json.loads(out)
    assert payload["config"] is None and payload["fail-on"] == "error"


def test_unknown_rule_on_the_command_line_is_exit_2(project, capsys):
    code, out, err = run(capsys, ["config", "--select", "Q9"])
    assert code == 2 and out == "" and "'Q9'" in err


# --------------------------------------------------------------------------------------------
# datavet config


def test_config_prints_resolved_settings_that_read_back_the_same(project, capsys):
    code, out, err = run(capsys, ["config", "--fail-on", "info"])
    assert code == 0 and err == ""
    assert out.startswith("# datavet settings resolved from pyproject.toml")
    again = project / "printed.toml"
    again.write_text(out, encoding="utf-8")
    printed = load(again)
    original = load(project / "pyproject.toml").override(fail_on="info")
    for field in ("select", "extend_select", "ignore", "fail_on", "target", "task", "baselines"):
        assert getattr(printed, field) == getattr(original, field), field
    assert dict(printed.severity) == dict(original.severity)
    assert {k: dict(v) for k, v in printed.thresholds.items()} == {"L001": {"max_ratio": 5}}
    assert printed.per_column_ignores == original.per_column_ignores
    assert {n: (d.train, d.test, d.target) for n, d in printed.datasets.items()} == {
        n: (d.train, d.test, d.target) for n, d in original.datasets.items()
    }


def test_config_toml_escapes_odd_strings(tmp_path):
    odd = 'a "quoted"\\ name\x7f\n'
    s = Settings(per_column_ignores=(ColumnIgnore(odd, ("F001",), "why\tnot"),))
    text = s.to_toml()
    parsed = tomllib.loads(text)
    assert parsed["per-column-ignores"][odd] == {"rules": ["F001"], "reason": "why\tnot"}


# --------------------------------------------------------------------------------------------
# per-column ignores


def test_per_column_ignores_remove_exactly_those_findings():
    args = (SAMPLE / "planted_train.csv", SAMPLE / "planted_test.csv")
    plain = datavet.audit(*args, target="label")
    ignores = {
        "x3": {"rules": ["F001"], "reason": "bias input"},
        "x1": {"rules": ["V001"], "reason": "NaN handled by the model"},
    }
    report = datavet.audit(*args, target="label", per_column_ignores=ignores)
    removed = [
        f for f in plain.findings if (f.code, f.columns) in {("F001", ("x3",)), ("V001", ("x1",))}
    ]
    assert len(removed) == 3  # F001 x3 in train, V001 x1 in train and in test
    assert report.findings == [f for f in plain.findings if f not in removed]
    assert [(i.finding, i.reason) for i in report.ignored] == [
        (f, "bias input" if f.code == "F001" else "NaN handled by the model") for f in removed
    ]
    outcomes = {o.code: o for o in report.outcomes}
    assert outcomes["V001"].status.value == "passed" and outcomes["V001"].n_findings == 0
    assert outcomes["S001"].status.value == "failed"
    payload = report.to_dict()
    Draft202012Validator(schema()).validate(payload)
    assert payload["ignored"][0]["reason"] in ("bias input", "NaN handled by the model")
    assert {i["finding"]["code"] for i in payload["ignored"]} == {"F001", "V001"}


def test_ignore_does_not_touch_other_rules_or_columns():
    args = (SAMPLE / "planted_train.csv", SAMPLE / "planted_test.csv")
    plain = datavet.audit(*args, target="label")
    report = datavet.audit(
        *args,
        target="label",
        per_column_ignores={
            "x1": {"rules": ["F"], "reason": "r"},
            "x9": {"rules": "V", "reason": "r"},
        },
    )
    assert report.findings == plain.findings and report.ignored == []


def test_a_finding_about_several_columns_stays_unless_all_are_ignored():
    from datavet import Finding, Report
    from datavet.findings import Outcome, Status

    f = Finding("F003", "scale-mismatch", Severity.WARNING, "m", "train", ("a", "b"))
    report = Report([f], [Outcome("F003", "scale-mismatch", Status.FAILED, n_findings=1)], {})
    partial = apply_column_ignores(report, {"a": {"rules": ["F003"], "reason": "r"}})
    assert partial.findings == [f] and partial.ignored == []
    both = apply_column_ignores(
        report,
        {
            "a": {"rules": ["F003"], "reason": "r1"},
            "b": {"rules": ["scale-mismatch"], "reason": "r2"},
        },
    )
    assert both.findings == [] and both.ignored[0].reason == "r1; r2"
    glob = apply_column_ignores(report, {"?": {"rules": ["F"], "reason": "single letters"}})
    assert glob.findings == [] and glob.ignored[0].reason == "single letters"


def test_audit_rejects_bad_ignores():
    with pytest.raises(datavet.UsageError, match="F0001"):
        datavet.audit(
            SAMPLE / "clean_train.csv",
            per_column_ignores={"x": {"rules": ["F0001"], "reason": "r"}},
        )
    with pytest.raises(datavet.UsageError, match="reason"):
        datavet.audit(SAMPLE / "clean_train.csv", per_column_ignores={"x": {"rules": ["F001"]}})


def test_cli_report_shows_ignored_with_reason(project, capsys):
    argv = ["audit", SAMPLE / "planted_train.csv", "--test", SAMPLE / "planted_test.csv"]
    code, out, _ = run(capsys, argv)
    assert code == 1
    assert "ignored by per-column-ignores (1):" in out
    assert "F001 constant-feature train 'x3': x3 is a bias input, constant on purpose" in out
    code, out, _ = run(capsys, [*argv, "--format", "json"])
    payload = json.loads(out)
    assert [(i["finding"]["code"], i["reason"]) for i in payload["ignored"]] == [
        ("F001", "x3 is a bias input, constant on purpose")
    ]
    assert "F001" not in {f["code"] for f in payload["findings"]}


# --------------------------------------------------------------------------------------------
# named datasets: `datavet audit` with no arguments


def test_audit_without_arguments_audits_the_configured_datasets(project, capsys):
    code, out, err = run(capsys, ["audit"])
    assert code == 1  # planted fails; the worst exit code wins
    assert "== dataset planted ==" in out and "== dataset clean ==" in out
    assert "datavet: auditing planted" in err


def test_dataset_flag_picks_one(project, capsys):
    code, out, _ = run(capsys, ["audit", "--dataset", "clean", "--format", "json"])
    payload = json.loads(out)
    assert code == 0 and payload["datasets"]["train"]["rows"] == 800
    assert payload["target"] == "label" and payload["task"] == "classification"


def test_json_needs_one_dataset(project, capsys):
    code, out, err = run(capsys, ["audit", "--format", "json"])
    assert code == 2 and out == "" and "--format json holds one report" in err


def test_unknown_dataset_and_nothing_to_audit(project, tmp_path, monkeypatch, capsys):
    code, _, err = run(capsys, ["audit", "--dataset", "plantd"])
    assert code == 2 and "unknown dataset 'plantd'" in err and "planted" in err
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.chdir(empty)
    code, _, err = run(capsys, ["audit", "--isolated"])
    assert code == 2 and "nothing to audit" in err


def test_html_per_dataset(project, capsys):
    code, _, err = run(capsys, ["audit", "--html", project / "out" / "audit.html"])
    assert (project / "out" / "audit-planted.html").is_file()
    assert (project / "out" / "audit-clean.html").is_file()


def test_check_files_uses_the_dataset_a_file_belongs_to(project, tmp_path, capsys):
    lone = tmp_path / "lone.csv"
    lone.write_text("a,label\n1,0\n2,1\n3,0\n4,1\n", encoding="utf-8")
    argv = ["check", SAMPLE / "planted_test.csv", SAMPLE / "planted_train.csv", lone]
    code, out, err = run(capsys, argv)
    assert code == 1
    # both planted files are one audit (with train/test overlap), the lone file another
    assert out.count("== dataset") == 2
    assert "S001 train-test-overlap" in out
    assert f"== dataset {lone} ==" in out  # a file outside the config: named by its path


def test_tomli_is_a_conditional_dependency():
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    deps = tomllib.loads(text)["project"]["dependencies"]
    assert "tomli>=2; python_version < '3.11'" in deps


def test_hostile_dataset_name_stays_on_its_line(tmp_path, monkeypatch, capsys):
    write(
        tmp_path,
        '[tool.datavet.datasets."a\\n::error::pwned"]\n'
        f"train = {CLEAN_TRAIN}\n\n"
        f"[tool.datavet.datasets.b]\ntrain = {CLEAN_TRAIN}\n",
    )
    monkeypatch.chdir(tmp_path)
    s = load()
    assert "a\n::error::pwned" in s.datasets
    assert s.datasets["a\n::error::pwned"].lines == {"table": 1, "train": 2}
    code, out, err = run(capsys, ["audit", "--select", "V"])
    assert code == 0
    assert "== dataset a\\n::error::pwned ==" in out
    for line in (out + err).splitlines():
        assert not line.lstrip().startswith("::"), line
    code, out, _ = run(capsys, ["audit", "--select", "V", "--format", "github"])
    assert all(not ln.startswith("::") or ln.startswith("::notice") for ln in out.splitlines())
    assert "datavet a%0A: :error: :pwned: 0 error" in out


def test_dataset_declares_group_and_time_columns(tmp_path, monkeypatch, capsys):
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(3)
    n = 400
    frame = pd.DataFrame(
        {
            "patient": rng.integers(0, 40, n),
            "x": rng.normal(size=n),
            "day": pd.date_range("2024-01-01", periods=n, freq="h"),
            "label": rng.integers(0, 2, n),
        }
    )
    # split by rows, shuffled: every patient lands in both splits, and time interleaves
    frame = frame.sample(frac=1.0, random_state=0)
    frame.iloc[:300].to_csv(tmp_path / "train.csv", index=False)
    frame.iloc[300:].to_csv(tmp_path / "test.csv", index=False)
    write(
        tmp_path,
        """
[tool.datavet.datasets.visits]
train = "train.csv"
test = "test.csv"
target = "label"
group = "patient"
time = "day"
""",
    )
    monkeypatch.chdir(tmp_path)
    code, out, _ = run(capsys, ["config", "--format", "json"])
    resolved = json.loads(out)["datasets"]["visits"]
    assert resolved["group"] == "patient" and resolved["time"] == "day"
    code, out, _ = run(capsys, ["audit", "--format", "json", "--select", "S005,S008"])
    payload = json.loads(out)
    assert {f["code"] for f in payload["findings"]} == {"S005", "S008"}
    (group,) = [f for f in payload["findings"] if f["code"] == "S005"]
    assert group["columns"] == ["patient"]
    # a flag still wins over the dataset's key: another group column, no shared groups
    code, out, _ = run(
        capsys, ["audit", "--format", "json", "--select", "S005", "--group", "label"]
    )
    (finding,) = json.loads(out)["findings"]
    assert finding["columns"] == ["label"]


def test_dataset_rejects_a_non_string_group(tmp_path, monkeypatch, capsys):
    write(tmp_path, '[tool.datavet.datasets.d]\ntrain = "t.csv"\ngroup = 3\n')
    monkeypatch.chdir(tmp_path)
    code, _, err = run(capsys, ["config"])
    assert code == 2 and "tool.datavet.datasets.d.group" in err


def test_per_column_ignores_are_a_step_after_the_rules():
    """``datavet.ignores`` filters a finished report (a new one, with the reasons recorded);
    the report given is left as it was, and the settings module plans no jobs."""
    from datavet import config
    from datavet.ignores import ColumnIgnore as Ignore
    from datavet.ignores import apply_column_ignores as apply

    report = datavet.audit(SAMPLE / "planted_train.csv", SAMPLE / "planted_test.csv")
    nan = [f for f in report.findings if f.code == "V001" and f.columns == ("x1",)]
    assert nan
    before = list(report.findings)
    out = apply(report, [Ignore("x1", ("V001",), "imputed later")])
    assert report.findings == before and report.ignored == []
    assert not any(f.code == "V001" and f.columns == ("x1",) for f in out.findings)
    assert [i.finding for i in out.ignored] == nan
    assert {i.reason for i in out.ignored} == {"imputed later"}
    assert apply(report, []) is report
    assert Ignore is ColumnIgnore
    assert not hasattr(config, "plan") and not hasattr(config, "from_args")
