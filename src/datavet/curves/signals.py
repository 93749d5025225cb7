"""Numeric building blocks of the curve rules: robust levels, the gradient-norm spike rule, the
divergence detector. Plain NumPy on 1-d arrays; no pandas, no findings."""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass

import numpy as np

from datavet.probes.monitor import GradientSpike


def level(values: np.ndarray) -> float:
    """The robust level of a stretch of losses: the median of its finite values (NaN if none)."""
    v = values[np.isfinite(values)]
    return float(np.median(v)) if len(v) else math.nan


def mad(values: np.ndarray) -> float:
    """Median absolute deviation, scaled to a standard deviation for normal noise."""
    v = values[np.isfinite(values)]
    if len(v) == 0:
        return math.nan
    return float(1.4826 * np.median(np.abs(v - np.median(v))))


def head_tail(values: np.ndarray, share: float = 0.1, at_least: int = 5) -> tuple[float, float]:
    """Levels of the first and last ``share`` of the finite values (at least ``at_least`` each)."""
    v = values[np.isfinite(values)]
    k = max(at_least, int(round(share * len(v))))
    return level(v[:k]), level(v[-k:])


@dataclass(frozen=True)
class Spike:
    index: int  # position in the series
    value: float
    median: float  # the median of the recent normal values it is compared with
    ratio: float


# GradientMonitor's thresholds (M011): one spike rule for live monitoring and for logs.
SPIKE_FACTOR = float(GradientSpike.thresholds["factor"])
SPIKE_WINDOW = int(GradientSpike.thresholds["window"])
SPIKE_MIN_HISTORY = int(GradientSpike.thresholds["min_history"])


def spikes(
    values: np.ndarray,
    *,
    factor: float = SPIKE_FACTOR,
    window: int = SPIKE_WINDOW,
    min_history: int = SPIKE_MIN_HISTORY,
) -> list[Spike]:
    """The gradient-norm spike rule of :class:`datavet.GradientMonitor` (M011), on a logged
    series: a value above ``factor`` x the median of the last ``window`` normal (finite,
    non-spike) values, once ``min_history`` of them are known.

    Spikes stay out of the history, so a burst of them does not raise its own bar; NaN and inf
    are neither spikes nor history (the non-finite rule reports them). A test feeds the same
    norms through the monitor and through this function and expects the same steps.
    """
    history: list[float] = []  # the recent normal values in arrival order
    ordered: list[float] = []  # the same values, sorted, for the median
    found = []
    for i, v in enumerate(np.asarray(values, float)):
        if not math.isfinite(v):
            continue
        if len(history) >= min_history:
            n = len(ordered)
            med = ordered[n // 2] if n % 2 else 0.5 * (ordered[n // 2 - 1] + ordered[n // 2])
            if med > 0 and v > factor * med:
                found.append(Spike(i, float(v), float(med), float(v) / med))  # no numpy overflow
                continue
        history.append(float(v))
        bisect.insort(ordered, float(v))
        if len(history) > window:
            old = history.pop(0)
            del ordered[bisect.bisect_left(ordered, old)]
    return found


@dataclass(frozen=True)
class Divergence:
    detect: int  # first position clearly above the band (loss >= factor x reference)
    onset: int  # where the climb began: the first position above the normal band
    reference: float  # the recent level before it
    peak: int  # highest finite value after onset (or the first non-finite one)
    peak_value: float
    nonfinite: int | None  # first non-finite position after onset, if any
    # "climb": rose over its recent level and stayed up; "no_recovery": rose over its starting
    # level (a run too hot from its first updates) and never got back below it; "rise": a loss
    # that takes values <= 0 rose from its lowest level (reference) by a share of its descent;
    # "slow": a loss > 0 did so and reached a factor x its lowest level, too slowly for "climb"
    kind: str = "climb"
    # no_recovery: the level of the last values; rise: the descent before it (the unit)
    end_level: float = math.nan


def divergence(
    values: np.ndarray,
    *,
    factor: float = 2.0,
    window: int = 10,
    ref_window: int = 20,
    min_climb: float = 0.25,
) -> Divergence | None:
    """The first sustained rise of a loss by ``factor`` over its recent level.

    At position t the reference is the median of the (up to) ``ref_window`` finite values
    before it, and the normal band is the reference (or the recent level, when lower) plus
    three robust standard deviations of the step-to-step noise (at least 10% above it). A rise
    counts when the value at t is at least ``factor`` x the reference, climbs at least
    ``min_climb`` of the way from the reference back to the starting level (so a near-zero loss
    that doubles is not a divergence), and the loss does not come back into the band within the
    next ``window`` values (or turns NaN/inf there): one bad batch is a spike, a short blow-up
    that recovers is not a divergence, and a jump from normal straight to NaN is a non-finite
    step, not a climb. The onset walks back from t over the values above the band: the first
    step of the climb.
    """
    v = np.asarray(values, float)
    fin = np.isfinite(v)
    if fin.sum() < 2:
        return None
    import pandas as pd

    start = level(v[fin][:5])
    high_v = np.where(fin, v, np.inf)  # NaN and inf count as high
    # the median of the finite values in the ref_window before each position
    refs = (
        pd.Series(np.where(fin, v, np.nan))
        .rolling(ref_window, min_periods=1)
        .median()
        .shift(1)
        .to_numpy()
    )
    # a finite climb: a jump straight from normal to NaN is the non-finite rule's (C001)
    with np.errstate(invalid="ignore"):
        candidates = np.flatnonzero(fin & (refs > 0) & (v >= factor * refs))
    for t in candidates:
        t = int(t)
        hist = v[max(0, t - ref_window) : t]
        hist = hist[np.isfinite(hist)]
        ref = float(refs[t])
        if v[t] - ref < min_climb * max(start - ref, 0.0):
            continue
        # the noise from step-to-step changes: a trend in the window does not widen the band
        spread = mad(np.diff(hist)) / math.sqrt(2) if len(hist) >= 4 else 0.0
        # a falling loss sits below the window's median: take the recent level when it is lower
        base = min(ref, float(np.median(hist[-5:])))
        band = max(base + 3 * spread, base * 1.1)
        ahead = high_v[t + 1 : t + 1 + window]
        if not np.isfinite(ahead).all():
            ahead = ahead[: int(np.flatnonzero(~np.isfinite(ahead))[0])]
            stays = bool((ahead > band).all())
        else:
            stays = len(ahead) >= min(window, 2) and bool((ahead > band).all())
        if not stays:
            continue
        onset = t
        while onset - 1 >= max(0, t - ref_window) and fin[onset - 1] and v[onset - 1] > band:
            onset -= 1
        after = v[onset:]
        bad = np.flatnonzero(~np.isfinite(after))
        first_bad = int(onset + bad[0]) if len(bad) else None
        upto = after[: bad[0]] if len(bad) else after
        if first_bad is not None:
            peak, peak_value = first_bad, float(v[first_bad])
        else:
            k = int(np.argmax(upto))
            peak, peak_value = onset + k, float(upto[k])
        return Divergence(t, onset, ref, peak, peak_value, first_bad)
    return None


def blowup(
    values: np.ndarray,
    *,
    factor: float = 2.0,
    window: int = 10,
    min_high: int = 2,
    max_progress: float = 0.25,
    start_margin: float = 0.25,
) -> Divergence | None:
    """A loss that climbs to ``factor`` x its starting level and never gets back below it: the
    divergence of a run whose learning rate is too high from its first updates.

    :func:`divergence` compares each value with the recent level; when the climb starts with
    the first updates the recent level is the climb itself, and a network killed by it (dead
    ReLUs: the loss falls back to the no-learning level and stays there) looks recovered. Here
    the reference is the starting loss (the median of the first three values, or the first one
    when the loss doubled within them). A blow-up is ``min_high`` (2) values at least
    ``factor`` x the start within ``window`` (10) consecutive values, after which the loss,
    smoothed over ``2 * window + 1`` values, never gets more than ``max_progress`` (25%) below
    the start, or turns NaN/inf: everything learned was lost, or nothing ever was. A blow-up
    that the run recovers from is not a divergence. The onset is the first value more than
    ``start_margin`` (25%) above the start since the loss was last well below it.
    """
    v = np.asarray(values, float)
    fin = np.isfinite(v)
    bad = np.flatnonzero(~fin)
    first_bad = int(bad[0]) if len(bad) else None
    readable = v[:first_bad] if first_bad is not None else v
    if len(readable) < 3:
        return None
    med3 = float(np.median(readable[:3]))
    start = min(float(readable[0]), med3) if med3 >= factor * readable[0] else med3
    if not start > 0:
        return None
    high = readable >= factor * start
    detect = None
    for t in np.flatnonzero(high):
        t = int(t)
        if high[t : t + window].sum() >= min_high:
            detect = t
            break
    if detect is None:
        return None
    floor = (1 - max_progress) * start
    after = readable[detect:]
    if len(after) > window:
        smooth = rolling_median(after, 2 * window + 1)
        # the shrinking windows at the end need at least ``window`` values: not one lucky batch
        if len(after) > 2 * window:
            smooth = smooth[: len(after) - window]
        if np.nanmin(smooth) < floor:
            return None
    elif first_bad is None:
        return None  # too little of the run after the climb to say it never recovered
    before = rolling_median(readable[: detect + 1], 9)
    learned = np.flatnonzero(before < floor)
    first = int(learned[-1]) + 1 if len(learned) else 0
    above = np.flatnonzero(readable[first : detect + 1] > (1 + start_margin) * start)
    onset = first + int(above[0]) if len(above) else detect
    if first_bad is not None:
        peak, peak_value = first_bad, float(v[first_bad])
    else:
        k = int(np.argmax(readable[onset:]))
        peak, peak_value = onset + k, float(readable[onset + k])
    tail = readable[-max(5, len(readable) // 10) :]
    return Divergence(detect, onset, start, peak, peak_value, first_bad, "no_recovery", level(tail))


def rise_from_best(
    values: np.ndarray, *, window: int = 10, share: float = 0.5, min_ratio: float | None = None
) -> Divergence | None:
    """The divergence of a loss that takes values <= 0 (a Gaussian NLL, a flow, a negative
    ELBO), where a ratio to a level means nothing: differences in units of what the run
    learned.

    The loss is smoothed over ``2 * window + 1`` values; its descent is the starting level (the
    median of the first five values) less the lowest smoothed level. A divergence is a rise of
    the smoothed loss from that lowest level by at least ``share`` of the descent (and three
    robust standard deviations of the step-to-step noise) that never falls back below half that
    rise, over at least ``window`` values or up to a NaN/inf. The onset is the lowest value in
    the ``window`` values up to the last step where the smoothed loss was within that noise of
    its lowest level. A run that never fell measurably gives no unit, and no finding.

    ``min_ratio`` (a loss > 0, whose slow climb no recent level shows): the smoothed loss must
    also reach ``min_ratio`` x its lowest level, and comes back when it falls below halfway to
    that.
    """
    v = np.asarray(values, float)
    bad = np.flatnonzero(~np.isfinite(v))
    first_bad = int(bad[0]) if len(bad) else None
    readable = v[:first_bad] if first_bad is not None else v
    if len(readable) < 2 * window + 1:
        return None
    smooth = rolling_median(readable, 2 * window + 1)
    noise = mad(np.diff(readable)) / math.sqrt(2)
    b = int(np.argmin(smooth))
    best = float(smooth[b])
    descent = level(readable[:5]) - best
    if not descent > 3 * noise:
        return None
    need = max(share * descent, 3 * noise)
    if min_ratio is not None:
        if not best > 0:
            return None
        need = max(need, (min_ratio - 1) * best)
    high = np.flatnonzero(smooth[b:] >= best + need)
    if not len(high):
        return None
    detect = b + int(high[0])
    if np.any(smooth[detect:] < best + need / 2):
        return None  # it came back
    if first_bad is None and len(readable) - detect < window:
        return None  # too little of the run after the rise to say it stayed up
    near = b + int(np.flatnonzero(smooth[b : detect + 1] <= best + 3 * noise)[-1])
    # the smoothing rounds the turn: the lowest raw value in the window before it is the turn
    lo = max(b, near - window)
    onset = lo + int(np.argmin(readable[lo : near + 1]))
    if first_bad is not None:
        peak, peak_value = first_bad, float(v[first_bad])
    else:
        k = int(np.argmax(readable[onset:]))
        peak, peak_value = onset + k, float(readable[onset + k])
    kind = "rise" if min_ratio is None else "slow"
    return Divergence(detect, onset, best, peak, peak_value, first_bad, kind, descent)


def blocks(values: np.ndarray, n_blocks: int) -> np.ndarray:
    """Medians of ``n_blocks`` consecutive blocks of the finite values (minibatch noise out)."""
    v = values[np.isfinite(values)]
    if len(v) < n_blocks:
        return np.array([])
    return np.array([np.median(b) for b in np.array_split(v, n_blocks)])


def rolling_median(values: np.ndarray, k: int) -> np.ndarray:
    """Centred rolling median over finite values (window ``k``, shrinking at the ends)."""
    import pandas as pd

    v = np.asarray(values, float)
    v = np.where(np.isfinite(v), v, np.nan)
    return pd.Series(v).rolling(k, center=True, min_periods=1).median().to_numpy()


def wiggle(values: np.ndarray, k: int = 9) -> np.ndarray:
    """The step-to-step changes minus their local mean (centred, ``k`` wide): what is left of a
    smooth descent is ~0; a cycle or batch noise stays."""
    d = np.diff(np.asarray(values, float))
    d = d[np.isfinite(d)]
    if len(d) == 0:
        return d
    kernel = np.ones(k) / k
    padded = np.pad(d, k // 2, mode="edge")
    return d - np.convolve(padded, kernel, mode="valid")[: len(d)]


def periodicity(values: np.ndarray, max_lag: int = 10) -> tuple[float, int]:
    """(autocorrelation, lag) of the detrended step-to-step changes (:func:`wiggle`) at the
    shortest lag in 2..``max_lag`` within 0.05 of the highest. A loss that cycles with period
    k repeats its changes every k steps (close to 1 at lag k); minibatch noise does not (close
    to 0 at every lag from 2)."""
    d = wiggle(values)
    if len(d) < 8:
        return 0.0, 0
    d = d - d.mean()
    denom = float(np.dot(d, d))
    if denom <= 0:
        return 0.0, 0
    r = {}
    for k in range(2, min(max_lag, len(d) // 4) + 1):
        r[k] = float(np.dot(d[:-k], d[k:])) / denom * len(d) / (len(d) - k)
    if not r:
        return 0.0, 0
    best = max(r.values())
    if best <= 0:
        return 0.0, 0
    lag = min(k for k, v in r.items() if v >= best - 0.05)
    return r[lag], lag
