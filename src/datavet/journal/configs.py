"""The configurations a journal entry compares: read a config file (JSON, TOML, YAML-free INI)
and list what changed between two, flattened to dotted keys."""

from __future__ import annotations

import configparser
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from datavet.errors import InputError

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib

# --------------------------------------------------------------------------------------------
# config diffs


MAX_CONFIG_BYTES = 16 * 1024 * 1024
MAX_SETTINGS = 100_000  # flattened keys; a YAML alias bomb expands past this at once
MAX_DEPTH = 64


def _flatten(obj: Any, source: str = "config") -> dict[str, Any]:
    """``{"a": {"b": 1}}`` -> ``{"a.b": 1}``, iteratively, after :func:`_check_size`."""
    _check_size(obj, source)
    out: dict[str, Any] = {}
    stack: list[tuple[Any, str]] = [(obj, "")]
    while stack:
        item, prefix = stack.pop()
        if isinstance(item, Mapping):
            stack.extend((v, f"{prefix}{k}.") for k, v in reversed(item.items()))
        else:
            out[prefix[:-1]] = item
    return out


def _check_size(obj: Any, source: str) -> None:
    """Refuse data that expands past MAX_SETTINGS values or nests past MAX_DEPTH, counting
    repeats: YAML aliases make a small file expand exponentially (billion laughs) when it is
    compared or written out, so the expansion is counted first, iteratively and bounded."""
    stack: list[tuple[Any, int]] = [(obj, 0)]
    seen = 0
    while stack:
        item, depth = stack.pop()
        seen += 1
        if seen > MAX_SETTINGS:
            raise InputError(
                source, f"expands to more than {MAX_SETTINGS:,} values (YAML aliases?)"
            )
        if depth > MAX_DEPTH:
            raise InputError(source, f"nests settings deeper than {MAX_DEPTH} levels")
        if isinstance(item, Mapping):
            stack.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend((v, depth + 1) for v in item)


def load_config(path: str | os.PathLike) -> dict[str, Any]:
    """A config file as flat ``{"optimizer.lr": 0.01, ...}``: JSON, TOML, YAML (when PyYAML is
    installed), INI/CFG, or ``key=value`` lines."""
    from datavet._io import TooLarge, read_bounded

    p = Path(path)
    try:
        text = read_bounded(p, MAX_CONFIG_BYTES).decode("utf-8")
    except FileNotFoundError:
        raise InputError(str(p), "no such file") from None
    except TooLarge as exc:
        raise InputError(str(p), f"{exc}: not a config file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(str(p), f"cannot be read ({exc})") from None
    suffix = p.suffix.lower()
    yaml_error: tuple[type[BaseException], ...] = ()
    try:
        if suffix == ".json":
            data = json.loads(text)
        elif suffix == ".toml":
            data = tomllib.loads(text)
        elif suffix in (".yaml", ".yml"):
            try:
                import yaml
            except ImportError:
                raise InputError(str(p), "reading YAML needs PyYAML (pip install pyyaml)") from None
            yaml_error = (yaml.YAMLError,)
            data = yaml.load(text, Loader=yaml.SafeLoader)  # noqa: S506 - the safe loader
        elif suffix in (".ini", ".cfg"):
            parser = configparser.ConfigParser(interpolation=None)
            try:
                parser.read_string(text)
                data = {s: dict(parser[s]) for s in parser.sections()}
            except configparser.MissingSectionHeaderError:
                data = _key_values(text)  # no [section]: plain key=value lines
        else:
            data = _key_values(text)
    except (ValueError, tomllib.TOMLDecodeError, configparser.Error, *yaml_error) as exc:
        problem = " ".join(str(exc).split())[:300]
        raise InputError(str(p), f"is not a config file datavet can read ({problem})") from None
    except RecursionError:
        raise InputError(str(p), f"nests settings deeper than {MAX_DEPTH} levels") from None
    if not isinstance(data, Mapping):
        raise InputError(str(p), "does not hold a mapping of settings")
    return _flatten(data, str(p))


def _key_values(text: str) -> dict[str, str]:
    """``key=value`` lines (blank lines and ``#`` comments skipped)."""
    data = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if "=" not in line:
            raise ValueError(f"line {line!r} is not key=value")
        k, v = line.split("=", 1)
        data[k.strip()] = v.strip()
    return data


def config_diff(old: Mapping[str, Any], new: Mapping[str, Any]) -> dict[str, list]:
    """``{key: [old, new]}`` for every key whose value differs (None where a side lacks it)."""
    keys = list(dict.fromkeys([*old, *new]))
    return {k: [old.get(k), new.get(k)] for k in keys if old.get(k) != new.get(k)}
