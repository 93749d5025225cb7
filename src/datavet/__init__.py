"""datavet: vet a dataset before a model is trained on it."""

from datavet.api import audit
from datavet.errors import AuditFailed, DatavetError, InputError, UsageError
from datavet.findings import Finding, Outcome, Severity
from datavet.report import Report
from datavet.rules import RULES

__version__ = "0.1.0"

__all__ = [
    "RULES",
    "AuditFailed",
    "DatavetError",
    "Finding",
    "InputError",
    "Outcome",
    "Report",
    "Severity",
    "UsageError",
    "__version__",
    "audit",
]
