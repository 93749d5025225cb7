"""The readers of training logs: CSV/TSV, JSON lines and arrays, a GradientMonitor (or its saved
log), a pandas DataFrame; each gives column names and cells, bounded in size and depth."""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from datavet._io import MIB, TooLarge, read_bounded, too_deep
from datavet.curves.cells import _Parsed, _table
from datavet.errors import InputError

# --------------------------------------------------------------------------------------------
# readers


MAX_LOG_BYTES = 512 * MIB  # a CSV log of ten million steps; /dev/zero stops at its first byte
MAX_DEPTH = 32  # nesting of a JSON record ({"train": {"loss": ...}} is 2)
_TOO_DEEP = object()


def _read_text(path: Path) -> str:
    try:
        return read_bounded(path, MAX_LOG_BYTES).decode("utf-8-sig")
    except TooLarge as exc:
        kind = _binary_kind(path) or f"{exc}: not a training log (CSV, TSV or JSON lines)"
        raise InputError(str(path), kind) from None
    except FileNotFoundError:
        raise InputError(str(path), "no such file") from None
    except IsADirectoryError:
        raise InputError(str(path), "is a directory, not a training log") from None
    except UnicodeDecodeError:
        kind = _binary_kind(path) or "is not UTF-8 text (CSV, TSV or JSON lines)"
        raise InputError(str(path), kind) from None
    except OSError as exc:
        raise InputError(str(path), exc.strerror or str(exc)) from None


def _binary_kind(path: Path) -> str | None:
    """What a binary file that is no text log probably is, and what to do with it."""
    try:
        with open(path, "rb") as f:
            magic = f.read(2)
    except OSError:
        magic = b""
    if magic == b"\x1f\x8b":
        return "is gzip-compressed: decompress it first (gunzip)"
    if "tfevents" in path.name:
        return (
            "is a TensorBoard event file: export its scalars to CSV (TensorBoard's download "
            "button, or tensorboard.backend.event_processing.EventAccumulator)"
        )
    return None


def _records_from_file(path: Path, notes: list[str]) -> tuple[list[str], dict[str, list], str]:
    """Column names, cells and format of a log file; what was left out goes to ``notes``."""
    text = _read_text(path)
    src = str(path)
    if not text.strip():
        raise InputError(src, "is empty")
    head = text.lstrip()[:1]
    suffix = path.suffix.lower()
    if head == "[" or (head == "{" and suffix == ".json" and "\n{" not in text.strip()):
        try:
            payload = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(src, f"is not valid JSON ({exc.msg}, line {exc.lineno})") from None
        except RecursionError:
            payload = _TOO_DEEP
        if payload is _TOO_DEEP or too_deep(payload, MAX_DEPTH):
            raise InputError(src, f"nests deeper than {MAX_DEPTH} levels: not a training log")
        if isinstance(payload, Mapping):
            payload = _monitor_records(payload, src)
        names, cells = _table(payload, src)
        return names, cells, "json"
    if head == "{" or suffix in (".jsonl", ".ndjson"):
        records = []
        lines = text.splitlines()
        # an unterminated last line: a run still writing, or killed mid-line
        cut = len(lines) if not text.endswith(("\n", "\r")) else 0
        for lineno, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                if lineno == cut and records:
                    notes.append(f"the last line ({lineno}) is cut off ({exc.msg}): left out")
                    break
                raise InputError(src, f"line {lineno} is not JSON ({exc.msg})") from None
            except RecursionError:
                record = _TOO_DEEP
            if record is _TOO_DEEP or too_deep(record, MAX_DEPTH):
                raise InputError(src, f"line {lineno} nests deeper than {MAX_DEPTH} levels")
            records.append(record)
        names, cells = _table(records, src)
        return names, cells, "jsonl"
    delimiter = (
        "\t"
        if suffix == ".tsv" or ("\t" in text.splitlines()[0] and "," not in text.splitlines()[0])
        else ","
    )
    reader = _rows(csv.reader(io.StringIO(text, newline=""), delimiter=delimiter), src)
    try:
        header = next(reader)
    except StopIteration:
        raise InputError(src, "is empty") from None
    header = [h.strip() for h in header]
    if len(header) < 1 or not any(header):
        raise InputError(src, "has no header row")
    dup = sorted({h for h in header if header.count(h) > 1})
    if dup:
        raise InputError(src, f"repeats the column name(s) {', '.join(map(repr, dup))}")
    cells: dict[str, list] = {h: [] for h in header}
    rows = [(lineno, row) for lineno, row in enumerate(reader, 2) if any(c.strip() for c in row)]
    if rows and len(rows[-1][1]) < len(header) and not text.endswith(("\n", "\r")):
        # a run still writing, or killed mid-row: its last row is cut off
        notes.append(
            f"the last row (line {rows[-1][0]}) is cut off ({len(rows[-1][1])} of "
            f"{len(header)} fields): left out"
        )
        rows.pop()
    for lineno, row in rows:
        if len(row) > len(header):
            raise InputError(src, f"line {lineno} has {len(row)} fields, the header {len(header)}")
        for i, h in enumerate(header):
            cells[h].append(row[i] if i < len(row) else "")
    return header, cells, "tsv" if delimiter == "\t" else "csv"


def _monitor_records(payload: Mapping, source: str) -> list:
    """Records from a JSON object: a GradientMonitor's ``to_dict()`` (``curve`` and
    ``loss_curve``), a datavet report holding one (``probes.monitor``), or any object with a
    list of records under ``history`` / ``records``."""
    probes = payload.get("probes")
    if isinstance(probes, Mapping) and isinstance(probes.get("monitor"), Mapping):
        payload = probes["monitor"]
    if isinstance(payload.get("curve"), list):
        return monitor_records(payload)
    if isinstance(payload.get("log_history"), list):  # a Hugging Face trainer_state.json
        # the closing summary (train_runtime, the run's mean train_loss) is no step of the run
        return [r for r in payload["log_history"] if not _is_summary(r)]
    for key in ("history", "records", "log", "rows"):
        if isinstance(payload.get(key), list):
            return payload[key]
    raise InputError(
        source,
        "is a JSON object without a list of records (expected a list, JSON lines, a "
        "GradientMonitor's to_dict(), a datavet report of one, or a Hugging Face "
        "trainer_state.json)",
    )


def _is_summary(record) -> bool:
    return isinstance(record, Mapping) and "train_runtime" in record


def monitor_records(saved: Mapping) -> list[dict]:
    """One record per step from a GradientMonitor's ``to_dict()``: ``step``, ``grad_norm`` and
    ``train_loss`` (when the loss was passed to ``monitor.step``).

    Every entry of the monitor's curves is a recorded step, so a null there is a value JSON
    could not hold (NaN or inf): it is read as NaN. The monitor keeps at most 400 evenly spaced
    steps plus every spike, so spikes survive; other rules see the thinned curve.
    """
    rows: dict[float, dict] = {}

    def put(pairs, key):
        for pair in pairs or ():
            step, value = pair[0], pair[1]
            rows.setdefault(step, {"step": step})[key] = math.nan if value is None else value

    put(saved.get("curve"), "grad_norm")
    put(saved.get("loss_curve"), "train_loss")
    return [rows[k] for k in sorted(rows)]


def _records_from_monitor(obj: Any) -> list[Mapping] | None:
    """Records from a live :class:`datavet.GradientMonitor` (every recorded step), or from an
    object with ``to_records()`` / ``records`` / ``history``; None when ``obj`` is neither."""
    if hasattr(obj, "norms") and hasattr(obj, "step_numbers") and hasattr(obj, "losses"):
        _ = obj.first_nonfinite  # reading a result flushes norms still on the device
        return [
            {"step": s, "grad_norm": n, **({"train_loss": loss} if loss is not None else {})}
            for s, n, loss in zip(obj.step_numbers, obj.norms, obj.losses)
        ]
    for attr in ("to_records", "records", "history"):
        value = getattr(obj, attr, None)
        if value is None:
            continue
        value = value() if callable(value) else value
        if hasattr(value, "to_dict") and hasattr(value, "columns"):  # a DataFrame
            return value.to_dict("records")
        if isinstance(value, list):
            return [v for v in value if isinstance(v, Mapping)]
    return None


def _frame_cells(df) -> tuple[list[str], dict[str, list]]:
    names = [str(c) for c in df.columns]
    if len(set(names)) != len(names):
        dup = sorted({n for n in names if names.count(n) > 1})
        raise InputError("<frame>", f"repeats the column name(s) {', '.join(map(repr, dup))}")
    cells = {}
    for name, col in zip(names, df.columns):
        s = df[col]
        if s.dtype.kind in "biuf":
            # NaN in a frame is ambiguous (not logged, or logged NaN)
            cells[name] = _Parsed(s.to_numpy(dtype=float))
        else:
            cells[name] = [None if _isna(v) else v for v in s.tolist()]
    return names, cells


def _isna(v) -> bool:
    try:
        return v is None or (isinstance(v, float) and math.isnan(v)) or bool(v != v)
    except (TypeError, ValueError):
        return False


def _rows(reader, src: str):
    """``reader``'s rows; a malformed line (a stray line break or NUL) is a one-line error
    naming the file and the line, not an internal error."""
    while True:
        try:
            yield next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            raise InputError(src, f"line {reader.line_num}: {exc}") from None
