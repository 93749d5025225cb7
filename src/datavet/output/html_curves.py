"""The HTML report's curve section: a view model built from ``Report.to_dict()["curves"]``.

Compute, then render: the loss, gradient-norm and metric charts (inline SVG geometry from
``svg.line_chart``, log scale when the values span more than ``LOG_SPAN``), the flagged steps as
marks, and each finding's likely causes with the check for each. ``templates/curves.html.j2``
only places them (autoescaped).
"""

from __future__ import annotations

import math

from datavet.output import svg

LOG_SPAN = 50.0  # max / min of the positive values above which a chart uses a log scale
MARK_COLOURS = {"error": "#c23b3b", "warning": "#d9822b", "info": "#3aa6b9"}
_LABELS = {
    "train_loss": "training loss",
    "val_loss": "validation loss",
    "grad_norm": "gradient norm",
    "train_metric": "training metric",
    "val_metric": "validation metric",
}
CHARTS = (
    ("loss", ("train_loss", "val_loss"), "loss"),
    ("grad_norm", ("grad_norm",), "gradient norm"),
    ("metric", ("train_metric", "val_metric"), "metric"),
)


def _num(v: float) -> str:
    if v == 0:
        return "0"
    if 1e-3 <= abs(v) < 1e5:
        return f"{v:.3g}"
    return f"{v:.0e}"


def _step(step: float) -> str:
    return f"{int(step):,}" if step == int(step) else f"{step:g}"


def _chart(c: dict, key: str, names: tuple[str, ...], y_label: str, marks: list, sev: dict):
    steps = c["series"]["step"]
    present = [n for n in names if n in c["series"]]
    if not present or len(steps) < 2:
        return None
    values = [v for n in present for v in c["series"][n] if v is not None]
    if len(values) < 2:
        return None
    positive = [v for v in values if v > 0]
    log = (
        len(positive) == len(values) and min(positive) > 0 and max(values) / min(values) > LOG_SPAN
    )

    def y(v):
        if v is None:
            return None
        return math.log10(v) if log else v

    series = [
        (_LABELS[n] + (" (log scale)" if log else ""), [y(v) for v in c["series"][n]])
        for n in present
    ]
    ys = [v for _, vs in series for v in vs if v is not None]
    lo, hi = min(ys), max(ys)
    if hi == lo:
        lo, hi = lo - 0.5, hi + 0.5
    chart = svg.line_chart(
        steps, series, width=640, y_range=(lo, hi), x_label=c["step_from"], y_label=y_label
    )
    if log:  # the ticks are log10 values (line_chart places svg._ticks): label them with 10**v
        values = svg._ticks(lo, hi)
        if len(values) == len(chart["y_ticks"]):
            for t, v in zip(chart["y_ticks"], values):
                t["text"] = _num(10**v)
    plot = chart["plot"]
    x_lo, x_hi = min(steps), max(steps)
    span = (x_hi - x_lo) or 1.0

    def px(step):
        return round(plot["x"] + (step - x_lo) / span * plot["w"], 1)

    chart["marks"] = [
        {
            "x": px(m["step"]),
            "code": m["code"],
            "label": m["label"],
            "step": _step(m["step"]),
            "colour": MARK_COLOURS.get(sev.get(m["code"], "warning"), "#d9822b"),
        }
        for m in marks
        if m["series"] in names
    ]
    chart["nonfinite"] = _nonfinite(c, present, px)
    chart["key"] = key
    chart["log"] = log
    return chart


LABEL_GAP_PX = 30  # non-finite labels closer than this on a chart are one label


def _nonfinite(c: dict, names: list[str], px) -> list[dict]:
    """One label per run of non-finite values of a series (listed steps with no finite value
    of it between them), placed at the run's first step; its tooltip says where the series is
    finite again. Labels that would overlap are one label, whose tooltip lists each run."""
    unit = c["step_from"]
    runs = []
    for name in names:
        finite = [
            s for s, v in zip(c["series"]["step"], c["series"].get(name) or []) if v is not None
        ]
        bad = sorted((n for n in c["nonfinite"] if n["series"] == name), key=lambda n: n["step"])
        for n in bad:
            last = runs[-1] if runs and runs[-1]["series"] == name else None
            if last is not None and not any(last["last"] < s < n["step"] for s in finite):
                last["last"] = n["step"]
                last["values"].setdefault(n["value"], None)
                continue
            runs.append(
                {
                    "series": name,
                    "first": n["step"],
                    "last": n["step"],
                    "values": {n["value"]: None},
                    "finite": finite,
                }
            )
    labels: list[dict] = []
    for run in sorted(runs, key=lambda r: r["first"]):
        again = next((s for s in run["finite"] if s > run["last"]), None)
        first = f"{unit} {_step(run['first'])}"
        if again is None:
            where = f"from {first} to the end of the log"
        elif run["first"] == run["last"]:
            where = f"at {first}"
        else:
            where = f"from {first}; finite again at {unit} {_step(again)}"
        text = f"{_LABELS[run['series']]} is {'/'.join(run['values'])} {where}"
        x = px(run["first"])
        if labels and x - labels[-1]["x"] < LABEL_GAP_PX:
            near = labels[-1]
            near["title"] += f"; {text}"
            near["values"].update(run["values"])
            continue
        labels.append(
            {"x": x, "step": _step(run["first"]), "values": dict(run["values"]), "title": text}
        )
    for label in labels:
        label["value"] = "/".join(label.pop("values"))
    return labels


def view(data: dict) -> dict | None:
    """The curve section, or None for a report that is not a curve diagnosis."""
    c = data.get("curves")
    if not c:
        return None
    sev = {}
    for f in data["findings"]:
        sev.setdefault(f["code"], f["severity"])  # findings are sorted most severe first
    charts = [
        ch
        for key, names, label in CHARTS
        if (ch := _chart(c, key, names, label, c["marks"], sev)) is not None
    ]
    causes = [
        {
            "code": f["code"],
            "name": f["name"],
            "severity": f["severity"],
            "causes": c["causes"].get(f["code"], []),
        }
        for f in data["findings"]
        if c["causes"].get(f["code"])
    ]
    seen, unique = set(), []
    for item in causes:  # one block per rule
        if item["code"] not in seen:
            seen.add(item["code"])
            unique.append(item)
    level = c.get("no_learning_level")
    return {
        "source": c["source"],
        "rows": f"{c['rows']:,}",
        "unit": c["step_from"],
        "columns": [{"canonical": k, "name": v} for k, v in c["columns"].items()],
        "no_learning": f"{level['value']:.4g} ({level['why']})" if level else None,
        "points": c["points"],
        "thinned": c["points"] < c["rows"],
        "charts": charts,
        "causes": unique,
    }


def overrides(data: dict) -> dict:
    """What ``html.view_model`` takes from here: the curve section and, for a curve report, a
    title that names the log."""
    section = view(data)
    out: dict = {"curves": section}
    if section is not None:
        out["title"] = f"datavet curves: {section['source']}"
    return out
