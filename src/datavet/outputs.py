"""Where a command may write: one policy for every datavet command that writes a file.

1. Never onto a file the command reads (the data, a file inside a data directory, the config,
   the model's source, the log, the reports compared), however the path reaches it: a symbolic
   link, a hard link, ``..``. ``--force`` does not change this.
2. Never over an existing regular file that is not datavet's own output (a report in any format,
   a journal or its Markdown view, recognised by content: a text file only when all of it is
   one), unless ``--force``; never over a journal with another output, ``--force`` or not. An
   empty file holds nothing to lose and may be replaced. What is at the path is judged again
   when the output is put in place: a file that appeared or changed meanwhile is kept unless it
   is datavet's own output.
3. Never rename over something that is not a regular file: ``/dev/null``, a terminal, a FIFO
   are written in place, and their write errors (``/dev/full``) are errors. What a path leads to
   decides, not how it is spelt: ``/dev/shm/notes.txt`` or ``/proc/self/fd/7`` leading to a
   regular file is a regular file (rules 1 and 2 hold). ``-`` is standard output, and so is a
   path naming the file open on it (``/dev/stdout``); standard output that is a file the
   command reads is refused as well.

A refusal is :class:`~datavet.errors.OutputError` ``PATH: <why>`` (exit 2), raised before the
command reads or writes anything.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import stat
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from datavet._io import glob_regex, split_glob, write_atomic, write_in_place
from datavet.errors import OutputError, UsageError

STDOUT = "-"
_PEEK = 8192  # bytes read from each end of an existing file to recognise its kind
_TEXT_LIMIT = 64 * 1024 * 1024  # bytes: a text report larger than this needs --force to replace
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_VERDICT = (
    r"(?:could not finish: a rule crashed \(exit 2\)"
    r"|FAILED:? (?:findings )?at (?:or above|fail-on) '\w+' \(exit (?:1|0 with --exit-zero)\)"
    r"|passed at fail-on '\w+' \(exit 0\))"
)
_FOOTER = r"\d+ findings? \([^()]*\) from \d+ [a-z ]+\. " + _VERDICT
_DATASET = r"[\w-]+: .* \([\d,]+ rows, \d+ columns, [^()]*\)"
_SUMMARY = r"datavet(?: .+)?: \d+ error, \d+ warning, \d+ info(?:, \d+ ignored)?; " + _VERDICT
_LISTED = (
    rf"(?:\./)?.*?: (?:\[.*?\] )?[A-Z]+\d+ [\w-]+ .*|::(?:error|warning|notice)\b.*|{_SUMMARY}"
)
_DIFF_VERDICT = (
    r"(?:nothing new at or above '\w+'|\d+ new or worse finding\(s\) at or above '\w+' "
    r"\(marked !\)|the new audit did not finish \(a rule crashed\)): exit [012]"
)
# What each text-like output is made of, line by line, as its renderer writes it (datavet.output
# text, text_curves, concise, github; datavet.diff; the preflight stages): (its first line, any
# line, its last line). A file is one only when every line it shows fits: a log or notes that
# end with a pasted verdict line are not datavet's to replace.
_TEXT_KINDS = tuple(
    (re.compile(first), re.compile(line), re.compile(last))
    for first, line, last in (
        (  # text reports of audit, check, probe, preflight, curves, render (their shared footer)
            rf"== dataset .* ==|{_DATASET}|target: .*|log: .*",
            rf"|\s.*|== dataset .* ==|{_DATASET}|(?:target|log|note|skipped|no-learning level):"
            r" .*|(?:ERROR|WARNING|INFO) \(\d+\)|baselines[ :].*|CRASHED .*"
            rf"|ignored by per-column-ignores \(\d+\):|preflight stages:|{_FOOTER}",
            _FOOTER,
        ),
        (_LISTED, _LISTED, _SUMMARY),  # concise, GitHub: a line per finding, a summary per audit
        (  # datavet diff (text)
            r"old: .* \(exit .*\)",
            r"|(?:old|new): .* \(exit .*\)|(?:appeared|resolved|changed) \(\d+\):| [! ] .*"
            rf"|unchanged: \d+|{_DIFF_VERDICT}",
            _DIFF_VERDICT,
        ),
    )
)
_STAGE = re.compile(r"  \d+\. \[(?:ok  |FAIL|--  )\] .*")  # preflight: its stages follow the footer
_SARIF = re.compile(r'\{\s*"\$schema"\s*:\s*"[^"]*sarif[^"]*"')
_SARIF_DRIVER = re.compile(r'"driver"\s*:\s*\{\s*"name"\s*:\s*"datavet"')
_HEADS = (
    re.compile(r'\{\s*"schema_version"\s*:\s*\d+\s*,\s*"tool"\s*:\s*"datavet"'),  # JSON
    re.compile(r'(?:<\?xml[^>]*\?>\s*)?<testsuites name="datavet"'),  # JUnit
    # GitLab Code Quality (an empty list holds nothing to lose)
    re.compile(r'\[\s*(?:\]\s*$|\{\s*"type"\s*:\s*"issue"\s*,\s*"engine_name"\s*:\s*"datavet")'),
    re.compile(
        r"<!DOCTYPE html>\s*<html[^>]*>\s*<head>(?:\s*<meta [^>]*>)*?"
        r'\s*<meta name="generator" content="datavet'
    ),  # HTML
)


def is_datavet_output(path: str | os.PathLike) -> bool:
    """Whether the regular file at ``path`` is empty or a report datavet writes: JSON, SARIF,
    JUnit, GitLab Code Quality, HTML, text, concise, GitHub annotations, a diff. (A journal is
    not: a report never replaces one; :mod:`datavet.journal` recognises its own files.)"""
    try:
        with open(path, "rb") as fh:
            head = fh.read(_PEEK)
            size = os.fstat(fh.fileno()).st_size
            if size > 2 * _PEEK:
                fh.seek(size - _PEEK)
            tail = fh.read() if size > _PEEK else b""
    except OSError:
        return False
    if not head.strip():
        return True
    text = head.decode("utf-8", "replace").lstrip("\ufeff")
    start = text.lstrip()
    if any(p.match(start) for p in _HEADS):
        return True
    if _SARIF.match(start):
        return _SARIF_DRIVER.search(start) is not None
    if size > 2 * _PEEK:
        # a text output is judged by every line (a log with a datavet run at each end is not
        # one), so it is read whole; one larger than any report datavet writes is not its own
        if size > _TEXT_LIMIT:
            return False
        try:
            with open(path, "rb") as fh:
                whole = fh.read(_TEXT_LIMIT + 1)
        except OSError:
            return False
    else:
        whole = head + tail
    lines = whole.decode("utf-8", "replace").lstrip("\ufeff").split("\n")
    return _whole_text([_ANSI.sub("", line).rstrip("\r") for line in lines])


def _whole_text(lines: list[str]) -> bool:
    """Whether every line (of those peeked at) is one of a text-like output's, from its first
    line to its verdict (a preflight's stages come after the verdict)."""
    while lines and not lines[-1].strip():
        lines.pop()
    end = len(lines)
    while end and _STAGE.fullmatch(lines[end - 1]):
        end -= 1
    if end < len(lines):
        if lines[end - 1 : end] != ["preflight stages:"]:
            return False
        end -= 1
    while end and not lines[end - 1].strip():
        end -= 1
    if not end:
        return False
    return any(
        first.fullmatch(lines[0])
        and last.fullmatch(lines[end - 1].strip())
        and all(line.fullmatch(x) for x in lines)
        for first, line, last in _TEXT_KINDS
    )


def _in_place(path: str) -> bool:
    """Whether ``path`` leads to something that is not a regular file (``/dev/null``, a FIFO, a
    terminal, ``/dev/fd/3`` on a pipe): written where it is, never renamed over. Decided by what
    the path resolves to, not by its spelling: a regular file under ``/dev/shm`` or reached
    through ``/proc/self/fd/N`` is a regular file."""
    try:
        return not stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def _identity(path) -> tuple[int, int] | None:
    """``(st_dev, st_ino)`` of the file ``path`` leads to, or None when there is none."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return (st.st_dev, st.st_ino)


def _fd_path(fd: int) -> str:
    """A path naming open file descriptor ``fd`` (``/proc/self/fd/N``, else ``/dev/fd/N``)."""
    return f"/proc/self/fd/{fd}" if os.path.isdir("/proc/self/fd") else f"/dev/fd/{fd}"


def _stdout_file() -> str | None:
    """A path naming the regular file standard output is open on, or None (a terminal, a pipe,
    a captured stream)."""
    try:
        fd = sys.stdout.fileno()
        st = os.fstat(fd)
    except (OSError, ValueError, AttributeError, TypeError):
        return None
    return _fd_path(fd) if stat.S_ISREG(st.st_mode) else None


def _fd_is(path: str, stream) -> bool:
    """Whether ``path`` is the file open on ``stream`` (``/dev/stdout`` is standard output)."""
    try:
        fd = stream.fileno()
        a, b = os.fstat(fd), os.stat(path)
    except (OSError, ValueError, AttributeError, TypeError):
        return False
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


@dataclass
class Inputs:
    """What a command reads, as ``(label, path)`` pairs: ``("train input", "train.csv")``."""

    items: list[tuple[str, str]] = field(default_factory=list)

    def add(self, label: str, path) -> None:
        if isinstance(path, (str, os.PathLike)) and str(path) not in ("", STDOUT):
            self.items.append((label, os.fspath(path)))

    def hit(self, out: str) -> tuple[str, str] | None:
        """The input ``out`` would write over (itself, or a file inside an input directory)."""
        for label, src in self.items:
            if _collides(out, src):
                return label, src
        return None


def _local(src: str) -> str | None:
    """The local path an input names (``file://`` URLs decoded), or None for a remote URL."""
    if src.lower().startswith("file://"):
        from urllib.parse import unquote, urlparse

        return unquote(urlparse(src).path)
    if "://" in src:
        return None
    return src


def _collides(out: str, src: str) -> bool:
    """Whether writing ``out`` would write over a file that reading ``src`` reads: the file
    itself, a file inside the directory, a file the glob matches (or would match once written),
    however ``out`` or the input reaches it (symbolic links, hard links, ``..``)."""
    local = _local(src)
    if local is None:
        return False  # a remote input holds no local file
    src = local
    try:
        if any(c in src for c in "*?[") and not os.path.exists(src):
            return _glob_reads(out, src)
        if os.path.isdir(src):
            real_src = os.path.realpath(src)
            real_out = os.path.realpath(out)
            if real_out == real_src or real_out.startswith(os.path.join(real_src, "")):
                return True
            return _tree_reads(out, src, None, None)
        if os.path.exists(out) and os.path.exists(src):
            return os.path.samefile(out, src)
        return os.path.realpath(out) == os.path.realpath(src)
    except (OSError, ValueError):
        return os.path.abspath(out) == os.path.abspath(src)


def _glob_reads(out: str, pattern: str) -> bool:
    """A glob input: the next audit would read a report written where the pattern matches, as
    written or once links are resolved, and this one reads every file it matches now (through
    a symbolic link to a file or a folder, or a hard link)."""
    absolute = os.path.abspath(pattern)
    if glob_regex(absolute).fullmatch(os.path.abspath(out)):
        return True
    base, rest = split_glob(absolute)
    base = base or "/"
    real_base = os.path.realpath(base)
    if glob_regex(os.path.join(real_base, rest)).fullmatch(os.path.realpath(out)):
        return True
    depth = None if "**" in rest.split("/") else rest.count("/")
    return _tree_reads(out, base, glob_regex(rest), depth)


def _tree_reads(out: str, base: str, regex: re.Pattern | None, depth: int | None) -> bool:
    """Whether ``out`` is, or would be created as, a file under ``base`` whose path relative to
    it ``regex`` matches (None: any), walking folders through symbolic links (each real folder
    once) down to ``depth`` levels (None: all). A file is compared by ``(st_dev, st_ino)``."""
    target = _identity(out)
    out_dir, out_name = os.path.split(os.path.realpath(out))
    seen: set[tuple[int, int]] = set()
    stack: list[tuple[str, str, int]] = [("", base, 0)]
    while stack:
        rel, folder, level = stack.pop()
        try:
            st = os.stat(folder)
            real = os.path.realpath(folder)
        except (OSError, ValueError):
            continue
        if (st.st_dev, st.st_ino) in seen:
            continue
        seen.add((st.st_dev, st.st_ino))
        if real == out_dir and (regex is None or regex.fullmatch(rel + out_name)):
            return True  # out is (or would be created as) a file of this folder
        try:
            with os.scandir(folder) as it:
                entries = list(it)
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.is_dir():  # a link to a folder is followed, as the readers do
                    if depth is None or level < depth:
                        stack.append((f"{rel}{entry.name}/", entry.path, level + 1))
                    continue
                if target is None:
                    continue
                if entry.is_symlink():
                    ident: tuple[int, int] | None = _identity(entry.path)
                else:
                    ident = (st.st_dev, entry.inode())
            except OSError:
                continue
            if ident == target and (regex is None or regex.fullmatch(rel + entry.name)):
                return True
    return False


class Outputs:
    """The outputs of one command run: each is checked against the policy when it is named
    (before any work), and again when it is written.

    ``reads`` are the command's inputs; ``force`` allows replacing an existing file that is not
    datavet's own output (never an input)."""

    def __init__(self, reads: Inputs | None = None, *, force: bool = False) -> None:
        self.reads = reads or Inputs()
        self.force = force
        self.named: dict[str, str] = {}  # resolved path -> option
        self.files: dict[tuple[int, int], str] = {}  # existing regular file -> option
        # resolved path -> (the regular file there when claimed, or None; its recogniser; what)
        self.seen: dict[str, tuple[tuple[int, int] | None, Callable, str]] = {}
        self.on_stdout: str | None = None  # what prints to standard output, once checked

    def claim(self, option: str, path, *, owned=is_datavet_output, what: str = "report") -> str:
        """Check that ``option``'s ``path`` may be written; return it as a string."""
        path = os.fspath(path)
        if path == STDOUT:
            if STDOUT in self.named:
                raise UsageError(
                    f"{self.named[STDOUT]} - and {option} - both write to standard output"
                )
            self.check_stdout(f"{option} -", what=what)
            self.named[STDOUT] = option
            return path
        shown = _shown(path)
        if not path:
            raise UsageError(f"{option} '': the path is empty (- is standard output)")
        if path.endswith(("/", os.sep)) and not os.path.isdir(path):
            raise OutputError(
                shown, f"ends in a separator, so it names a directory; {option} needs a file path"
            )
        hit = self.reads.hit(path)
        if hit is not None:
            label, src = hit
            raise OutputError(
                shown,
                f"is the {label} being read ({_shown(src)}); {option} would write the {what} "
                "over it: choose another path",
            )
        self._name(option, path, shown)
        seen = self._check_existing(option, path, shown, owned, what)
        self.seen[os.path.realpath(path)] = (seen, owned, what)
        return path

    def _name(self, option: str, path: str, shown: str) -> None:
        """Two outputs naming one file (by resolved path, or the same existing file) are
        refused: the second would replace, or be appended to and then replace, the first."""
        key = os.path.realpath(path)
        other = self.named.get(key)
        try:
            st = os.stat(path)
            ident = (st.st_dev, st.st_ino) if stat.S_ISREG(st.st_mode) else None
        except (OSError, ValueError):
            ident = None
        if other is None and ident is not None:
            other = self.files.get(ident)
        if other is not None and other != option:
            raise UsageError(f"{shown}: {other} and {option} name the same file")
        self.named[key] = option
        if ident is not None:
            self.files[ident] = option

    def check_stdout(
        self,
        option: str | None = None,
        *,
        what: str = "report",
        remedy: str = "redirect standard output elsewhere, or give --output PATH",
    ) -> None:
        """Refuse to print the result when standard output is a file the command reads (as
        ``cat`` refuses "input file is output file"): ``datavet audit v.csv > v.csv``.
        ``option``: the option naming ``-`` (None: the result, printed by default)."""
        self.on_stdout = option or "standard output"
        fd_path = _stdout_file()
        if fd_path is None:
            return
        hit = self.reads.hit(fd_path)
        if hit is not None:
            label, src = hit
            who = f"{option} would write the {what}" if option else f"the {what} would be written"
            raise OutputError(
                _shown(src),
                f"is the {label} being read and standard output is open on it; {who} over it: "
                + remedy,
            )

    def _check_existing(self, option, path, shown, owned, what) -> tuple[int, int] | None:
        """Refuse to replace what is at ``path``; return the regular file that may be replaced
        (``(st_dev, st_ino)``), or None (nothing there, or a device written in place)."""
        try:
            st = os.stat(path)
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as exc:
            raise OutputError(shown, f"cannot be written ({exc.strerror or exc})") from None
        if stat.S_ISDIR(st.st_mode):
            raise OutputError(shown, f"is a directory; {option} needs a file path")
        if not stat.S_ISREG(st.st_mode):
            return None  # written in place: a device stays a device
        if _fd_is(path, sys.stdout) or _fd_is(path, sys.stderr):
            return None  # the file the shell opened on stdout/stderr: written there, as with -
        if owned(path):
            return (st.st_dev, st.st_ino)
        _refuse_journal(option, path, shown, what)
        if not self.force:
            raise OutputError(
                shown,
                f"exists and is not a datavet {what}; {option} would replace it: pass --force "
                "to replace it, or choose another path",
            )
        return (st.st_dev, st.st_ino)

    def write(self, option: str, path, text: str, *, owned=is_datavet_output, what="report"):
        """Write ``text`` to ``path`` under the policy; an OS failure is an OutputError naming
        the file (any previous file stays whole). What is at ``path`` when it is replaced is
        judged again: a file that appeared or changed while the command ran is replaced only
        when it is datavet's own output (``--force`` covers only the file seen when claimed)."""
        if _fresh(self, path):
            self.claim(option, path, owned=owned, what=what)
        path = os.fspath(path)
        seen, owned, what = self.seen.get(os.path.realpath(path), (None, owned, what))

        def may_replace(real: str) -> None:
            if owned(real):
                return
            _refuse_journal(option, real, _shown(path), what)
            if self.force and seen is not None and _identity(real) == seen:
                return
            raise OutputError(
                _shown(path),
                f"was created or changed while datavet ran and is not a datavet {what}; "
                f"{option} left it as it is: choose another path",
            )

        write_text(path, text, may_replace=may_replace)

    def claim_append(self, option: str, path) -> str:
        """Check a file ``option`` appends to (``$GITHUB_STEP_SUMMARY``) before any work: never
        an input, never a file another output names (that one would replace it)."""
        path = os.fspath(path)
        shown = _shown(path)
        hit = self.reads.hit(path)
        if hit is not None:
            raise OutputError(
                shown,
                f"is the {hit[0]} being read ({_shown(hit[1])}); {option} would append to it",
            )
        if self.on_stdout and _fd_is(path, sys.stdout):
            raise UsageError(f"{shown}: {self.on_stdout} and {option} name the same file")
        self._name(option, path, shown)
        return path

    def append(self, option: str, path, text: str) -> None:
        """Append ``text`` (``$GITHUB_STEP_SUMMARY``): refused onto an input, never truncates."""
        path = os.fspath(path)
        if _fresh(self, path):
            self.claim_append(option, path)
        try:
            st = os.stat(path)
            regular = stat.S_ISREG(st.st_mode)
        except OSError:
            regular = True
        try:
            if regular:
                with open(path, "a", encoding="utf-8") as fh:
                    fh.write(text)
            else:
                write_in_place(path, text)
        except OSError as exc:
            raise OutputError(_shown(path), f"cannot be written ({exc.strerror or exc})") from None


def is_journal(path: str | os.PathLike) -> bool:
    """Whether the file at ``path`` is empty or a datavet journal: a line of its first 64 KiB is
    an entry (an object with a whole-number ``id`` and a ``hypothesis``)."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(65536)
    except OSError:
        return False
    if not head.strip():
        return True
    for line in head.decode("utf-8", "replace").splitlines():
        if '"hypothesis"' not in line:
            continue
        try:
            item = json.loads(line)
        except ValueError:
            continue
        if isinstance(item, dict) and type(item.get("id")) is int and "hypothesis" in item:
            return True
    return False
    # (here, beside the outputs that must never replace a journal; datavet.journal uses it)


def _refuse_journal(option: str, path, shown: str, what: str) -> None:
    """A journal holds what cannot be rerun (hypotheses, predictions, outcomes): another output
    never replaces it, ``--force`` or not."""
    try:
        with open(path, "rb") as fh:
            blank = not fh.read(_PEEK).strip()
    except OSError:
        return
    if not blank and is_journal(path):
        raise OutputError(
            shown,
            f"is a datavet debugging journal; {option} never replaces one with a {what}, "
            "--force or not: choose another path",
        )


def _fresh(outputs: Outputs, path) -> bool:
    """Whether ``path`` still needs its check (not claimed, or claimed by another name)."""
    path = os.fspath(path)
    return path != STDOUT and os.path.realpath(path) not in outputs.named


def write_bytes(path, data: bytes) -> None:
    """Binary content (a saved tensor snapshot): a device or FIFO in place; a regular file
    atomically (through a symbolic link, ``/proc/self/fd/N`` included). Never standard
    output."""
    path = os.fspath(path)
    try:
        if _in_place(path):
            write_in_place(path, data, truncate=True)
            return
        write_atomic(path, data)
    except OSError as exc:
        raise OutputError(_shown(path), f"cannot be written ({exc.strerror or exc})") from None


def write_text(path, text: str, *, may_replace: Callable[[str], None] | None = None) -> None:
    """The write itself: ``-`` and the file on standard output go to ``sys.stdout``; a device,
    FIFO in place; a regular file atomically (through a symbolic link, ``/proc/self/fd/N``
    included; ``may_replace`` as :func:`datavet._io.write_atomic` takes it)."""
    path = os.fspath(path)
    if path == STDOUT or _fd_is(path, sys.stdout):
        write_stdout(text)
        return
    try:
        if _fd_is(path, sys.stderr):
            sys.stderr.write(text)
            sys.stderr.flush()
            return
        if _in_place(path):
            write_in_place(path, text, truncate=True)
            return
        write_atomic(path, text, may_replace=may_replace)
    except BrokenPipeError:
        raise
    except OSError as exc:
        raise OutputError(_shown(path), f"cannot be written ({exc.strerror or exc})") from None


def write_stdout(text: str) -> None:
    """``text`` on standard output; a failure (a full disk behind ``> file``) is an OutputError,
    after which standard output points at the null device, so the interpreter's final flush
    of what is still buffered cannot fail a second time. A closed pipe stays BrokenPipeError."""
    with _stdout_errors():
        sys.stdout.write(text)
        sys.stdout.flush()


@contextlib.contextmanager
def _stdout_errors():
    try:
        yield
    except BrokenPipeError:
        raise
    except OSError as exc:
        stdout_to_devnull()
        raise OutputError("standard output", f"cannot be written ({exc.strerror or exc})") from None


class GuardedStdout:
    """Standard output while a command runs, however it prints (``print``, ``write``): a write
    that fails (a full disk, a descriptor not open for writing, none at all when the process
    started with it closed, ``>&-``) is an OutputError, one line and exit 2, never an internal
    error or a silent exit 0. A command that only writes files runs without one."""

    def __init__(self, stream) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        if self.stream is None:
            raise OutputError("standard output", "cannot be written (it is closed)")
        with _stdout_errors():
            return self.stream.write(text)

    def flush(self) -> None:
        if self.stream is not None:
            with _stdout_errors():
                self.stream.flush()

    def isatty(self) -> bool:
        return self.stream is not None and self.stream.isatty()

    def fileno(self) -> int:
        if self.stream is None:
            raise io.UnsupportedOperation("standard output is closed")
        return self.stream.fileno()

    def __getattr__(self, name: str):
        return getattr(self.stream, name)


def stdout_to_devnull() -> None:
    """Point standard output at the null device, as Python's docs advise after a failed write
    (a closed pipe, a full disk): the interpreter's final flush cannot fail a second time."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


def wrote(path) -> None:
    """``datavet: wrote PATH`` on stderr (nothing for standard output)."""
    if os.fspath(path) != STDOUT:
        print(f"datavet: wrote {_shown(os.fspath(path))}", file=sys.stderr)


def _shown(path: str) -> str:
    """A path on a line of its own: control characters as visible escapes."""
    return re.sub(r"[\x00-\x1f\x7f-\x9f]", lambda m: f"\\x{ord(m.group()):02x}", str(path))


def stdout_twice(option: str) -> None:
    """Refuse ``--html -`` when the result goes to standard output as well."""
    raise UsageError(f"{option} - and the result both go to standard output: give --output PATH")


def add_force_option(parser) -> None:
    parser.add_argument(
        "--force",
        action="store_true",
        help="replace an existing output file that is not a datavet report (never an input)",
    )


def reads(*pairs: tuple[str, object], many: Iterable[tuple[str, object]] = ()) -> Inputs:
    """``Inputs`` from ``(label, path)`` pairs (paths that are None or not paths are skipped)."""
    out = Inputs()
    for label, path in (*pairs, *many):
        out.add(label, path)
    return out
