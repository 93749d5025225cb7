"""Text of config files: display paths, where a dataset is defined (line numbers, which
tomllib does not keep), values in error messages, and writing TOML back."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any


def display(path: str | os.PathLike) -> str:
    """A path relative to the working directory when it is below it, else absolute."""
    p = Path(path)
    try:
        absolute = p.resolve() if p.is_absolute() else (Path.cwd() / p).resolve()
        return absolute.relative_to(Path.cwd().resolve()).as_posix()
    except (ValueError, OSError):
        return str(p)


_HEADER = re.compile(r"^\s*\[\s*([^\[\]]+?)\s*\]\s*(?:#.*)?$")
_KEY_TOKEN = re.compile(r'\s*(?:"((?:[^"\\]|\\.)*)"|\'([^\']*)\'|([A-Za-z0-9_-]+))\s*(\.|$)')


def _dotted(text: str) -> tuple[str, ...] | None:
    parts, pos = [], 0
    while pos < len(text):
        m = _KEY_TOKEN.match(text, pos)
        if not m:
            return None
        raw = m.group(1)
        value = json.loads(f'"{raw}"') if raw is not None else (m.group(2) or m.group(3))
        parts.append(value)
        pos = m.end()
        if not m.group(4):
            break
    return tuple(parts)


def dataset_lines(text: str | None, path: tuple[str, ...]) -> dict[str, int]:
    """Line numbers (1-based) where the config defines a dataset and its ``train``/``test``
    keys; tomllib keeps no positions, so this reads the text. Best effort: the table's line, or
    the parent table's, when a key is written in a form it does not follow."""
    if not text:
        return {}
    lines = text.splitlines()
    out: dict[str, int] = {}
    parent, name = path[:-1], path[-1]
    current: tuple[str, ...] | None = None
    for i, line in enumerate(lines, 1):
        m = _HEADER.match(line)
        if m and not line.lstrip().startswith("[["):
            current = _dotted(m.group(1))
            if current == path:
                out["table"] = i
            elif current == parent and "table" not in out:
                out.setdefault("parent", i)
            continue
        if current == path:
            key = re.match(r"\s*(train|test)\s*=", line)
            if key:
                out.setdefault(key.group(1), i)
        elif current == parent:
            key = re.match(r'\s*(?:"([^"]+)"|\'([^\']+)\'|([A-Za-z0-9_-]+))\s*=', line)
            if key and (key.group(1) or key.group(2) or key.group(3)) == name:
                out.setdefault("table", i)
    if "table" not in out and "parent" in out:
        out["table"] = out["parent"]
    out.pop("parent", None)
    return out


def type_name(value: Any) -> str:
    return {dict: "a table", list: "a list", str: "a string", bool: "a boolean"}.get(
        type(value), type(value).__name__
    )


def short_repr(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def toml_key(k: str) -> str:
    return k if re.fullmatch(r"[A-Za-z0-9_-]+", k) else _toml_value(k)


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        # JSON strings are TOML basic strings once DEL is escaped too (TOML forbids it raw).
        return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        inner = ", ".join(f"{toml_key(k)} = {_toml_value(v)}" for k, v in value.items())
        return "{ " + inner + " }" if inner else "{}"
    raise TypeError(f"cannot write {type(value).__name__} as TOML")


def toml_text(data: dict[str, Any]) -> str:
    plain = [(k, v) for k, v in data.items() if not isinstance(v, dict) and v is not None]
    tables = [(k, v) for k, v in data.items() if isinstance(v, dict)]
    out = [f"{toml_key(k)} = {_toml_value(v)}" for k, v in plain]
    for name, table in tables:
        out.append("")
        out.append(f"[{toml_key(name)}]")
        for k, v in table.items():
            out.append(f"{toml_key(k)} = {_toml_value(v)}")
    return "\n".join(out) + "\n"
