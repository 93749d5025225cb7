"""Geometry for the report's inline SVG charts. Numbers only: the templates lay them out and
autoescape every label, so nothing here produces markup. (A line's ``points``, numbers and
spaces only, is marked safe to print as it is: the page caps the length of text it prints,
which must not cut a chart's coordinates.)"""

from __future__ import annotations

import math

from markupsafe import Markup

PALETTE = ("#2f6db5", "#d9822b", "#3c9d5d", "#c23b3b", "#7a58b5", "#8c6d31", "#3aa6b9", "#b5477a")


def _ticks(lo: float, hi: float, count: int = 5) -> list[float]:
    """Round tick values covering [lo, hi]."""
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi <= lo:
        return [lo] if math.isfinite(lo) else []
    raw = (hi - lo) / max(count - 1, 1)
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    first = math.ceil(lo / step) * step
    out, v = [], first
    while v <= hi + step * 1e-9:
        out.append(round(v, 12))
        v += step
    return out


def _tick_text(v: float) -> str:
    if v == int(v) and abs(v) < 1e15:
        return f"{int(v):,}"
    return f"{v:.3g}"


def line_chart(
    x: list[float],
    series: list[tuple[str, list[float]]],
    *,
    width: int = 640,
    height: int = 220,
    y_range: tuple[float, float] | None = None,
    shade: tuple[float, float] | None = None,
    x_label: str = "",
    y_label: str = "",
) -> dict:
    """A line chart as coordinates: ``{"width", "height", "lines": [{"name", "colour",
    "points"}], "x_ticks", "y_ticks", "shade", "plot": {...}}``."""
    left, right, top, bottom = 52, 12, 12, 34
    pw, ph = width - left - right, height - top - bottom
    finite = [v for _, ys in series for v in ys if v is not None and math.isfinite(v)]
    if y_range is None:
        lo, hi = (min(finite), max(finite)) if finite else (0.0, 1.0)
        if hi == lo:
            lo, hi = lo - 0.5, hi + 0.5
    else:
        lo, hi = y_range
    x_lo, x_hi = (min(x), max(x)) if x else (0.0, 1.0)
    if x_hi == x_lo:
        x_hi = x_lo + 1

    def px(v: float) -> float:
        return round(left + (v - x_lo) / (x_hi - x_lo) * pw, 1)

    def py(v: float) -> float:
        return round(top + (1 - (v - lo) / (hi - lo)) * ph, 1)

    lines = []
    for i, (name, ys) in enumerate(series):
        pts = [f"{px(a)},{py(b)}" for a, b in zip(x, ys) if b is not None and math.isfinite(b)]
        points = Markup(" ".join(pts))  # numbers only (see the module's docstring)
        lines.append({"name": name, "colour": PALETTE[i % len(PALETTE)], "points": points})
    out = {
        "width": width,
        "height": height,
        "plot": {"x": left, "y": top, "w": pw, "h": ph, "bottom": top + ph},
        "lines": lines,
        "x_ticks": [{"pos": px(v), "text": _tick_text(v)} for v in _ticks(x_lo, x_hi)],
        "y_ticks": [{"pos": py(v), "text": _tick_text(v)} for v in _ticks(lo, hi)],
        "x_label": x_label,
        "y_label": y_label,
        "shade": None,
    }
    if shade is not None:
        a, b = max(shade[0], x_lo), min(shade[1], x_hi)
        if b > a:
            out["shade"] = {"x": px(a), "w": round(px(b) - px(a), 1), "y": top, "h": ph}
    return out


LABEL_CHARS = 30  # longer bar labels are shortened in the middle (the full one is a tooltip)
CHAR_PX = 6.2  # about the width of a character of the charts' 11px font


def _middle(label: str, n: int) -> str:
    """``label`` shortened to ``n`` characters by an ellipsis in the middle, keeping its start
    and its end (where labels that share a prefix differ: "... review 1", "... review 2")."""
    if len(label) <= n:
        return label
    head = (n - 1) // 2
    return label[:head] + "…" + label[len(label) - (n - 1 - head) :]


def short_labels(labels: list[str], n: int = LABEL_CHARS) -> list[str]:
    """Every label in at most ``n`` characters (about), no two alike: shortened in the middle;
    labels that still read the same show the part around where they differ, and as a last
    resort their number in the list."""
    out = [_middle(label, n) for label in labels]
    for short in {s for s in out if out.count(s) > 1}:
        same = [i for i, s in enumerate(out) if s == short]
        full = [labels[i] for i in same]
        common = 0  # the length of the prefix they share
        while all(len(f) > common for f in full) and len({f[common] for f in full}) == 1:
            common += 1
        start = max(common - 4, 0)
        for i in same:
            part = labels[i][start : start + n - 2]
            lead = "…" if start else ""
            tail = "…" if start + n - 2 < len(labels[i]) else ""
            out[i] = lead + part + tail
    for short in {s for s in out if out.count(s) > 1}:
        for k, i in enumerate([i for i, s in enumerate(out) if s == short], 1):
            out[i] = f"{_middle(labels[i], n - 5)} ({k})"
    return out


def bar_rows(labels: list[str], groups: list[tuple[str, list[float]]], *, width: int = 640) -> dict:
    """Horizontal grouped bars for shares in [0, 1]: one row per label, one bar per group.
    Each row's ``label`` is shortened to fit the label column (:func:`short_labels`) and
    ``title`` is the label given; the label column is as wide as the longest label needs."""
    shorts = short_labels(labels)
    widest = max((len(x) for x in shorts), default=0)
    left = round(min(max(widest * CHAR_PX + 14, 60), LABEL_CHARS * CHAR_PX + 14))
    right, bar, gap, top = 60, 12, 10, 8
    pw = width - left - right
    rows = []
    y = top
    for i, label in enumerate(labels):
        bars = []
        for j, (group, values) in enumerate(groups):
            v = values[i] if i < len(values) else 0.0
            bars.append(
                {
                    "group": group,
                    "colour": PALETTE[j % len(PALETTE)],
                    "x": left,
                    "y": y + j * bar,
                    "w": round(max(v, 0.0) * pw, 1),
                    "h": bar - 2,
                    "text": f"{100 * v:.1f}%",
                    "text_x": round(left + max(v, 0.0) * pw + 4, 1),
                }
            )
        rows.append(
            {"label": shorts[i], "title": label, "y": y + len(groups) * bar / 2 + 4, "bars": bars}
        )
        y += len(groups) * bar + gap
    return {
        "width": width,
        "height": y + top,
        "rows": rows,
        "legend": [
            {"group": g, "colour": PALETTE[j % len(PALETTE)]} for j, (g, _) in enumerate(groups)
        ],
        "label_x": left - 6,
    }
