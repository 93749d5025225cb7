"""Every reader has a size and a depth bound and a one-line answer: deeply nested TOML, JSON
reports, JSON-lines logs, /dev/zero, YAML alias bombs and object tags, UTF-16 or binary
pyproject.toml, nonsense thresholds; outputs are capped (GitHub annotations) and inert (HTML
without raw control characters); a probe's code cannot end the run with exit 0."""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pandas as pd
import pytest

import datavet
from datavet import config
from datavet.output import github

from .helpers import assert_one_line_error, child_env, run_cli

DEEP = 100_000  # far past Python's recursion limit


def _report(d, name="r.json"):
    path = d / name
    path.write_text(json.dumps({"schema_version": 1, "tool": "datavet", "findings": []}))
    return path


# ---------------------------------------------------------------------------------------------
# datavet diff


@pytest.mark.parametrize(
    "text, problem",
    [
        ("[" * DEEP + "]" * DEEP, "nests deeper"),
        ('{"a":' * 500 + "1" + "}" * 500, "nests deeper"),  # within the stack, still refused
        ('{"schema_version": 1, "tool": "datavet", "findings": [' + "[" * 60 + "]" * 60 + "]}",
         "nests deeper"),
    ],
)  # fmt: skip
def test_diff_refuses_deep_json(text, problem, tmp_path, capsys):
    bad = tmp_path / "deep.json"
    bad.write_text(text)
    code, out, err = run_cli(capsys, ["diff", bad, _report(tmp_path)])
    assert_one_line_error(code, out, err, names="deep.json", problem=[problem])


def test_diff_stops_at_dev_zero(tmp_path, capsys):
    code, out, err = run_cli(capsys, ["diff", "/dev/zero", _report(tmp_path)])
    assert_one_line_error(code, out, err, names="/dev/zero", problem=["NUL byte"])


def test_diff_refuses_a_directory(tmp_path, capsys):
    code, out, err = run_cli(capsys, ["diff", tmp_path, _report(tmp_path)])
    assert_one_line_error(code, out, err, problem=["directory"])


# ---------------------------------------------------------------------------------------------
# datavet curves


@pytest.mark.parametrize(
    "name, text",
    [
        ("deep.json", "[" * DEEP + "]" * DEEP),
        ("deep.jsonl", '{"a":' * DEEP + "1" + "}" * DEEP + "\n"),
        ("deep2.jsonl", '{"step": 1, "loss": ' + "[" * 200 + "]" * 200 + "}\n"),
    ],
)
def test_curves_refuses_deep_json(name, text, tmp_path, capsys):
    log = tmp_path / name
    log.write_text(text)
    code, out, err = run_cli(capsys, ["curves", log])
    assert_one_line_error(code, out, err, names=name, problem=["nests deeper"])


def test_curves_stops_at_dev_zero(capsys):
    code, out, err = run_cli(capsys, ["curves", "/dev/zero"])
    assert_one_line_error(code, out, err, names="/dev/zero", problem=["NUL byte"])


# ---------------------------------------------------------------------------------------------
# the config file


@pytest.mark.parametrize(
    "body",
    [
        "select = " + "[" * DEEP + "]" * DEEP,
        "x = " + "{a=" * 5000 + "1" + "}" * 5000,
        "[thresholds]\nL001 = " + "[" * 40 + "]" * 40,
    ],
)
def test_deeply_nested_toml_is_one_line(body, tmp_path, capsys, monkeypatch):
    (tmp_path / "datavet.toml").write_text(body + "\n")
    monkeypatch.chdir(tmp_path)
    code, out, err = run_cli(capsys, ["config"])
    assert_one_line_error(code, out, err, names="datavet.toml", problem=["deeper"])


@pytest.mark.parametrize(
    "raw, problem",
    [
        ('[tool.datavet]\nfail-on = "warning"\n'.encode("utf-16"), "UTF-16"),
        ('[tool.datavet]\nfail-on = "warning"\n'.encode("utf-16-le"), "UTF-16"),
        (b"\x89PNG\r\n\x1a\n" + bytes(range(256)), "NUL|UTF-8"),
        (b'[tool.datavet]\nfail-on = "warning"\n# caf\xe9\n', "not UTF-8"),
    ],
)
def test_a_pyproject_that_is_not_utf8_is_an_error_not_skipped(raw, problem, tmp_path, capsys):
    """Skipping it would lose its settings (here fail-on = warning) without a word."""
    (tmp_path / "pyproject.toml").write_bytes(raw)
    work = tmp_path / "src"
    work.mkdir()
    cwd = os.getcwd()
    os.chdir(work)
    try:
        code, out, err = run_cli(capsys, ["config"])
    finally:
        os.chdir(cwd)
    assert_one_line_error(code, out, err, names="pyproject.toml", problem=[problem])


def test_config_dev_zero_is_refused(capsys):
    code, out, err = run_cli(capsys, ["config", "--config", "/dev/zero"])
    assert_one_line_error(code, out, err, names="/dev/zero", problem=["larger than"])


@pytest.mark.parametrize(
    "code, key, value",
    [
        ("L001", "max_ratio", -5),
        ("L001", "max_ratio", 0.5),
        ("B001", "alpha", 1),
        ("B001", "alpha", 0),
        ("V001", "min_count", 0),
        ("V001", "min_count", 1.5),
        ("F002", "min_fraction", 1.01),
        ("T001", "max_std", 0),
        ("S007", "digits", -1),
    ],
)
def test_nonsense_thresholds_are_errors_naming_the_key(code, key, value, tmp_path, capsys):
    cfg = tmp_path / "datavet.toml"
    cfg.write_text(f"[thresholds.{code}]\n{key} = {value}\n")
    rc, out, err = run_cli(capsys, ["config", "--config", cfg])
    assert_one_line_error(
        rc, out, err, names=f"thresholds.{code}.{key}", problem=["range|whole number"]
    )


def test_every_rule_threshold_has_a_range_holding_its_default():
    """The rules a config file can tune (tabular and tensor): the range is the rule's own
    (``ranges``) or a shared name's (RANGES)."""
    from datavet.rules import RULES

    for rule in RULES:
        for name, default in rule.thresholds.items():
            assert rule.range_of(name) is not None, f"{rule.code}.{name} has no range"
            assert config.threshold_problem(name, default, rule) is None, (rule.code, name)


def test_a_rules_own_range_is_checked_and_needs_no_edit_outside_the_rule(tmp_path, capsys):
    """V007 declares its thresholds' ranges in its own class: min_share is a share (0..1)."""
    from datavet.framework import RANGES
    from datavet.rules import lookup

    assert "min_share" not in RANGES and lookup("V007").range_of("min_share") is not None
    cfg = tmp_path / "datavet.toml"
    cfg.write_text("[thresholds.V007]\nmin_share = 5\n")
    rc, out, err = run_cli(capsys, ["config", "--config", cfg])
    assert_one_line_error(rc, out, err, names="thresholds.V007.min_share", problem=["range"])


@pytest.mark.parametrize("value", [1, 10, 1e6])
def test_sensible_thresholds_are_accepted(value, tmp_path, capsys):
    cfg = tmp_path / "datavet.toml"
    cfg.write_text(f"[thresholds.L001]\nmax_ratio = {value}\n")
    rc, out, err = run_cli(capsys, ["config", "--config", cfg, "--format", "json"])
    assert rc == 0, err
    assert math.isclose(json.loads(out)["thresholds"]["L001"]["max_ratio"], value)


# ---------------------------------------------------------------------------------------------
# datavet journal --config-diff (JSON, TOML, YAML)

BOMB = "\n".join(
    ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    + [f"{b}: &{b} [{','.join(['*' + a] * 9)}]" for a, b in zip("abcdefgh", "bcdefghi")]
)


@pytest.mark.parametrize(
    "name, text, problem",
    [
        ("bomb.yaml", BOMB, "expands to more than"),
        ("tag.yaml", 'x: !!python/object/apply:os.system ["echo pwned"]\n', "tag"),
        ("local.yaml", "x: !custom 1\n", "tag"),
        ("deep.json", "[" * DEEP + "]" * DEEP, "deeper"),
        ("deep2.json", '{"a":' * 500 + "1" + "}" * 500, "deeper"),
        ("deep.toml", "x = " + "[" * DEEP + "]" * DEEP, "deeper"),
    ],
)
def test_config_diff_inputs_are_bounded(name, text, problem, tmp_path, capsys):
    pytest.importorskip("yaml") if name.endswith(".yaml") else None
    ok = tmp_path / "ok.json"
    ok.write_text('{"x": 1}')
    bad = tmp_path / name
    bad.write_text(text)
    code, out, err = run_cli(
        capsys,
        ["journal", "add", "--journal", tmp_path / "j.jsonl", "--hypothesis", "h",
         "--config-diff", ok, bad],
    )  # fmt: skip
    assert_one_line_error(code, out, err, names=name, problem=[problem])
    assert not (tmp_path / "j.jsonl").exists()


def test_a_journal_that_is_not_a_regular_file_is_refused(capsys):
    code, out, err = run_cli(capsys, ["journal", "list", "--journal", "/dev/zero"])
    assert_one_line_error(code, out, err, names="/dev/zero", problem=["regular file"])


def test_a_deeply_nested_journal_line_is_kept_not_a_crash(tmp_path, capsys):
    path = tmp_path / "j.jsonl"
    path.write_text('{"id": 1, "hypothesis": "h", "changes": ["c"]}\n' + "[" * DEEP + "\n")
    code, out, err = run_cli(capsys, ["journal", "list", "--journal", path])
    assert code == 0 and "1 line(s)" in err


# ---------------------------------------------------------------------------------------------
# outputs: GitHub annotations capped, HTML without raw control characters


def test_github_annotations_are_capped():
    name = "c" * 6_000_000
    frame = pd.DataFrame({name: [1.0, np.nan, 3.0, 4.0] * 5, "label": [0, 1] * 10})
    report = datavet.audit(frame, target="label", select=["V001"])
    text = github.render(report)
    assert report.findings and max(len(line) for line in text.splitlines()) < 10_000
    assert "more characters" in text


def test_html_has_no_raw_control_characters():
    frame = pd.DataFrame(
        {
            "nul\x00bel\x07": ["a\x1b[31m", "b\x00", "\x07c", "d"] * 5,
            "x\x1b]0;t\x07": [1.0, np.nan, 2.0, 3.0] * 5,
            "label": [0, 1] * 10,
        }
    )
    html = datavet.audit(frame, target="label").to_html()
    assert not re.search("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]", html)
    assert "\\x07" in html


# ---------------------------------------------------------------------------------------------
# datavet probe: the user's code cannot end the run with its own exit code


@pytest.mark.parametrize(
    "source",
    [
        "import sys\nsys.exit(0)\ndef factory():\n    pass\n",
        "import sys\ndef factory():\n    sys.exit(0)\n",
        "def factory():\n    raise SystemExit\n",
    ],
)
def test_probe_sys_exit_is_an_error_naming_the_file(source, tmp_path, capsys):
    model = tmp_path / "model.py"
    model.write_text(source)
    code, out, err = run_cli(capsys, ["probe", f"{model}:factory"])
    assert_one_line_error(code, out, err, names="model.py", problem=[r"sys\.exit"])


@pytest.mark.parametrize(
    "source",
    [
        "import os\nos._exit(0)\ndef factory():\n    pass\n",
        "import os\ndef factory():\n    os._exit(0)\n",
        "from os import _exit\ndef factory():\n    _exit(0)\n",
    ],
)
def test_probe_os_exit_is_an_error_naming_the_file(source, tmp_path):
    """os._exit cannot be caught; a child process proves the real exit status."""
    model = tmp_path / "model.py"
    model.write_text(source)
    done = subprocess.run(
        [sys.executable, "-m", "datavet", "probe", f"{model}:factory"],
        capture_output=True,
        text=True,
        env=child_env(),
        timeout=300,
    )
    assert done.returncode == 2, (done.returncode, done.stderr)
    assert done.stdout == ""
    assert done.stderr.startswith("datavet: error:") and "model.py" in done.stderr
    assert "os._exit(0)" in done.stderr and len(done.stderr.splitlines()) == 1


def test_os_exit_is_restored_after_the_probe_run(tmp_path, capsys):
    model = tmp_path / "model.py"
    model.write_text("import sys\ndef factory():\n    sys.exit(0)\n")
    real = os._exit
    run_cli(capsys, ["probe", f"{model}:factory"])
    assert os._exit is real


def test_probe_forked_children_still_exit(tmp_path):
    """A DataLoader-style forked child calls os._exit when done: it must still exit."""
    model = tmp_path / "model.py"
    model.write_text(
        textwrap.dedent(
            """
            import multiprocessing as mp
            def _work(q):
                q.put(7)
            def factory():
                ctx = mp.get_context("fork")
                q = ctx.Queue()
                p = ctx.Process(target=_work, args=(q,))
                p.start()
                got = q.get(timeout=60)
                p.join(60)
                raise ValueError(f"child said {got}, exit {p.exitcode}")
            """
        )
    )
    done = subprocess.run(
        [sys.executable, "-m", "datavet", "probe", f"{model}:factory"],
        capture_output=True,
        text=True,
        env=child_env(),
        timeout=300,
    )
    assert done.returncode == 2
    assert "child said 7, exit 0" in done.stderr and len(done.stderr.splitlines()) == 1
