"""Training-curve diagnosis: read the symptom on a training log (rules C001-C010), name the usual
causes in the order to check them, and mark the steps on the report's charts.

``datavet.diagnose_curves(log)`` returns a :class:`datavet.Report`; ``datavet curves LOG`` is the
command line. Nothing here imports torch.

The names below load on first use, so that a rule module (``datavet.curves.plateau``) imports
without the runner and the registry: the registry (``datavet.rules``) imports the rule modules.
"""

from __future__ import annotations

import importlib

__all__ = ["CurveLog", "read_curves"]

_LAZY = {
    "CurveLog": "datavet.curves.source",
    "read_curves": "datavet.curves.source",
}


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'datavet.curves' has no attribute {name!r}")
