"""The probe registry: one line per probe, in code order. Codes are a contract; never reuse one.

No module here imports torch at import time, so ``datavet rules`` lists the probes without it.
"""

from __future__ import annotations

from datavet.errors import UsageError
from datavet.probes.activations import SaturatedActivations, VanishingActivations
from datavet.probes.amp_scaler import AmpWithoutGradScaler
from datavet.probes.base import Probe
from datavet.probes.determinism import EvalNondeterminism
from datavet.probes.double_softmax import DoubleSoftmax
from datavet.probes.eval_pass import EvalPassChangesModel
from datavet.probes.fp16_underflow import Fp16GradientUnderflow
from datavet.probes.future_leakage import FutureLeakage
from datavet.probes.initial_loss import InitialLoss
from datavet.probes.loss_reduction import BatchSizeDependentLoss
from datavet.probes.monitor import (
    Fp16RangeLimits,
    GradientSpike,
    NonFiniteStep,
    UpdateRatioOutOfRange,
    ZeroGradientLayer,
)
from datavet.probes.no_gradient import ParametersWithoutGradient
from datavet.probes.nonfinite import NonFiniteBackward, NonFiniteForward
from datavet.probes.overfit import OverfitBatch
from datavet.probes.padding_loss import PaddingInLoss
from datavet.probes.stale_gradients import StaleGradients
from datavet.rules import choose

PROBES: tuple[type[Probe], ...] = (
    InitialLoss,  # M001
    OverfitBatch,  # M002
    DoubleSoftmax,  # M003
    NonFiniteForward,  # M004
    NonFiniteBackward,  # M005
    SaturatedActivations,  # M006
    VanishingActivations,  # M007
    EvalNondeterminism,  # M008
    BatchSizeDependentLoss,  # M009
    StaleGradients,  # M010
    GradientSpike,  # M011 (GradientMonitor)
    NonFiniteStep,  # M012 (GradientMonitor)
    FutureLeakage,  # M013
    PaddingInLoss,  # M014
    ParametersWithoutGradient,  # M015
    Fp16GradientUnderflow,  # M016
    EvalPassChangesModel,  # M017
    ZeroGradientLayer,  # M018 (GradientMonitor)
    AmpWithoutGradScaler,  # M019
    UpdateRatioOutOfRange,  # M020 (GradientMonitor)
    Fp16RangeLimits,  # M021 (GradientMonitor)
)

BY_CODE: dict[str, type[Probe]] = {p.code: p for p in PROBES}
BY_NAME: dict[str, type[Probe]] = {p.name: p for p in PROBES}


def lookup_probe(key: str) -> type[Probe] | None:
    """A probe by code (``M002``) or name (``cannot-overfit-batch``); None when unknown."""
    return BY_CODE.get(key.strip().upper()) or BY_NAME.get(key.strip().lower())


def lookup(key: str) -> type[Probe]:
    probe = lookup_probe(key)
    if probe is None:
        raise UsageError(f"unknown probe {key!r}; `datavet rules` lists them")
    return probe


def _matches(selector: str, pool: list[type[Probe]]) -> list[type[Probe]]:
    sel = selector.strip()
    if not sel:
        return []
    if sel.upper() == "ALL":
        return list(pool)
    by_name = BY_NAME.get(sel.lower())
    if by_name is not None and by_name in pool:
        return [by_name]
    found = [p for p in pool if p.code.startswith(sel.upper())]
    others = [
        p.code for p in PROBES if p not in pool and (p.code.startswith(sel.upper()) or p is by_name)
    ]
    if not found and others:
        raise UsageError(
            f"{', '.join(others)} cannot be selected here: read from a GradientMonitor "
            "(monitor.report()), not run by datavet.probe"
        )
    if not found:
        raise UsageError(
            f"unknown probe selector {selector!r}: use a code (M002), a prefix (M00) or a name "
            "(cannot-overfit-batch); `datavet rules` lists them"
        )
    return found


def select_probes(select=None, ignore=None, *, needs: str = "model") -> list[type[Probe]]:
    """Probes chosen by ``select`` (default: all that ``needs`` this runner) minus ``ignore``."""
    pool = [p for p in PROBES if p.needs == needs]
    return choose(pool, select, ignore, lambda sel: _matches(sel, pool))
