"""The debugging journal: one line per experiment, the prediction written before the result.

Diagnosis is experimenting, and an experiment not written down gets repeated.
Two rules come with the format. Change one thing at a time (change the learning rate, the
normalisation and the initialisation together and, if it works, you do not know which was
needed). Write the prediction first (written after the result, every result seems to support
the hypothesis; the experiments whose prediction failed teach the most). Kept with the project,
the journal can be searched months later when the same symptom comes back.

The journal is a JSON-lines file (``datavet-journal.jsonl`` in the working directory, or
``--journal PATH`` / ``$DATAVET_JOURNAL``) and a Markdown view beside it (same name, ``.md``),
re-rendered on every change. Every write takes a lock, reads the whole file, and replaces it
atomically: a crash leaves the old file, two writers do not lose each other's entries, and a line
that does not parse is kept as it is.
"""

from __future__ import annotations

import configparser
import contextlib
import datetime as _dt
import json
import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from datavet import outputs
from datavet.errors import InputError, UsageError

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib

DEFAULT_NAME = "datavet-journal.jsonl"
ENV = "DATAVET_JOURNAL"
VERDICTS = ("confirmed", "refuted", "unclear")
SCHEMA = 1
# search weights: the symptom is what people search by
_WEIGHTS = {"symptom": 3, "codes": 3, "hypothesis": 2, "observed": 2, "changes": 1, "prediction": 1}


def default_path() -> Path:
    return Path(os.environ.get(ENV) or DEFAULT_NAME)


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


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
            parser.read_string(text)
            data = {s: dict(parser[s]) for s in parser.sections()}
        else:
            data = {}
            for line in text.splitlines():
                line = line.strip()
                if not line or line.startswith("#"):
                    continue
                if "=" not in line:
                    raise ValueError(f"line {line!r} is not key=value")
                k, v = line.split("=", 1)
                data[k.strip()] = v.strip()
    except (ValueError, tomllib.TOMLDecodeError, configparser.Error, *yaml_error) as exc:
        problem = " ".join(str(exc).split())[:300]
        raise InputError(str(p), f"is not a config file datavet can read ({problem})") from None
    except RecursionError:
        raise InputError(str(p), f"nests settings deeper than {MAX_DEPTH} levels") from None
    if not isinstance(data, Mapping):
        raise InputError(str(p), "does not hold a mapping of settings")
    return _flatten(data, str(p))


def config_diff(old: Mapping[str, Any], new: Mapping[str, Any]) -> dict[str, list]:
    """``{key: [old, new]}`` for every key whose value differs (None where a side lacks it)."""
    keys = list(dict.fromkeys([*old, *new]))
    return {k: [old.get(k), new.get(k)] for k in keys if old.get(k) != new.get(k)}


# --------------------------------------------------------------------------------------------
# the journal


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


def is_journal_view(path: str | os.PathLike) -> bool:
    """Whether the file at ``path`` is empty or a journal's Markdown view written by datavet."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(256).decode("utf-8", "replace")
    except OSError:
        return False
    return not head.strip() or head.startswith("# Debugging journal\n\nGenerated by datavet ")


@contextlib.contextmanager
def _locked(path: Path):
    """An exclusive lock on ``PATH.lock`` for the read-modify-write (POSIX; elsewhere none)."""
    path = Path(os.path.realpath(path))  # a symlinked journal: one lock beside the real file
    path.parent.mkdir(parents=True, exist_ok=True)
    lock = path.with_name(path.name + ".lock")
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        yield
        return
    with open(lock, "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


class Journal:
    """A debugging journal at ``path`` (default ``datavet-journal.jsonl`` or $DATAVET_JOURNAL).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> j = Journal(pathlib.Path(tempfile.mkdtemp()) / "journal.jsonl")
    >>> entry, warnings = j.add(hypothesis="lr too high", changes=["lr 0.1 -> 0.01"],
    ...                         predict="no NaN before step 5000", symptom="loss NaN at 3000")
    >>> j.result(entry["id"], observed="no NaN in 10000 steps", verdict="confirmed")["id"]
    1
    """

    def __init__(
        self,
        path: str | os.PathLike | None = None,
        *,
        force: bool = False,
        reads: Iterable[tuple[str, Any]] = (),
    ) -> None:
        self.path = Path(path) if path is not None else default_path()
        self.force = force  # replace a file at the path that is not a journal
        self.reads = outputs.reads(many=reads)  # files never written over (config diffs)
        if self.path.suffix.lower() == ".md":
            raise UsageError(
                f"the journal {self.path} would be overwritten by its own Markdown view: name "
                "the JSON-lines file (e.g. datavet-journal.jsonl); the .md is written beside it"
            )
        self.markdown_path = self.path.with_suffix(".md")

    # -- reading -------------------------------------------------------------------------------

    def _read(self) -> list[dict | str]:
        """Entries (dicts) and, as strings, lines that do not parse (kept, never dropped)."""
        from datavet._io import MIB, TooLarge, read_bounded

        try:
            if self.path.exists() and not self.path.is_file():
                raise InputError(str(self.path), "is not a regular file: a journal is a file")
            text = read_bounded(self.path, 256 * MIB).decode("utf-8")
        except FileNotFoundError:
            return []
        except TooLarge as exc:
            raise InputError(str(self.path), f"{exc}: not a datavet journal") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise InputError(str(self.path), f"cannot be read ({exc})") from None
        items: list[dict | str] = []
        for line in text.splitlines():
            if not line.strip():
                continue
            try:
                item = json.loads(line)
            except (json.JSONDecodeError, RecursionError):
                items.append(line)
                continue
            ok = isinstance(item, dict) and type(item.get("id")) is int  # not a bool
            items.append(item if ok else line)
        return items

    def entries(self) -> list[dict]:
        return [e for e in self._read() if isinstance(e, dict)]

    def unreadable(self) -> int:
        """How many lines of the file are not entries (kept as they are)."""
        return sum(1 for e in self._read() if isinstance(e, str))

    def get(self, n: int) -> dict:
        for e in self.entries():
            if e["id"] == n:
                return e
        raise UsageError(f"the journal {self.path} has no entry {n}")

    # -- writing -------------------------------------------------------------------------------

    def _outputs(self) -> outputs.Outputs:
        """The output policy for the journal and its Markdown view: neither may be a file the
        command reads, nor replace a file that is not a journal (or its view) without force.
        Checked before the lock file is made, so a refusal leaves the folder untouched."""
        if self.path.exists() and not self.path.is_file():
            raise InputError(str(self.path), "is not a regular file: a journal is a file")
        plan = outputs.Outputs(self.reads, force=self.force)
        plan.claim("--journal", self.path, owned=is_journal, what="journal")
        plan.claim("--journal", self.markdown_path, owned=is_journal_view, what="journal view")
        return plan

    def _write(self, items: list[dict | str], plan: outputs.Outputs | None = None) -> None:
        plan = plan or self._outputs()
        lines = [i if isinstance(i, str) else json.dumps(i, ensure_ascii=False) for i in items]
        markdown = render_markdown([i for i in items if isinstance(i, dict)], source=self.path.name)
        jsonl = "".join(line + "\n" for line in lines)
        # the old files stay as they were when a write fails (OutputError naming the file)
        plan.write("--journal", self.path, jsonl)
        plan.write("--journal", self.markdown_path, markdown)

    def add(
        self,
        *,
        hypothesis: str,
        changes: Iterable[str] = (),
        predict: str | None = None,
        symptom: str | None = None,
        config: Mapping[str, list] | None = None,
        codes: Iterable[str] = (),
        run: str | None = None,
        now: str | None = None,
    ) -> tuple[dict, list[str]]:
        """Write a new entry; return it with the warnings (more than one change, no prediction)."""
        hypothesis = (hypothesis or "").strip()
        if not hypothesis:
            raise UsageError("an entry needs a hypothesis (--hypothesis)")
        changes = [c.strip() for c in changes if c and c.strip()]
        config = dict(config or {})
        if not changes and not config:
            raise UsageError("an entry needs what you change (--change, or --config-diff OLD NEW)")
        codes = sorted({_code(c) for c in codes if c and c.strip()})
        plan = self._outputs()
        with _locked(self.path):
            items = self._read()
            ids = [e["id"] for e in items if isinstance(e, dict)]
            entry = {
                "schema": SCHEMA,
                "id": max(ids, default=0) + 1,
                "created": now or _now(),
                "symptom": (symptom or "").strip() or None,
                "codes": codes,
                "hypothesis": hypothesis,
                "changes": changes,
                "config_diff": config or None,
                "prediction": (predict or "").strip() or None,
                "predicted_at": (now or _now()) if (predict or "").strip() else None,
                "run": run,
                "result": None,
            }
            items.append(entry)
            self._write(items, plan)
        return entry, entry_warnings(entry)

    def predict(self, n: int, prediction: str, *, now: str | None = None) -> dict:
        """Write the prediction of entry ``n``; refused once a result is recorded."""
        prediction = (prediction or "").strip()
        if not prediction:
            raise UsageError("the prediction is empty")
        plan = self._outputs()
        with _locked(self.path):
            items = self._read()
            entry = self._find(items, n)
            if entry["result"] is not None:
                raise UsageError(
                    f"entry {n} already has a result: a prediction written after the result "
                    "is not a prediction; add a new entry for the next experiment"
                )
            if entry.get("prediction"):
                raise UsageError(
                    f"entry {n} already predicts {entry['prediction']!r}; a prediction is not "
                    "rewritten (add a new entry if the experiment changed)"
                )
            entry["prediction"] = prediction
            entry["predicted_at"] = now or _now()
            self._write(items, plan)
        return entry

    def result(
        self, n: int, observed: str, *, verdict: str | None = None, now: str | None = None
    ) -> dict:
        """Close entry ``n`` with what was observed; refused without a prediction, or twice."""
        observed = (observed or "").strip()
        if not observed:
            raise UsageError("the observed result is empty (--observed)")
        if verdict is not None and verdict not in VERDICTS:
            raise UsageError(f"verdict must be one of {', '.join(VERDICTS)}, not {verdict!r}")
        plan = self._outputs()
        with _locked(self.path):
            items = self._read()
            entry = self._find(items, n)
            if not entry.get("prediction"):
                raise UsageError(
                    f"entry {n} has no prediction: write what you expect before you look "
                    f"(datavet journal predict {n} --predict ...), then record the result"
                )
            if entry["result"] is not None:
                raise UsageError(
                    f"entry {n} already has a result ({entry['result']['observed']!r}); results "
                    "are not rewritten: add a new entry for a new run"
                )
            entry["result"] = {"observed": observed, "verdict": verdict, "at": now or _now()}
            self._write(items, plan)
        return entry

    def render(self) -> Path:
        """Re-render the Markdown view from the JSON lines."""
        plan = self._outputs()
        with _locked(self.path):
            self._write(self._read(), plan)
        return self.markdown_path

    def _find(self, items: list, n: int) -> dict:
        for e in items:
            if isinstance(e, dict) and e["id"] == n:
                return e
        raise UsageError(f"the journal {self.path} has no entry {n}")

    # -- searching -----------------------------------------------------------------------------

    def search(self, words: Iterable[str]) -> list[dict]:
        """Entries matching the words (case-insensitive, any field; the symptom and the curve
        codes weigh most), best first: entries holding every word before those holding some."""
        terms = [w.lower() for text in words for w in re.findall(r"[\w.\-]+", text)]
        if not terms:
            raise UsageError("search needs at least one word")
        scored = []
        for e in self.entries():
            fields = _fields(e)
            matched, score = set(), 0
            for t in terms:
                for name, text in fields.items():
                    if t in text:
                        matched.add(t)
                        score += _WEIGHTS[name]
            if matched:
                scored.append((len(matched), score, e["id"], e))
        scored.sort(key=lambda s: (-s[0], -s[1], -s[2]))
        return [s[3] for s in scored]


def _code(key: str) -> str:
    """A rule code or name (``C002``, ``loss-divergence``, ``V001``, ``M002``) -> its code."""
    from datavet.rules import lookup

    return lookup(key.strip()).code


def _rule(code: str):
    from datavet.rules import lookup

    try:
        return lookup(code)
    except UsageError:
        return None


def late_prediction(entry: dict) -> str | None:
    """A warning when the entry's run log (``--run PATH``) was last written before its
    prediction: the run had finished when the prediction was written."""
    run, at = entry.get("run"), entry.get("predicted_at")
    if not run or not at:
        return None
    try:
        mtime = Path(run).stat().st_mtime
        predicted = _dt.datetime.fromisoformat(at).timestamp()
    except (OSError, ValueError):
        return None
    if mtime < predicted - 1:  # the timestamps are to the second
        return (
            f"entry {entry['id']}: the run's log {run} was last written before the prediction "
            f"({at}): a prediction written once the result exists is not a prediction"
        )
    return None


def _fields(e: dict) -> dict[str, str]:
    names = []
    for code in e.get("codes") or ():
        rule = _rule(str(code))
        names.append(f"{code} {rule.name} {rule.summary}" if rule else str(code))
    result = e.get("result") or {}
    config = e.get("config_diff") or {}
    return {
        "symptom": (e.get("symptom") or "").lower(),
        "codes": " ".join(names).lower(),
        "hypothesis": (e.get("hypothesis") or "").lower(),
        "observed": (result.get("observed") or "").lower(),
        "changes": " ".join([*(e.get("changes") or []), *config]).lower(),
        "prediction": (e.get("prediction") or "").lower(),
    }


def n_changes(entry: dict) -> int:
    return max(len(entry.get("changes") or []), len(entry.get("config_diff") or {}))


def entry_warnings(entry: dict) -> list[str]:
    out = []
    n = n_changes(entry)
    if n > 1:
        what = entry.get("changes") or []
        keys = list(entry.get("config_diff") or {})
        listed = "; ".join(what) if len(what) >= len(keys) else ", ".join(keys)
        out.append(
            f"entry {entry['id']} changes {n} things ({listed}): if the run works you will not "
            "know which was needed. Change one thing at a time: one entry per change."
        )
    if not entry.get("prediction"):
        out.append(
            f"entry {entry['id']} has no prediction yet: write it before you run "
            f"(datavet journal predict {entry['id']} --predict ...)."
        )
    return out


# --------------------------------------------------------------------------------------------
# Markdown


def _cell(text: Any) -> str:
    """Entry text in a table cell: no pipe, no line break, no raw HTML."""
    s = "" if text is None else str(text)
    s = s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return s.replace("|", "\\|").replace("\r", "").replace("\n", "<br>")


def _change_text(e: dict) -> str:
    parts = list(e.get("changes") or [])
    for key, (old, new) in (e.get("config_diff") or {}).items():
        parts.append(f"{key}: {json.dumps(old)} -> {json.dumps(new)}")
    text = "; ".join(parts)
    n = n_changes(e)
    return f"**{n} changes** (one at a time!): {text}" if n > 1 else text


def render_markdown(entries: list[dict], *, source: str = DEFAULT_NAME) -> str:
    lines = [
        "# Debugging journal",
        "",
        f"Generated by datavet from `{_cell(source)}`; change it with `datavet journal`, not "
        "here. One change per entry; the prediction is written before the result.",
        "",
        "| # | date | symptom | hypothesis | change | prediction | result |",
        "|---|---|---|---|---|---|---|",
    ]
    for e in entries:
        symptom = e.get("symptom") or ""
        if e.get("codes"):
            symptom = f"{symptom} ({', '.join(e['codes'])})".strip()
        res = e.get("result")
        if res is None:
            result = "*open*" if e.get("prediction") else "*no prediction yet*"
        else:
            result = (f"{res['verdict']}: " if res.get("verdict") else "") + res["observed"]
        lines.append(
            "| "
            + " | ".join(
                [
                    str(e["id"]),
                    _cell((e.get("created") or "")[:10]),
                    _cell(symptom),
                    _cell(e.get("hypothesis")),
                    _cell(_change_text(e)),
                    _cell(e.get("prediction") or ""),
                    _cell(result),
                ]
            )
            + " |"
        )
    return "\n".join(lines) + "\n"
