"""Training-curve diagnosis: read the symptom on a training log (rules C001-C009), name the usual
causes in the order to check them, and mark the steps on the report's charts.

``datavet.diagnose_curves(log)`` returns a :class:`datavet.Report`; ``datavet curves LOG`` is the
command line. Nothing here imports torch.
"""

from datavet.curves.api import diagnose_curves
from datavet.curves.registry import CURVE_RULES
from datavet.curves.source import CurveLog, read_curves

__all__ = ["CURVE_RULES", "CurveLog", "diagnose_curves", "read_curves"]
