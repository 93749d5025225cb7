"""Where a command may write: one policy for every datavet command that writes a file.

1. Never onto a file the command reads (the data, a file inside a data directory, the config,
   the model's source, the log, the reports compared), however the path reaches it: a symbolic
   link, a hard link, ``..``. ``--force`` does not change this.
2. Never over an existing regular file that is not datavet's own output (a report in any format,
   a journal or its Markdown view, recognised by content), unless ``--force``. An empty file holds
   nothing to lose and may be replaced.
3. Never rename over something that is not a regular file: ``/dev/null``, ``/dev/stdout``, a
   terminal, a FIFO are written in place, and their write errors (``/dev/full``) are errors.
   ``-`` is standard output.

A refusal is :class:`~datavet.errors.OutputError` ``PATH: <why>`` (exit 2), raised before the
command reads or writes anything.
"""

from __future__ import annotations

import os
import re
import stat
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field

from datavet._io import glob_regex, write_atomic, write_in_place
from datavet.errors import OutputError, UsageError

STDOUT = "-"
_PEEK = 8192  # bytes read from each end of an existing file to recognise it
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_VERDICT = (
    r"(?:could not finish: a rule crashed \(exit 2\)"
    r"|FAILED:? (?:findings )?at (?:or above|fail-on) '\w+' \(exit 1\)"
    r"|passed at fail-on '\w+' \(exit 0\))"
)
_LAST_LINES = (
    # text reports of audit, probe, curves (their shared footer)
    re.compile(r"\d+ findings? \([^()]*\) from \d+ [a-z ]+\. " + _VERDICT),
    # GitHub annotations, concise
    re.compile(r"datavet(?: .+)?: .*; " + _VERDICT),
    # datavet diff (text)
    re.compile(
        r"(?:nothing new at or above '\w+'|\d+ new or worse finding\(s\) at or above '\w+' "
        r"\(marked !\)|the new audit did not finish \(a rule crashed\)): exit [012]"
    ),
)
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
    last = _ANSI.sub("", (text + tail.decode("utf-8", "replace")).rstrip().rsplit("\n", 1)[-1])
    return any(p.fullmatch(last.strip()) for p in _LAST_LINES)


def _under_dev(path: str) -> bool:
    """``/dev/stdout``, ``/dev/fd/3``, ``/proc/self/fd/1``: names for open files, written in
    place even when they lead to a regular file (renaming would detach the file the shell
    opened)."""
    absolute = os.path.abspath(path)
    return absolute.startswith(("/dev/", "/proc/"))


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
    local = _local(src)
    if local is None:
        return False  # a remote input holds no local file
    src = local
    if any(c in src for c in "*?[") and not os.path.exists(src):
        # a glob input: the next audit would read a report written where it matches
        return glob_regex(os.path.abspath(src)).fullmatch(os.path.abspath(out)) is not None
    try:
        if os.path.isdir(src):
            real_src = os.path.realpath(src)
            real_out = os.path.realpath(out)
            if real_out == real_src or real_out.startswith(os.path.join(real_src, "")):
                return True
            return _hard_link_inside(out, src)
        if os.path.exists(out) and os.path.exists(src):
            return os.path.samefile(out, src)
        return os.path.realpath(out) == os.path.realpath(src)
    except (OSError, ValueError):
        return os.path.abspath(out) == os.path.abspath(src)


def _hard_link_inside(out: str, folder: str) -> bool:
    """A hard link elsewhere to a file inside an input directory (only looked for when ``out``
    has more than one link, so the common case costs one stat)."""
    try:
        st = os.stat(out)
    except OSError:
        return False
    if st.st_nlink < 2 or not stat.S_ISREG(st.st_mode):
        return False
    for root, _dirs, files in os.walk(folder):
        for name in files:
            try:
                other = os.stat(os.path.join(root, name))
            except OSError:
                continue
            if (other.st_dev, other.st_ino) == (st.st_dev, st.st_ino):
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

    def claim(self, option: str, path, *, owned=is_datavet_output, what: str = "report") -> str:
        """Check that ``option``'s ``path`` may be written; return it as a string."""
        path = os.fspath(path)
        if path == STDOUT:
            if STDOUT in self.named:
                raise UsageError(
                    f"{self.named[STDOUT]} - and {option} - both write to standard output"
                )
            self.named[STDOUT] = option
            return path
        shown = _shown(path)
        hit = self.reads.hit(path)
        if hit is not None:
            label, src = hit
            raise OutputError(
                shown,
                f"is the {label} being read ({_shown(src)}); {option} would write the {what} "
                "over it: choose another path",
            )
        key = os.path.realpath(path)
        if key in self.named and self.named[key] != option:
            raise UsageError(f"{shown}: {self.named[key]} and {option} name the same file")
        self.named[key] = option
        self._check_existing(option, path, shown, owned, what)
        return path

    def _check_existing(self, option, path, shown, owned, what) -> None:
        try:
            st = os.stat(path)
        except (FileNotFoundError, NotADirectoryError):
            return
        except OSError as exc:
            raise OutputError(shown, f"cannot be written ({exc.strerror or exc})") from None
        if stat.S_ISDIR(st.st_mode):
            raise OutputError(shown, f"is a directory; {option} needs a file path")
        if not stat.S_ISREG(st.st_mode) or _under_dev(path):
            return  # written in place: a device stays a device
        if not self.force and not owned(path):
            raise OutputError(
                shown,
                f"exists and is not a datavet {what}; {option} would replace it: pass --force "
                "to replace it, or choose another path",
            )

    def write(self, option: str, path, text: str, *, owned=is_datavet_output, what="report"):
        """Write ``text`` to ``path`` under the policy; an OS failure is an OutputError naming
        the file (any previous file stays whole)."""
        path = self.claim(option, path, owned=owned, what=what) if _fresh(self, path) else path
        write_text(path, text)

    def append(self, option: str, path, text: str) -> None:
        """Append ``text`` (``$GITHUB_STEP_SUMMARY``): refused onto an input, never truncates."""
        path = os.fspath(path)
        hit = self.reads.hit(path)
        if hit is not None:
            raise OutputError(
                _shown(path),
                f"is the {hit[0]} being read ({_shown(hit[1])}); {option} would append to it",
            )
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


def _fresh(outputs: Outputs, path) -> bool:
    """Whether ``path`` still needs its check (not claimed, or claimed by another name)."""
    path = os.fspath(path)
    return path != STDOUT and os.path.realpath(path) not in outputs.named


def write_bytes(path, data: bytes) -> None:
    """Binary content (a saved tensor snapshot): a device, FIFO or ``/dev/...`` name in place; a
    regular file atomically (through a symbolic link). Never standard output."""
    path = os.fspath(path)
    try:
        if _under_dev(path) and os.path.exists(path):
            write_in_place(path, data, truncate=True)
            return
        write_atomic(path, data)
    except OSError as exc:
        raise OutputError(_shown(path), f"cannot be written ({exc.strerror or exc})") from None


def write_text(path, text: str) -> None:
    """The write itself: ``-`` and the file on standard output go to ``sys.stdout``; a device,
    FIFO or ``/dev/...`` name in place; a regular file atomically (through a symbolic link)."""
    path = os.fspath(path)
    try:
        if path == STDOUT or _fd_is(path, sys.stdout):
            sys.stdout.write(text)
            sys.stdout.flush()
            return
        if _fd_is(path, sys.stderr):
            sys.stderr.write(text)
            sys.stderr.flush()
            return
        if _under_dev(path) and os.path.exists(path):
            write_in_place(path, text, truncate=True)
            return
        write_atomic(path, text)
    except BrokenPipeError:
        raise
    except OSError as exc:
        raise OutputError(_shown(path), f"cannot be written ({exc.strerror or exc})") from None


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
