"""datavet: vet a dataset before a model is trained on it.

The public names load on first use (module ``__getattr__``): ``import datavet`` costs a few
milliseconds and imports neither pandas, SciPy, scikit-learn, Jinja2 nor PyTorch; each loads
when a path that needs it runs.
"""

from __future__ import annotations

import importlib
import importlib.util
from typing import TYPE_CHECKING

from datavet._version import __version__

if TYPE_CHECKING:  # pragma: no cover - for type checkers and editors only
    from datavet.api import audit
    from datavet.api.curves import diagnose_curves
    from datavet.api.probes import probe
    from datavet.errors import AuditFailed, DatavetError, InputError, UsageError
    from datavet.findings import Finding, Outcome, Severity
    from datavet.journal import Journal
    from datavet.probes.monitor import GradientMonitor
    from datavet.report import Report
    from datavet.rules import CURVE_RULES, PROBES, RULES

# ``datavet.preflight`` is both a submodule and the function it defines: imported here, so the
# package attribute is the function whichever of them is imported first (as before)
from datavet.preflight import preflight  # noqa: E402 - cheap: no NumPy, no pandas

# public name -> the module that defines it (imported on first access)
_LAZY = {
    "audit": "datavet.api",
    "CURVE_RULES": "datavet.rules",
    "diagnose_curves": "datavet.api.curves",
    "AuditFailed": "datavet.errors",
    "DatavetError": "datavet.errors",
    "InputError": "datavet.errors",
    "UsageError": "datavet.errors",
    "Finding": "datavet.findings",
    "Outcome": "datavet.findings",
    "Severity": "datavet.findings",
    "Journal": "datavet.journal",
    "PROBES": "datavet.rules",
    "GradientMonitor": "datavet.probes.monitor",
    "probe": "datavet.api.probes",
    "Report": "datavet.report",
    "RULES": "datavet.rules",
}

__all__ = [
    "CURVE_RULES",
    "PROBES",
    "RULES",
    "AuditFailed",
    "DatavetError",
    "Finding",
    "GradientMonitor",
    "InputError",
    "Journal",
    "Outcome",
    "Report",
    "Severity",
    "UsageError",
    "__version__",
    "audit",
    "diagnose_curves",
    "preflight",
    "probe",
]


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        # a submodule (``datavet.output`` after a bare ``import datavet``), as when this package
        # imported them all
        if not name.startswith("_") and importlib.util.find_spec(f"datavet.{name}") is not None:
            return importlib.import_module(f"datavet.{name}")
        raise AttributeError(f"module 'datavet' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
