"""``exclude`` / ``extend-exclude``: which paths the settings leave out (as ruff reads them)."""

from __future__ import annotations

import os
import re
from pathlib import Path

from datavet.config.settings import Settings


def _path_glob(pattern: str) -> re.Pattern:
    """A path glob as ruff reads one: ``*`` and ``?`` within a name, ``[...]`` a set,
    ``**`` any number of folders."""
    out, i = [], 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        elif pattern[i] == "[" and "]" in pattern[i + 2 :]:
            end = pattern.index("]", i + 2)
            body = pattern[i + 1 : end]
            if body.startswith("!"):
                body = "^" + body[1:]
            out.append("[" + body.replace("\\", "\\\\") + "]")
            i = end + 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out), re.DOTALL)


def excluded(settings: Settings, path: str | os.PathLike) -> str | None:
    """The ``exclude`` / ``extend-exclude`` pattern that matches ``path``, or None.

    As in ruff: patterns are relative to the config file's folder (the working directory
    without one). A pattern without ``/`` (``lookup_*.csv``, ``fixtures``) matches a file or
    folder of that name anywhere; one with ``/`` (``data/lookup/*.csv``, ``tests/**``) matches
    the path from the config's folder (``./data/lookup`` too: ``.`` is that folder). A folder
    that matches excludes everything in it.
    """
    patterns = (*settings.exclude, *settings.extend_exclude)
    if not patterns:
        return None
    base = Path(os.path.abspath(settings.config.parent if settings.config else Path.cwd()))
    absolute = Path(os.path.abspath(os.fspath(path)))
    try:
        parts = absolute.relative_to(base).parts
    except ValueError:
        parts = ()
    names = parts or absolute.parts[1:]  # outside the folder: only names can match
    # the path and each folder above it, up to the config's folder
    candidates = [
        (names[i - 1], "/".join(parts[:i]) if parts else None) for i in range(len(names), 0, -1)
    ]
    for pattern in patterns:
        anchored = "/" in pattern.strip("/") or pattern.startswith("/")
        regex = _path_glob(_without_dots(pattern).strip("/") if anchored else pattern.rstrip("/"))
        for name, relative in candidates:
            subject = relative if anchored else name
            if subject is not None and regex.fullmatch(subject):
                return pattern
    return None


def _without_dots(pattern: str) -> str:
    """``./data/./lookup/**`` -> ``data/lookup/**``: a ``.`` folder is the folder it is in, as
    ruff reads it (``./`` is the config's folder)."""
    kept = [part for part in pattern.split("/") if part != "."]
    return "/".join(kept) if any(kept) else pattern
