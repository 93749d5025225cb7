"""Model preflight probes (PyTorch): the training-side checks, as rules M001-M014.

``datavet.probe(model, batch, loss_fn=...)`` runs M001-M010, M013 and M014 on copies of the model;
``datavet.GradientMonitor`` records a real training loop and reports M011-M012. Torch is
imported only when a probe runs: importing this package does not need it.
"""

from datavet.probes.api import probe
from datavet.probes.monitor import GradientMonitor
from datavet.probes.registry import PROBES

__all__ = ["PROBES", "GradientMonitor", "probe"]
