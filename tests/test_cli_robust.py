"""Bad input to ``datavet diff`` and ``datavet render`` is one ``datavet: error: PATH: problem``
line and exit 2 (never ``internal error``), and Ctrl-C is ``datavet: interrupted`` and exit 2
from the moment datavet's program starts, argument parsing and its imports included."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from datavet.cli import main
from datavet.errors import InputError
from datavet.output import FORMATS

ROOT = Path(__file__).resolve().parents[1]
CLEAN = ROOT / "sample_data" / "clean_train.csv"
PLANTED = ROOT / "sample_data" / "planted_train.csv"


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT / "src"), env.get("PYTHONPATH")]))
    return env


@pytest.fixture(scope="module")
def saved(tmp_path_factory) -> dict[str, Path]:
    """Two real ``--format json`` reports: the clean sample (no findings) and the planted one."""
    folder = tmp_path_factory.mktemp("reports")
    out = {}
    for name, data in (("clean", CLEAN), ("planted", PLANTED)):
        out[name] = folder / f"{name}.json"
        assert main(["audit", str(data), "--format", "json", "-o", str(out[name])]) in (0, 1)
    return out


def _cli(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def _one_line_error(code: int, err: str, path: Path | str, problem: str) -> None:
    assert code == 2, err
    assert "internal error" not in err and "Traceback" not in err, err
    assert len(err.strip().splitlines()) == 1, err
    assert err.startswith(f"datavet: error: {path}: "), err
    assert problem in err, err


def _edit(saved, tmp_path, name: str, edit) -> Path:
    data = json.loads(saved[name].read_text())
    edit(data)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))
    return bad


def _set(*where, value):
    def edit(data):
        parent = data
        for key in where[:-1]:
            parent = parent[key]
        parent[where[-1]] = value

    return edit


# what the hostile tester found (C1), and their neighbours
MALFORMED = {
    "dataset-none": ("clean", _set("datasets", "train", value=None)),
    "datasets-int": ("clean", _set("datasets", value=5)),
    "columns-int": ("planted", _set("findings", 0, "columns", value=5)),
    "code-list": ("planted", _set("findings", 0, "code", value=[])),
    "columns-of-lists": ("planted", _set("findings", 0, "columns", value=[[1]])),
    "message-dict": ("planted", _set("findings", 0, "message", value={})),
    "split-int": ("planted", _set("findings", 0, "split", value=3)),
    "fail-on-int": ("planted", _set("fail_on", value=5)),
    "fail-on-word": ("planted", _set("fail_on", value="x")),
    "ignored-int": ("clean", _set("ignored", value=5)),
    "ignored-item-int": ("clean", _set("ignored", value=[5])),
    "ignored-finding-code": (
        "clean",
        _set("ignored", value=[{"finding": {"code": [], "severity": "error"}}]),
    ),
    "counts-list": ("clean", _set("counts", value=[])),
    "outcomes-dict": ("clean", _set("outcomes", value={})),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_diff_rejects_a_malformed_report_either_side(saved, tmp_path, capsys, case):
    name, edit = MALFORMED[case]
    bad = _edit(saved, tmp_path, name, edit)
    for argv in (
        ["diff", saved["clean"], bad],
        ["diff", bad, saved["clean"]],
        ["diff", bad, saved["planted"], "--format", "json"],
    ):
        code, out, err = _cli(capsys, *argv)
        _one_line_error(code, err, bad, "not a complete datavet JSON report")
        assert out == ""


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_render_and_diff_give_the_same_reason(saved, tmp_path, capsys, case):
    """One check of a report read back, shared by both commands."""
    name, edit = MALFORMED[case]
    bad = _edit(saved, tmp_path, name, edit)
    diff_err = _cli(capsys, "diff", saved["clean"], bad)[2]
    render_err = _cli(capsys, "render", bad)[2]
    assert diff_err == render_err


def test_diff_api_checks_a_dict_too(saved):
    from datavet.diff import diff

    old = json.loads(saved["planted"].read_text())
    new = json.loads(saved["planted"].read_text())
    new["findings"][0]["columns"] = 5
    with pytest.raises(InputError, match="new report: not a complete datavet JSON report"):
        diff(old, new)
    assert diff(old, old).unchanged == len(old["findings"])


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_render_rejects_ignored_that_is_not_a_list(saved, tmp_path, capsys, fmt):
    """C2: ``"ignored": 5`` was a TypeError (internal error) in every format."""
    bad = _edit(saved, tmp_path, "clean", _set("ignored", value=5))
    code, out, err = _cli(capsys, "render", bad, "--format", fmt)
    _one_line_error(code, err, bad, "not a complete datavet JSON report (no valid 'ignored')")
    assert out == ""


def test_a_missing_ignored_is_still_a_report(saved, tmp_path, capsys):
    bad = _edit(saved, tmp_path, "clean", lambda d: d.pop("ignored"))
    assert _cli(capsys, "render", bad)[0] == 0
    assert _cli(capsys, "diff", saved["clean"], bad)[0] == 0


@pytest.mark.parametrize(
    "argv",
    [["diff", "", "{clean}"], ["diff", "{clean}", ""], ["render", ""]],
    ids=["diff-old", "diff-new", "render"],
)
def test_an_empty_path_is_named_as_empty(saved, capsys, argv):
    argv = [a.format(clean=saved["clean"]) for a in argv]
    code, out, err = _cli(capsys, *argv)
    _one_line_error(code, err, "''", "the path is empty")


# --------------------------------------------------------------------------------------------
# Ctrl-C (C3)


class _Interrupting:
    def parse_args(self, argv=None):
        raise KeyboardInterrupt


def _uninterrupted(function, *args):
    """``function(*args)``, failing the test (not ending the session) on a KeyboardInterrupt."""
    try:
        return function(*args)
    except KeyboardInterrupt:
        pytest.fail("KeyboardInterrupt escaped")


def test_ctrl_c_while_the_arguments_are_parsed(monkeypatch, capsys):
    import datavet.cli

    monkeypatch.setattr(datavet.cli, "_parser", _Interrupting)
    assert _uninterrupted(main, ["rules"]) == 2
    assert capsys.readouterr().err == "datavet: interrupted\n"


def test_ctrl_c_between_main_and_the_freeze(monkeypatch, capsys):
    import gc

    import datavet.cli

    def freeze():
        raise KeyboardInterrupt

    monkeypatch.setattr(gc, "freeze", freeze)
    monkeypatch.setattr(sys, "argv", ["datavet", "rules"])
    assert _uninterrupted(datavet.cli.run) == 2
    assert capsys.readouterr().err == "datavet: interrupted\n"


def test_importing_the_cli_loads_no_command():
    """What the console script imports before ``run()`` (outside any handler) is kept light:
    the commands, argparse and the renderers load inside ``main()``."""
    script = (
        "import sys\n"
        "import datavet.cli\n"
        "print(sorted(m for m in sys.modules if m.startswith('datavet.cli.')"
        " or m in ('argparse', 'datavet.output', 'numpy', 'pandas')))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=_env(), timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


# A Ctrl-C while a module loads, made deterministic: an import hook raises KeyboardInterrupt
# when the named module is imported, as the signal would at that moment.
_HOOK = """
import sys, runpy
class Interrupt:
    def find_spec(self, name, path=None, target=None):
        if name == {module!r}:
            raise KeyboardInterrupt
        return None
import datavet
sys.meta_path.insert(0, Interrupt())
sys.argv = ["datavet", "audit", {data!r}]
runpy.run_module("datavet", run_name="__main__", alter_sys=True)
"""


@pytest.mark.parametrize("module", ["datavet.cli", "datavet.cli.audit", "argparse", "pandas"])
def test_ctrl_c_while_python_m_datavet_loads(module):
    proc = subprocess.run(
        [sys.executable, "-c", _HOOK.format(module=module, data=str(CLEAN))],
        capture_output=True,
        text=True,
        env=_env(),
        timeout=120,
    )
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.stderr == "datavet: interrupted\n"
    assert proc.returncode == 2


# A real SIGINT at several moments. The interpreter's start and ``import datavet`` (the package,
# which ``python -m datavet`` and the console script both import before any datavet.cli code)
# run before datavet can catch anything, so the child imports the package, says it is ready,
# and only then runs ``python -m datavet``. A signal that still lands in runpy before
# datavet/__main__.py starts (a loaded machine) makes that delay inconclusive (exit 3), never
# a failure; any KeyboardInterrupt out of datavet's own code is printed and fails the test.
_READY = """
import sys, runpy, traceback
import datavet
sys.argv = ["datavet", "audit", {data!r}]
try:  # "ready" inside the try: a signal right after it lands here, not in a bare line (exit 3)
    sys.stdout.write("ready\\n")
    sys.stdout.flush()
    runpy.run_module("datavet", run_name="__main__", alter_sys=True)
except KeyboardInterrupt as exc:
    frames = traceback.extract_tb(exc.__traceback__)
    if any("datavet" in f.filename for f in frames):
        traceback.print_exc()
        sys.exit(99)
    sys.exit(3)
"""


def test_ctrl_c_at_any_moment_once_datavet_runs():
    conclusive = 0
    for delay in (0.0, 0.02, 0.05, 0.1, 0.2, 0.4):
        proc = subprocess.Popen(
            [sys.executable, "-c", _READY.format(data=str(CLEAN))],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=_env(),
        )
        assert proc.stdout is not None
        assert proc.stdout.readline() == "ready\n"
        time.sleep(delay)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)
        assert "Traceback" not in err, (delay, err)
        assert proc.returncode in (0, 2, 3), (delay, proc.returncode, err)
        if proc.returncode == 2:
            assert err.endswith("datavet: interrupted\n"), (delay, err)
        conclusive += proc.returncode != 3
    assert conclusive >= 1
