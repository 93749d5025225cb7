"""No hang and no abort at exit after a CSV error with --encoding.

pyarrow reads ahead on its own threads. With ``--encoding`` those threads call into Python (the
transcoder); an error that drops the reader while a read is in flight, followed at once by the
interpreter's exit, hung the process in pyarrow's thread-pool teardown or aborted it ("terminate
called without an active exception", exit 134): about 1 exit in 10. The race is at process exit,
so every trial is a process that exits: a small harness imports datavet once and forks the
trials (each one audits, gets its one-line error, and exits through the normal interpreter
shutdown), a few at a time.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RUNS = 200

HARNESS = r"""
import gc, json, os, sys, time
import datavet
from datavet.errors import DatavetError

paths, runs, parallel = sys.argv[1].split(os.pathsep), int(sys.argv[2]), int(sys.argv[3])
encodings = ["cp1252", "latin-1", "cp037"]
gc.freeze()  # the children's interpreter shutdown then skips the modules' objects: cheap exits
result = {"ok": 0, "hung": 0, "crashed": [], "wrong": 0}


def trial(i):
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            datavet.audit(paths[i % len(paths)], encoding=encodings[i % len(encodings)])
        except DatavetError:
            pass
        except BaseException:
            code = 3
        sys.stdout.flush()
        sys.exit(code)  # the normal shutdown: the path that hung
    return pid, time.monotonic() + 20


running = {}
started = 0
while started < runs or running:
    while started < runs and len(running) < parallel:
        pid, deadline = trial(started)
        running[pid] = deadline
        started += 1
    time.sleep(0.005)
    for pid, deadline in list(running.items()):
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            del running[pid]
            if status == 0:
                result["ok"] += 1
            elif os.WIFEXITED(status) and os.WEXITSTATUS(status) == 3:
                result["wrong"] += 1
            else:
                result["crashed"].append(status)
        elif time.monotonic() > deadline:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            del running[pid]
            result["hung"] += 1
print(json.dumps(result))
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork: POSIX only")
def test_encoding_error_then_exit_never_hangs(tmp_path):
    header = tmp_path / "h.csv"
    header.write_bytes(b"a,b,label")  # a header without a line end
    blank = tmp_path / "blank.csv"
    blank.write_bytes(b"\n\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    proc = subprocess.run(
        [sys.executable, "-c", HARNESS, os.pathsep.join([str(header), str(blank)]), str(RUNS), "4"],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result == {"ok": RUNS, "hung": 0, "crashed": [], "wrong": 0}, proc.stderr[-2000:]
