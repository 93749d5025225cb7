"""Nothing lost: inputs are byte-identical after an audit (every input format, successful or not,
as train or test, with every output option), in-memory inputs are not modified, a report is
never written over an input, and an interrupted report write leaves the previous report intact
with no temporary file behind (temporary file + rename)."""

from __future__ import annotations

import errno
import gzip
import hashlib
import io
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.feather as feather
import pyarrow.ipc as ipc
import pyarrow.parquet as pq
import pytest

import datavet
import datavet._io as dv_io

from .helpers import assert_one_line_error, child_env, run_cli

# ---------------------------------------------------------------------------------------------
# inputs, byte for byte


def _frame(n=200, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    x[:3] = np.nan
    return pd.DataFrame(
        {
            "x": x,
            "y": rng.normal(size=n) * 500,
            "s": rng.choice(["a", "b", "é"], n),
            "label": rng.integers(0, 2, n),
        }
    )


def _write(kind: str, frame: pd.DataFrame, d: Path, stem: str) -> Path:
    table = pa.Table.from_pandas(frame, preserve_index=False)
    if kind == "csv":
        path = d / f"{stem}.csv"
        frame.to_csv(path, index=False)
    elif kind == "tsv":
        path = d / f"{stem}.tsv"
        frame.to_csv(path, index=False, sep="\t")
    elif kind == "csv.gz":
        path = d / f"{stem}.csv.gz"
        path.write_bytes(gzip.compress(frame.to_csv(index=False).encode(), mtime=0))
    elif kind == "parquet":
        path = d / f"{stem}.parquet"
        pq.write_table(table, path, row_group_size=64)
    elif kind == "parquet-dir":
        path = d / f"{stem}_dir"
        path.mkdir()
        half = len(frame) // 2
        frame.iloc[:half].to_parquet(path / "part-0.parquet", index=False)
        frame.iloc[half:].to_parquet(path / "part-1.parquet", index=False)
        (path / "_SUCCESS").write_bytes(b"")
    elif kind == "arrow":
        path = d / f"{stem}.arrow"
        with pa.OSFile(str(path), "wb") as sink, ipc.new_file(sink, table.schema) as w:
            w.write_table(table, max_chunksize=64)
    elif kind == "arrow-stream":
        path = d / f"{stem}.ipc"
        with pa.OSFile(str(path), "wb") as sink, ipc.new_stream(sink, table.schema) as w:
            w.write_table(table, max_chunksize=64)
    elif kind == "feather":
        path = d / f"{stem}.feather"
        feather.write_feather(table, path, compression="zstd")
    elif kind == "npy":
        path = d / f"{stem}.npy"
        np.save(path, frame[["x", "y"]].to_numpy())
    elif kind == "npz":
        path = d / f"{stem}.npz"
        np.savez(path, x=frame[["x", "y"]].to_numpy(), y=frame["label"].to_numpy())
    elif kind == "pt":
        torch = pytest.importorskip("torch")
        path = d / f"{stem}.pt"
        torch.save(
            {
                "x": torch.tensor(frame[["x", "y"]].to_numpy()),
                "y": torch.tensor(frame["label"].to_numpy()),
            },
            path,
        )
    else:
        raise AssertionError(kind)
    return path


def snapshot(root: Path) -> dict[str, tuple]:
    """sha256, size, mtime and mode of every file under ``root``, and the set of entries."""
    out = {}
    for p in sorted(root.rglob("*")):
        st = p.lstat()
        digest = hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir"
        out[str(p.relative_to(root))] = (digest, st.st_size, st.st_mtime_ns, st.st_mode)
    return out


KINDS = [
    "csv",
    "tsv",
    "csv.gz",
    "parquet",
    "parquet-dir",
    "arrow",
    "arrow-stream",
    "feather",
    "npy",
    "npz",
    "pt",
]


@pytest.mark.parametrize("kind", KINDS)
def test_inputs_are_byte_identical_after_an_audit(kind, tmp_path, capsys):
    data = tmp_path / "data"
    data.mkdir()
    out = tmp_path / "out"
    train = _write(kind, _frame(200, 0), data, "train")
    test = _write(kind, _frame(80, 1), data, "test")
    before = snapshot(data)
    time.sleep(0.01)  # an mtime change would show even on a coarse clock
    argvs = [
        ["audit", train],
        ["audit", train, "--test", test, "--target", "label"],
        ["audit", train, "--test", test, "--format", "json", "--output", out / "r.json"],
        ["audit", train, "--html", out / "r.html", "--exit-zero"],
        ["audit", test, "--test", train, "--no-baselines", "--fail-on", "info"],
    ]
    for argv in argvs:
        code, _, err = run_cli(capsys, argv)
        assert code in (0, 1, 2), err
        assert "Traceback" not in err
        assert snapshot(data) == before, f"{argv}: the input directory changed"


def test_corrupt_input_is_not_modified_either(tmp_path, capsys):
    data = tmp_path / "data"
    data.mkdir()
    path = _write("parquet", _frame(), data, "train")
    path.write_bytes(path.read_bytes()[:-100])
    before = snapshot(data)
    code, out, err = run_cli(capsys, ["audit", path, "--html", tmp_path / "r.html"])
    assert_one_line_error(code, out, err, names=path.name)
    assert snapshot(data) == before
    assert not (tmp_path / "r.html").exists()


def test_in_memory_inputs_are_not_modified():
    frame = _frame()
    copy = frame.copy(deep=True)
    x = frame[["x", "y"]].to_numpy().copy()
    y = frame["label"].to_numpy().copy()
    x0, y0 = x.copy(), y.copy()
    table = pa.Table.from_pandas(frame, preserve_index=False)
    t0 = table.to_pydict()
    datavet.audit(frame, frame.iloc[:50], target="label")
    datavet.audit((x, y), (x[:50], y[:50]))
    datavet.audit(table, target="label")
    pd.testing.assert_frame_equal(frame, copy)
    np.testing.assert_array_equal(x, x0)
    np.testing.assert_array_equal(y, y0)
    assert x.flags.writeable and y.flags.writeable
    assert table.to_pydict() == t0


@pytest.mark.parametrize("option", ["--output", "--html"])
@pytest.mark.parametrize("split", ["train", "test"])
def test_a_report_is_never_written_over_an_input(option, split, tmp_path, capsys):
    """``--output train.csv`` (a slip of the fingers) must not destroy the data it audits:
    exit 2 with one line, input intact."""
    train = _write("csv", _frame(), tmp_path, "train")
    test = _write("csv", _frame(50, 1), tmp_path, "test")
    target = train if split == "train" else test
    before = snapshot(tmp_path)
    code, out, err = run_cli(
        capsys, ["audit", train, "--test", test, "--target", "label", option, target]
    )
    assert snapshot(tmp_path) == before, f"{option} {target.name} overwrote the input"
    assert_one_line_error(code, out, err, names=target.name)


# ---------------------------------------------------------------------------------------------
# interrupted report writes


# a previous datavet text report (its verdict line): replaced without --force, as a report is
OLD = (
    "train: train.csv (1 rows, 2 columns, csv)\ntarget: none (the previous report, which must "
    "survive)\n\n0 findings (0 errors, 0 warnings, 0 info) from 9 rules. passed at fail-on "
    "'error' (exit 0)\n"
)


def _previous_report(d: Path, name: str) -> Path:
    d.mkdir(parents=True, exist_ok=True)
    path = d / name
    path.write_text(OLD)
    os.chmod(path, 0o640)
    return path


@pytest.fixture
def train_csv(tmp_path):
    return _write("csv", _frame(), tmp_path, "train")


class _HalfWriter(io.TextIOBase):
    """A file that writes half of what it is given, flushes it to disk, then fails."""

    def __init__(self, fh, exc: BaseException) -> None:
        self.fh = fh
        self.exc = exc

    def write(self, text: str) -> int:
        self.fh.write(text[: len(text) // 2])
        self.fh.flush()
        raise self.exc

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.fh.close()
        return False


def _half_fdopen(exc: BaseException):
    real = os.fdopen

    def fdopen(fd, *args, **kwargs):
        return _HalfWriter(real(fd, *args, **kwargs), exc)

    return fdopen


def _assert_only(d: Path, name: str) -> None:
    assert sorted(p.name for p in d.iterdir()) == [name], "a temporary file was left behind"


FAILURES = {
    "disk-full": lambda: OSError(errno.ENOSPC, os.strerror(errno.ENOSPC)),
    "interrupt": lambda: KeyboardInterrupt(),
}


@pytest.mark.parametrize("failure", sorted(FAILURES))
@pytest.mark.parametrize("option", ["--output", "--html"])
def test_write_fails_half_way(failure, option, train_csv, tmp_path, capsys, monkeypatch):
    reports = tmp_path / "reports"
    dest = _previous_report(reports, "audit.out")
    monkeypatch.setattr(dv_io.os, "fdopen", _half_fdopen(FAILURES[failure]()))
    code, out, err = run_cli(capsys, ["audit", train_csv, "--target", "label", option, dest])
    assert code == 2
    assert "Traceback" not in err
    assert dest.read_text() == OLD
    assert (dest.stat().st_mode & 0o777) == 0o640
    _assert_only(reports, "audit.out")


@pytest.mark.parametrize("option", ["--output", "--html"])
def test_rename_fails(option, train_csv, tmp_path, capsys, monkeypatch):
    reports = tmp_path / "reports"
    dest = _previous_report(reports, "audit.out")

    def refuse(src, dst):
        raise OSError(errno.EXDEV, os.strerror(errno.EXDEV))

    monkeypatch.setattr(dv_io.os, "replace", refuse)
    code, out, err = run_cli(capsys, ["audit", train_csv, "--target", "label", option, dest])
    assert code == 2 and "Traceback" not in err
    assert dest.read_text() == OLD
    _assert_only(reports, "audit.out")


def test_a_failed_write_is_a_one_line_error_naming_the_file(
    train_csv, tmp_path, capsys, monkeypatch
):
    """A full disk is not a bug in datavet: 'datavet: error: PATH: ...', not 'internal error'."""
    reports = tmp_path / "reports"
    dest = _previous_report(reports, "audit.json")
    monkeypatch.setattr(dv_io.os, "fdopen", _half_fdopen(FAILURES["disk-full"]()))
    code, out, err = run_cli(
        capsys, ["audit", train_csv, "--target", "label", "--format", "json", "--output", dest]
    )
    assert_one_line_error(code, out, err, names="audit.json", problem=[r"space|write"])


def test_successful_rewrite_replaces_whole_file_and_keeps_its_mode(train_csv, tmp_path, capsys):
    reports = tmp_path / "reports"
    dest = _previous_report(reports, "audit.json")
    # a previous JSON report longer than the new one: no stale tail may remain
    dest.write_text('{"schema_version": 1, "tool": "datavet", "pad": "' + "x" * 1_000_000 + '"}')
    code, out, err = run_cli(
        capsys, ["audit", train_csv, "--target", "label", "--format", "json", "--output", dest]
    )
    assert code == 1, err
    import json

    assert json.loads(dest.read_text())["tool"] == "datavet"
    assert (dest.stat().st_mode & 0o777) == 0o640
    _assert_only(reports, "audit.json")


_KILL_CHILD = textwrap.dedent(
    """
    import os, sys, time
    import datavet._io as dv_io
    real = os.fdopen
    class Slow:
        def __init__(self, fh): self.fh = fh
        def write(self, text):
            self.fh.write(text[: len(text) // 2]); self.fh.flush(); os.fsync(self.fh.fileno())
            print("HALF", flush=True)
            time.sleep(120)
        def __enter__(self): return self
        def __exit__(self, *a): self.fh.close()
    dv_io.os.fdopen = lambda fd, *a, **k: Slow(real(fd, *a, **k))
    from datavet.cli import main
    sys.exit(main(sys.argv[1:]))
    """
)


@pytest.mark.parametrize("option", ["--output", "--html"])
def test_killed_mid_write_leaves_the_previous_report(option, train_csv, tmp_path):
    """SIGKILL while half the report is on disk: the report path still holds the previous
    report, whole (a leftover hidden temporary file is all a kill can leave)."""
    reports = tmp_path / "reports"
    dest = _previous_report(reports, "audit.out")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            _KILL_CHILD,
            "audit",
            str(train_csv),
            "--target",
            "label",
            option,
            str(dest),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=child_env(),
        cwd=tmp_path,
    )
    try:
        line = proc.stdout.readline()
        assert line.strip() == b"HALF", (line, proc.stderr.read()[-500:] if proc.poll() else "")
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()
        proc.stderr.close()
    assert dest.read_text() == OLD
    leftovers = [p.name for p in reports.iterdir() if p.name != "audit.out"]
    assert all(n.startswith(".audit.out.") and n.endswith(".tmp") for n in leftovers), leftovers
