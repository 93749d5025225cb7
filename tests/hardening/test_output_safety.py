"""Outputs are safe, for every command that writes: never onto a file the command reads, never
over a file that is not datavet's own output without --force, never a rename over a device,
``-`` is standard output, and a killed writer's temporary file does not stay forever.

Each refusal is proved with the file's sha256 before and after."""

from __future__ import annotations

import hashlib
import json
import os
import stat
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import datavet
from datavet import outputs
from datavet._io import remove_stale_temporaries, write_atomic

from .helpers import assert_one_line_error, child_env, run_cli

SAMPLE = Path(__file__).resolve().parents[2] / "sample_data"
LOG = SAMPLE / "curves" / "lr_too_high.csv"
NOT_OURS = "precious notes, not a report\n"


def sha(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _frame(n=60, seed=0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"x": rng.normal(size=n), "label": rng.integers(0, 2, n)})


@pytest.fixture
def data(tmp_path) -> dict:
    train, test = tmp_path / "train.csv", tmp_path / "test.csv"
    _frame().to_csv(train, index=False)
    _frame(30, 1).to_csv(test, index=False)
    notes = tmp_path / "notes.txt"
    notes.write_text(NOT_OURS)
    return {"train": train, "test": test, "notes": notes, "dir": tmp_path}


def _json_report(d: Path, name="old.json") -> Path:
    """A complete datavet JSON report (what ``datavet diff`` and ``render`` accept)."""
    path = d / name
    report = datavet.audit(pd.DataFrame({"x": [1.0, 2.0, 3.0, 4.0], "y": [0, 1, 0, 1]}), target="y")
    path.write_text(report.to_json())
    return path


def refused(capsys, argv, victim: Path, *, problem=(), names=None):
    """Run ``argv``; the run is refused in one line and ``victim`` is byte-identical."""
    before = sha(victim)
    code, out, err = run_cli(capsys, argv)
    assert sha(victim) == before, f"{victim.name} changed"
    return assert_one_line_error(code, out, err, names=names or victim.name, problem=problem)


# ---------------------------------------------------------------------------------------------
# audit / check


@pytest.mark.parametrize("option", ["--output", "--html"])
def test_audit_refuses_a_file_that_is_not_a_report(option, data, capsys):
    line = refused(
        capsys,
        ["audit", data["train"], "--target", "label", option, data["notes"]],
        data["notes"],
        problem=[r"not a datavet report", r"--force"],
    )
    assert option in line


@pytest.mark.parametrize("option", ["--output", "--html"])
def test_audit_replaces_it_with_force(option, data, capsys):
    code, _, err = run_cli(
        capsys, ["audit", data["train"], "--target", "label", option, data["notes"], "--force"]
    )
    assert code in (0, 1), err
    assert data["notes"].read_text() != NOT_OURS
    assert outputs.is_datavet_output(data["notes"])


@pytest.mark.parametrize("option", ["--output", "--html"])
def test_audit_refuses_the_config_file_it_reads_even_with_force(option, data, capsys):
    cfg = data["dir"] / "pyproject.toml"
    cfg.write_text('[project]\nname = "x"\n\n[tool.datavet]\nfail-on = "error"\n')
    line = refused(
        capsys,
        ["audit", data["train"], "--target", "label", "--config", cfg, option, cfg, "--force"],
        cfg,
        problem=[r"config file"],
    )
    assert "over it" in line


def test_audit_refuses_the_config_file_found_above_the_working_directory(data, capsys, monkeypatch):
    cfg = data["dir"] / "datavet.toml"
    cfg.write_text('fail-on = "error"\n')
    sub = data["dir"] / "work"
    sub.mkdir()
    monkeypatch.chdir(sub)
    refused(
        capsys,
        ["audit", data["train"], "--target", "label", "--output", "../datavet.toml", "--force"],
        cfg,
        problem=[r"config file"],
        names="datavet.toml",
    )


def _two_datasets(data) -> Path:
    cfg = data["dir"] / "datavet.toml"
    cfg.write_text(
        textwrap.dedent(
            """
            target = "label"
            [datasets.a]
            train = "train.csv"
            [datasets.b]
            train = "test.csv"
            """
        )
    )
    return cfg


def test_per_dataset_html_pages_are_checked_before_any_audit(data, capsys):
    cfg = _two_datasets(data)
    page_b = data["dir"] / "report-b.html"
    page_b.write_text(NOT_OURS)
    refused(
        capsys,
        ["audit", "--config", cfg, "--html", data["dir"] / "report.html"],
        page_b,
        problem=[r"--force"],
    )
    assert not (data["dir"] / "report-a.html").exists(), "a page was written before the refusal"


def test_per_dataset_html_pages_are_rewritten_without_force(data, capsys):
    cfg = _two_datasets(data)
    argv = ["audit", "--config", cfg, "--html", data["dir"] / "report.html"]
    for _ in range(2):  # the second run replaces datavet's own pages
        code, _, err = run_cli(capsys, argv)
        assert code in (0, 1), err
    assert outputs.is_datavet_output(data["dir"] / "report-a.html")


def test_check_refuses_to_write_over_a_file_it_checks(data, capsys):
    refused(
        capsys,
        ["check", data["test"], data["train"], "--target", "label", "--output", data["train"]],
        data["train"],
        problem=[r"train input"],
    )


def test_output_and_html_naming_one_file_is_refused(data, capsys):
    page = data["dir"] / "r.html"
    code, out, err = run_cli(
        capsys, ["audit", data["train"], "--target", "label", "--output", page, "--html", page]
    )
    assert_one_line_error(code, out, err, names="r.html", problem=["same file"])
    assert not page.exists()


def test_a_hard_link_into_a_parquet_directory_is_refused(data, capsys):
    folder = data["dir"] / "train_dir"
    folder.mkdir()
    _frame().to_parquet(folder / "part-0.parquet", index=False)
    link = data["dir"] / "elsewhere.parquet"
    os.link(folder / "part-0.parquet", link)
    refused(
        capsys,
        ["audit", folder, "--target", "label", "--output", link, "--force"],
        folder / "part-0.parquet",
        problem=[r"train input"],
        names="elsewhere.parquet",
    )


@pytest.mark.parametrize("how", ["glob", "file-url", "recursive-glob"])
def test_a_report_where_a_glob_or_url_input_would_read_it_is_refused(data, capsys, how):
    folder = data["dir"] / "parts"
    (folder / "sub").mkdir(parents=True)
    _frame().to_parquet(folder / "p0.parquet", index=False)
    _frame(40, 2).to_parquet(folder / "sub" / "p1.parquet", index=False)
    inputs = {
        "glob": (str(folder / "*.parquet"), folder / "report.parquet"),
        "file-url": (folder.as_uri(), folder / "report.json"),
        "recursive-glob": (str(folder / "**" / "*.parquet"), folder / "sub" / "r.parquet"),
    }
    source, out = inputs[how]
    code, stdout, err = run_cli(capsys, ["audit", source, "--target", "label", "--output", out])
    assert_one_line_error(code, stdout, err, names=out.name, problem=[r"train input"])
    assert not out.exists()
    assert sorted(p.name for p in folder.rglob("*")) == ["p0.parquet", "p1.parquet", "sub"]


def test_github_step_summary_pointed_at_an_input_is_refused(data, capsys, monkeypatch):
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(data["train"]))
    refused(
        capsys,
        ["audit", data["train"], "--target", "label", "--format", "github"],
        data["train"],
        problem=[r"train input", r"GITHUB_STEP_SUMMARY"],
    )


def test_github_step_summary_is_appended_to(data, capsys, monkeypatch):
    summary = data["dir"] / "summary.md"
    summary.write_text("# earlier step\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    code, _, err = run_cli(
        capsys, ["audit", data["train"], "--target", "label", "--format", "github"]
    )
    assert code in (0, 1), err
    text = summary.read_text()
    assert text.startswith("# earlier step\n") and "datavet" in text[15:]


# ---------------------------------------------------------------------------------------------
# devices, standard output, directories


@pytest.mark.parametrize("option", ["--output", "--html"])
def test_dev_null_stays_a_device(option, data, capsys):
    """As root a rename over /dev/null would replace the device node with a regular file."""
    code, _, err = run_cli(
        capsys, ["audit", data["train"], "--target", "label", option, "/dev/null"]
    )
    assert code in (0, 1), err
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)
    assert not [n for n in os.listdir("/dev") if n.startswith(".null.")]


@pytest.mark.parametrize("option", ["--output", "--html"])
def test_dev_full_is_no_space_left(option, data, capsys):
    code, out, err = run_cli(
        capsys, ["audit", data["train"], "--target", "label", option, "/dev/full"]
    )
    line = assert_one_line_error(code, out, err, names="/dev/full", problem=["no space left"])
    assert "wrote" not in line
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)


def test_a_fifo_is_written_in_place(data, capsys):
    fifo = data["dir"] / "pipe"
    os.mkfifo(fifo)
    got = []
    opened = threading.Event()

    def reader():  # non-blocking: before the writer comes, a read is an empty EOF
        fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
        opened.set()
        chunks = []
        try:
            for _ in range(100_000):
                try:
                    chunk = os.read(fd, 65536)
                except BlockingIOError:
                    chunk = None
                if chunk:
                    chunks.append(chunk)
                elif chunk == b"" and chunks:
                    break  # the writer closed
                else:
                    time.sleep(0.005)
        finally:
            os.close(fd)
        got.append(b"".join(chunks))

    t = threading.Thread(target=reader)
    t.start()
    opened.wait(30)
    code, _, err = run_cli(
        capsys, ["audit", data["train"], "--target", "label", "--format", "json", "-o", fifo]
    )
    t.join(30)
    assert code in (0, 1), err
    assert json.loads(got[0])["tool"] == "datavet"
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


def test_a_fifo_nobody_reads_is_an_error_not_a_hang(data, capsys):
    fifo = data["dir"] / "pipe"
    os.mkfifo(fifo)
    code, out, err = run_cli(capsys, ["audit", data["train"], "--target", "label", "-o", fifo])
    assert_one_line_error(code, out, err, names="pipe")
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


def test_dash_is_standard_output(data, capsys):
    code, out, err = run_cli(
        capsys, ["audit", data["train"], "--target", "label", "--format", "json", "-o", "-"]
    )
    assert code in (0, 1), err
    assert json.loads(out)["tool"] == "datavet"
    assert not (Path.cwd() / "-").exists()


def test_dash_twice_is_refused(data, capsys):
    code, out, err = run_cli(
        capsys, ["audit", data["train"], "--target", "label", "-o", "-", "--html", "-"]
    )
    assert_one_line_error(code, out, err, problem=["standard output"])


def test_dev_stdout_is_the_pipe_not_a_renamed_file(data):
    done = subprocess.run(
        [sys.executable, "-m", "datavet", "audit", str(data["train"]), "--target", "label",
         "--format", "json", "-o", "/dev/stdout"],
        capture_output=True, text=True, env=child_env(), timeout=300,
    )  # fmt: skip
    assert done.returncode in (0, 1), done.stderr
    assert json.loads(done.stdout)["tool"] == "datavet"


def test_a_directory_is_refused(data, capsys):
    code, out, err = run_cli(
        capsys, ["audit", data["train"], "--target", "label", "-o", data["dir"], "--force"]
    )
    assert_one_line_error(code, out, err, problem=["is a directory"])


# ---------------------------------------------------------------------------------------------
# diff


@pytest.mark.parametrize("which", ["old", "new"])
def test_diff_refuses_to_write_over_its_own_input(which, tmp_path, capsys):
    old, new = _json_report(tmp_path, "old.json"), _json_report(tmp_path, "new.json")
    victim = old if which == "old" else new
    line = refused(
        capsys, ["diff", old, new, "--output", victim, "--force"], victim, problem=[which]
    )
    assert "over it" in line


def test_diff_refuses_a_file_that_is_not_a_report(tmp_path, capsys):
    old, new, notes = _json_report(tmp_path), _json_report(tmp_path, "new.json"), tmp_path / "n.txt"
    notes.write_text(NOT_OURS)
    refused(capsys, ["diff", old, new, "--output", notes], notes, problem=["--force"])


def test_diff_rewrites_its_own_result(tmp_path, capsys):
    old, new = _json_report(tmp_path), _json_report(tmp_path, "new.json")
    for fmt in ("text", "json"):
        result = tmp_path / f"diff.{fmt}"
        for _ in range(2):
            code, _, err = run_cli(capsys, ["diff", old, new, "--format", fmt, "-o", result])
            assert code == 0, err


# ---------------------------------------------------------------------------------------------
# probe


@pytest.mark.parametrize("option", ["--output", "--html"])
def test_probe_refuses_to_write_over_the_model_source(option, tmp_path, capsys):
    model = tmp_path / "model.py"
    model.write_text("def factory():\n    raise SystemExit('must not run')\n")
    refused(
        capsys,
        ["probe", f"{model}:factory", option, model, "--force"],
        model,
        problem=["model source"],
    )


def test_probe_refuses_a_file_that_is_not_a_report(tmp_path, capsys):
    model = tmp_path / "model.py"
    model.write_text("def factory():\n    raise SystemExit('must not run')\n")
    notes = tmp_path / "notes.txt"
    notes.write_text(NOT_OURS)
    refused(capsys, ["probe", f"{model}:factory", "--output", notes], notes, problem=["--force"])


@pytest.mark.parametrize("option", ["--output", "--html"])
@pytest.mark.parametrize("victim", ["model", "train"])
def test_preflight_refuses_to_write_over_what_it_reads(option, victim, data, capsys):
    model = data["dir"] / "model.py"
    model.write_text("def factory():\n    raise SystemExit('must not run')\n")
    target = model if victim == "model" else data["train"]
    refused(
        capsys,
        ["preflight", f"{model}:factory", "--train", data["train"], option, target, "--force"],
        target,
        problem=["model source" if victim == "model" else "train input"],
    )


def test_preflight_refuses_a_file_that_is_not_a_report(data, capsys):
    model = data["dir"] / "model.py"
    model.write_text("def factory():\n    raise SystemExit('must not run')\n")
    refused(
        capsys,
        ["preflight", f"{model}:factory", "--train", data["train"], "--output", data["notes"]],
        data["notes"],
        problem=["--force"],
    )


def test_preflight_exit_from_the_users_code_is_an_error(data, capsys):
    model = data["dir"] / "model.py"
    model.write_text("import sys\n\ndef factory():\n    sys.exit(0)\n")
    code, out, err = run_cli(capsys, ["preflight", f"{model}:factory", "--train", data["train"]])
    assert_one_line_error(code, out, err, names="model.py", problem=["exit"])


# ---------------------------------------------------------------------------------------------
# curves


@pytest.mark.parametrize("option", ["--output", "--html"])
def test_curves_refuses_a_file_that_is_not_a_report(option, tmp_path, capsys):
    notes = tmp_path / "notes.txt"
    notes.write_text(NOT_OURS)
    refused(capsys, ["curves", LOG, option, notes], notes, problem=["--force"])


@pytest.mark.parametrize("fmt", ["text", "json", "junit", "sarif", "github"])
def test_curves_rewrites_its_own_reports_without_force(fmt, tmp_path, capsys):
    result, page = tmp_path / f"c.{fmt}", tmp_path / "c.html"
    for _ in range(2):
        code, _, err = run_cli(
            capsys, ["curves", LOG, "--format", fmt, "-o", result, "--html", page]
        )
        assert code == 1, err


# ---------------------------------------------------------------------------------------------
# journal


def test_journal_refuses_a_data_file(data, capsys):
    line = refused(
        capsys,
        ["journal", "add", "--journal", data["train"], "--hypothesis", "h", "--change", "c"],
        data["train"],
        problem=["not a datavet journal", "--force"],
    )
    assert "--journal" in line
    assert not (data["dir"] / "train.md").exists()
    assert not (data["dir"] / "train.csv.lock").exists()


def test_journal_refuses_a_markdown_file_beside_it_that_is_not_its_view(tmp_path, capsys):
    readme = tmp_path / "README.md"
    readme.write_text("# My project\n")
    refused(
        capsys,
        ["journal", "add", "--journal", tmp_path / "README.jsonl", "--hypothesis", "h",
         "--change", "c"],
        readme,
        problem=["--force"],
    )  # fmt: skip
    assert not (tmp_path / "README.jsonl").exists()


def test_journal_refuses_a_config_it_diffs_even_with_force(tmp_path, capsys):
    old, new = tmp_path / "old.json", tmp_path / "new.json"
    old.write_text('{"lr": 0.1}')
    new.write_text('{"lr": 0.01}')
    refused(
        capsys,
        ["journal", "add", "--journal", old, "--hypothesis", "h", "--config-diff", old, new,
         "--force"],
        old,
        problem=["config file"],
    )  # fmt: skip


def test_a_symlinked_journal_is_written_through(tmp_path, capsys):
    real = tmp_path / "store" / "journal.jsonl"
    real.parent.mkdir()
    link = tmp_path / "journal.jsonl"
    link.symlink_to(real)
    for i in range(2):
        code, _, err = run_cli(
            capsys, ["journal", "add", "--journal", link, "--hypothesis", f"h{i}", "--change", "c"]
        )
        assert code == 0, err
    assert link.is_symlink()
    assert [json.loads(x)["id"] for x in real.read_text().splitlines()] == [1, 2]


# ---------------------------------------------------------------------------------------------
# temporary files of killed writers


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_a_killed_writers_temporary_file_is_removed_by_the_next_write(tmp_path):
    target = tmp_path / "report.html"
    stale = tmp_path / f".report.html.{_dead_pid()}.k1ll3d_x.tmp"
    stale.write_text("half a report")
    live = tmp_path / f".report.html.{os.getppid()}.w0rk1ng_.tmp"
    live.write_text("a writer still at work")
    other = tmp_path / f".report.html.bak.{_dead_pid()}.abc.tmp"
    other.write_text("not ours")
    write_atomic(target, "<p>new</p>")
    assert not stale.exists()
    assert live.exists() and other.exists()
    assert target.read_text() == "<p>new</p>"


def test_the_temporary_file_name_carries_the_pid(tmp_path, monkeypatch):
    seen = []
    real = os.replace

    def spy(src, dst):
        seen.append(Path(src).name)
        real(src, dst)

    monkeypatch.setattr(os, "replace", spy)
    write_atomic(tmp_path / "r.json", "{}")
    assert seen[0].startswith(f".r.json.{os.getpid()}.") and seen[0].endswith(".tmp")


def test_remove_stale_temporaries_ignores_a_missing_folder(tmp_path):
    remove_stale_temporaries(tmp_path / "absent" / "x.html")


# ---------------------------------------------------------------------------------------------
# what counts as datavet's own output


@pytest.mark.parametrize("fmt", ["text", "json", "junit", "sarif", "github"])
def test_every_audit_format_and_the_html_are_recognised(fmt, data, capsys):
    result, page = data["dir"] / f"r.{fmt}", data["dir"] / "r.html"
    code, _, err = run_cli(
        capsys,
        ["audit", data["train"], "--test", data["test"], "--target", "label", "--format", fmt,
         "-o", result, "--html", page],
    )  # fmt: skip
    assert code in (0, 1), err
    assert outputs.is_datavet_output(result) and outputs.is_datavet_output(page)


@pytest.mark.parametrize(
    "text",
    [
        NOT_OURS,
        "#!/bin/sh\nmake test\nexit 1\n",
        '{"tool": "other", "schema_version": 1}',
        "<html><body>mine</body></html>",
        '{"$schema": "https://json.schemastore.org/sarif-2.1.0.json", "runs": [{"tool": '
        '{"driver": {"name": "eslint"}}}]}',
        "a,b\n1,2\n",
    ],
)
def test_other_files_are_not_recognised(text, tmp_path):
    path = tmp_path / "f"
    path.write_text(text)
    assert not outputs.is_datavet_output(path)


def test_an_empty_file_may_be_replaced(tmp_path):
    path = tmp_path / "f"
    path.write_text("")
    assert outputs.is_datavet_output(path)


def test_multi_dataset_github_output_is_recognised(data, capsys):
    cfg = _two_datasets(data)
    result = data["dir"] / "annotations.txt"
    for _ in range(2):
        code, _, err = run_cli(
            capsys, ["audit", "--config", cfg, "--format", "github", "--output", result]
        )
        assert code in (0, 1), err
    assert result.read_text().splitlines()[-1].startswith("datavet b:")


PROBE_MODEL = textwrap.dedent(
    """
    import torch
    from torch import nn

    def factory():
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(4, 3))
        return model, (torch.randn(8, 4), torch.randint(0, 3, (8,))), nn.functional.cross_entropy
    """
)


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_probe_rewrites_its_own_reports_without_force(fmt, tmp_path, capsys):
    pytest.importorskip("torch")
    model = tmp_path / "model.py"
    model.write_text(PROBE_MODEL)
    result, page = tmp_path / f"p.{fmt}", tmp_path / "p.html"
    argv = ["probe", f"{model}:factory", "--select", "M001", "--format", fmt]
    for _ in range(2):
        code, _, err = run_cli(capsys, [*argv, "--output", result, "--html", page])
        assert code in (0, 1), err
    assert outputs.is_datavet_output(result) and outputs.is_datavet_output(page)
