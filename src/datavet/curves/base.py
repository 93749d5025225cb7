"""What every curve rule is, and the context it reads.

A curve rule is the training-log twin of an auditor: a class with a stable code (``C001``), a
kebab-case name, a default severity, a summary, its thresholds, a docstring in three sections
(``datavet rule C001`` prints it) and ``causes``: the usual causes of its symptom in the source
chapter's order (``datavet.curves.causes``), each with what to look for in this case. It returns
findings; it never prints or renders.

For curve findings the Finding fields read as follows: ``columns`` holds the log's column names
the finding is about, ``examples`` holds training steps (when the steps are whole numbers; row
positions otherwise), ``split`` is None.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from datavet.curves import signals
from datavet.curves.source import CurveLog
from datavet.findings import Severity
from datavet.framework import Rule, Skip

__all__ = ["CurveContext", "CurveRule", "Skip", "step_text"]

MAX_EXAMPLES = 20


class CurveRule(Rule):
    """A curve rule (C rule): :class:`datavet.framework.Rule` over a :class:`CurveContext`, plus
    ``causes`` (the usual causes of its symptom, in the order to check them) and :meth:`mark`
    (a flagged step for the report's charts)."""

    severity: ClassVar[Severity]
    needs: ClassVar[tuple[str, ...]] = ("training_log",)
    causes: ClassVar[tuple[tuple[str, str], ...]] = ()

    def mark(self, series: str, step: float, label: str) -> None:
        self.marks.append({"code": self.code, "series": series, "step": step, "label": label})


def step_text(step: float) -> str:
    """'step 1,200' / 'step 3.5'."""
    if step == int(step):
        return f"{int(step):,}"
    return f"{step:g}"


@dataclass
class CurveContext:
    """The log and what the user told us about the task. Read-only for rules."""

    log: CurveLog
    classes: int | None = None
    prior: tuple[float, ...] | None = None
    options: dict[str, dict] = field(default_factory=dict)  # code -> that rule's thresholds
    shared: dict = field(default_factory=dict)

    # -- what the task says ------------------------------------------------------------------

    @property
    def no_learning_level(self) -> tuple[float, str] | None:
        """(loss, why) of a network that predicts the prior: H(prior), or ln C."""
        if self.prior is not None:
            p = np.asarray(self.prior, float)
            p = p[p > 0]
            return float(-(p * np.log(p)).sum()), "the prior entropy"
        if self.classes is not None:
            return math.log(self.classes), f"ln {self.classes}"
        return None

    @property
    def unit(self) -> str:
        """What the x axis counts, for messages: "step", "epoch" or "row"."""
        return self.log.step_from

    def at(self, step: float) -> str:
        """'step 1,200' / 'epoch 17' / 'row 3'."""
        return f"{self.unit} {step_text(step)}"

    # -- series ------------------------------------------------------------------------------

    def column(self, name: str) -> str:
        return self.log.columns.get(name, name)

    def require(self, name: str) -> None:
        if not self.log.has(name):
            raise Skip(f"the log has no {name} column (map one with --column {name}=NAME)")

    def primary(self) -> str:
        """The loss the learning rules read: train_loss, else val_loss."""
        if self.log.has("train_loss"):
            return "train_loss"
        if self.log.has("val_loss"):
            return "val_loss"
        raise Skip("the log has no loss column (map one with --column train_loss=NAME)")

    def points(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """(steps, values) where ``name`` was logged; values may be non-finite."""
        _, steps, values = self.log.points(name)
        return steps, values

    def example(self, steps: Iterable[float]) -> tuple[int, ...]:
        """Finding examples: the steps themselves when they are whole numbers >= 0."""
        steps = list(steps)[:MAX_EXAMPLES]
        if self.log.integer_steps:
            return tuple(int(s) for s in steps)
        index = {float(s): i for i, s in enumerate(self.log.steps)}
        return tuple(index[float(s)] for s in steps if float(s) in index)

    def cached(self, key: str, compute: Callable[[], Any]) -> Any:
        if key not in self.shared:
            self.shared[key] = compute()
        return self.shared[key]

    # -- shared analyses ---------------------------------------------------------------------

    def first_nonfinite(self) -> dict[str, tuple[float, float]]:
        """series -> (step, value) of its first NaN/inf, for the losses and the gradient norm."""

        def compute():
            out = {}
            for name in ("train_loss", "val_loss", "grad_norm"):
                steps, values = self.points(name)
                bad = np.flatnonzero(~np.isfinite(values))
                if len(bad):
                    out[name] = (float(steps[bad[0]]), float(values[bad[0]]))
            return out

        return self.cached("nonfinite", compute)

    def recovered(self, name: str) -> bool:
        """Whether the run got over the NaN/inf values of the loss ``name``: at least C001's
        ``lookback`` (20) values follow the last one, and the first of them sit no higher than
        the highest of the ``lookback`` values before the first one (the loss picks up where it
        left off). Skipped or guarded steps do this: mixed-precision loss scaling, ``if not
        torch.isfinite(loss): continue``."""

        def compute():
            _, values = self.points(name)
            bad = np.flatnonzero(~np.isfinite(values))
            lookback = int(self.options.get("C001", {}).get("lookback", 20))
            if not len(bad) or bad[0] == 0 or len(values) - 1 - bad[-1] < lookback:
                return False
            before = values[: bad[0]][-lookback:]
            return signals.level(values[bad[-1] + 1 :][:5]) <= float(np.max(before))

        return self.cached(f"recovered:{name}", compute)

    def divergence(self) -> tuple[str, np.ndarray, np.ndarray, signals.Divergence] | None:
        """The primary loss's first sustained rise (C002's thresholds), with its series."""

        def compute():
            try:
                name = self.primary()
            except Skip:
                return None
            steps, values = self.points(name)
            if self.recovered(name):  # isolated NaN/inf steps: the climb reads the rest
                keep = np.isfinite(values)
                steps, values = steps[keep], values[keep]
            opts = self.options.get("C002", {})
            fin = values[np.isfinite(values)]
            if len(fin) and fin.min() <= 0:  # no ratio to a level: differences in its descent
                d = signals.rise_from_best(
                    values,
                    window=int(opts.get("window", 10)),
                    share=opts.get("rise_share", 0.5),
                )
                return None if d is None else (name, steps, values, d)
            climb = signals.divergence(
                values,
                factor=opts.get("factor", 2.0),
                window=int(opts.get("window", 10)),
                ref_window=int(opts.get("ref_window", 20)),
                min_climb=opts.get("min_climb", 0.25),
            )
            blowup = signals.blowup(
                values,
                factor=opts.get("factor", 2.0),
                window=int(opts.get("window", 10)),
                min_high=int(opts.get("min_high", 2)),
                max_progress=opts.get("max_progress", 0.25),
                start_margin=opts.get("start_margin", 0.25),
            )
            # a slow climb (1 -> 3 over hundreds of steps) never doubles its recent level: the
            # training loss against its lowest level (a validation loss that climbs is C006's)
            if climb is None and name == "train_loss":
                slow = signals.rise_from_best(
                    values,
                    window=int(opts.get("window", 10)),
                    share=opts.get("rise_share", 0.5),
                    min_ratio=opts.get("factor", 2.0),
                )
                # it fell first, then climbed back over its start: the turn is the onset
                if slow is not None and (blowup is None or slow.onset < blowup.onset):
                    return name, steps, values, slow
            found = [d for d in (climb, blowup) if d is not None]
            if not found:
                return None
            # both: the one that began first (a climb over the recent level wins a tie)
            return name, steps, values, min(found, key=lambda d: d.onset)

        return self.cached("divergence", compute)

    def spike_options(self) -> dict:
        """C009's spike thresholds (C001 applies the same rule)."""
        opts = self.options.get("C009", {})
        return {
            "factor": opts.get("factor", signals.SPIKE_FACTOR),
            "window": int(opts.get("window", signals.SPIKE_WINDOW)),
            "min_history": int(opts.get("min_history", signals.SPIKE_MIN_HISTORY)),
        }

    def spike_before(self, step: float, lookback: int) -> tuple[float, float, float] | None:
        """(step, value, ratio) of the largest gradient-norm spike among the ``lookback`` logged
        norms before ``step`` (C009's rule), or None."""
        if not self.log.has("grad_norm"):
            return None
        steps, g = self.points("grad_norm")
        keep = steps < step
        steps, g = steps[keep], g[keep]
        recent = [
            s for s in signals.spikes(g, **self.spike_options()) if s.index >= len(g) - lookback
        ]
        if not recent:
            return None
        s = max(recent, key=lambda s: s.ratio)
        return float(steps[s.index]), s.value, s.ratio

    def end_step(self) -> float:
        """Where the readable part of the run ends: the first non-finite loss or the divergence
        onset, whichever comes first (inf when neither); NaN/inf losses the run recovered from
        (:meth:`recovered`) do not end it. The rules about learning, plateaus,
        generalisation and spikes read only the steps before it."""
        ends = [
            s
            for k, (s, _) in self.first_nonfinite().items()
            if k != "grad_norm" and not self.recovered(k)
        ]
        div = self.divergence()
        if div is not None:
            name, steps, _, d = div
            ends.append(float(steps[d.onset]))
        return min(ends) if ends else math.inf

    def segment(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """(steps, values): the finite values of ``name`` logged before :meth:`end_step`."""
        steps, values = self.points(name)
        keep = (steps < self.end_step()) & np.isfinite(values)
        return steps[keep], values[keep]
