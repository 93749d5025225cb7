"""The HTML report's tensor section: per-channel tables, constant positions, sample thumbnails.

Compute, then render: :func:`tensor_view` turns the ``tensor`` summaries of
``Report.to_dict()["datasets"]`` into plain data for ``templates/tensors.html.j2``. Thumbnails
are small PNGs encoded here (no imaging library needed) and inlined as ``data:`` URIs, which
the page's Content-Security-Policy allows (``img-src data:``); nothing is fetched.
"""

from __future__ import annotations

import base64
import struct
import zlib

import numpy as np
from markupsafe import Markup

MAX_CHANNEL_ROWS = 64  # longer channel tables ((N, D) inputs) are left to the column table
DISPLAY_PX = 72  # thumbnails are shown about this large (pixelated, not smoothed)
NAN_RGB = (230, 0, 0)
INF_RGB = (230, 0, 230)


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def png(pixels: np.ndarray) -> bytes:
    """An 8-bit grayscale (h, w, 1) or RGB (h, w, 3) array as PNG bytes."""
    h, w, c = pixels.shape
    colour = {1: 0, 3: 2}[c]
    raw = b"".join(b"\x00" + pixels[r].tobytes() for r in range(h))
    header = struct.pack(">IIBBBBB", w, h, 8, colour, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + _chunk(b"IHDR", header)
        + _chunk(b"IDAT", zlib.compress(raw, 9))
        + _chunk(b"IEND", b"")
    )


def data_uri(pixels: np.ndarray) -> str:
    """A ``data:`` URI of the PNG: base64 text, marked safe to print as it is (the page caps the
    length of text it prints, which must not cut an image)."""
    return Markup("data:image/png;base64," + base64.b64encode(png(pixels)).decode("ascii"))


def _decode(t: dict) -> np.ndarray:
    h, w, c = t["height"], t["width"], t["channels"]
    pixels = np.frombuffer(base64.b64decode(t["pixels"]), np.uint8).reshape(h, w, c)
    if t.get("marks"):
        marks = np.frombuffer(base64.b64decode(t["marks"]), np.uint8).reshape(h, w)
        pixels = np.repeat(pixels, 3, axis=2) if c == 1 else pixels.copy()
        pixels[marks == 1] = NAN_RGB
        pixels[marks == 2] = INF_RGB
    return np.ascontiguousarray(pixels)


def _size(h: int, w: int) -> tuple[int, int]:
    k = max(1, DISPLAY_PX // max(h, w))
    return h * k, w * k


def _thumbnail(t: dict) -> dict:
    height, width = _size(t["height"], t["width"])
    caption = f"#{t['index']:,}"
    if t["label"] is not None:
        caption += f" · label {t['label']}"
    if t["flag"]:
        caption += f" · {'NaN' if t['flag'] == 'nan' else 'inf'} (marked)"
    return {
        "index": t["index"],
        "src": data_uri(_decode(t)),
        "height": height,
        "width": width,
        "caption": caption,
        "flag": t["flag"],
    }


def _channels(t: dict) -> list[dict]:
    from datavet.output.numbers import num

    rows = []
    for c in t["channels"]:
        bad = "error" if c["nan_values"] or c["posinf_values"] or c["neginf_values"] else ""
        rows.append(
            {
                "name": c["name"],
                "nan": num(c["nan_values"]),
                "nan_samples": num(c["nan_samples"]),
                "posinf": num(c["posinf_values"]),
                "neginf": num(c["neginf_values"]),
                "min": num(c["min"]),
                "max": num(c["max"]),
                "mean": num(c["mean"]),
                "std": num(c["std"]),
                "nan_css": "error" if c["nan_values"] else "",
                "posinf_css": "error" if c["posinf_values"] else "",
                "neginf_css": "error" if c["neginf_values"] else "",
                "std_css": "warning" if c["constant"] else "",
                "flagged": bool(bad or c["constant"]),
            }
        )
    return rows


def tensor_view(data: dict) -> list[dict] | None:
    """One entry per split with tensor inputs; None when there are none (tables)."""
    out = []
    for split, ds in data["datasets"].items():
        t = ds.get("tensor")
        if not t:
            continue
        channels = _channels(t) if t["layout"] != "features" else []
        hidden = 0
        if len(channels) > MAX_CHANNEL_ROWS:
            hidden = len(channels) - MAX_CHANNEL_ROWS
            channels = channels[:MAX_CHANNEL_ROWS]
        constant = None
        if t["constant_positions"]:
            constant = (
                f"{t['constant_positions']:,} of {t['positions']:,} input positions hold one "
                "value in every sample"
            )
        constant_map = None
        cmap = t.get("constant_map")
        if cmap and t["constant_positions"]:
            pixels = np.frombuffer(base64.b64decode(cmap["pixels"]), np.uint8)
            pixels = pixels.reshape(cmap["height"], cmap["width"], 1)
            height, width = _size(cmap["height"], cmap["width"])
            constant_map = {"src": data_uri(pixels), "height": height, "width": width}
        shape = "x".join(str(s) for s in t["shape"]) or "1"
        out.append(
            {
                "split": split,
                "rows": f"{ds['rows']:,}",
                "shape": shape,
                "dtype": t["dtype"],
                "layout": t["layout"],
                "reason": t["channel_reason"],
                "constant": constant,
                "constant_map": constant_map,
                "channels": channels,
                "hidden_channels": hidden,
                "thumbnails": [_thumbnail(th) for th in t["thumbnails"]],
            }
        )
    return out or None
