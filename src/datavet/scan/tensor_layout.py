"""The layout of tensor samples: which axis holds channels and what the others mean (features,
images, sequences), decided once per split from the sample shape or the user's channel axis."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from datavet.errors import UsageError

MAX_CHANNELS = 1024  # a channel axis longer than this is almost surely the wrong axis
MAX_FEATURE_COLUMNS = 4096  # (N, D) inputs wider than this are read as one channel
# (N, C, T) with T beyond MAX_CHANNELS and C at most this: channels first (mono or stereo audio,
# a few sensors: the layout of torchaudio and Conv1d)
MAX_LEADING_CHANNELS = 8
FLAG = "--channel-axis (Python: channel_axis=)"


@dataclass(frozen=True)
class Layout:
    """How a sample's axes are read: which one holds channels and what the others mean.

    ``channel_axis`` counts the sample's own axes (0 is the first axis after N); ``kind`` is
    "features" for ``(N, D)``, "image" for ``(N, C, H, W)`` (or ``(N, H, W)``), "sequence" for
    ``(N, T, F)``, "other" beyond.
    """

    shape: tuple[int, ...]
    dtype: str
    channel_axis: int | None
    kind: str
    reason: str = ""

    @property
    def n_channels(self) -> int:
        if self.kind == "features":
            return self.shape[0] if self.shape else 1
        return 1 if self.channel_axis is None else self.shape[self.channel_axis]

    @property
    def rest(self) -> tuple[int, ...]:
        """The sample's axes other than the channel axis, in order."""
        if self.kind == "features":
            return (1,)
        if self.channel_axis is None:
            return self.shape
        return tuple(s for i, s in enumerate(self.shape) if i != self.channel_axis)

    @property
    def channels(self) -> tuple[str, ...]:
        prefix = "x" if self.kind == "features" else "channel "
        return tuple(f"{prefix}{c}" for c in range(self.n_channels))

    @property
    def positions(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) if self.shape else 1

    def to_channels(self, x: np.ndarray) -> np.ndarray:
        """``(n, *shape)`` -> ``(n, C, P)``: channels first, the rest flattened."""
        n = len(x)
        if self.kind == "features" or self.channel_axis is None:
            return x.reshape(n, self.n_channels, -1)
        return np.moveaxis(x, 1 + self.channel_axis, 1).reshape(n, self.n_channels, -1)

    def describe(self) -> str:
        shape = "x".join(map(str, self.shape)) or "1"
        if self.kind == "features":
            return f"{self.n_channels:,} features per sample"
        what = {"image": "images", "sequence": "sequences"}.get(self.kind, "samples")
        chans = "1 channel" if self.n_channels == 1 else f"{self.n_channels:,} channels"
        return f"{what} of shape {shape}, {chans}"


def resolve_layout(shape: tuple[int, ...], dtype: str, requested=None) -> Layout:
    """Decide the channel axis: ``requested`` is an axis of the full tensor (N is axis 0),
    ``"none"`` for no channel axis, or None to decide from the shape."""
    ndim = len(shape)
    if ndim == 1 and shape[0] > MAX_FEATURE_COLUMNS and requested in (None, "auto"):
        # a statistics record per feature would cost more than the data: read the vector as one
        # channel of positions (per-position statistics still find constant features)
        return Layout(
            shape,
            dtype,
            None,
            "sequence",
            f"{shape[0]:,} features per sample (more than {MAX_FEATURE_COLUMNS:,}) read as one "
            "sequence of positions: per-feature statistics are kept per position",
        )
    if ndim <= 1:
        return Layout(shape, dtype, 0 if ndim else None, "features", "one value per feature")
    full = ndim + 1
    if requested not in (None, "auto"):
        if str(requested).lower() == "none":
            axis, reason = None, "no channel axis (--channel-axis none)"
        else:
            try:
                k = int(requested)
            except (TypeError, ValueError):
                raise UsageError(
                    f"{FLAG} must be an axis number or 'none', not {requested!r}"
                ) from None
            if not -full <= k < full:
                raise UsageError(
                    f"{FLAG} {k} is out of range for inputs of shape (N, "
                    f"{', '.join(map(str, shape))})"
                )
            k %= full
            if k == 0:
                raise UsageError(f"{FLAG} 0 is the sample axis (N); channels are on 1 or later")
            axis, reason = k - 1, f"channel axis {k} (--channel-axis)"
    elif ndim == 2:
        a, b = shape
        if b > MAX_CHANNELS and a <= MAX_LEADING_CHANNELS:
            axis = 0
            chans = "1 channel" if a == 1 else f"{a} channels"
            reason = (
                f"channels first (N, C, T): {chans} of {b:,} steps, as audio and Conv1d take "
                "them; the last axis is too long to hold channels (--channel-axis none reads "
                "the samples without channels)"
            )
        elif a == b and a >= 8:
            axis = None
            reason = (
                f"square {a}x{b} samples read as one-channel images (--channel-axis -1 reads them "
                f"as sequences of {b} features)"
            )
        else:
            axis = 1
            reason = (
                f"read as sequences of {a} steps with {b} features, channel axis -1 "
                "(--channel-axis none reads them as one-channel images)"
            )
    elif ndim == 3 and shape[0] > 4 and shape[2] in (1, 3, 4):
        axis = 2
        reason = (
            f"channels last (N, H, W, C) with {shape[2]} channels: the last axis is small and "
            "axis 1 is not (pass --channel-axis 1 for channels first)"
        )
    else:
        axis, reason = 0, "channel axis 1, as in (N, C, H, W)"
    rest = ndim - (axis is not None)
    if axis is None:
        kind = "image" if ndim == 2 else "other"
    else:
        kind = {2: "image", 1: "sequence"}.get(rest, "other")
    layout = Layout(shape, dtype, axis, kind, reason)
    if layout.n_channels > MAX_CHANNELS:
        raise UsageError(
            f"inputs of shape (N, {', '.join(map(str, shape))}) would have "
            f"{layout.n_channels:,} channels on axis {(axis or 0) + 1}; pass the channel axis with "
            "--channel-axis K (Python: channel_axis=K), or 'none' to read the samples without "
            "channels"
        )
    return layout
