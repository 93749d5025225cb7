"""Writing files, the mechanics: a regular file is written to a temporary file beside it and renamed
into place; anything else (a device, a FIFO, a terminal) is written in place. Which paths may be
written at all is decided in :mod:`datavet.outputs`."""

from __future__ import annotations

import contextlib
import os
import re
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path

# `.NAME.PID.RANDOM.tmp`: the pid lets the next write beside NAME remove what a killed writer left
_TEMP = re.compile(r"\.(?P<pid>\d+)\.[A-Za-z0-9_]+\.tmp")


def write_atomic(
    path: str | os.PathLike,
    text: str | bytes,
    *,
    may_replace: Callable[[str], None] | None = None,
) -> None:
    """Write to a temporary file beside ``path`` and rename it into place: readers never see a
    half-written report, and a failure leaves any previous file intact.

    ``may_replace(PATH)`` is called right before a file at ``PATH`` (the target) is replaced and
    raises to keep it; with it, a new file is linked into place, so one that appeared meanwhile
    is never replaced unseen.

    A symbolic link is written through (its target is replaced, the link stays; the temporary
    file is made beside the target, also for ``/proc/self/fd/N`` and ``/dev/fd/N``). An existing
    target that is not a regular file (``/dev/null``, a FIFO, a terminal) is never renamed over:
    it is written in place, as a shell's ``>`` would, and a write error (``/dev/full``) is raised.
    """
    if os.path.islink(path):
        real = os.path.realpath(path)
        if os.path.exists(path) and not _same_existing(path, real):
            # ``/proc/self/fd/N`` on a deleted file, or a name from another mount namespace:
            # no folder to rename in, so the file the link leads to is written where it is
            write_in_place(path, text, truncate=True)
            return
        path = Path(real)
    else:
        path = Path(path)
    try:
        st = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        st = None
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise IsADirectoryError(21, "is a directory", str(path))
    if st is not None and not stat.S_ISREG(st.st_mode):
        write_in_place(path, text)
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except FileExistsError:  # a folder on the way is a file: say that, not "File exists"
        raise NotADirectoryError(20, "Not a directory", str(path.parent)) from None
    remove_stale_temporaries(path)
    fd, tmp = tempfile.mkstemp(
        prefix=f".{path.name}.{os.getpid()}.", suffix=".tmp", dir=path.parent
    )
    try:
        if isinstance(text, bytes):
            with os.fdopen(fd, "wb") as fh:
                fh.write(text)
        else:
            with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
                fh.write(text)
        os.chmod(tmp, _mode(path))  # mkstemp makes 0600; a report is as readable as any file
        _place(tmp, path, may_replace)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _place(tmp: str, path: Path, may_replace: Callable[[str], None] | None) -> None:
    """Move the written temporary file ``tmp`` to ``path``. Under ``may_replace`` a hard link
    creates ``path`` only where nothing is (no window in which a file that appears is lost);
    what is there is shown to ``may_replace`` first. Without hard links (FAT, some network file
    systems) the check is made right before the rename."""
    if may_replace is None:
        os.replace(tmp, path)
        return
    try:
        os.link(tmp, path)
    except FileExistsError:
        may_replace(str(path))
    except (OSError, NotImplementedError, AttributeError):
        if os.path.lexists(path):
            may_replace(str(path))
    else:
        os.unlink(tmp)
        return
    os.replace(tmp, path)


def write_in_place(path: str | os.PathLike, text: str | bytes, *, truncate: bool = False) -> None:
    """Open ``path`` for writing without creating or renaming anything and write ``text`` whole:
    a device stays a device. A FIFO nobody reads is an error (ENXIO), not a hang."""
    flags = os.O_WRONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    if truncate:
        flags |= os.O_TRUNC
    fd = os.open(path, flags)
    try:
        with contextlib.suppress(OSError, AttributeError):
            import fcntl

            fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
        data = memoryview(text if isinstance(text, bytes) else text.encode("utf-8"))
        while data:
            n = os.write(fd, data)
            data = data[n:]
        with contextlib.suppress(OSError):  # a terminal or a pipe cannot fsync: fine
            os.fsync(fd)
    finally:
        os.close(fd)


def remove_stale_temporaries(path: Path) -> None:
    """Remove ``.NAME.PID.*.tmp`` files beside ``path`` whose writer (PID) no longer runs: what a
    ``kill -9`` between writing and renaming leaves behind. A live writer's file is kept."""
    prefix = f".{path.name}"
    try:
        names = os.listdir(path.parent)
    except OSError:
        return
    for name in names:
        if not name.startswith(prefix):
            continue
        m = _TEMP.fullmatch(name, len(prefix))
        if m is None or _alive(int(m.group("pid"))):
            continue
        with contextlib.suppress(OSError):
            os.unlink(path.parent / name)


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, ValueError):
        return True  # someone else's process, or a pid we cannot judge: leave its file alone
    return True


def _mode(path: Path) -> int:
    """The existing file's mode, or what a plain ``open(path, "w")`` would give (0666 - umask)."""
    try:
        return path.stat().st_mode & 0o777
    except FileNotFoundError:
        mask = os.umask(0)
        os.umask(mask)
        return 0o666 & ~mask


def _same_existing(a: str | os.PathLike, b: str | os.PathLike) -> bool:
    try:
        return os.path.samefile(a, b)
    except (OSError, ValueError):
        return False


def same_file(a: str | os.PathLike, b: str | os.PathLike) -> bool:
    """Whether two paths name one file (links and ``..`` included); by resolved path when either
    does not exist yet."""
    try:
        return os.path.samefile(a, b)
    except (OSError, ValueError):
        try:
            return os.path.realpath(a) == os.path.realpath(b)
        except (OSError, ValueError):
            return os.path.abspath(a) == os.path.abspath(b)


# --------------------------------------------------------------------------------------------
# bounded reading: a config, a report or a log is read whole, so its size and nesting are capped


MIB = 1024 * 1024


class TooLarge(ValueError):
    """A file over the size a reader accepts, or holding a NUL byte where text is expected."""


def read_bounded(path: str | os.PathLike, limit: int, *, text: bool = True) -> bytes:
    """The bytes of ``path``, read in chunks: :class:`TooLarge` past ``limit`` bytes (so
    ``/dev/zero`` or a runaway file never fills memory) and, for text, at the first NUL byte
    (a binary file is not text, and ``/dev/zero`` stops at once)."""
    chunks, size = [], 0
    with open(path, "rb") as fh:
        while True:
            chunk = fh.read(min(MIB, limit + 1 - size))
            if not chunk:
                break
            nul = chunk.find(b"\0") if text else -1
            if nul >= 0:
                raise TooLarge(f"holds a NUL byte at offset {size + nul}")
            chunks.append(chunk)
            size += len(chunk)
            if size > limit:
                raise TooLarge(f"is larger than {_size(limit)}")
    return b"".join(chunks)


def _size(n: int) -> str:
    return f"{n // MIB} MiB" if n >= MIB else f"{n} bytes"


def too_deep(obj: object, limit: int) -> bool:
    """Whether parsed JSON/TOML/YAML data nests containers deeper than ``limit`` (iterative, so
    the check itself cannot overflow the stack; shared references are walked once)."""
    stack = [(obj, 1)]
    seen: set[int] = set()
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children = item.values()
        elif isinstance(item, (list, tuple)):
            children = item
        else:
            continue
        if depth > limit:
            return True
        if id(item) in seen:
            continue
        seen.add(id(item))
        stack.extend((c, depth + 1) for c in children)
    return False


def split_glob(path: str) -> tuple[str, str]:
    """``path`` as (the folders before its first name holding ``*``, ``?`` or ``[``, the
    pattern from there): ``data/2024/*/x.csv`` -> ``("data/2024", "*/x.csv")``."""
    parts = path.split("/")
    static = 0
    while static < len(parts) and not any(c in parts[static] for c in "*?["):
        static += 1
    return "/".join(parts[:static]), "/".join(parts[static:])


def glob_regex(pattern: str) -> re.Pattern:
    """A glob over ``/``-separated relative paths: ``*`` and ``?`` stay within one name,
    ``[...]`` is a character class, ``**`` spans any number of directories."""
    segments = pattern.split("/")
    out = []
    for i, seg in enumerate(segments):
        last = i == len(segments) - 1
        if seg == "**":
            out.append("(?:[^/]+/)*" + ("[^/]+" if last else ""))
            continue
        j, piece = 0, []
        while j < len(seg):
            c = seg[j]
            if c == "*":
                piece.append("[^/]*")
            elif c == "?":
                piece.append("[^/]")
            elif (
                c == "["
                and (end := seg.find("]", j + 2 if seg[j + 1 : j + 2] in "!]" else j + 1)) > j
            ):
                body = seg[j + 1 : end]
                if body.startswith("!"):
                    body = "^" + body[1:]
                piece.append("[" + body.replace("\\", "\\\\") + "]")
                j = end
            else:
                piece.append(re.escape(c))
            j += 1
        out.append("".join(piece) + ("" if last else "/"))
    return re.compile("".join(out))
