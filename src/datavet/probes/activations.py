"""Per-layer activation statistics: saturation (M006) and collapse toward 0 with depth (M007)."""

from __future__ import annotations

import math

from datavet.auditors.base import fmt
from datavet.findings import Severity
from datavet.probes.base import Probe, ProbeContext, Skip

MAX_LAYERS = 500  # rows kept in the per-layer table
DEFAULT_LEVEL = 0.99


def _kinds():
    from torch import nn

    return (
        ((nn.Tanh, nn.Hardtanh, nn.Softsign), "tanh"),
        ((nn.Sigmoid, nn.Hardsigmoid), "sigmoid"),
        ((nn.ReLU, nn.ReLU6), "relu"),
        (
            (
                nn.LeakyReLU,
                nn.PReLU,
                nn.ELU,
                nn.SELU,
                nn.CELU,
                nn.GELU,
                nn.SiLU,
                nn.Mish,
                nn.Softplus,
            ),
            "activation",
        ),
    )


def _kind(module, kinds) -> str | None:
    for classes, kind in kinds:
        if isinstance(module, classes):
            return kind
    return None


def layer_stats(ctx: ProbeContext) -> dict:
    """Mean, std, saturated and dead fractions of every leaf module's output, in call order.

    One seeded train-mode forward pass of a copy, no gradients. ``depth`` numbers the
    activation modules (Tanh, Sigmoid, ReLU, GELU...) 1, 2, ...: "layer 1" is the first
    activation. Saturated: ``|a| > level`` for tanh-like outputs, ``|2a - 1| > level`` for
    sigmoid-like ones (the same condition on the pre-activation). Dead: ``a == 0`` after ReLU.
    """
    import torch

    level = float(ctx.shared.get("saturation_level", DEFAULT_LEVEL))
    kinds = _kinds()
    rows: list[dict] = []
    calls: dict[str, int] = {}
    state = {"depth": 0, "truncated": 0}

    def hook(name):
        def record(module, args, output):
            if not isinstance(output, torch.Tensor) or not output.is_floating_point():
                return
            if len(rows) >= MAX_LAYERS:
                state["truncated"] += 1
                return
            calls[name] = calls.get(name, 0) + 1
            kind = _kind(module, kinds)
            a = output.detach()
            if a.dtype in (torch.float16, torch.bfloat16):
                a = a.float()
            finite = torch.isfinite(a)
            n_bad = int((~finite).sum())
            vals = a[finite] if n_bad else a.reshape(-1)
            if vals.numel():
                std, mean = torch.std_mean(vals, correction=0)
                mean, std = float(mean), float(std)
            else:
                mean = std = math.nan
            sat = dead = None
            if kind == "tanh":
                sat = float((a.abs() > level).float().mean())
            elif kind == "sigmoid":
                sat = float(((2 * a - 1).abs() > level).float().mean())
            elif kind == "relu":
                dead = float((a == 0).float().mean())
            depth = None
            if kind is not None:
                state["depth"] += 1
                depth = state["depth"]
            label = name if calls[name] == 1 else f"{name} #{calls[name]}"
            rows.append(
                {
                    "module": label,
                    "type": type(module).__name__,
                    "kind": kind,
                    "depth": depth,
                    "shape": list(a.shape),
                    "mean": mean,
                    "std": std,
                    "saturated": sat,
                    "dead": dead,
                    "nonfinite": n_bad,
                    "flags": [],
                }
            )

        return record

    with ctx.isolated(), torch.no_grad():
        model = ctx.copy(train=True)
        handles = [
            m.register_forward_hook(hook(n))
            for n, m in model.named_modules()
            if next(m.children(), None) is None
        ]
        try:
            ctx.forward(model)
        finally:
            for h in handles:
                h.remove()
    return {"rows": rows, "level": level, "truncated": state["truncated"], "layers": state["depth"]}


def _stats(ctx: ProbeContext) -> dict:
    return ctx.cached("layers", lambda: layer_stats(ctx))


def _at(r: dict) -> str:
    return f"layer {r['depth']} ({r['module']!r}, {r['type']})"


class SaturatedActivations(Probe):
    """Tanh / sigmoid layers whose outputs sit at the flat ends of the curve.

    **What it checks**
    One forward pass of the untrained model with a hook on every leaf module records each
    layer's mean, standard deviation, saturated fraction and (for ReLU) dead fraction; the HTML
    report shows this table. It fires when a tanh-like layer has at least ``max_saturated`` of its
    outputs with ``|a| > saturation_level`` (for a sigmoid, ``|2a - 1| > saturation_level``). For
    example, a 10-layer tanh stack initialised with standard deviation 1 has 87% of its
    activations saturated from layer 1 on; with ``1/sqrt(D)`` it has 1%. Activations applied as
    functions (``torch.tanh`` inside a forward) are not modules and are not seen.

    **Why it matters**
    The derivative of a saturated tanh is almost 0, so almost no gradient reaches the layers
    below: training starts slowly or not at all, and the cause looks like "the architecture does
    not work". It is an initialisation (or input scale) problem.

    **How to fix**
    Initialise weights with variance ``1/fan_in`` (Xavier/Glorot for tanh:
    ``nn.init.xavier_uniform_``); standardise the inputs; add normalisation layers
    (LayerNorm/BatchNorm) before the activation.
    """

    code = "M006"
    name = "saturated-activations"
    severity = Severity.WARNING
    summary = "tanh/sigmoid layers mostly saturated (|a| > 0.99) at initialisation"
    thresholds = {"saturation_level": DEFAULT_LEVEL, "max_saturated": 0.25}

    def check(self, ctx: ProbeContext):
        ctx.shared.setdefault("saturation_level", float(self.options["saturation_level"]))
        stats = _stats(ctx)
        rows = [r for r in stats["rows"] if r["saturated"] is not None]
        if not rows:
            raise Skip("no tanh- or sigmoid-like module (nn.Tanh, nn.Sigmoid...) in the model")
        limit = float(self.options["max_saturated"])
        flagged = [r for r in rows if r["saturated"] >= limit]
        worst = max(rows, key=lambda r: r["saturated"])
        first = rows[0]
        self.details = {
            "layers": len(rows),
            "first": {"depth": first["depth"], "saturated": first["saturated"]},
            "worst": {"depth": worst["depth"], "saturated": worst["saturated"]},
            "headline": f"{worst['saturated']:.0%} saturated at worst (layer {worst['depth']})",
        }
        if not flagged:
            return
        for r in flagged:
            r["flags"].append("saturated")
        top = flagged[0]
        symbol = "|a|" if top["kind"] == "tanh" else "|2a - 1|"
        yield self.finding(
            f"{top['saturated']:.0%} of the activations of {_at(top)} are saturated "
            f"({symbol} > {stats['level']:g}; std {fmt(top['std'])}), and {len(flagged)} of "
            f"{len(rows)} saturating layers are at or above {limit:.0%} (worst "
            f"{worst['saturated']:.0%} at layer {worst['depth']}): their derivative is ~0, so "
            "little gradient flows back.",
            columns=tuple(r["module"] for r in flagged[:20]),
            n_affected=len(flagged),
            metrics={
                "layer": top["depth"],
                "saturated_fraction": top["saturated"],
                "max_saturated_fraction": worst["saturated"],
                "layers_flagged": len(flagged),
                "std": top["std"],
            },
            hint="initialise with variance 1/fan_in (xavier for tanh), standardise the inputs",
        )


def _pinned(row: dict) -> bool:
    """Outputs that sit at one value far from 0: |mean| above 0.5 and 10 times the std."""
    mean, std = row["mean"], row["std"]
    return math.isfinite(mean) and abs(mean) > 0.5 and abs(mean) > 10 * std


class VanishingActivations(Probe):
    """Activations that collapse toward 0 with depth, or ReLU layers that output 0 everywhere.

    **What it checks**
    From the same per-layer table as M006: the standard deviation of each activation module's
    output (Tanh, Sigmoid, ReLU, GELU, ...) against the first one's. It fires when a deeper layer's
    std falls below ``min_std_ratio`` of layer 1's, and separately when a ReLU layer outputs
    exactly 0 for at least ``max_dead`` of its values. For example, a 10-layer tanh
    stack initialised with standard deviation 0.01 goes from std 0.157 at layer 1 to 0.000104
    at layer 5 and 1.1e-08 at layer 10; with ``1/sqrt(D)`` it keeps 0.226 at layer 10 (36% of
    layer 1's).

    **Why it matters**
    When activations shrink by a constant factor per layer, the deep layers carry no signal and
    their gradients vanish the same way: the last layers learn from noise and the first ones not
    at all. A ReLU layer that is 0 almost everywhere passes no gradient ("dead ReLU"). A layer
    whose small std comes from outputs pinned at one value far from 0 (a sigmoid stuck at 1.0,
    a tanh at -1) is reported as *saturated*, not vanishing: the cure there is smaller
    pre-activations, not a larger init.

    **How to fix**
    Initialise with the variance the activation needs (Xavier for tanh/sigmoid, Kaiming/He for
    ReLU: ``nn.init.kaiming_normal_``); add normalisation layers or residual connections; for
    dead ReLUs lower the learning rate or the bias init, or use LeakyReLU/GELU.
    """

    code = "M007"
    name = "vanishing-activations"
    severity = Severity.WARNING
    summary = "activation std collapsing toward 0 with depth, or dead ReLU layers"
    thresholds = {"min_std_ratio": 1e-2, "max_dead": 0.9}

    def check(self, ctx: ProbeContext):
        stats = _stats(ctx)
        rows = [r for r in stats["rows"] if r["kind"] is not None and math.isfinite(r["std"])]
        if not rows:
            raise Skip("no activation module (nn.Tanh, nn.ReLU, nn.GELU...) in the model")
        anchor, last = rows[0], rows[-1]
        ratio_limit = float(self.options["min_std_ratio"])
        self.details = {
            "layers": len(rows),
            "first_std": anchor["std"],
            "last_std": last["std"],
            "headline": (
                f"std {fmt(anchor['std'])} at layer {anchor['depth']} -> "
                f"{fmt(last['std'])} at layer {last['depth']}"
                if len(rows) > 1
                else f"std {fmt(anchor['std'])} (one activation layer)"
            ),
        }
        if anchor["std"] > 0:
            low = [r for r in rows[1:] if r["std"] < ratio_limit * anchor["std"]]
            # a layer whose outputs all sit at one value far from 0 (a sigmoid stuck at 1) is
            # saturated, not vanishing: its std is small because its mean is pinned
            stuck = [r for r in low if _pinned(r)]
            low = [r for r in low if not _pinned(r)]
            if stuck:
                for r in stuck:
                    r["flags"].append("saturated")
                first = stuck[0]
                yield self.finding(
                    f"{_at(first)} outputs almost the same value everywhere: mean "
                    f"{fmt(first['mean'])}, std {fmt(first['std'])} (layer "
                    f"{anchor['depth']}'s std is {fmt(anchor['std'])}): the activation is "
                    "saturated, pinned at the flat end of its range, not shrinking toward 0; its "
                    "derivative is ~0 there, so almost no gradient passes.",
                    columns=tuple(r["module"] for r in stuck[:20]),
                    n_affected=len(stuck),
                    metrics={
                        "mean": first["mean"],
                        "std": first["std"],
                        "first_std": anchor["std"],
                        "layer": first["depth"],
                    },
                    hint="shrink the pre-activations: smaller init or inputs, normalisation "
                    "before the sigmoid/tanh, or a lower lr if training pushed them there",
                )
            if low:
                for r in low:
                    r["flags"].append("vanishing")
                below = low[0]
                yield self.finding(
                    f"Activations shrink toward 0 with depth: std {fmt(anchor['std'])} at "
                    f"{_at(anchor)}, {fmt(below['std'])} at layer {below['depth']} (below "
                    f"{ratio_limit:.0%} of layer {anchor['depth']}'s from there on) and "
                    f"{fmt(last['std'])} at layer {last['depth']}, the last: the deep layers "
                    "carry no signal and their gradients vanish.",
                    columns=tuple(r["module"] for r in low[:20]),
                    n_affected=len(low),
                    metrics={
                        "first_std": anchor["std"],
                        "last_std": last["std"],
                        "ratio": last["std"] / anchor["std"],
                        "first_layer_below": below["depth"],
                    },
                    hint="initialise with variance 1/fan_in (xavier; kaiming for ReLU), "
                    "or add normalisation / residual connections",
                )
        dead_limit = float(self.options["max_dead"])
        dead = [r for r in rows if r["dead"] is not None and r["dead"] >= dead_limit]
        if dead:
            for r in dead:
                r["flags"].append("dead")
            worst = max(dead, key=lambda r: r["dead"])
            yield self.finding(
                f"{len(dead)} ReLU layer(s) output exactly 0 for at least {dead_limit:.0%} of "
                f"their values (worst {worst['dead']:.0%} at {_at(worst)}): no gradient passes "
                "through them.",
                columns=tuple(r["module"] for r in dead[:20]),
                n_affected=len(dead),
                metrics={"max_dead_fraction": worst["dead"], "layers_flagged": len(dead)},
                hint="use kaiming init and a smaller lr or bias, or LeakyReLU/GELU",
            )
