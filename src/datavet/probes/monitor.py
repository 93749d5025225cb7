"""GradientMonitor: gradient norms in a real training loop, with the spike and non-finite rules."""

from __future__ import annotations

import math
import statistics
from collections import deque
from collections.abc import Mapping

from datavet.errors import UsageError
from datavet.findings import Severity
from datavet.framework import run_rules
from datavet.probes.base import Probe, Skip

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


class UpdateRatioOutOfRange(Probe):
    """Parameters whose update is persistently far too large or far too small for their weights.

    **What it checks**
    Read from a :class:`datavet.GradientMonitor`: at every per-layer snapshot (every
    ``layer_every`` steps) the monitor keeps a copy of the weights, and at the next step it
    measures the update the optimizer made, ``||w_after - w_before|| / ||w_before||``, per
    parameter. With at least ``min_snapshots`` (3) measurements, a parameter whose median
    ratio is above ``max_update_ratio`` (0.1) or below ``min_update_ratio`` (1e-6, but above 0:
    a parameter
    that never moves is M018's) is named, with its figures. Parameters whose weights are all 0
    at a snapshot (biases at initialisation) have no ratio there.

    **Why it matters**
    A healthy update changes a weight by about 1e-3 of its size per step. At 1e-1 each step
    rewrites a tenth of the layer: the learning rate is too high for it, and it will oscillate
    or blow up. At 1e-6 the layer barely moves in a whole run: a learning rate too small, a
    vanishing gradient, or a weight scale so large the updates disappear in it. The global
    loss curve averages over layers and shows neither.

    **How to fix**
    Too large: lower the learning rate (or this group's), add warmup, or clip gradients. Too
    small: raise the learning rate, check the initialisation (M006/M007 read activations), or
    give that parameter group its own learning rate.
    """

    code = "M020"
    name = "update-ratio-out-of-range"
    severity = Severity.WARNING
    summary = "a parameter's update / weight ratio stays > 1e-1 or < 1e-6 (usual: ~1e-3)"
    thresholds = {"max_update_ratio": 0.1, "min_update_ratio": 1e-6, "min_snapshots": 3}
    needs = "monitor"

    def check(self, ctx: GradientMonitor):
        return ctx._ratio_findings(self)


class Fp16RangeLimits(Probe):
    """Activations or gradients of a float16 model approach float16's limits.

    **What it checks**
    Read from a :class:`datavet.GradientMonitor`. At each per-layer snapshot it records every
    parameter gradient's largest absolute value and, for float16 gradients, the share of the
    non-zero values below float16's smallest normal number (6.1e-5, where precision starts to
    go); with ``activations=True`` it also records the largest absolute output of every leaf
    module in the forward pass of that step (what Hugging Face's underflow/overflow debugger
    prints). When the model trains in float16 (float16 parameters, gradients or activations
    seen), it fires for an absolute value at or above ``max_abs`` (1e4; float16 overflows to
    inf at 65,504) or a subnormal share at or above ``max_subnormal`` (20%). In float32 or
    bfloat16 the figures are in the report and the rule is skipped.

    **Why it matters**
    float16 has a narrow range: a value of 1e4 is six-fold from becoming inf, and the next
    larger batch, learning rate or sequence crosses it (M004/M012 then report the NaN).
    Gradients below 6.1e-5 lose precision and below 6e-8 become 0. The module that crosses
    first is the one to fix, and a snapshot names it before the run fails.

    **How to fix**
    Overflow: keep that module in float32 (``torch.autocast(..., enabled=False)`` around it),
    scale its input down (normalisation, attention scaled by 1/sqrt(d)), or use bfloat16.
    Underflow: ``torch.amp.GradScaler`` (M019), or bfloat16.
    """

    code = "M021"
    name = "fp16-range-limits"
    severity = Severity.WARNING
    summary = "float16 activations/gradients near 65504 or below the smallest normal (6.1e-5)"
    thresholds = {"max_abs": 1e4, "max_subnormal": 0.2}
    needs = "monitor"

    def check(self, ctx: GradientMonitor):
        return ctx._range_findings(self)


FP16_MAX = 65504.0
FP16_MIN_NORMAL = 2.0**-14  # 6.1e-5


def _positive_int(name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise UsageError(f"GradientMonitor: {name} must be a positive integer, not {value!r}")
    return value


class GradientMonitor:
    """Record gradient norms in a training loop and flag spikes and the first non-finite step.

    Call :meth:`step` after ``loss.backward()`` (before ``optimizer.step()`` or gradient
    clipping, to see the raw gradients). The global gradient norm is recorded every step, the
    per-parameter norms every ``layer_every`` steps. :meth:`report` returns a
    :class:`datavet.Report` with rules M011 (gradient spikes), M012 (first non-finite step),
    M018 (parameters whose gradient stays at zero), M020 (update / weight ratio out of range)
    and M021 (float16 range limits), and the clipping figures.

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
    update_ratio : bool
        At each per-layer snapshot keep a copy of the weights and measure the next update's
        size against them (M020). Costs one copy of the weights every ``layer_every`` steps.
    activations : bool
        Also record every leaf module's largest absolute output in the forward pass of each
        snapshot step (M021; forward hooks that do nothing on the other steps).
    clip_norm : float, optional
        The ``max_norm`` your loop passes to ``clip_grad_norm_`` (call :meth:`step` before
        clipping): the report says how many steps it clipped. Without it, the report suggests
        one from the recorded norms.
    save_nonfinite : path, optional
        Where to save the first non-finite step (``torch.save``): the model's ``state_dict``
        as it was when that step's gradients were computed, and the batch passed as
        ``step(model, loss, batch=...)``. :meth:`load_saved` reads it back for ``datavet
        probe``. With it, each step checks its loss and norm at once (one device
        synchronisation per step on a GPU).

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
        update_ratio: bool = True,
        activations: bool = False,
        clip_norm: float | None = None,
        save_nonfinite=None,
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
        if clip_norm is not None and (
            isinstance(clip_norm, bool)
            or not isinstance(clip_norm, (int, float))
            or not clip_norm > 0
        ):
            raise UsageError(
                f"GradientMonitor: clip_norm must be a number above 0, not {clip_norm!r}"
            )
        self.clip_norm = None if clip_norm is None else float(clip_norm)
        self.update_ratio = bool(update_ratio)
        self.save_nonfinite = None if save_nonfinite is None else _claim(save_nonfinite)
        self.saved: str | None = None  # the file the first non-finite step was saved to
        self._watch_activations = bool(activations)
        self._ratio_ref: tuple | None = None  # (label, names, weight copies, their norms)
        self._ratios: list[tuple] = []  # (label, names, ratio tensor)
        self._ranges: list[tuple] = []  # (label, names, grad abs max, subnormal share, dtypes)
        self._acts: dict[str, tuple] = {}  # module -> (abs max tensor, dtype) of the armed pass
        self._act_snaps: list[tuple[int, dict]] = []
        self._armed = False
        self._hooked = None

    # -- recording -----------------------------------------------------------------------------

    def step(self, model, loss=None, *, step: int | None = None, batch=None) -> None:
        """Record the gradients now in ``model`` (after ``backward()``); ``loss`` optional.

        ``step`` labels the step (default: how many steps were recorded before). ``batch``
        (any tensors, tuple or dict) is kept only to be saved with a non-finite step when
        ``save_nonfinite`` is set.
        """
        import torch

        self._armed = False
        if self._ratio_ref is not None:
            self._measure_update(torch, model)

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
        if self._count % self.layer_every == 0:
            self._snapshot(torch, model, label, names, grads)
        if self.save_nonfinite is not None and self.saved is None:
            finite = bool(torch.isfinite(total)) and (
                loss is None or bool(torch.isfinite(torch.as_tensor(loss)).all())
            )
            if not finite:
                self._save(torch, model, label, batch)
        self._pending.append((label, total, per, self._names, loss))
        self._count += 1
        if self._watch_activations:
            if self._hooked is not model:
                self._hook(model)
            self._armed = self._count % self.layer_every == 0  # the next forward is a snapshot
        if len(self._pending) >= self.sync_every:
            self._flush()

    # -- snapshots: update ratio, float16 range, activations ------------------------------------

    def _snapshot(self, torch, model, label, names, grads) -> None:
        with torch.no_grad():
            inf = float("inf")
            foreach = getattr(torch, "_foreach_norm", None)
            if foreach is not None and len({(g.device, g.dtype) for g in grads}) == 1:
                absmax = torch.stack(foreach(grads, inf)).float()
            else:
                absmax = torch.stack(
                    [g.detach().abs().max().float().to(grads[0].device) for g in grads]
                )
            half = [g for g in grads if g.dtype == torch.float16]
            sub = None
            if half:
                nz = sum(int((g != 0).sum()) for g in half)
                tiny = sum(int(((g != 0) & (g.abs() < FP16_MIN_NORMAL)).sum()) for g in half)
                sub = tiny / nz if nz else 0.0
            dtypes = {str(g.dtype).replace("torch.", "") for g in grads}
            self._ranges.append((label, names, absmax, sub, dtypes))
            if self._acts:
                self._act_snaps.append((label, self._acts))
                self._acts = {}
            if self.update_ratio:
                live = [(n, p) for n, p in self._params if p.requires_grad and p.grad is not None]
                if live:
                    copies = [p.detach().clone() for _, p in live]
                    norms = _norms(torch, copies)
                    self._ratio_ref = (label, tuple(n for n, _ in live), copies, norms, model)

    def _measure_update(self, torch, model) -> None:
        label, names, copies, norms, ref_model = self._ratio_ref
        self._ratio_ref = None
        if ref_model is not model:
            return
        now = dict(self._params)
        if any(n not in now for n in names):
            return
        with torch.no_grad():
            current = [now[n].detach() for n in names]
            diffs = [c - r for c, r in zip(current, copies)]
            ratio = _norms(torch, diffs) / norms  # 0/0 = nan: no ratio for all-zero weights
        self._ratios.append((label, names, ratio))

    def _hook(self, model) -> None:
        """Forward hooks on every leaf module that record its largest absolute output, only in
        the forward pass of a snapshot step."""
        import torch

        def make(name):
            def hook(module, args, output):
                if not self._armed:
                    return
                outs = output if isinstance(output, (tuple, list)) else (output,)
                for out in outs:
                    if isinstance(out, torch.Tensor) and out.is_floating_point() and out.numel():
                        with torch.no_grad():
                            self._acts[name] = (out.detach().abs().max().float(), out.dtype)
                        break

            return hook

        for name, module in model.named_modules():
            if name and not any(True for _ in module.children()):
                module.register_forward_hook(make(name))
        self._hooked = model

    def _save(self, torch, model, label, batch) -> None:
        import io

        from datavet.outputs import write_bytes

        state = {k: v.detach().cpu().clone() for k, v in model.state_dict().items()}
        payload = {
            "format": SNAPSHOT_FORMAT,
            "step": label,
            "model": state,
            "batch": _to_cpu(torch, batch),
        }
        buf = io.BytesIO()
        torch.save(payload, buf)
        write_bytes(self.save_nonfinite, buf.getvalue())  # atomic; a device stays a device
        self.saved = self.save_nonfinite

    @staticmethod
    def load_saved(path) -> dict:
        """``{"step", "model", "batch"}`` saved at the first non-finite step (``save_nonfinite``).

        Replay it with ``datavet probe replay.py:factory``, where the factory builds the model,
        loads the state and returns the batch::

            def factory():
                saved = datavet.GradientMonitor.load_saved("nonfinite.pt")
                model = MyModel()
                model.load_state_dict(saved["model"])
                return model, saved["batch"], loss_fn
        """
        import torch

        return torch.load(path, map_location="cpu", weights_only=True)

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
            "update_ratio": self.update_ratios(),
            "fp16_range": self.fp16_range(),
            "clipping": self.clipping(),
            "saved": self.saved,
        }

    # -- the snapshot figures ------------------------------------------------------------------

    def update_ratios(self) -> dict[str, list[float]]:
        """Parameter -> its measured ``||update|| / ||weight||`` ratios (finite ones), in order."""
        out: dict[str, list[float]] = {}
        for _, names, ratio in self._ratios:
            for n, v in zip(names, ratio.float().cpu().tolist()):
                if math.isfinite(v):
                    out.setdefault(n, []).append(v)
        return out

    def fp16_range(self) -> dict:
        """The largest absolute gradient per parameter and activation per module over the
        snapshots, the largest subnormal share of float16 gradients, and the dtypes seen."""
        grads: dict[str, float] = {}
        sub = None
        dtypes: set[str] = set()
        for _, names, absmax, share, kinds in self._ranges:
            dtypes |= kinds
            for n, v in zip(names, absmax.cpu().tolist()):
                if math.isfinite(v):
                    grads[n] = max(grads.get(n, 0.0), v)
            if share is not None:
                sub = share if sub is None else max(sub, share)
        acts: dict[str, float] = {}
        act_dtypes: set[str] = set()
        for _, snap in self._act_snaps:
            for n, (v, dtype) in snap.items():
                act_dtypes.add(str(dtype).replace("torch.", ""))
                v = float(v)
                if math.isfinite(v):
                    acts[n] = max(acts.get(n, 0.0), v)
        return {
            "gradient_abs_max": grads,
            "activation_abs_max": acts,
            "subnormal_share": sub,
            "gradient_dtypes": sorted(dtypes),
            "activation_dtypes": sorted(act_dtypes),
            "snapshots": len(self._ranges),
        }

    def clipping(self) -> dict | None:
        """The recorded norms' median, 95th percentile and maximum; the steps ``clip_norm``
        clipped; a suggested ``max_norm`` (the 95th percentile of the steps that are not
        spikes, so that it cuts the spikes and leaves the normal steps alone); and the ceiling
        the norms sit at when the monitor was called after clipping."""
        self._flush()
        finite = sorted(v for v in self.norms if math.isfinite(v))
        if len(finite) < 2:
            return None
        p95 = finite[min(len(finite) - 1, int(round(0.95 * (len(finite) - 1))))]
        spiked = {s["index"] for s in self._spikes}
        normal = (
            sorted(v for i, v in enumerate(self.norms) if i not in spiked and math.isfinite(v))
            or finite
        )
        suggested = normal[min(len(normal) - 1, int(round(0.95 * (len(normal) - 1))))]
        top = finite[-1]
        at_top = sum(1 for v in finite if v >= top * (1 - 1e-4))
        ceiling = top if top > 0 and at_top >= max(5, 0.05 * len(finite)) else None
        out = {
            "median": _median(finite),
            "p95": p95,
            "max": top,
            "suggested_max_norm": suggested,
            "clip_norm": self.clip_norm,
            "clipped_steps": None,
            "ceiling": ceiling,
        }
        if self.clip_norm is not None:
            out["clipped_steps"] = sum(1 for v in finite if v > self.clip_norm)
        return out

    def report(
        self,
        *,
        fail_on: str | Severity = "error",
        severity: Mapping[str, str | Severity] | None = None,
    ):
        """A :class:`datavet.Report` with M011, M012, M018, M020 and M021 (findings, outcomes)
        and the norm curve."""
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
        ratio_rule = UpdateRatioOutOfRange(severity=levels.get(UpdateRatioOutOfRange.code))
        range_rule = Fp16RangeLimits(severity=levels.get(Fp16RangeLimits.code))
        findings, outcomes = run_rules(
            [spike_rule, nan_rule, zero_rule, ratio_rule, range_rule], self
        )
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
            "M020": {"headline": self._ratio_headline()},
            "M021": {"headline": self._range_headline()},
        }

    def _ratio_headline(self) -> str:
        medians = [_median(v) for v in self.update_ratios().values() if v]
        if not medians:
            return "no update measured"
        return (
            f"update/weight ratio {min(medians):.2g} to {max(medians):.2g} (median per parameter)"
        )

    def _range_headline(self) -> str:
        r = self.fp16_range()
        top = max([*r["gradient_abs_max"].values(), *r["activation_abs_max"].values()], default=0)
        return f"largest |value| {top:.3g} (float16 max {FP16_MAX:g})"

    def _ratio_findings(self, rule: UpdateRatioOutOfRange):
        o = rule.options
        ratios = self.update_ratios()
        enough = {n: v for n, v in ratios.items() if len(v) >= int(o["min_snapshots"])}
        if not self.update_ratio:
            raise Skip("update_ratio=False")
        if not enough:
            raise Skip(
                f"fewer than {int(o['min_snapshots'])} updates measured (one per layer_every="
                f"{self.layer_every} steps)"
            )
        high, low = [], []
        for n, v in enough.items():
            m = _median(v)
            if m > o["max_update_ratio"]:
                high.append((n, m))
            elif 0 < m < o["min_update_ratio"]:
                low.append((n, m))
        if not high and not low:
            return []
        parts = []
        for what, items, bound in (
            ("too large", sorted(high, key=lambda t: -t[1]), f"> {o['max_update_ratio']:g}"),
            ("too small", sorted(low, key=lambda t: t[1]), f"< {o['min_update_ratio']:g}"),
        ):
            if items:
                listed = ", ".join(f"{n} ({m:.2g})" for n, m in items[:MAX_LISTED])
                more = f" (+{len(items) - MAX_LISTED} more)" if len(items) > MAX_LISTED else ""
                parts.append(f"{what} ({bound}): {listed}{more}")
        names = [n for n, _ in high + low]
        snaps = max(len(v) for v in enough.values())
        fix = (
            "lower the learning rate (or add warmup / clip gradients)"
            if high
            else "raise the learning rate or check the initialisation"
        )
        return [
            rule.finding(
                f"The update / weight ratio (||w_after - w_before|| / ||w_before||, median of "
                f"{snaps} measured steps; about 1e-3 is usual) is {'; '.join(parts)}.",
                columns=tuple(names[:20]),
                n_affected=len(names),
                metrics={
                    "too_large": len(high),
                    "too_small": len(low),
                    "max_median_ratio": max((m for _, m in high + low), default=0.0),
                    "min_median_ratio": min((m for _, m in high + low), default=0.0),
                },
                hint=fix,
            )
        ]

    def _range_findings(self, rule: Fp16RangeLimits):
        o = rule.options
        r = self.fp16_range()
        if not r["snapshots"]:
            raise Skip("no per-layer snapshot was taken")
        fp16 = "float16" in r["gradient_dtypes"] or "float16" in r["activation_dtypes"]
        if not fp16:
            kinds = ", ".join(sorted({*r["gradient_dtypes"], *r["activation_dtypes"]})) or "unknown"
            raise Skip(
                f"the model does not train in float16 ({kinds}); the figures are in the report"
            )
        big = [
            (f"activation of {n}", v)
            for n, v in r["activation_abs_max"].items()
            if v >= o["max_abs"]
        ] + [(f"gradient of {n}", v) for n, v in r["gradient_abs_max"].items() if v >= o["max_abs"]]
        big.sort(key=lambda t: -t[1])
        sub = r["subnormal_share"]
        parts = []
        if big:
            listed = ", ".join(f"{n} {v:.3g}" for n, v in big[:MAX_LISTED])
            more = f" (+{len(big) - MAX_LISTED} more)" if len(big) > MAX_LISTED else ""
            parts.append(
                f"largest absolute values at or above {o['max_abs']:g} (float16 overflows at "
                f"{FP16_MAX:g}): {listed}{more}"
            )
        if sub is not None and sub >= o["max_subnormal"]:
            parts.append(
                f"{sub:.0%} of the non-zero float16 gradient values are below the smallest "
                f"normal float16 ({FP16_MIN_NORMAL:.2g}) and losing precision"
            )
        if not parts:
            return []
        return [
            rule.finding(
                f"At {r['snapshots']} snapshot(s) of this float16 run: " + "; ".join(parts) + ".",
                columns=tuple(n.split(" of ", 1)[1] for n, _ in big[:20]),
                n_affected=len(big),
                metrics={
                    "max_abs": max((v for _, v in big), default=0.0),
                    "subnormal_share": sub if sub is not None else 0.0,
                },
                hint="keep the named modules in float32 or scale their inputs; use GradScaler "
                "or bfloat16",
            )
        ]

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
        clip = self.clipping() or {}
        if clip.get("clip_norm") is not None:
            clip_text = (
                f" Clipping at max_norm={clip['clip_norm']:.3g} cut {clip['clipped_steps']:,} "
                "step(s)."
            )
        elif clip.get("ceiling") is not None:
            clip_text = (
                f" The norms have a ceiling at {clip['ceiling']:.3g}: the monitor sees clipped "
                "gradients (call monitor.step before clip_grad_norm_ to see the raw ones)."
            )
        elif clip:
            clip_text = (
                f" No clipping is declared (clip_norm=); max_norm={clip['suggested_max_norm']:.3g}"
                f" (the 95th percentile of the other steps; median {clip['median']:.3g}) would "
                "cut the spikes."
            )
        else:
            clip_text = ""
        return [
            rule.finding(
                f"The gradient norm exceeded {self.factor:g}x the median of the previous "
                f"{self.window} normal steps at {len(spikes)} of {self._count:,} steps: "
                f"{listed}{more}.{clip_text}",
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
        saved = (
            f" Saved its model state and batch to {self.saved}: replay it with datavet probe "
            "(GradientMonitor.load_saved in the factory)."
            if self.saved
            else ""
        )
        return [
            rule.finding(
                f"Step {first['step']} is the first non-finite training step: "
                f"{' and '.join(what)}; {total:,} of {self._count:,} recorded steps were "
                f"non-finite.{saved}",
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


def _to_cpu(torch, obj):
    if isinstance(obj, torch.Tensor):
        return obj.detach().cpu()
    if isinstance(obj, dict):
        return {k: _to_cpu(torch, v) for k, v in obj.items()}
    if isinstance(obj, (tuple, list)):
        return type(obj)(_to_cpu(torch, v) for v in obj)
    return obj


def _median(values: list[float]) -> float:
    return statistics.median(values) if values else math.nan


SNAPSHOT_FORMAT = "datavet-nonfinite-step/1"


def _claim(path) -> str:
    """``save_nonfinite``'s path under the output policy, checked when the monitor is made: never
    over a file that is not a snapshot the monitor saved (delete it or choose another path)."""
    import os

    from datavet.errors import OutputError
    from datavet.outputs import Outputs

    if os.fspath(path) == "-":
        raise UsageError("GradientMonitor: save_nonfinite needs a file path, not -")
    try:
        return Outputs().claim(
            "save_nonfinite", path, owned=_is_snapshot, what="non-finite step snapshot"
        )
    except OutputError as exc:
        raise OutputError(
            exc.path,
            exc.problem.replace("pass --force to replace it", "delete it"),
        ) from None


def _is_snapshot(path) -> bool:
    """Whether ``path`` is a snapshot a GradientMonitor saved (its pickle names the format)."""
    import zipfile

    try:
        with zipfile.ZipFile(path) as archive:
            for info in archive.infolist():
                if info.filename.endswith("data.pkl") and info.file_size < 1 << 20:
                    return SNAPSHOT_FORMAT.encode() in archive.read(info)
    except (OSError, zipfile.BadZipFile, ValueError):
        return False
    return False
