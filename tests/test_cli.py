"""The command line: rules listing, rule docs, JSON on stdout, --output, colour, escaping."""

from __future__ import annotations

import inspect
import json
import os
import pty
import re
import select
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import datavet
from datavet import RULES
from datavet._io import write_atomic
from datavet.cli import main

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_data"
PLANTED = [
    "audit",
    str(SAMPLE / "planted_train.csv"),
    "--test",
    str(SAMPLE / "planted_test.csv"),
    "--target",
    "label",
]
ANSI = re.compile(r"\x1b\[")


def run_cli(capsys, argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def _env(**extra):
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR", "TERM")}
    env.update(extra)
    return env


# --------------------------------------------------------------------------------------------
# rules / rule


def test_rules_lists_every_rule(capsys):
    code, out, err = run_cli(capsys, ["rules"])
    assert code == 0
    assert err == ""
    lines = out.splitlines()
    # header, then the data rules, the model probes and the curve rules
    assert len(lines) == 1 + len(RULES) + len(datavet.PROBES) + len(datavet.CURVE_RULES)
    for rule, line in zip(RULES, lines[1:]):
        fields = line.split()
        assert fields[0] == rule.code
        assert fields[1] == rule.name
        assert fields[2] == rule.severity.label
        assert rule.summary in line


@pytest.mark.parametrize("key", ["V001", "nan-values", "v001", "NAN-VALUES"])
def test_rule_prints_docstring_sections(key, capsys):
    code, out, err = run_cli(capsys, ["rule", key])
    assert code == 0
    assert out.startswith("V001 nan-values (default severity: error)")
    doc = inspect.cleandoc(datavet.RULES[0].__doc__)
    assert doc.splitlines()[0] in out
    for section in ("**What it checks**", "**Why it matters**", "**How to fix**"):
        assert section in out
    assert doc in out


def test_rule_by_code_and_by_name_print_the_same(capsys):
    _, by_code, _ = run_cli(capsys, ["rule", "V001"])
    _, by_name, _ = run_cli(capsys, ["rule", "nan-values"])
    assert by_code == by_name


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.code)
def test_every_rule_has_documentation(rule, capsys):
    code, out, _ = run_cli(capsys, ["rule", rule.code])
    assert code == 0
    assert out.startswith(f"{rule.code} {rule.name} ")
    for section in ("What it checks", "Why it matters", "How to fix"):
        assert section in out
    for key, value in rule.thresholds.items():
        assert f"{key} = {value}" in out


def test_unknown_rule(capsys):
    code, out, err = run_cli(capsys, ["rule", "Z999"])
    assert code == 2
    assert out == ""
    assert err.startswith("datavet: error:") and "Z999" in err and len(err.splitlines()) == 1


# --------------------------------------------------------------------------------------------
# JSON on stdout


def test_json_stdout_is_only_json(capsys):
    code, out, err = run_cli(capsys, [*PLANTED, "--format", "json"])
    assert code == 1
    payload = json.loads(out)  # the whole of stdout is one JSON document
    assert out.lstrip().startswith("{") and out.rstrip().endswith("}")
    assert payload["tool"] == "datavet"
    assert payload["exit_code"] == 1
    assert {f["code"] for f in payload["findings"]} >= {"V001", "S001"}
    assert "{" not in err  # nothing of the payload leaks to stderr


def test_json_stdout_only_json_in_a_subprocess():
    proc = subprocess.run(
        [sys.executable, "-m", "datavet", *PLANTED, "--format", "json"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=_env(FORCE_COLOR="1"),
        timeout=60,
    )
    assert proc.returncode == 1
    payload = json.loads(proc.stdout)
    assert payload["passed"] is False
    assert not ANSI.search(proc.stdout)  # FORCE_COLOR must not colour a machine format


# --------------------------------------------------------------------------------------------
# --output


def _without_duration(text: str) -> dict:
    data = json.loads(text)
    data.pop("duration_s")
    return data


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_output_file_equals_stdout_and_creates_parents(fmt, tmp_path, capsys):
    target = tmp_path / "deep" / "er" / f"report.{fmt}"
    code, out, err = run_cli(capsys, [*PLANTED, "--format", fmt, "--output", target])
    assert code == 1
    assert out == ""
    assert str(target) in err
    assert target.is_file()
    written = target.read_text(encoding="utf-8")
    code2, stdout, _ = run_cli(capsys, [*PLANTED, "--format", fmt])
    assert code2 == 1
    if fmt == "json":
        assert _without_duration(written) == _without_duration(stdout)
    else:
        assert written == stdout
    assert os.listdir(target.parent) == [target.name]  # no temporary file left behind


def test_output_replaces_existing_report(tmp_path, capsys):
    target = tmp_path / "report.json"
    target.write_text('{"schema_version": 1, "tool": "datavet", "findings": []}')
    code, out, _ = run_cli(capsys, [*PLANTED, "--format", "json", "-o", target])
    assert code == 1
    assert json.loads(target.read_text())["findings"]
    assert sorted(os.listdir(tmp_path)) == ["report.json"]


def test_output_replaces_a_file_that_is_not_a_report_only_with_force(tmp_path, capsys):
    target = tmp_path / "report.json"
    target.write_text("old content")
    code, out, err = run_cli(capsys, [*PLANTED, "--format", "json", "-o", target])
    assert code == 2 and "--force" in err and target.read_text() == "old content"
    code, out, _ = run_cli(capsys, [*PLANTED, "--format", "json", "-o", target, "--force"])
    assert code == 1
    assert json.loads(target.read_text())["tool"] == "datavet"
    assert sorted(os.listdir(tmp_path)) == ["report.json"]


def test_output_text_has_no_colour(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("FORCE_COLOR", "1")
    target = tmp_path / "report.txt"
    run_cli(capsys, [*PLANTED, "--output", target])
    assert "\x1b" not in target.read_text()


def test_write_atomic_failure_keeps_old_file_and_leaves_no_temp(tmp_path, monkeypatch):
    target = tmp_path / "out.txt"
    target.write_text("previous")

    def fail(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(OSError, match="disk full"):
        write_atomic(target, "new")
    assert target.read_text() == "previous"
    assert os.listdir(tmp_path) == ["out.txt"]


def test_write_atomic_writes_exact_text(tmp_path):
    target = tmp_path / "a" / "b.txt"
    text = "line one\r\nline two é\n"
    write_atomic(target, text)
    assert target.read_bytes() == text.encode("utf-8")
    assert os.listdir(target.parent) == ["b.txt"]


# --------------------------------------------------------------------------------------------
# colour


def test_text_output_has_no_ansi_when_not_a_tty(capsys, monkeypatch):
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    monkeypatch.delenv("NO_COLOR", raising=False)
    code, out, _ = run_cli(capsys, PLANTED)
    assert code == 1
    assert "ERROR" in out
    assert "\x1b" not in out


def test_text_output_no_ansi_through_a_pipe():
    proc = subprocess.run(
        [sys.executable, "-m", "datavet", *PLANTED],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=_env(TERM="xterm"),
        timeout=60,
    )
    assert proc.returncode == 1
    assert "V001" in proc.stdout
    assert "\x1b" not in proc.stdout


def _run_on_tty(env) -> tuple[int, str]:
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "datavet", *PLANTED],
        stdout=slave,
        stderr=subprocess.DEVNULL,
        cwd=ROOT,
        env=env,
    )
    os.close(slave)
    chunks = []
    while True:
        ready, _, _ = select.select([master], [], [], 30)
        if not ready:
            break
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    code = proc.wait(timeout=30)
    return code, b"".join(chunks).decode("utf-8", "replace")


def test_colour_on_a_tty_and_no_color_turns_it_off():
    code, out = _run_on_tty(_env(TERM="xterm"))
    assert code == 1
    assert "V001" in out
    assert ANSI.search(out), "a terminal gets colour"
    code, out = _run_on_tty(_env(TERM="xterm", NO_COLOR="1"))
    assert code == 1
    assert "V001" in out
    assert "\x1b" not in out, "NO_COLOR must turn colour off"


def test_no_color_beats_force_color(capsys, monkeypatch):
    monkeypatch.setenv("FORCE_COLOR", "1")
    _, coloured, _ = run_cli(capsys, PLANTED)
    assert ANSI.search(coloured)
    monkeypatch.setenv("NO_COLOR", "1")
    _, plain, _ = run_cli(capsys, PLANTED)
    assert "\x1b" not in plain
    assert ANSI.sub("", re.sub(r"\x1b\[[0-9;]*m", "", coloured)) == plain


# --------------------------------------------------------------------------------------------
# data never reaches the terminal raw


HOSTILE = "x\x1b[31mred\x1b]0;pwned\x07\x08\x9b2J"


@pytest.fixture
def hostile_csv(tmp_path):
    rng = np.random.default_rng(2)
    n = 40
    a = rng.normal(size=n)
    a[3] = np.nan
    frame = pd.DataFrame(
        {HOSTILE: a, "b": np.full(n, 1.0), "label": rng.permutation(np.arange(n) % 2)}
    )
    path = tmp_path / "hostile.csv"
    frame.to_csv(path, index=False)
    return path


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_control_characters_in_column_names_are_escaped(fmt, hostile_csv, capsys, monkeypatch):
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    code, out, err = run_cli(capsys, ["audit", hostile_csv, "--target", "label", "--format", fmt])
    assert code == 1
    for ch in ("\x1b", "\x07", "\x08"):  # C0 controls (C1 below)
        assert ch not in out
        assert ch not in err
    if fmt == "json":
        payload = json.loads(out)
        nan = [f for f in payload["findings"] if f["code"] == "V001"]
        assert nan and nan[0]["columns"] == [HOSTILE]  # the data itself is kept exactly
    else:
        assert "V001" in out and "x\\x1b[31mred" in out


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_c1_control_characters_do_not_reach_stdout_raw(fmt, hostile_csv, capsys, monkeypatch):
    """U+009B is CSI, the one-character form of ESC [: terminals that honour C1 controls run it
    as an escape sequence. The text renderer escapes U+007F-U+009F; a JSON payload printed to a
    terminal must not carry them raw either (JSON allows \\u009b, which parses to the same
    string)."""
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    code, out, err = run_cli(capsys, ["audit", hostile_csv, "--target", "label", "--format", fmt])
    assert code == 1
    assert "V001" in out
    assert "\x9b" not in out
    assert "\x9b" not in err
    if fmt == "json":
        assert [HOSTILE] in [f["columns"] for f in json.loads(out)["findings"]]


def test_control_characters_in_target_error_are_escaped(hostile_csv, capsys):
    code, out, err = run_cli(capsys, ["audit", hostile_csv, "--target", "nope\x1b[2J"])
    assert code == 2
    assert out == ""
    assert "\x1b" not in err
    assert len(err.splitlines()) == 1 and err.startswith("datavet: error:")


# --------------------------------------------------------------------------------------------
# version


def test_python_m_datavet_version():
    proc = subprocess.run(
        [sys.executable, "-m", "datavet", "--version"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )
    assert proc.returncode == 0
    assert proc.stdout.strip() == f"datavet {datavet.__version__}"
    assert re.fullmatch(r"\d+\.\d+\.\d+.*", datavet.__version__)


def test_the_program_freezes_the_heap_after_the_command(monkeypatch, capsys):
    """``run`` (the console script, ``python -m datavet``) tells the collector to skip the
    heap once the command is done, so the interpreter's exit does not walk it; ``main``, which
    tests and other Python code call in a process that goes on, leaves the collector alone."""
    import gc

    from datavet import cli

    frozen = []
    monkeypatch.setattr(gc, "freeze", lambda: frozen.append(len(frozen)))
    monkeypatch.setattr(sys, "argv", ["datavet", "rules"])
    assert cli.run() == 0
    assert frozen == [0]
    assert main(["rules"]) == 0
    assert frozen == [0]
    capsys.readouterr()


def test_the_program_still_cleans_up_after_freezing(tmp_path):
    """With the heap frozen at exit, the output file is whole and the spilled row hashes' folder
    is removed (its finalizer runs at exit, not when the collector finds it)."""
    spool = tmp_path / "tmp"
    spool.mkdir()
    out = tmp_path / "report.json"
    script = (
        "import sys\n"
        "import datavet.engines.local as local\n"
        "local.SPILL_ROWS = 50\n"  # the 400-row sample spills its hashes to disk
        "import datavet.engines.spill as spill\n"
        "made = []\n"
        "init = spill.HashSpill.__init__\n"
        "def record(self, *a, **k):\n"
        "    init(self, *a, **k)\n"
        "    made.append(self.dir)\n"
        "    print('spilled to', self.dir, file=sys.stderr)\n"
        "spill.HashSpill.__init__ = record\n"
        "from datavet.cli import run\n"
        "sys.argv = ['datavet', *sys.argv[1:]]\n"
        "raise SystemExit(run())\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script, *PLANTED, "--format", "json", "-o", str(out)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=_env(TMPDIR=str(spool)),
        timeout=120,
    )
    assert proc.returncode == 1, proc.stderr
    assert "spilled to" in proc.stderr  # the spill did happen
    assert json.loads(out.read_text())["exit_code"] == 1
    assert list(spool.iterdir()) == []  # nothing left behind


def test_no_command_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exc:
        main([])
    assert exc.value.code == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert "usage" in err.lower()


def test_a_closed_pipe_is_not_an_internal_error(tmp_path):
    """`datavet ... | head -1`: the reader has gone away; no traceback, no 'internal error'."""
    script = (
        "import os, sys\n"
        "r, w = os.pipe()\n"
        "os.close(r)\n"  # the reader is gone before anything is written
        "os.dup2(w, 1)\n"
        "from datavet.cli import main\n"
        "sys.exit(main(['rules']))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert "internal error" not in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode == 2


def _subparsers(parser):
    import argparse

    (action,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return action.choices


@pytest.mark.parametrize("command", ["audit", "check", "probe", "preflight", "curves", "render"])
def test_every_report_command_offers_every_renderer(command):
    """The --format choices of every command that prints a report are the renderers' registry
    (a new renderer reaches every command at once)."""
    from datavet.cli import _parser
    from datavet.output import FORMATS

    sub = _subparsers(_parser())[command]
    (fmt,) = [a for a in sub._actions if a.dest == "format"]
    assert list(fmt.choices) == sorted(FORMATS)
    assert {"--output", "--html", "--force"} <= {s for a in sub._actions for s in a.option_strings}


def test_curves_renders_in_a_format_its_old_list_lacked(tmp_path, capsys):
    log = ROOT / "sample_data" / "curves" / "lr_too_high.csv"
    assert main(["curves", str(log), "--format", "concise"]) == 1
    out = capsys.readouterr().out
    assert out.splitlines()[0].split(": ")[1].startswith("C0")


def test_python_m_datavet_and_the_console_script_name_the_same_main():
    import datavet.cli
    from datavet.config import tomllib

    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    module, _, name = scripts["datavet"].partition(":")
    assert (module, name) == ("datavet.cli", "run") and callable(datavet.cli.run)
    program = Path(datavet.cli.__file__).parents[1] / "__main__.py"  # python -m datavet
    assert "raise SystemExit(run())" in program.read_text()
