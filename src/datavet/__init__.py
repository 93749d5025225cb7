"""datavet: vet a dataset before a model is trained on it."""

from datavet._version import __version__
from datavet.api import audit
from datavet.api.curves import diagnose_curves
from datavet.api.probes import probe
from datavet.errors import AuditFailed, DatavetError, InputError, UsageError
from datavet.findings import Finding, Outcome, Severity
from datavet.journal import Journal
from datavet.preflight import preflight
from datavet.probes.monitor import GradientMonitor
from datavet.report import Report
from datavet.rules import CURVE_RULES, PROBES, RULES

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
