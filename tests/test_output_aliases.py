"""An output is judged by the file it leads to, never by how its path is spelt: a glob match
reached through a symbolic link, a link inside a data directory, a regular file under /dev/shm
or behind /proc/self/fd/N, standard output open on the data, two outputs naming one file,
per-dataset HTML names that come out alike."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from hardening.helpers import assert_one_line_error, child_env, run_cli

SAMPLE = Path(__file__).resolve().parents[1] / "sample_data"
NOTES = "precious notes, not a report\n"


def sha(path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _child(args, cwd, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "datavet", *map(str, args)],
        cwd=cwd,
        env=child_env(kwargs.pop("env", None)),
        capture_output=kwargs.pop("capture_output", True),
        text=True,
        timeout=300,
        **kwargs,
    )


def _child_onto(args, cwd, stdout_file, mode="w", **kwargs) -> subprocess.CompletedProcess:
    """``_child`` with standard output opened on ``stdout_file`` (``mode``: ``w`` is ``>``,
    ``a`` is ``>>``, ``r+`` is ``1<>``); stderr captured."""
    with open(stdout_file, mode) as fh:
        return _child(args, cwd, stdout=fh, stderr=subprocess.PIPE, capture_output=False, **kwargs)


@pytest.fixture
def globbed(tmp_path, monkeypatch):
    real = tmp_path / "real"
    real.mkdir()
    for name in ("a.csv", "b.csv"):
        shutil.copy(SAMPLE / "clean_train.csv", real / name)
    (tmp_path / "glink").symlink_to("real")
    monkeypatch.chdir(tmp_path)
    return tmp_path


# ---------------------------------------------------------------------------------------------
# A1: glob inputs


def test_glob_through_a_linked_folder_protects_the_files_it_matches(globbed, capsys):
    before = sha(globbed / "real" / "a.csv")
    code, out, err = run_cli(capsys, ["audit", "glink/*.csv", "-o", "real/a.csv", "--force"])
    assert_one_line_error(code, out, err, names="real/a.csv", problem=["being read"])
    assert sha(globbed / "real" / "a.csv") == before


def test_glob_protects_a_new_file_it_would_match_through_a_link(globbed, capsys):
    code, out, err = run_cli(capsys, ["audit", "glink/*.csv", "-o", "real/new.csv", "--force"])
    assert_one_line_error(code, out, err, names="real/new.csv", problem=["being read"])
    assert not (globbed / "real" / "new.csv").exists()


def test_output_linked_to_a_glob_match_is_refused(globbed, capsys):
    (globbed / "out.txt").symlink_to("real/b.csv")
    before = sha(globbed / "real" / "b.csv")
    code, out, err = run_cli(capsys, ["audit", "real/*.csv", "-o", "out.txt", "--force"])
    assert_one_line_error(code, out, err, names="out.txt", problem=["being read"])
    assert sha(globbed / "real" / "b.csv") == before


def test_glob_leaves_other_outputs_alone(globbed, capsys):
    code, _, err = run_cli(capsys, ["audit", "glink/*.csv", "-o", "real/report.txt"])
    assert code in (0, 1), err
    assert (globbed / "real" / "report.txt").exists()


# ---------------------------------------------------------------------------------------------
# A2: a link inside a data directory


@pytest.mark.parametrize("link", ["file", "folder"])
def test_a_link_inside_a_directory_input_is_protected(link, tmp_path, capsys):
    """A link in a Parquet directory, to a file or to a folder elsewhere: the file it leads to
    is read, so it is never written over, with --force too."""
    pq, other = tmp_path / "pq", tmp_path / "other"
    pq.mkdir()
    other.mkdir()
    shutil.copy(SAMPLE / "clean_train.parquet", pq / "part0.parquet")
    shutil.copy(SAMPLE / "clean_train.parquet", other / "part1.parquet")
    if link == "file":
        (pq / "part1.parquet").symlink_to(other / "part1.parquet")
    else:
        (pq / "more").symlink_to(other)
    before = sha(other / "part1.parquet")
    code, out, err = run_cli(
        capsys, ["audit", pq, "--format", "json", "-o", other / "part1.parquet", "--force"]
    )
    assert_one_line_error(code, out, err, names="part1.parquet", problem=["being read"])
    assert sha(other / "part1.parquet") == before


# ---------------------------------------------------------------------------------------------
# A3: regular files behind /dev and /proc names


@pytest.fixture
def shm():
    if not os.path.isdir("/dev/shm"):
        pytest.skip("no /dev/shm")
    folder = Path("/dev/shm") / f"dvtest-{uuid.uuid4().hex}"
    folder.mkdir()
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.parametrize("option", ["--output", "--html"])
def test_regular_file_under_dev_shm_is_not_replaced_without_force(option, shm, capsys):
    notes = shm / "notes.txt"
    notes.write_text(NOTES)
    code, out, err = run_cli(
        capsys, ["audit", SAMPLE / "clean_train.csv", "--target", "label", option, notes]
    )
    assert_one_line_error(code, out, err, names=str(notes), problem=["--force"])
    assert notes.read_text() == NOTES


def test_regular_file_under_dev_shm_is_replaced_whole_with_force(shm, capsys):
    notes = shm / "notes.txt"
    notes.write_text(NOTES)
    code, _, err = run_cli(
        capsys,
        ["audit", SAMPLE / "clean_train.csv", "--format", "json", "-o", notes, "--force"],
    )
    assert code in (0, 1), err
    assert json.loads(notes.read_text())["tool"] == "datavet"
    assert sorted(os.listdir(shm)) == ["notes.txt"]  # no temporary file left behind


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="no /proc/self/fd")
@pytest.mark.parametrize(
    ("option", "prefix"),
    [("--output", "/proc/self/fd/"), ("--html", "/dev/fd/"), ("--output", "/dev/fd/")],
)
def test_open_file_name_leading_to_a_regular_file_needs_force(option, prefix, tmp_path):
    notes = tmp_path / "notes.txt"
    notes.write_text(NOTES)
    fd = os.open(notes, os.O_RDONLY)
    try:
        done = _child(
            ["audit", SAMPLE / "clean_train.csv", option, f"{prefix}{fd}"],
            tmp_path,
            pass_fds=(fd,),
        )
    finally:
        os.close(fd)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("datavet: error:") and "--force" in done.stderr
    assert notes.read_text() == NOTES


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="no /proc/self/fd")
def test_open_file_name_onto_own_report_is_replaced_beside_the_file(tmp_path):
    report = tmp_path / "report.json"
    done = _child(["audit", SAMPLE / "clean_train.csv", "--format", "json", "-o", report], tmp_path)
    assert done.returncode in (0, 1), done.stderr
    fd = os.open(report, os.O_RDONLY)
    try:
        done = _child(
            ["audit", SAMPLE / "clean_train.csv", "-o", f"/proc/self/fd/{fd}"],
            tmp_path,
            pass_fds=(fd,),
        )
    finally:
        os.close(fd)
    assert done.returncode in (0, 1), done.stderr
    assert "clean_train.csv" in report.read_text()
    assert sorted(os.listdir(tmp_path)) == ["report.json"]


# ---------------------------------------------------------------------------------------------
# A4: per-dataset HTML names


def test_check_gives_files_with_one_name_distinct_html_reports(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    for folder, src in (("d2023", "clean_train.csv"), ("d2024", "planted_train.csv")):
        (tmp_path / folder).mkdir()
        shutil.copy(SAMPLE / src, tmp_path / folder / "train.csv")
    code, _, err = run_cli(
        capsys,
        [
            "check",
            "d2023/train.csv",
            "d2024/train.csv",
            "--html",
            "rep.html",
            "--format",
            "concise",
        ],
    )
    assert code in (0, 1), err
    pages = sorted(p.name for p in tmp_path.glob("rep*.html"))
    assert pages == ["rep-train-1.html", "rep-train-2.html"]
    first, second = ((tmp_path / p).read_text() for p in pages)
    assert "d2023" in first and "d2024" not in first
    assert "d2024" in second


def test_config_datasets_with_alike_names_get_distinct_html_reports(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    config = tmp_path / "pyproject.toml"
    config.write_text(
        "".join(
            f'[tool.datavet.datasets."{name}"]\n'
            f"train = {json.dumps(str(SAMPLE / src))}\n"
            "target = 'label'\n"
            for name, src in (
                ("a/b", "clean_train.csv"),
                ("a_b", "planted_train.csv"),
                ("c", "clean_train.csv"),
            )
        ),
        encoding="utf-8",
    )
    code, _, err = run_cli(
        capsys, ["audit", "--config", config, "--html", "out/rep.html", "--format", "concise"]
    )
    assert code in (0, 1), err
    pages = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert pages == ["rep-a_b-1.html", "rep-a_b-2.html", "rep-c.html"]
    assert "clean_train" in (tmp_path / "out" / "rep-a_b-1.html").read_text()
    assert "planted_train" in (tmp_path / "out" / "rep-a_b-2.html").read_text()


def test_numbered_names_step_over_a_name_already_taken():
    from datavet.cli.plan import Job, per_dataset_paths

    jobs = [Job(n, "x.csv", None, None, "auto") for n in ("a/b", "a_b", "a_b-1")]
    assert [p.name for p in per_dataset_paths("r.html", jobs)] == [
        "r-a_b-2.html",
        "r-a_b-3.html",
        "r-a_b-1.html",
    ]


# ---------------------------------------------------------------------------------------------
# A5: $GITHUB_STEP_SUMMARY and another output on one file


def test_step_summary_and_output_naming_one_file_are_refused(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", "gs.md")
    code, out, err = run_cli(
        capsys,
        ["audit", SAMPLE / "planted_train.csv", "--format", "github", "-o", "gs.md"],
    )
    assert_one_line_error(code, out, err, names="gs.md", problem=["same file"])
    assert not (tmp_path / "gs.md").exists()


def test_step_summary_and_standard_output_on_one_file_are_refused(tmp_path):
    summary = tmp_path / "gs.md"
    done = _child_onto(
        ["audit", SAMPLE / "planted_train.csv", "--format", "github"],
        tmp_path,
        summary,
        env={"GITHUB_STEP_SUMMARY": str(summary)},
    )
    assert done.returncode == 2, done.stderr
    assert "same file" in done.stderr
    assert summary.read_text() == ""


# ---------------------------------------------------------------------------------------------
# A6: standard output open on an input


@pytest.mark.parametrize(
    ("args", "mode"),
    [(["-o", "-"], "r+"), ([], "r+"), ([], "a"), (["-o", "/dev/stdout"], "r+")],
)
def test_standard_output_onto_the_input_is_refused(args, mode, tmp_path):
    data = tmp_path / "v.csv"
    shutil.copy(SAMPLE / "clean_train.csv", data)
    before = sha(data)
    done = _child_onto(["audit", "v.csv", *args], tmp_path, data, mode)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("datavet: error:") and "v.csv" in done.stderr
    assert len(done.stderr.splitlines()) == 1, done.stderr
    assert sha(data) == before


def test_standard_output_onto_the_config_is_refused(tmp_path):
    config = tmp_path / "pyproject.toml"
    config.write_text("[tool.datavet]\ntarget = 'label'\n", encoding="utf-8")
    before = sha(config)
    done = _child_onto(
        ["audit", SAMPLE / "clean_train.csv", "--config", config], tmp_path, config, "a"
    )
    assert done.returncode == 2, done.stderr
    assert "config file" in done.stderr
    assert sha(config) == before


@pytest.mark.parametrize("action", [["list"], ["search", "lr"], ["show"], ["result", "1"]])
def test_journal_output_appended_onto_the_journal_is_refused(action, tmp_path):
    """``datavet journal list >> datavet-journal.jsonl`` would append its listing to the
    journal (the listing is not JSON lines: the entries after it would sit behind junk)."""
    journal = tmp_path / "datavet-journal.jsonl"
    added = _child(["journal", "add", "--hypothesis", "lr too high", "--change", "lr"], tmp_path)
    assert added.returncode == 0, added.stderr
    predicted = _child(["journal", "predict", "1", "--predict", "loss falls"], tmp_path)
    assert predicted.returncode == 0, predicted.stderr
    before = sha(journal)
    extra = ["--observed", "loss fell", "--verdict", "confirmed"] if action[0] == "result" else []
    done = _child_onto(["journal", *action, *extra], tmp_path, journal, "a")
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("datavet: error:") and "journal" in done.stderr
    assert len(done.stderr.splitlines()) == 1, done.stderr
    assert sha(journal) == before
    listed = _child_onto(["journal", "list"], tmp_path, tmp_path / "listing.txt")
    assert listed.returncode == 0 and "lr too high" in (tmp_path / "listing.txt").read_text()


def test_standard_output_onto_another_file_still_works(tmp_path):
    result = tmp_path / "result.json"
    done = _child_onto(["audit", SAMPLE / "clean_train.csv", "--format", "json"], tmp_path, result)
    assert done.returncode in (0, 1), done.stderr
    assert json.loads(result.read_text())["tool"] == "datavet"


def test_output_under_a_file_names_the_cause(tmp_path, capsys):
    """A folder on the way to the output is a regular file: "Not a directory", not "File
    exists" (what creating the folder raised)."""
    (tmp_path / "notes.txt").write_text("mine\n")
    code, out, err = run_cli(
        capsys, ["audit", SAMPLE / "clean_train.csv", "-o", tmp_path / "notes.txt" / "r.txt"]
    )
    assert code == 2 and "Not a directory" in err and "File exists" not in err
    assert (tmp_path / "notes.txt").read_text() == "mine\n"
