"""Configuration edge cases a CI job meets: `datavet config` printing onto the config it reads,
an empty datavet.toml hiding pyproject.toml's table, one rule under two keys, --config with
--isolated, a selection that leaves no rule, and another command's rule codes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import datavet
from datavet.cli import main
from datavet.config import ConfigError, load
from datavet.errors import UsageError
from datavet.rules import select_curve_rules, select_probes, select_rules

ROOT = Path(__file__).resolve().parents[1]
TRAIN = ROOT / "sample_data" / "planted_train.csv"
TEST = ROOT / "sample_data" / "planted_test.csv"
LOG = ROOT / "sample_data" / "curves" / "grad_spikes.csv"
PYPROJECT = '[tool.datavet]\nfail-on = "warning"\nselect = ["F001", "F003"]\n'


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A folder whose pyproject.toml configures datavet, as the working directory."""
    (tmp_path / "pyproject.toml").write_text(PYPROJECT, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def config_into(folder: Path, name: str, mode: str) -> subprocess.CompletedProcess:
    """`datavet config > NAME` (mode "w") or `>> NAME` (mode "a"): the shell opens the file
    before datavet starts."""
    with open(folder / name, mode, encoding="utf-8") as stdout:
        return subprocess.run(
            [sys.executable, "-m", "datavet", "config"],
            stdout=stdout,
            stderr=subprocess.PIPE,
            text=True,
            cwd=folder,
            timeout=60,
        )


# --------------------------------------------------------------------------------------------
# CL-11: `datavet config` onto the config file; an empty datavet.toml hiding [tool.datavet]


def test_config_refuses_to_append_to_the_pyproject_it_reads(project):
    proc = config_into(project, "pyproject.toml", "a")
    assert proc.returncode == 2
    assert "pyproject.toml: is the config file being read" in proc.stderr
    assert (project / "pyproject.toml").read_text(encoding="utf-8") == PYPROJECT
    assert load().fail_on.label == "warning"  # still valid TOML, still the project's settings


def test_config_into_a_new_datavet_toml_is_refused_and_the_empty_file_is_an_error(project, capsys):
    proc = config_into(project, "datavet.toml", "w")
    assert proc.returncode == 2
    assert "datavet.toml: is the config file being read" in proc.stderr
    # the shell left datavet.toml empty: it must not silently replace pyproject.toml's table
    code, _, err = run(capsys, "audit", TRAIN)
    assert code == 2
    assert "datavet.toml: holds no settings but hides [tool.datavet] in pyproject.toml" in err
    assert len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("text", ["", "# settings to come\n\n"])
def test_a_keyless_datavet_toml_beside_a_configured_pyproject_is_an_error(project, text):
    (project / "datavet.toml").write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError, match=r"datavet\.toml: .*pyproject\.toml"):
        load()
    # named explicitly it is the user's choice: the defaults
    assert load(project / "datavet.toml").fail_on.label == "error"
    # with settings, datavet.toml wins as documented
    (project / "datavet.toml").write_text('fail-on = "info"\n', encoding="utf-8")
    assert load().fail_on.label == "info"


def test_an_empty_datavet_toml_alone_still_means_the_defaults(tmp_path, monkeypatch):
    (tmp_path / "datavet.toml").write_text("", encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n', encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert load().config == (tmp_path / "datavet.toml").resolve()
    # and `datavet config` onto a file it does not read still works
    proc = config_into(tmp_path, "settings.toml", "w")
    assert proc.returncode == 0, proc.stderr
    assert 'fail-on = "error"' in (tmp_path / "settings.toml").read_text(encoding="utf-8")
    # ... but not onto the datavet.toml it reads
    assert config_into(tmp_path, "datavet.toml", "a").returncode == 2


# --------------------------------------------------------------------------------------------
# CL-2: one rule under two keys

SEVERITY = "[tool.datavet.severity]\n"


@pytest.mark.parametrize(
    ("table", "first", "second"),
    [
        (SEVERITY + 'S001 = "error"\ntrain-test-overlap = "info"\n', "S001", "train-test-overlap"),
        (SEVERITY + 'train-test-overlap = "info"\nS001 = "error"\n', "train-test-overlap", "S001"),
        (SEVERITY + 'S001 = "error"\ns001 = "error"\n', "S001", "s001"),
        (
            "[tool.datavet.thresholds.L001]\nmax_ratio = 5\n"
            "[tool.datavet.thresholds.class-imbalance]\nmax_ratio = 9\n",
            "L001",
            "class-imbalance",
        ),
    ],
)
def test_one_rule_under_two_keys_is_an_error_naming_both(tmp_path, capsys, table, first, second):
    config = tmp_path / "pyproject.toml"
    config.write_text(table, encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load(config)
    message = str(caught.value)
    assert f"{first!r} and {second!r} both name" in message
    assert "pyproject.toml" in message
    code, _, err = run(capsys, "audit", TRAIN, "--config", config)
    assert code == 2
    assert "both name" in err


# --------------------------------------------------------------------------------------------
# CL-3: --config with --isolated


@pytest.mark.parametrize("command", [["audit", TRAIN], ["config"]])
def test_config_and_isolated_together_are_a_usage_error(tmp_path, capsys, command):
    config = tmp_path / "ci.toml"
    config.write_text('select = ["F001"]\n', encoding="utf-8")
    code, out, err = run(capsys, *command, "--config", config, "--isolated")
    assert code == 2
    assert out == ""
    assert err.strip() == "datavet: error: --config and --isolated cannot be used together"


# --------------------------------------------------------------------------------------------
# CL-9: a selection that leaves no rule


def test_a_config_selection_that_leaves_no_rule_is_exit_2_naming_it(tmp_path, monkeypatch, capsys):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.datavet]\nselect = ["S001", "V001"]\nignore = ["S", "V"]\n', encoding="utf-8"
    )
    monkeypatch.chdir(tmp_path)
    for command in (["audit", TRAIN, "--test", TEST], ["check", TRAIN], ["config"]):
        code, out, err = run(capsys, *command)
        assert code == 2, command
        assert "passed" not in out
        assert err.strip() == (
            "datavet: error: no rule left to run: select S001, V001 minus ignore S, V leaves "
            "none (pyproject.toml)"
        )
    # a --select of its own replaces the file's selection: it runs
    code, _, _ = run(capsys, "audit", TRAIN, "--select", "F001")
    assert code == 0


@pytest.mark.parametrize(
    "argv",
    [
        ["audit", TRAIN, "--isolated", "--ignore", "ALL"],
        ["audit", TRAIN, "--isolated", "--select", "V001", "--ignore", "V001"],
        ["curves", LOG, "--select", "C001", "--ignore", "C"],
    ],
)
def test_flags_that_leave_no_rule_are_exit_2(capsys, argv):
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert out == ""
    assert "no rule left to run" in err
    assert len(err.strip().splitlines()) == 1


def test_the_python_functions_refuse_an_empty_selection():
    with pytest.raises(UsageError, match="no rule left to run: select S001 minus ignore S"):
        select_rules("S001", ignore="S")
    with pytest.raises(UsageError, match="no rule left to run"):
        select_probes("M002", ignore="M")
    with pytest.raises(UsageError, match="no rule left to run"):
        select_curve_rules(ignore="ALL")
    with pytest.raises(UsageError, match="no rule left to run"):
        datavet.audit(TRAIN, select=["V001"], ignore=["nan-values"])


# --------------------------------------------------------------------------------------------
# CL-12: a rule of another command


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (
            ["audit", TRAIN, "--isolated", "--select", "M001"],
            "M001 (initial-loss-mismatch) is a model-probe rule: `datavet probe` runs it; "
            "audit runs V, F, L, S, B and T rules",
        ),
        (
            ["audit", TRAIN, "--isolated", "--ignore", "loss-divergence"],
            "C002 (loss-divergence) is a training-curve rule: `datavet curves` runs it",
        ),
        (
            ["curves", LOG, "--ignore", "V001"],
            "V001 (nan-values) is a data-audit rule: `datavet audit` runs it; curves runs C rules",
        ),
        (
            ["audit", TRAIN, "--isolated", "--select", "M011"],
            "M011 (gradient-spike) is a gradient-monitor rule: datavet.GradientMonitor runs it",
        ),
    ],
)
def test_another_commands_rule_says_which_command_runs_it(capsys, argv, expected):
    code, _, err = run(capsys, *argv)
    assert code == 2
    assert expected in err
    assert "unknown" not in err


def test_another_commands_rule_in_probe_and_in_the_config(tmp_path):
    with pytest.raises(UsageError, match=r"C002 \(loss-divergence\) is a training-curve rule"):
        select_probes("C002")
    with pytest.raises(UsageError, match="'V' names data-audit rules .*; probe runs M rules"):
        select_probes("V")
    config = tmp_path / "pyproject.toml"
    config.write_text('[tool.datavet]\nselect = ["C001"]\n', encoding="utf-8")
    with pytest.raises(ConfigError, match=r"tool\.datavet\.select: C001 .* `datavet curves`"):
        load(config)
    config.write_text('[tool.datavet.severity]\nM001 = "error"\n', encoding="utf-8")
    with pytest.raises(ConfigError, match=r"tool\.datavet\.severity\.M001: M001 .*model-probe"):
        load(config)
    # a code of no command at all is still "unknown"
    with pytest.raises(UsageError, match="unknown rule selector 'Q9'"):
        select_rules("Q9")
