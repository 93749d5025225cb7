"""The HTML report's model-probe section: a view model built from ``Report.to_dict()["probes"]``.

Compute, then render, as the rest of the report: every number is formatted and every chart laid
out here; ``templates/probes.html.j2`` only places them (autoescaped).
"""

from __future__ import annotations

import math

from datavet.output import svg

STATUS_ORDER = ("crashed", "failed", "passed", "skipped")
MAX_LAYER_ROWS = 200
MAX_PARAM_ROWS = 60
MAX_CUT_ROWS = 64


def _num(value) -> str:
    if value is None:
        return "–"
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int):
        return f"{value:,}"
    if not math.isfinite(value):
        return str(value)
    if value == 0:
        return "0"
    if 1e-3 <= abs(value) < 1e6:
        return f"{value:.4g}"
    return f"{value:.3g}"


def _pct(value) -> str:
    if value is None:
        return ""
    return f"{value:.0%}" if value >= 0.01 or value == 0 else f"{value:.2g}"


def _log_chart(points: list, *, y_label: str, marks: list | None = None) -> dict | None:
    """A line chart of log10(y) over steps, with optional marked steps (spikes)."""
    xs = [float(s) for s, v in points if v is not None and math.isfinite(v) and v > 0]
    ys = [math.log10(v) for _, v in points if v is not None and math.isfinite(v) and v > 0]
    if len(xs) < 2:
        return None
    chart = svg.line_chart(xs, [(y_label, ys)], width=560, x_label="step", y_label=y_label)
    plot = chart["plot"]
    lo, hi = min(ys), max(ys)
    if hi == lo:
        lo, hi = lo - 0.5, hi + 0.5
    x_lo, x_hi = min(xs), max(xs)
    chart["marks"] = []
    for step, value in marks or []:
        if value is None or not math.isfinite(value) or value <= 0:
            continue
        chart["marks"].append(
            {
                "x": round(plot["x"] + (step - x_lo) / (x_hi - x_lo) * plot["w"], 1),
                "y": round(plot["y"] + (1 - (math.log10(value) - lo) / (hi - lo)) * plot["h"], 1),
                "step": step,
            }
        )
    for t in chart["y_ticks"]:  # the ticks are log10 values: label them with the value
        t["text"] = _num(10 ** float(t["text"].replace(",", "")))
    return chart


def _checks(data: dict, p: dict) -> list[dict]:
    worst: dict[str, str] = {}
    for f in data["findings"]:
        if f["code"].startswith("M") and f["code"] not in worst:
            worst[f["code"]] = f["severity"]  # findings are sorted most severe first
    rows = []
    for o in data["outcomes"]:
        if not o["code"].startswith("M"):
            continue
        d = p.get("checks", {}).get(o["code"], {})
        rows.append(
            {
                "code": o["code"],
                "name": o["name"],
                "status": o["status"],
                "css": worst.get(o["code"], "") if o["status"] == "failed" else "",
                "headline": d.get("headline") or o.get("reason") or "",
            }
        )
    return rows


def _layers(rows: list[dict] | None) -> dict | None:
    if not rows:
        return None
    shown = rows[:MAX_LAYER_ROWS]
    return {
        "rows": [
            {
                "module": r["module"],
                "type": r["type"],
                "depth": r["depth"] if r["depth"] is not None else "",
                "shape": "×".join(str(d) for d in r["shape"]),
                "mean": _num(r["mean"]),
                "std": _num(r["std"]),
                "saturated": _pct(r["saturated"]),
                "dead": _pct(r["dead"]),
                "nonfinite": _num(r["nonfinite"]) if r["nonfinite"] else "",
                "flags": ", ".join(r["flags"]),
                "css": "warning" if r["flags"] else "",
            }
            for r in shown
        ],
        "more": len(rows) - len(shown),
    }


def _details(checks: dict, section: str) -> dict | None:
    """The details of the probe that declares ``section`` (framework.SECTIONS), if it ran."""
    from datavet.rules import REGISTRY

    for rule in REGISTRY:
        if section in rule.sections and rule.code in checks:
            return checks[rule.code]
    return None


def _overfit(checks: dict) -> dict | None:
    d = _details(checks, "overfit_curve")
    if not d or not d.get("curve"):
        return None
    chart = _log_chart(d["curve"], y_label="log10 loss")
    if chart is None:
        return None
    return {
        "chart": chart,
        "caption": f"{d['optimizer']}, {d['steps']} steps: {_num(d['initial_loss'])} → "
        f"{_num(d['final_loss'])}",
    }


def _future(checks: dict) -> dict | None:
    """The causality probe's table: one row per cut point (inputs after it changed, outputs up
    to it read)."""
    d = _details(checks, "future_cuts")
    if not d or not d.get("cuts"):
        return None
    cuts = d["cuts"]
    shown = cuts[:MAX_CUT_ROWS]
    leaking = sum(c["leaks"] for c in cuts)
    module = d.get("module")
    return {
        "summary": (
            f"{d['sequence_length']} positions on dimension {d['time_dim']}, {len(cuts)} cut "
            f"points, {leaking} leaking; a change above {_num(d['tolerance'])} counts"
            + (
                f"; position {d['first_position']} reads position {d['reads_up_to']}"
                if d.get("first_position") is not None
                else ""
            )
            + (f"; first leaking module {module['label']}" if module else "")
        ),
        "rows": [
            {
                "cut": c["cut"],
                "future": f"{c['cut'] + 1}–{d['sequence_length'] - 1}",
                "past": f"0–{c['cut']}",
                "change": _num(c["max_change"]),
                "first": "" if c["first_changed"] is None else c["first_changed"],
                "changed": c["n_changed"],
                "verdict": "leaks" if c["leaks"] else "causal",
                "css": "warning" if c["leaks"] else "",
            }
            for c in shown
        ],
        "more": len(cuts) - len(shown),
    }


def _padding(checks: dict) -> dict | None:
    """The padding probe's figures: the loss with and without the padded positions, and what
    leaked."""
    d = _details(checks, "padding_figures")
    if not d or "loss" not in d:
        return None
    attention = d.get("attention")
    rows = [
        ("padding", d["padding_source"], ""),
        (
            "padded positions",
            f"{d['padded_positions']:,} of {d['positions']:,} ({_pct(d['padded_share'])}), "
            f"in {d['padded_rows']:,} rows",
            "",
        ),
        ("loss on the batch", _num(d["loss"]), ""),
        (
            "loss over real positions only",
            _num(d["loss_real_positions"])
            if d["loss_real_positions"] is not None
            else f"not recomputed ({d['loss_real_error']})",
            "error" if d["diluted"] else "",
        ),
        (
            "loss gradient on padded outputs",
            _pct(d["gradient_share_on_padding"]) or "0",
            "error" if d["padding_in_loss"] else "",
        ),
    ]
    if attention:
        rows.append(
            (
                "largest change of real outputs",
                f"{_num(attention['max_change'])} (tolerance {_num(attention['tolerance'])}; "
                f"{attention['method_text']})",
                "error" if attention["leaks"] else "",
            )
        )
    else:
        rows.append(("real outputs", "not compared", ""))
    return {"rows": [{"label": a, "value": b, "css": c} for a, b, c in rows]}


def _monitor(m: dict | None) -> dict | None:
    if not m:
        return None
    spikes = m["spikes"]
    chart = _log_chart(
        m["curve"], y_label="log10 gradient norm", marks=[(s["step"], s["norm"]) for s in spikes]
    )
    layers = m["layers"]
    first = m["first_nonfinite"]
    return {
        "steps": _num(m["steps"]),
        "rule": f"a step is flagged above {m['factor']:g}x the median of the last "
        f"{m['window']} normal steps (after {m['min_history']})",
        "chart": chart,
        "spikes": [
            {
                "step": _num(s["step"]),
                "norm": _num(s["norm"]),
                "median": _num(s["median"]),
                "factor": f"{s['factor']:.1f}x",
            }
            for s in spikes
        ],
        "nonfinite": (
            {
                "step": _num(first["step"]),
                "loss": first.get("loss_text") or _num(first["loss"]),
                "norm": first.get("norm_text") or _num(first["norm"]),
                "parameters": ", ".join(first["parameters"][:20]),
                "count": _num(m["nonfinite_steps"]),
            }
            if first
            else None
        ),
        "layer_steps": [_num(s) for s in layers["steps"]],
        "layer_rows": [
            {"name": r["name"], "norms": [_num(v) for v in r["norms"]]}
            for r in layers["rows"][:MAX_PARAM_ROWS]
        ],
        "layer_more": max(0, len(layers["rows"]) - MAX_PARAM_ROWS),
    }


def view(data: dict) -> dict | None:
    """The probe section's view model, or None for a report without probes."""
    p = data.get("probes")
    if not p:
        return None
    model = p.get("model")
    checks = p.get("checks") or {}
    return {
        "kind": p.get("kind"),
        "model": (
            f"{model['class']}: {model['parameters']:,} parameters ({model['trainable']:,} "
            f"trainable), {model['device']}, {model['dtype']}; batch of {model['batch_size']}, "
            f"task {model['task']}"
            + (f" ({model['n_classes']} classes)" if model["n_classes"] else "")
            if model
            else None
        ),
        "checks": _checks(data, p),
        "overfit": _overfit(checks),
        "layers": _layers(p.get("layers")),
        "future": _future(checks),
        "padding": _padding(checks),
        "monitor": _monitor(p.get("monitor")),
    }


def overrides(data: dict) -> dict:
    """What ``html.view_model`` takes from here: the probe section, and for a report with no
    dataset (a probe or monitor report) a title that says what was vetted."""
    section = view(data)
    out: dict = {"probes": section}
    if section is not None and not data["datasets"]:
        model = (data.get("probes") or {}).get("model")
        out["title"] = f"datavet probe: {model['class']}" if model else "datavet: gradient monitor"
    return out
