"""The HTML audit report: one self-contained page, readable offline.

Compute, then render (as skrub's TableReport): :func:`view_model` turns ``Report.to_dict()``
into a plain dict holding every decision (order, severity colours, number formats, capped
lists, chart geometry); the jinja2 templates, with autoescaping always on, only lay it out.
There is no JavaScript; the report's JSON is embedded for machines through ``tojson`` in a
``<script type="application/json">`` block, which browsers never execute.
"""

from __future__ import annotations

import re
from importlib import resources

import jinja2
import markupsafe

from datavet.output import html_curves, html_drift, html_probes, html_tensors, svg
from datavet.output.numbers import num
from datavet.output.text import BIDI, SEPARATORS, clean, escape_char

SEVERITIES = ("error", "warning", "info")
MAX_EXAMPLES_SHOWN = 5
FIX_FIRST = 3  # rules in the "fix first" box; the others are named under it
LIST_COLUMNS = 5  # column names listed inline (fix first, finding headers); all in a <details>
NAME_LIMIT = 200  # characters of one name (a column, a class) where names are listed
TEXT_LIMIT = 4_000  # characters of any data text on the page, as annotation messages are capped
COLLAPSE_AFTER = 30  # column tables longer than this show flagged columns and fold the rest
CHART_CLASSES = 4
BAR_CLASSES = 12


def _rule(code: str):
    """The rule's class from the one registry (None for a code it does not know)."""
    from datavet.rules import find

    return find(code)


def _cell_of(code: str) -> str | None:
    """Which cell of the column table a rule points at (the rule's ``column_cell``)."""
    rule = _rule(code)
    return rule.column_cell if rule is not None else None


def _in_section(code: str, section: str) -> bool:
    """Whether a rule's findings feed a report section (the rule's ``sections``)."""
    rule = _rule(code)
    return rule is not None and section in rule.sections


def cap(value, limit: int = TEXT_LIMIT) -> str:
    """``value`` as text cut to ``limit`` characters, saying how many were left out (the JSON
    block of the page has them all)."""
    s = str(value)
    if len(s) <= limit:
        return s
    return f"{s[:limit]}… ({len(s) - limit:,} more characters)"


def name_text(value, limit: int = NAME_LIMIT) -> str:
    """A name (a column, a class, a type) as the page lists it: capped, and every control
    character, line break and tab shown as an escape (``\\n``), as the text report shows it."""
    return clean(cap(value, limit))


def _column_list(columns: list) -> dict:
    """A finding's columns for headers and lists: the first few inline, the rest counted (and
    every one of them for a fold-out list when there are more)."""
    more = max(len(columns) - LIST_COLUMNS, 0)
    return {
        "columns_shown": [name_text(c) for c in columns[:LIST_COLUMNS]],
        "columns_more": more,
        "columns_all": [name_text(c) for c in columns] if more else [],
    }


def _short_type(dtype: str) -> str:
    """The column type as a reader names it: ``category`` for an Arrow dictionary,
    ``string`` for (large) strings, else the Arrow type (capped)."""
    if dtype.startswith("dictionary<"):
        return "category"
    if dtype in ("string", "large_string", "utf8", "large_utf8", "string_view"):
        return "string"
    return cap(dtype, 40)


def at_least(f: dict) -> bool:
    """Whether ``n_affected`` is a lower bound on the rows: a finding that groups several
    columns' counts (``metrics.cells``), whose cells may share rows."""
    return len(f.get("columns") or ()) > 1 and "cells" in (f.get("metrics") or {})


def _examples(f: dict, rows: int | None = None) -> str:
    """The example rows, and how many more there are (``rows``: the split's rows)."""
    ex = f["examples"][:MAX_EXAMPLES_SHOWN]
    if not ex:
        return ""
    n = f["n_affected"] or len(ex)
    text = ", ".join(f"{i:,}" for i in ex)
    if at_least(f) and (rows is None or n < rows):  # never "+N more" from a count of cells
        return f"{text} (at least {n:,} in all)" if n > len(ex) else text
    more = n - len(ex)
    return f"{text} (+{more:,} more)" if more > 0 else text


def _verdict(d: dict, kind: str = "audit") -> dict:
    """The banner. A training log is a run that already happened: its verdict is about the run
    (problems in it, or none), not about whether to train."""
    counts = d["counts"]
    if d["exit_code"] == 2:
        title, css = "Audit incomplete: a check crashed", "crashed"
        detail = "Fix the crash (see the checks section) and audit again."
    elif d["exit_code"] == 1:
        failing = [
            s
            for s in SEVERITIES
            if counts[s] and SEVERITIES.index(s) <= SEVERITIES.index(d["fail_on"])
        ]
        n = sum(counts[s] for s in failing)
        title = "Problems in this training run" if kind == "curves" else "Not ready to train"
        css = "failed"
        detail = (
            f"{n} finding{'s' if n != 1 else ''} at or above '{d['fail_on']}': fix "
            f"{'it' if n == 1 else 'them'} before "
            f"{'the next run' if kind == 'curves' else 'training'}."
        )
    else:
        title = "No problem found in this training run" if kind == "curves" else "Ready to train"
        css = "passed"
        detail = f"Nothing at or above '{d['fail_on']}'." + (
            " Review the findings below." if sum(counts.values()) else ""
        )
    return {
        "title": title,
        "css": css,
        "detail": detail,
        "exit_code": d["exit_code"],
        "fail_on": d["fail_on"],
        "counts": [{"severity": s, "count": counts[s]} for s in SEVERITIES],
    }


def _findings(d: dict) -> tuple[list[dict], list[dict], list[dict]]:
    groups = []
    for sev in SEVERITIES:
        items = []
        for f in d["findings"]:
            if f["severity"] != sev:
                continue
            item = {
                "code": f["code"],
                "name": f["name"],
                "severity": sev,
                "message": f["message"],
                "split": f["split"] or ("" if d.get("curves") else "both"),
                "columns": f["columns"],
                **_column_list(f["columns"]),
                "examples": _examples(f, (d["datasets"].get(f["split"]) or {}).get("rows")),
                "hint": f["hint"],
            }
            items.append(item)
        if items:
            groups.append(
                {
                    "severity": sev,
                    "title": f"{sev.capitalize()}s" if sev != "info" else "Info",
                    "findings": items,
                }
            )
    ordered = [i for g in groups for i in g["findings"]]
    for n, item in enumerate(ordered):
        item["anchor"] = f"finding-{n}"
    first, seen = [], set()
    for item in ordered:  # one line per rule: the first (most severe) finding of each
        if item["hint"] and item["code"] not in seen:
            seen.add(item["code"])
            first.append(item)
    return groups, first[:FIX_FIRST], first[FIX_FIRST:]


def _flags(d: dict) -> dict[tuple[str, str], dict[str, str]]:
    """(split, column) -> {cell: severity} for the cells findings point at."""
    rank = {s: i for i, s in enumerate(reversed(SEVERITIES))}
    flags: dict[tuple[str, str], dict[str, str]] = {}
    for f in d["findings"]:
        cell = _cell_of(f["code"])
        if cell is None:
            continue
        splits = [f["split"]] if f["split"] else list(d["datasets"])
        for split in splits:
            for col in f["columns"]:
                cells = flags.setdefault((split, col), {})
                for c in (cell, "name"):
                    if rank.get(cells.get(c), -1) < rank[f["severity"]]:
                        cells[c] = f["severity"]
    return flags


def _column_tables(d: dict) -> list[dict]:
    flags = _flags(d)
    order = {s: i for i, s in enumerate(SEVERITIES)}
    tables = []
    for split, ds in d["datasets"].items():
        rows = []
        for i, c in enumerate(ds["columns"]):
            cells = flags.get((split, c["name"]), {})
            rows.append(
                {
                    "name": c["name"],
                    "shown": name_text(c["name"]),
                    "dtype": _short_type(str(c["dtype"])),
                    "dtype_full": cap(c["dtype"], NAME_LIMIT),
                    "count": num(c["count"]),
                    "nan": num(c["nan"]),
                    "inf": num(c["inf"]),
                    "min": num(c["min"]),
                    "max": num(c["max"]),
                    "mean": num(c["mean"]),
                    "std": num(c["std"]),
                    "distinct": num(c.get("distinct"))
                    if c.get("distinct") is not None
                    else "> 1,024",
                    "flags": cells,
                    "flagged": bool(cells),
                    "_key": (order[cells["name"]] if cells else 9, i),
                }
            )
        rows.sort(key=lambda r: r["_key"])
        for r in rows:
            del r["_key"]
        flagged = sum(r["flagged"] for r in rows)
        if len(rows) > COLLAPSE_AFTER:
            n_head = max(flagged, min(20, len(rows)))
            head, tail = rows[:n_head], rows[n_head:]
        else:
            head, tail = rows, []
        tables.append(
            {
                "split": split,
                "source": ds["source"],
                "format": ds["format"],
                "rows": num(ds["rows"]),
                "n_columns": len(rows),
                "flagged": flagged,
                "head": head,
                "tail": tail,
            }
        )
    return tables


_BASELINE_COLUMNS = {
    "classification": (
        ("accuracy", "Accuracy"),
        ("balanced_accuracy", "Balanced accuracy"),
        ("log_loss", "Log loss"),
    ),
    "regression": (("r2", "R²"), ("mse", "MSE"), ("mae", "MAE")),
}


def _baselines(b: dict | None) -> dict | None:
    if not b:
        return None
    if b["skipped"]:
        return {"skipped": b["skipped"]}
    cols = _BASELINE_COLUMNS[b["task"]]
    return {
        "skipped": None,
        "task": b["task"],
        "evaluated_on": b["evaluated_on"],
        "rows": num(b["eval_rows"]),
        "sample": (
            f"fitted on a uniform sample of {b['train_rows']:,} of {b['sample_of']:,} train rows"
            if b["sampled"]
            else f"fitted on {b['train_rows']:,} train rows"
        ),
        "headers": [title for _, title in cols],
        "rows_table": [
            {
                "model": m["model"],
                "description": m["description"],
                "cells": [num(m["metrics"].get(k)) for k, _ in cols],
            }
            for m in b["models"]
        ],
        "expectation": b.get("expectation"),
        "notes": b["notes"],
    }


def _class_chart(d: dict) -> dict | None:
    if d.get("task") != "classification":
        return None
    splits = [(s, ds["label"]) for s, ds in d["datasets"].items() if ds.get("label")]
    if not splits:
        return None
    train_classes = splits[0][1]["classes"]
    values = [c["value"] for c in train_classes[:BAR_CLASSES]]
    seen = {repr(v) for v in values}
    for _, lab in splits[1:]:
        for c in lab["classes"]:
            if repr(c["value"]) not in seen and len(values) < BAR_CLASSES + 4:
                values.append(c["value"])
                seen.add(repr(c["value"]))
    groups = []
    for split, lab in splits:
        counts = {repr(c["value"]): c["count"] for c in lab["classes"]}
        total = sum(counts.values()) or 1
        groups.append((split, [counts.get(repr(v), 0) / total for v in values]))
    more = len(train_classes) - BAR_CLASSES
    # shortened from the whole value (two long labels may differ only at their end), then
    # escaped; the tooltip holds the value, capped
    chart = svg.bar_rows([str(v) for v in values], groups)
    for row in chart["rows"]:
        row["label"], row["title"] = clean(row["label"]), name_text(row["title"])
    chart["more"] = f"{more} more classes not shown" if more > 0 else None
    return chart


MIN_ROWS_PER_POINT = 25  # fewer rows per point make a shuffled file look jumpy


def _regroup(pos: dict, total_rows: int) -> dict:
    """Merge neighbouring points (weighted by labelled rows) so each stands for enough rows."""
    points = len(pos["start"])
    want = max(2, min(points, total_rows // MIN_ROWS_PER_POINT))
    k = -(-points // want)
    if k <= 1:
        return pos
    n = pos["n"]
    groups = [range(i, min(i + k, points)) for i in range(0, points, k)]
    sizes = [sum(n[j] for j in g) for g in groups]

    def avg(values):
        return [
            sum(values[j] * n[j] for j in g) / size if size else None
            for g, size in zip(groups, sizes)
        ]

    return {
        "rows_per_point": pos["rows_per_point"] * k,
        "start": [pos["start"][g[0]] for g in groups],
        "n": sizes,
        "classes": [{"value": c["value"], "rate": avg(c["rate"])} for c in pos["classes"]],
        "mean": None if pos["mean"] is None else avg(pos["mean"]),
    }


def _drift_charts(d: dict) -> list[dict]:
    shades = {}
    for f in d["findings"]:
        if _in_section(f["code"], "label_position") and f["metrics"].get("segment_end") is not None:
            shades[f["split"]] = (f["metrics"]["segment_start"], f["metrics"]["segment_end"])
    charts = []
    shown = None
    for split, ds in d["datasets"].items():
        lab = ds.get("label")
        pos = lab.get("positions") if lab else None
        if not pos or len(pos["start"]) < 2:
            continue
        pos = _regroup(pos, ds["rows"])
        x = [s + pos["rows_per_point"] / 2 for s in pos["start"]]
        if d.get("task") == "classification" and len(pos["classes"]) >= 2:
            if shown is None:  # the same classes in every split, chosen on train
                classes = pos["classes"]
                # Two classes: the lines would mirror each other; show the rarer one.
                shown = (
                    [classes[1]["value"]]
                    if len(classes) == 2
                    else [c["value"] for c in classes[:CHART_CLASSES]]
                )
            by_value = {repr(c["value"]): c for c in pos["classes"]}
            pick = [by_value[repr(v)] for v in shown if repr(v) in by_value]
            series = [(f"{lab['name']} = {c['value']}", c["rate"]) for c in pick]
            y_range, y_label = (0.0, 1.0), "share of rows"
        elif pos["mean"] is not None:
            series = [(f"mean {lab['name']}", pos["mean"])]
            y_range, y_label = None, f"mean {lab['name']}"
        else:
            continue
        chart = svg.line_chart(
            x,
            series,
            y_range=y_range,
            shade=shades.get(split),
            width=520,
            x_label="row position",
            y_label=y_label,
        )
        chart["split"] = split
        chart["rows_per_point"] = num(pos["rows_per_point"])
        chart["flagged"] = split in shades
        charts.append(chart)
    return charts


def _leakage(d: dict) -> dict | None:
    """Time ranges per split and the leakage findings, for the split-leakage section."""
    times = [{"split": s, **ds["time"]} for s, ds in d["datasets"].items() if ds.get("time")]
    found = [
        {"code": f["code"], "name": f["name"], "severity": f["severity"], "message": f["message"]}
        for f in d["findings"]
        if _in_section(f["code"], "leakage")
    ]
    if not times and not found:
        return None
    return {"times": times, "findings": found}


def view_model(data: dict, *, name: str | None = None) -> dict:
    """Every decision the page needs, as plain data (``name``: the dataset's name in the
    configuration, when the audit has one: in the title and the heading)."""
    groups, first, later = _findings(data)
    outcomes = data["outcomes"]
    # what the page is about: an audit of data, a training log, or a model (probes only)
    if data.get("curves"):
        kind, unit = "curves", "Steps"
    elif data.get("probes") and not data["datasets"]:
        kind, unit = "probe", "Samples"
    else:
        kind = "audit"
        unit = "Samples" if any(ds.get("tensor") for ds in data["datasets"].values()) else "Rows"
    sources = " / ".join(name_text(ds["source"], 500) for ds in data["datasets"].values())
    label = f" {name_text(name)}" if name else ""
    return {
        "kind": kind,
        "heading": f"datavet {kind}" + (f": dataset{label}" if name else ""),
        "examples_label": unit,
        "title": f"datavet audit{label}: {sources}",
        "version": data["version"],
        "duration": f"{data['duration_s']:.2f} s" if data.get("duration_s") is not None else None,
        "verdict": _verdict(data, kind),
        "datasets": [
            {
                "split": s,
                "source": ds["source"],
                "format": ds["format"],
                "rows": num(ds["rows"]),
                "columns": len(ds["columns"]) + (1 if ds.get("label") else 0),
            }
            for s, ds in data["datasets"].items()
        ],
        "target": data["target"],
        "task": data["task"],
        "task_reason": data["task_reason"],
        "notes": data["notes"],
        # a preflight run: each stage's verdict, in order (data, baselines, the model's)
        "stages": (data.get("preflight") or {}).get("stages") or [],
        "fix_first": first,
        "fix_first_more": [
            {"code": f["code"], "name": f["name"], "anchor": f["anchor"]} for f in later
        ],
        "groups": groups,
        "n_findings": sum(len(g["findings"]) for g in groups),
        "tables": _column_tables(data),
        "baselines": _baselines(data.get("baselines")),
        "class_chart": _class_chart(data),
        "drift_charts": _drift_charts(data),
        "feature_drift": html_drift.drift_view(data),  # S010: train and test histograms
        "tensors": html_tensors.tensor_view(data),  # None for tables
        "leakage": _leakage(data),
        "ignored": [
            {
                "code": i["finding"]["code"],
                "name": i["finding"]["name"],
                "severity": i["finding"]["severity"],
                "split": i["finding"]["split"],
                "columns": ", ".join(name_text(c) for c in i["finding"]["columns"][:LIST_COLUMNS])
                + (
                    f" (+{len(i['finding']['columns']) - LIST_COLUMNS:,} more)"
                    if len(i["finding"]["columns"]) > LIST_COLUMNS
                    else ""
                ),
                "message": i["finding"]["message"],
                "reason": i["reason"],
            }
            for i in data.get("ignored", [])
        ],
        "checks": {
            "ran": sum(o["status"] in ("passed", "failed") for o in outcomes),
            "passed": [o["code"] for o in outcomes if o["status"] == "passed"],
            "skipped": [
                {"code": o["code"], "name": o["name"], "reason": o["reason"]}
                for o in outcomes
                if o["status"] == "skipped"
            ],
            "crashed": [
                {
                    "code": o["code"],
                    "name": o["name"],
                    "reason": o["reason"],
                    # escaped here, so the page keeps its line breaks (in data text they are
                    # shown as \n): a traceback is datavet's own text, several lines long
                    "traceback": markupsafe.escape(o["traceback"] or ""),
                }
                for o in outcomes
                if o["status"] == "crashed"
            ],
        },
        **html_probes.overrides(data),  # "probes" (None without probes); a probe report's title
        **html_curves.overrides(data),  # "curves" (None without a training log); its title
    }


def _environment() -> jinja2.Environment:
    templates = resources.files("datavet.output").joinpath("templates")
    env = jinja2.Environment(
        loader=jinja2.FunctionLoader(lambda name: templates.joinpath(name).read_text("utf-8")),
        autoescape=True,  # always: never select_autoescape, which matches on file extensions
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        finalize=_visible,
    )
    return env


# In markup (what the templates build, a traceback): C0 controls but tab, LF and CR; DEL; C1;
# bidirectional controls; the line separators. NUL is replaced by browsers, ESC/BEL are invalid
# in HTML and an override reverses the page's own text around it: each is shown as a visible
# escape (as the text report shows it). Plain text, which is data, also has its tabs and line
# breaks shown as \t, \n: a browser shows them as spaces, and the column a\nb would read as
# the column "a b".
_CONTROL = re.compile(f"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f{BIDI}{SEPARATORS}]")


def _visible(value):
    """Every value a template prints: plain text (data) capped at :data:`TEXT_LIMIT`
    characters with every control character, line break and tab an escape (``\\xNN``,
    ``\\n``); markup keeps its line breaks and tabs."""
    if isinstance(value, markupsafe.Markup):
        if _CONTROL.search(value):
            return markupsafe.Markup(_CONTROL.sub(escape_char, str(value)))
        return value
    if isinstance(value, str):
        return clean(cap(value))
    return value


def render(report, *, name: str | None = None, **_options) -> str:
    """The page for one report; ``name`` is the dataset's name in the configuration (shown in
    the title and the heading, so the pages of several datasets tell which is which)."""
    data = report.to_dict()
    page = _environment().get_template("report.html.j2")
    return page.render(vm=view_model(data, name=name), data=data)
