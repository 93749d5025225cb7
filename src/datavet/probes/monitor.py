"""GradientMonitor: gradient norms in a real training loop, with the spike and non-finite rules."""

from __future__ import annotations

import math
import statistics
from collections import deque
from collections.abc import Mapping

from datavet.errors import UsageError
from datavet.findings import Severity
from datavet.framework import run_rules
from datavet.probes.base import Probe

MAX_CURVE_POINTS = 400
MAX_LAYER_SNAPSHOTS = 12
MAX_LISTED = 5


class GradientSpike(Probe):
    """Training steps whose gradient norm is far above the recent median.

    **What it checks**
    Read from a :class:`datavet.GradientMonitor` that recorded the global gradient norm (the L2
    norm over every parameter's gradient) at each step of your training loop. A step is flagged
    when its norm exceeds ``factor`` times the median of the last ``window`` normal steps
    (finite and not themselves flagged), once ``min_history`` such steps exist. Non-finite norms
    are handled first (M012), never compared: ``nan > 1000`` is False, which is how other tools
    call an all-NaN run "healthy".

    **Why it matters**
    Divergence shows in the gradient norm before the loss: a spike is a batch with outliers or
    bad labels, a learning rate too high for the current curvature, or the start of a blow-up.
    A long run logs far more steps than anyone reads; flagging the few that matter makes the log
    usable.

    **How to fix**
    Look at the batches of the flagged steps (outliers, corrupt samples); clip gradients
    (``torch.nn.utils.clip_grad_norm_``); lower the learning rate or add warmup; with mixed
    precision, check the loss scaler.
    """

    code = "M011"
    name = "gradient-spike"
    severity = Severity.WARNING
    summary = "steps whose gradient norm exceeds a multiple of the recent median"
    thresholds = {"window": 50, "factor": 10.0, "min_history": 10}
    needs = "monitor"

    def check(self, ctx: GradientMonitor):
        return ctx._spike_findings(self)


class NonFiniteStep(Probe):
    """The first training step whose loss or gradient is NaN or inf.

    **What it checks**
    Read from a :class:`datavet.GradientMonitor`: the first step at which the loss passed to
    ``monitor.step(model, loss=...)`` or the global gradient norm is NaN or inf, with the
    parameters whose gradients were non-finite at that step, and how many steps were non-finite
    in all.

    **Why it matters**
    After one non-finite update the weights are NaN and every later step is wasted; the step
    number tells you which batch to replay. Where it started (forward or backward, which module,
    which sample) is what ``datavet.probe`` on that batch answers (M004, M005).

    **How to fix**
    Replay the batch of the named step through ``datavet.probe``; lower the learning rate, clip
    gradients, protect ``log``/``sqrt``/division against 0, and check the data (V001, V002).
    """

    code = "M012"
    name = "nonfinite-training-step"
    severity = Severity.ERROR
    summary = "first training step with a NaN/inf loss or gradient"
    thresholds = {}
    needs = "monitor"

    def check(self, ctx: GradientMonitor):
        return ctx._nonfinite_findings(self)


class ZeroGradientLayer(Probe):
    """Parameters whose gradient is zero (or missing) at every step the monitor looked at.

    **What it checks**
    Read from a :class:`datavet.GradientMonitor`: the per-parameter gradient norms it records
    every ``layer_every`` steps. A trainable parameter whose norm is exactly 0 at every one of
    at least ``min_snapshots`` (2) snapshots, or that never had a gradient at any recorded step,
    is named, with its share of the trainable weights.

    **Why it matters**
    A layer whose gradient stays at 0 does not train: a detached path, a ReLU layer that died
    (every unit outputs 0), an embedding row never looked up, a branch the loss never reaches.
    The loss goes down anyway (the other layers learn), so nothing in the curve says so; the
    gradient norms do, and nobody reads per-layer norms of a long run by hand.

    **How to fix**
    For a detached or disconnected parameter: remove the ``.detach()``/``no_grad()``/``.data``
    on its path (``datavet probe``, M015, names it on one batch). For a dead ReLU layer: a lower
    learning rate, Kaiming initialisation, LeakyReLU/GELU (M007 reads the activations).
    """

    code = "M018"
    name = "zero-gradient-layer"
    severity = Severity.WARNING
    summary = "parameters whose gradient stays at zero (or missing) during training"
    thresholds = {"min_snapshots": 2}
    needs = "monitor"

    def check(self, ctx: GradientMonitor):
        return ctx._zero_findings(self)


def _positive_int(name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise UsageError(f"GradientMonitor: {name} must be a positive integer, not {value!r}")
    return value


class GradientMonitor:
    """Record gradient norms in a training loop and flag spikes and the first non-finite step.

    Call :meth:`step` after ``loss.backward()`` (before ``optimizer.step()`` or gradient
    clipping, to see the raw gradients). The global gradient norm is recorded every step, the
    per-parameter norms every ``layer_every`` steps. :meth:`report` returns a
    :class:`datavet.Report` with rules M011 (gradient spikes), M012 (first non-finite step) and
    M018 (parameters whose gradient stays at zero).

    Parameters
    ----------
    window : int
        How many recent normal steps the median is taken over.
    factor : float
        A step is a spike when its norm exceeds ``factor`` times that median.
    min_history : int
        Normal steps needed before any step can be flagged.
    layer_every : int
        Record per-parameter norms every this many steps (and at the first non-finite step).
    sync_every : int
        Read the norms back from the device every this many steps (1: every step). On a GPU a
        larger value avoids a synchronisation per step; flags are then set in batches, with the
        exact step numbers.

    Examples
    --------
    >>> import torch, datavet
    >>> model = torch.nn.Linear(4, 1)
    >>> opt = torch.optim.SGD(model.parameters(), lr=0.1)
    >>> monitor = datavet.GradientMonitor(window=20, factor=10)
    >>> for _ in range(30):
    ...     loss = model(torch.randn(8, 4)).pow(2).mean()
    ...     opt.zero_grad()
    ...     loss.backward()
    ...     monitor.step(model, loss=loss)
    ...     opt.step()
    >>> monitor.steps, monitor.spikes, monitor.first_nonfinite
    (30, [], None)
    """

    def __init__(
        self,
        *,
        window: int = int(GradientSpike.thresholds["window"]),
        factor: float = float(GradientSpike.thresholds["factor"]),
        min_history: int = int(GradientSpike.thresholds["min_history"]),
        layer_every: int = 100,
        sync_every: int = 1,
    ) -> None:
        self.window = _positive_int("window", window)
        self.min_history = _positive_int("min_history", min_history)
        self.layer_every = _positive_int("layer_every", layer_every)
        self.sync_every = _positive_int("sync_every", sync_every)
        if isinstance(factor, bool) or not isinstance(factor, (int, float)) or not factor > 1:
            raise UsageError(f"GradientMonitor: factor must be a number above 1, not {factor!r}")
        self.factor = float(factor)
        if self.min_history > self.window:
            raise UsageError("GradientMonitor: min_history cannot exceed window")
        self.norms: list[float] = []  # the global gradient norm of every step, in order
        self.losses: list[float | None] = []
        self.step_numbers: list[int] = []
        self._spikes: list[dict] = []
        self._nonfinite: list[int] = []
        self._first_nonfinite: dict | None = None
        self._layers: list[tuple[int, dict[str, float]]] = []
        self._recent: deque[float] = deque(maxlen=self.window)
        self._pending: list[tuple] = []
        self._names: tuple[str, ...] = ()
        self._count = 0
        self._model = None
        self._params: list = []
        self._trainable: dict[str, int] = {}  # trainable parameter -> number of elements
        self._with_grad: set[str] = set()  # parameters that had a gradient at some step

    # -- recording -----------------------------------------------------------------------------

    def step(self, model, loss=None, *, step: int | None = None) -> None:
        """Record the gradients now in ``model`` (after ``backward()``); ``loss`` optional.

        ``step`` labels the step (default: how many steps were recorded before).
        """
        import torch

        if self._model is not model or self._count % self.layer_every == 0:
            # named_parameters() walks every module: cache it, refreshed at each layer snapshot
            self._model, self._params = model, list(model.named_parameters())
            self._trainable = {n: p.numel() for n, p in self._params if p.requires_grad}
        names, grads = [], []
        for n, p in self._params:
            if p.grad is not None:
                names.append(n)
                grads.append(p.grad)
        if not grads:
            raise UsageError(
                "GradientMonitor.step: no parameter has a gradient; call it after "
                "loss.backward() and before optimizer.zero_grad()"
            )
        names = tuple(names)
        if names != self._names:
            self._names = names  # one shared tuple while the set of parameters stays the same
            self._with_grad.update(names)
        with torch.no_grad():
            per = _norms(torch, grads)
            total = torch.linalg.vector_norm(per)
        label = self._count if step is None else int(step)
        if isinstance(loss, torch.Tensor):
            loss = loss.detach()
        self._pending.append((label, total, per, self._names, loss))
        self._count += 1
        if len(self._pending) >= self.sync_every:
            self._flush()

    def _flush(self) -> None:
        if not self._pending:
            return
        import torch

        pending, self._pending = self._pending, []
        totals = torch.stack([p[1].float().cpu() for p in pending]).tolist()
        for (label, _, per, names, loss), norm in zip(pending, totals):
            loss_value = None
            if loss is not None:
                loss_value = float(loss)
            self.step_numbers.append(label)
            self.norms.append(norm)
            self.losses.append(loss_value)
            index = len(self.norms) - 1
            bad_loss = loss_value is not None and not math.isfinite(loss_value)
            if not math.isfinite(norm) or bad_loss:  # non-finite first: nan > x is False
                self._nonfinite.append(label)
                if self._first_nonfinite is None:
                    values = per.float().cpu().tolist()
                    bad = [n for n, v in zip(names, values) if not math.isfinite(v)]
                    self._first_nonfinite = {
                        "step": label,
                        "loss": loss_value,
                        "norm": norm,
                        # JSON has no NaN (null): the text keeps what the value was
                        "loss_text": None if loss_value is None else str(loss_value),
                        "norm_text": str(norm),
                        "loss_finite": not bad_loss,
                        "gradient_finite": math.isfinite(norm),
                        "parameters": bad,
                    }
                    self._layers.append((label, dict(zip(names, values))))
                continue
            if index % self.layer_every == 0:
                self._layers.append((label, dict(zip(names, per.float().cpu().tolist()))))
            if len(self._recent) >= self.min_history:
                median = statistics.median(self._recent)
                if median > 0 and norm > self.factor * median:
                    self._spikes.append(
                        {
                            "step": label,
                            "index": index,
                            "norm": norm,
                            "median": median,
                            "factor": norm / median,
                        }
                    )
                    continue  # a spike is not a normal value: it stays out of the median
            self._recent.append(norm)

    # -- results ---------------------------------------------------------------------------------

    @property
    def steps(self) -> int:
        """How many steps were recorded."""
        return self._count

    @property
    def spikes(self) -> list[int]:
        """The flagged steps, in order."""
        self._flush()
        return [s["step"] for s in self._spikes]

    @property
    def first_nonfinite(self) -> dict | None:
        """``{"step", "loss", "norm", "parameters", ...}`` of the first non-finite step, or None."""
        self._flush()
        return self._first_nonfinite

    def to_dict(self) -> dict:
        self._flush()
        n = len(self.norms)
        keep = (
            set(range(n))
            if n <= MAX_CURVE_POINTS
            else {round(i * (n - 1) / (MAX_CURVE_POINTS - 1)) for i in range(MAX_CURVE_POINTS)}
        )
        keep |= {s["index"] for s in self._spikes}
        idx = sorted(keep)
        snaps = self._layers
        if len(snaps) > MAX_LAYER_SNAPSHOTS:  # first, last and evenly spaced ones between
            pick = {
                round(i * (len(snaps) - 1) / (MAX_LAYER_SNAPSHOTS - 1))
                for i in range(MAX_LAYER_SNAPSHOTS)
            }
            snaps = [snaps[i] for i in sorted(pick)]
        names = list(dict.fromkeys(k for _, d in snaps for k in d))
        return {
            "steps": self._count,
            "window": self.window,
            "factor": self.factor,
            "min_history": self.min_history,
            "layer_every": self.layer_every,
            "curve": [[self.step_numbers[i], self.norms[i]] for i in idx],
            "loss_curve": [
                [self.step_numbers[i], self.losses[i]] for i in idx if self.losses[i] is not None
            ],
            "spikes": [{k: v for k, v in s.items() if k != "index"} for s in self._spikes],
            "nonfinite_steps": len(self._nonfinite),
            "first_nonfinite": self._first_nonfinite,
            "layers": {
                "steps": [s for s, _ in snaps],
                "rows": [{"name": k, "norms": [d.get(k) for _, d in snaps]} for k in names],
            },
        }

    def report(
        self,
        *,
        fail_on: str | Severity = "error",
        severity: Mapping[str, str | Severity] | None = None,
    ):
        """A :class:`datavet.Report` with M011, M012 and M018 (findings, outcomes) and the norm
        curve."""
        from datavet.report import Report

        self._flush()
        levels = {k.strip().upper(): Severity.parse(v) for k, v in (severity or {}).items()}
        spike_rule = GradientSpike(
            severity=levels.get(GradientSpike.code),
            thresholds={
                "window": self.window,
                "factor": self.factor,
                "min_history": self.min_history,
            },
        )
        nan_rule = NonFiniteStep(severity=levels.get(NonFiniteStep.code))
        zero_rule = ZeroGradientLayer(severity=levels.get(ZeroGradientLayer.code))
        findings, outcomes = run_rules([spike_rule, nan_rule, zero_rule], self)
        return Report(
            findings=findings,
            outcomes=outcomes,
            datasets={},
            fail_on=Severity.parse(fail_on),
            notes=[f"gradient monitor: {self._count:,} training steps recorded"],
            probes={
                "kind": "monitor",
                "model": None,
                "checks": self._headlines(),
                "layers": None,
                "monitor": self.to_dict(),
            },
            duration_s=None,
        )

    def unmet(self, need: str) -> str | None:
        """The monitor is the context its rules read: nothing to read before a step."""
        if need == "monitor" and not self._count:
            return "no training step was recorded"
        return None

    def _headlines(self) -> dict:
        spikes, first = self.spikes, self._first_nonfinite
        listed = ", ".join(str(s) for s in spikes[:MAX_LISTED])
        more = f" (+{len(spikes) - MAX_LISTED} more)" if len(spikes) > MAX_LISTED else ""
        return {
            "M011": {
                "headline": f"{len(spikes)} spike(s): steps {listed}{more}"
                if spikes
                else f"no spike in {self._count:,} steps"
            },
            "M012": {
                "headline": f"first at step {first['step']} ({len(self._nonfinite):,} in all)"
                if first
                else "every step finite"
            },
            "M018": {"headline": f"{len(self.zero_gradient())} parameter(s) without gradient"},
        }

    def _spike_findings(self, rule: GradientSpike) -> list:
        spikes = self._spikes
        if not spikes:
            return []
        listed = ", ".join(
            f"step {s['step']} ({s['norm']:.3g}, {s['factor']:.0f}x the median {s['median']:.3g})"
            for s in spikes[:MAX_LISTED]
        )
        more = f" (+{len(spikes) - MAX_LISTED} more)" if len(spikes) > MAX_LISTED else ""
        worst = max(spikes, key=lambda s: s["factor"])
        return [
            rule.finding(
                f"The gradient norm exceeded {self.factor:g}x the median of the previous "
                f"{self.window} normal steps at {len(spikes)} of {self._count:,} steps: "
                f"{listed}{more}.",
                n_affected=len(spikes),
                examples=tuple(s["step"] for s in spikes[:20]),
                metrics={
                    "spikes": len(spikes),
                    "first_step": spikes[0]["step"],
                    "max_factor": worst["factor"],
                    "max_norm": max(s["norm"] for s in spikes),
                },
                hint="inspect those steps' batches; clip gradients or lower the learning rate",
            )
        ]

    def zero_gradient(self) -> list[str]:
        """Trainable parameters with no gradient at any recorded step, or a zero norm at every
        layer snapshot (at least two)."""
        self._flush()
        never = [n for n in self._trainable if n not in self._with_grad]
        snaps = [d for _, d in self._layers]
        zero = []
        if len(snaps) >= int(ZeroGradientLayer.thresholds["min_snapshots"]):
            zero = [
                n
                for n in self._trainable
                if n in self._with_grad and all(d.get(n, 0.0) == 0.0 for d in snaps)
            ]
        return never + zero

    def _zero_findings(self, rule: ZeroGradientLayer) -> list:
        names = self.zero_gradient()
        if not names:
            return []
        total = sum(self._trainable.values()) or 1
        share = sum(self._trainable.get(n, 0) for n in names) / total
        listed = ", ".join(names[:MAX_LISTED]) + (
            f" (+{len(names) - MAX_LISTED} more)" if len(names) > MAX_LISTED else ""
        )
        return [
            rule.finding(
                f"{len(names)} trainable parameter(s) had a zero or missing gradient at every "
                f"step the monitor looked at ({len(self._layers)} snapshot(s) of "
                f"{self._count:,} steps): {listed}; {share:.1%} of the trainable weights are not "
                "training.",
                columns=tuple(names[:20]),
                n_affected=len(names),
                metrics={"parameters": len(names), "share": share},
                hint="look for a detach/no_grad/.data on their path (datavet probe M015) or a "
                "dead ReLU layer (M007)",
            )
        ]

    def _nonfinite_findings(self, rule: NonFiniteStep) -> list:
        first = self._first_nonfinite
        if first is None:
            return []
        what = []
        if not first["loss_finite"]:
            what.append(f"loss {first['loss']}")
        if not first["gradient_finite"]:
            params = first["parameters"]
            named = ", ".join(params[:MAX_LISTED]) + (
                f" (+{len(params) - MAX_LISTED} more)" if len(params) > MAX_LISTED else ""
            )
            what.append(
                f"gradient norm {first['norm']} (in {named})"
                if params
                else f"gradient norm {first['norm']}"
            )
        total = len(self._nonfinite)
        return [
            rule.finding(
                f"Step {first['step']} is the first non-finite training step: "
                f"{' and '.join(what)}; {total:,} of {self._count:,} recorded steps were "
                "non-finite.",
                columns=tuple(first["parameters"][:20]),
                n_affected=total,
                examples=(first["step"],),
                metrics={"first_step": first["step"], "nonfinite_steps": total},
                hint="replay that step's batch through datavet.probe (M004/M005); lower the lr "
                "or clip gradients",
            )
        ]


def _norms(torch, grads: list):
    """Each gradient's L2 norm, as one float32 vector on the first gradient's device."""
    device, dtype = grads[0].device, grads[0].dtype
    uniform = dtype == torch.float32 and all(g.device == device and g.dtype == dtype for g in grads)
    foreach = getattr(torch, "_foreach_norm", None)
    if uniform and foreach is not None:  # the common case: one fused kernel, as clip_grad_norm_
        return torch.stack(foreach(grads))
    # mixed devices or dtypes; half-precision norms would overflow at 65504
    return torch.stack([torch.linalg.vector_norm(g, dtype=torch.float32).to(device) for g in grads])
