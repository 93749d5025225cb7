"""Shared helpers for the hardening tests: run the CLI in process or in a child process, check the
one-line error contract, measure a child's peak memory."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import datavet
from datavet.cli import main

ROOT = Path(__file__).resolve().parents[2]

# Terminal escapes and other controls that must never reach a terminal or a log raw: C0 except
# tab and newline, DEL, and C1 (U+0080-U+009F; U+009B alone is a CSI).
RAW_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def run_cli(capsys, argv) -> tuple[int, str, str]:
    """``datavet.cli.main(argv)`` in process: (exit code, stdout, stderr). argparse's own exit
    (SystemExit) counts as a return code, as it does for a user."""
    try:
        code = main([str(a) for a in argv])
    except SystemExit as exc:  # argparse: unknown option, bad choice
        code = exc.code if isinstance(exc.code, int) else 2
    out, err = capsys.readouterr()
    return code, out, err


def assert_one_line_error(code, out, err, *, names=None, problem=()) -> str:
    """The bad-input contract: exit 2, nothing on stdout, exactly one stderr line starting
    ``datavet: error:`` that names the input (``names``) and matches every ``problem`` pattern
    (case-insensitive); never a traceback."""
    assert "Traceback" not in err, err
    assert code == 2, (code, err)
    assert out == "", out[:500]
    lines = err.splitlines()
    assert len(lines) == 1, err
    line = lines[0]
    assert line.startswith("datavet: error:"), line
    if names is not None:
        assert names in line, (names, line)
    for pattern in problem:
        assert re.search(pattern, line, re.IGNORECASE), (pattern, line)
    return line


@dataclass
class Child:
    returncode: int | None  # None: killed at the timeout
    stdout: str
    stderr: str
    seconds: float
    peak_rss_mb: float  # the child's own peak resident memory (Linux ru_maxrss)
    timed_out: bool


def child_env(extra: dict | None = None) -> dict:
    """The environment for a child ``python -m datavet``: it imports the same datavet as this
    process (the checkout under test, not a stale install)."""
    env = dict(os.environ)
    src = str(Path(datavet.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (src, env.get("PYTHONPATH", "")) if p)
    env.pop("GITHUB_ACTIONS", None)  # no auto-enabled annotations in the child's output
    env.update(extra or {})
    return env


def _limit(memory_bytes: int | None):
    if memory_bytes is None:
        return None

    def apply():  # in the child, before exec
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))

    return apply


def run_child(args, *, timeout: float, memory_bytes: int | None = None, cwd=None, env=None):
    """``python -m datavet ARGS`` in a child process with a wall-clock timeout and an optional
    address-space limit (a runaway allocation fails in the child instead of taking the machine),
    reaped with ``os.wait4`` to read the child's own peak RSS. stdout/stderr go to temporary
    files, so a chatty child cannot block on a full pipe."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        proc = subprocess.Popen(
            [sys.executable, "-m", "datavet", *map(str, args)],
            stdout=out,
            stderr=err,
            stdin=subprocess.DEVNULL,
            cwd=cwd or ROOT,
            env=env or child_env(),
            preexec_fn=_limit(memory_bytes),
        )
        deadline = started + timeout
        timed_out = False
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() > deadline:
                timed_out = True
                proc.kill()
                pid, status, usage = os.wait4(proc.pid, 0)
                break
            time.sleep(0.02)
        proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
        seconds = time.perf_counter() - started
        out.seek(0)
        err.seek(0)
        return Child(
            returncode=None if timed_out else proc.returncode,
            stdout=out.read().decode("utf-8", "replace"),
            stderr=err.read().decode("utf-8", "replace"),
            seconds=seconds,
            peak_rss_mb=usage.ru_maxrss / 1024,  # Linux reports KiB
            timed_out=timed_out,
        )
