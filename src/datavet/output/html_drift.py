"""The feature-drift section of the HTML report: each drifted feature's train and test
histograms side by side, on shared bins and one vertical scale (share of rows)."""

from __future__ import annotations

WIDTH, HEIGHT = 300, 150
PAD_LEFT, PAD_BOTTOM, PAD_TOP = 34, 30, 8
COLOURS = {"train": "#2e90fa", "test": "#f79009"}


def _label(v: float) -> str:
    return f"{v:.3g}"


def _panel(split: str, shares: list[float], top: float, hist: dict) -> dict:
    plot_w, plot_h = WIDTH - PAD_LEFT - 6, HEIGHT - PAD_BOTTOM - PAD_TOP
    n = max(len(shares), 1)
    step = plot_w / n
    bars = []
    for i, s in enumerate(shares):
        h = 0.0 if top <= 0 else plot_h * s / top
        bars.append(
            {
                "x": round(PAD_LEFT + i * step + 0.5, 1),
                "y": round(PAD_TOP + plot_h - h, 1),
                "w": round(max(step - 1.0, 0.5), 1),
                "h": round(h, 1),
                "title": f"{hist['names'][i]}: {100 * s:.1f}% of {split} rows",
            }
        )
    first, last = hist["ends"]
    return {
        "split": split,
        "colour": COLOURS[split],
        "bars": bars,
        "plot": {"x": PAD_LEFT, "y": PAD_TOP, "w": plot_w, "h": plot_h, "bottom": PAD_TOP + plot_h},
        "top": f"{100 * top:.0f}%",
        "first": first,
        "last": last,
    }


def drift_view(data: dict) -> list[dict]:
    """One entry per drifted feature (S010), in the finding's order (largest effect first)."""
    datasets = data.get("datasets") or {}
    if "train" not in datasets or "test" not in datasets:
        return []
    from datavet.rules import in_section

    columns = [c for f in data["findings"] if in_section(f["code"], "drift") for c in f["columns"]]
    out = []
    for column in columns:
        hists = {}
        for split in ("train", "test"):
            entry = next((c for c in datasets[split]["columns"] if c["name"] == column), None)
            if entry is None or not entry.get("histogram"):
                break
            hists[split] = entry["histogram"]
        if len(hists) < 2:
            continue
        ref = hists["train"]
        if ref["kind"] == "numeric":
            edges = ref["edges"]
            names = [f"{_label(a)} to {_label(b)}" for a, b in zip(edges, edges[1:], strict=False)]
            ends = (_label(edges[0]), _label(edges[-1]))
        else:
            names = ref["levels"]
            ends = (names[0] if names else "", names[-1] if names else "")
        shares = {}
        for split, h in hists.items():
            total = sum(h["counts"]) or 1
            shares[split] = [c / total for c in h["counts"]]
        top = max(max(s, default=0.0) for s in shares.values()) or 1.0
        meta = {"names": names, "ends": ends}
        out.append(
            {
                "column": column,
                "width": WIDTH,
                "height": HEIGHT,
                "panels": [_panel(s, shares[s], top, meta) for s in ("train", "test")],
                "kind": "value ranges" if ref["kind"] == "numeric" else "most common values",
            }
        )
    return out
