"""Model preflight probes (PyTorch): the training-side checks, as rules M001-M018.

``datavet.probe(model, batch, loss_fn=...)`` runs the model probes on copies of the model;
``datavet.GradientMonitor`` records a real training loop and reports M011, M012 and M018. Torch
is imported only when a probe runs: importing this package does not need it.

The names below load on first use, so that a rule module (``datavet.probes.overfit``) imports
without the runner and the registry: the registry (``datavet.rules``) imports the rule modules.
"""

from __future__ import annotations

import importlib

__all__ = ["GradientMonitor"]

_LAZY = {"GradientMonitor": "datavet.probes.monitor"}


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'datavet.probes' has no attribute {name!r}")
