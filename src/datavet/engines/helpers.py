"""Helper processes for the local engine's scan of a large Parquet source.

One process's threads profile batches only about 1.2x faster than one thread: the NumPy and
Arrow kernels release the GIL, but the per-column Python between them does not. So a large
Parquet source is shared with helper processes. This process profiles the row groups from the
start; each helper takes row groups from the end, profiles them and sends back their Profile
(statistics, row hashes, sample rows) over a pipe; the profiles are merged in row order, so
the result is the one the threads alone give (``tests/engines/test_helpers.py``).

How a helper starts (:func:`how_to_start`): on Linux, when no other Python thread runs (a
script, the command line), it is a fork of this process, ready at once with every module
imported; it only profiles row groups and leaves with ``os._exit``. Otherwise (a notebook
kernel's threads, macOS, Windows) it is a fresh interpreter (``python -c "...; main()"``),
never a fork of a process whose threads and locks are not ours to copy. ``DATAVET_HELPERS``
= ``off`` | ``spawn`` | ``fork`` overrides the choice.

A helper that cannot start, or stops, costs nothing but its speed: its row group is profiled
here and the scan goes on without it. An error reading the data (a corrupt row group) is the
same one-line error as without helpers. The pipes carry pickles between this process and the
children it started; nothing else reads them.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import threading
from collections import deque
from pathlib import Path

# Below this many rows in the splits a helper would not pay for its start (a fork: a few ms;
# a fresh interpreter: ~0.5 s of CPU on another core); on one core there is nothing to gain.
MIN_ROWS = 400_000
MAX_HELPERS = 3
MIN_GROUP_ROWS = 16_384  # row groups smaller than this: one task would cost more than it gives

_LAUNCH = "from datavet.engines.helpers import main; main()"


class HelperGone(Exception):
    """The helper process stopped or could not be reached."""


# the parent's ends of every open helper's pipes: a helper forked later closes them, or the
# earlier helpers would never see their task pipe close
_OPEN_FDS: set[int] = set()


class Helper:
    """One helper process and the two pipes to it: :meth:`run` sends a task and waits for
    its result."""

    def __init__(self, pid: int | None, tasks, results, proc: subprocess.Popen | None = None):
        self.pid = pid
        self.tasks = tasks
        self.results = results
        self.proc = proc

    @classmethod
    def start(cls, how: str) -> Helper | None:
        """A started helper (``how``: "fork" or "spawn"), or None when none can start."""
        try:
            return cls._fork() if how == "fork" else cls._spawn()
        except (OSError, ValueError):
            return None

    @classmethod
    def _spawn(cls) -> Helper:
        """A fresh interpreter running :func:`main`: safe wherever the caller runs."""
        root = str(Path(__file__).resolve().parents[2])  # where this datavet is imported from
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([root, *filter(None, [env.get("PYTHONPATH")])])
        proc = subprocess.Popen(
            [sys.executable, "-c", _LAUNCH],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        return cls(proc.pid, proc.stdin, proc.stdout, proc)

    @classmethod
    def _fork(cls) -> Helper:
        """A fork of this process (Linux, no other Python thread running: see
        :func:`how_to_start`): ready at once, with every module already imported. The child
        only profiles row groups and leaves with ``os._exit`` (no atexit handler, no
        finaliser of the parent's objects runs in it)."""
        import signal
        import warnings

        task_r, task_w = os.pipe()
        result_r, result_w = os.pipe()
        with warnings.catch_warnings():  # Python 3.12+: "fork() may lead to deadlocks" when
            warnings.simplefilter("ignore", DeprecationWarning)  # C threads (Arrow's) exist
            pid = os.fork()
        if pid == 0:  # the helper
            code = 1
            try:
                signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C
                for fd in (task_w, result_r, *_OPEN_FDS):
                    os.close(fd)
                serve(os.fdopen(task_r, "rb"), os.fdopen(result_w, "wb"))
                code = 0
            finally:
                os._exit(code)
        os.close(task_r)
        os.close(result_w)
        _OPEN_FDS.update((task_w, result_r))
        return cls(pid, os.fdopen(task_w, "wb"), os.fdopen(result_r, "rb"))

    def run(self, task: tuple):
        """The result of ``task`` in the helper; its exception raised here; HelperGone when
        the helper is no longer there."""
        try:
            pickle.dump(task, self.tasks, protocol=pickle.HIGHEST_PROTOCOL)
            self.tasks.flush()
            status, value = pickle.load(self.results)
        except (OSError, EOFError, pickle.UnpicklingError, ValueError, AttributeError) as exc:
            raise HelperGone(str(exc)) from None
        if status == "error":
            raise value
        return value

    def close(self) -> None:
        """Close the task pipe (the helper leaves), and reap it: killed if it does not leave
        within two seconds."""
        for stream in (self.tasks, self.results):
            fd = _fileno(stream)
            try:
                stream.close()
            except OSError:
                pass
            _OPEN_FDS.discard(fd)
        if self.proc is not None:
            try:
                self.proc.wait(timeout=2)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            return
        import time

        deadline = time.monotonic() + 2
        while True:
            try:
                done, _ = os.waitpid(self.pid, os.WNOHANG)
            except ChildProcessError:
                return
            if done:
                return
            if time.monotonic() > deadline:
                try:
                    os.kill(self.pid, 9)
                    os.waitpid(self.pid, 0)
                except (ProcessLookupError, ChildProcessError):
                    pass
                return
            time.sleep(0.005)


def _fileno(stream) -> int:
    try:
        return stream.fileno()
    except (OSError, ValueError):
        return -1


def how_to_start() -> str | None:
    """How helpers start here: ``DATAVET_HELPERS`` (``off``, ``spawn``, ``fork``) when set;
    else a fork on Linux when no other Python thread runs (a script, the command line), a
    fresh interpreter otherwise (a notebook kernel's threads, macOS, Windows)."""
    import threading

    asked = os.environ.get("DATAVET_HELPERS", "auto").strip().lower()
    if asked in ("off", "0", "no", "none"):
        return None
    can_fork = sys.platform.startswith("linux") and hasattr(os, "fork")
    if asked == "fork":
        return "fork" if can_fork else "spawn"
    if asked == "spawn":
        return "spawn"
    return "fork" if can_fork and threading.active_count() == 1 else "spawn"


class Helpers:
    """The helper processes of one engine run, started together, closed at the end."""

    def __init__(self, count: int):
        how = how_to_start()
        self.helpers: list[Helper] = []
        for _ in range(count if how else 0):
            helper = Helper.start(how)
            if helper is None:
                break
            self.helpers.append(helper)

    def ready(self) -> list[Helper]:
        return list(self.helpers)

    def close(self) -> None:
        for helper in self.helpers:
            helper.close()
        self.helpers = []


def wanted(sources, workers: int) -> int:
    """How many helpers a scan of ``sources`` is worth: none for small inputs, other formats
    (their rows are not in row groups this process can hand out), one core or one worker."""
    from datavet.sources.parquet import ParquetSource

    cores = os.cpu_count() or 1
    if workers < 2 or cores < 2:
        return 0
    parquet = [s for s in sources if isinstance(s, ParquetSource)]
    rows = sum(s.num_rows or 0 for s in parquet)
    if rows < MIN_ROWS:
        return 0
    return max(0, min(MAX_HELPERS, workers - 1, cores - 1))


def shareable(source, batch_rows: int) -> bool:
    """Whether ``source``'s row groups can be handed out (a Parquet source, pieces big
    enough to be worth a task, more than one of them)."""
    from datavet.sources.parquet import ParquetSource

    if not isinstance(source, ParquetSource):
        return False
    pieces = source.pieces(batch_rows)
    return len(pieces) > 1 and source.num_rows >= MIN_GROUP_ROWS * len(pieces)


def warm_up(source, plan, batch_rows: int) -> None:
    """Profile a few rows of ``source`` once before the helpers start: the modules the scan
    imports on first use are then imported once, here, rather than again in every forked
    helper."""
    from datavet.scan import Profile

    pieces = source.pieces(batch_rows)
    if pieces:
        for batch in pieces[0][0].batches(256):
            Profile.of_batch(batch, 0, plan, "warm-up")
            return


def profile_piece(piece, offset: int, plan, split: str, batch_rows: int) -> list:
    """The Profile of each batch of one piece (its rows start at ``offset``): what a helper
    computes, and what this process computes for a piece a helper could not take. Batch by
    batch, so they merge in the order the threads merge them (the same sums, to the bit)."""
    from datavet.scan import Profile

    parts = []
    for batch in piece.batches(batch_rows):
        parts.append(Profile.of_batch(batch, offset, plan, split))
        offset += batch.num_rows
    return parts


class Shared:
    """Row groups handed out from both ends: this process takes the next from the front,
    each helper the next from the back. ``results`` holds what the helpers profiled (their
    hashes already taken by ``keep``): the batch profiles of each piece, by its index."""

    def __init__(self, count: int):
        self.queue: deque[int] = deque(range(count))
        self.lock = threading.Lock()
        self.results: dict[int, object] = {}
        self.error: BaseException | None = None
        self.done = threading.Event()

    def front(self):
        """Indexes for this process, in order, until the two ends meet."""
        while True:
            with self.lock:
                if not self.queue or self.error is not None:
                    return
                i = self.queue.popleft()
            yield i

    def back(self) -> int | None:
        with self.lock:
            if not self.queue or self.error is not None:
                return None
            return self.queue.pop()


def feed(helper: Helper | None, shared: Shared, task_of, keep, local) -> None:
    """A thread's loop: row groups from the back of ``shared``, profiled by ``helper`` (or
    here, by ``local``, once the helper is gone), results kept by index. An error stops every
    side and is raised by the scan."""
    try:
        while (i := shared.back()) is not None:
            parts = None
            if helper is not None:
                try:
                    parts = helper.run(task_of(i))
                except HelperGone:
                    helper = None
            if parts is None:
                parts = local(i)
            for part in parts:
                keep(part)
            with shared.lock:
                shared.results[i] = parts
    except BaseException as exc:  # raised in the scan's thread
        with shared.lock:
            if shared.error is None:
                shared.error = exc


def main() -> None:
    """The helper's loop: tasks from stdin, results to stdout, until stdin closes."""
    tasks = sys.stdin.buffer
    results = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())  # a stray print never reaches the pipe
    sys.stdout = sys.stderr
    serve(tasks, results)


def serve(tasks, results) -> None:
    """Profile the row groups read from ``tasks``, each reply pickled to ``results``."""
    while True:
        try:
            task = pickle.load(tasks)
        except (EOFError, OSError, pickle.UnpicklingError):
            return
        try:
            reply = ("ok", profile_piece(*task))
        except BaseException as exc:  # noqa: BLE001 - handed to the parent
            try:
                pickle.dumps(exc)
            except Exception:  # noqa: BLE001 - an exception that does not pickle: its text
                exc = RuntimeError(f"{type(exc).__name__}: {exc}")
            reply = ("error", exc)
        try:
            pickle.dump(reply, results, protocol=pickle.HIGHEST_PROTOCOL)
            results.flush()
        except OSError:
            return
