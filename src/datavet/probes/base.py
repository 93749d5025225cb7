"""What every probe is, and the context it runs in.

A probe is the model-side twin of an auditor: a class with a stable code (``M001``), a
kebab-case name, a default severity, a summary, its thresholds, and a docstring in three sections
that ``datavet rule M001`` prints. It returns findings; it never prints, never renders, and never
changes the user's model: every probe works on ``ctx.copy()`` (a deep copy) inside
``ctx.isolated()`` (torch, NumPy and ``random`` RNG states saved, seeded, restored).

For model findings the Finding fields read as follows: ``columns`` holds module or parameter
names, ``examples`` holds sample rows of the batch (or training steps, for GradientMonitor), and
``split`` is None.

Nothing here imports torch at module level: ``datavet rules`` and ``import datavet`` work
without it.
"""

from __future__ import annotations

import contextlib
import copy
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

from datavet.findings import Severity
from datavet.framework import Rule, Skip

__all__ = ["Probe", "ProbeContext", "Skip"]


class Probe(Rule):
    """A model probe (M rule): :class:`datavet.framework.Rule` over a :class:`ProbeContext`.

    ``needs`` says who runs it: ``"model"`` probes (with ``"torch"``, the default) run in
    :func:`datavet.probe`; ``"monitor"`` probes read a :class:`datavet.GradientMonitor`'s
    history. ``"known_task"``: skipped when the task of the model's output cannot be told
    (pass ``task=``).
    """

    severity: ClassVar[Severity]
    needs: ClassVar[tuple[str, ...]] = ("model", "torch")


@dataclass
class ProbeContext:
    """The model, one batch and the loss, already on the model's device. Read-only for probes."""

    model: Any  # the user's nn.Module: never called directly, only copied
    inputs: Any  # a tensor, a tuple/list (model(*inputs)) or a dict (model(**inputs))
    target: Any
    loss_fn: Callable
    task: str  # "classification" | "binary" | "regression"
    task_reason: str
    n_classes: int | None
    device: Any
    batch_size: int
    seed: int = 0
    class_dim: int = 1  # where the classes are in the output: 1, or -1 for (N, T, C) logits
    optimizer_factory: Callable | None = None
    train_step: Callable | None = None
    eval_step: Callable | None = None  # eval_step(model, batch): the user's evaluation (M017)
    output: Any = None  # the detached output of a seeded train-mode forward pass of a copy
    padding_mask: Any = None  # (N, T) bool, True = padding (M014); None when not declared
    padding_source: str = ""  # how the padding was given, for messages
    shared: dict = field(default_factory=dict)  # results several probes use (the trace, layers)

    def unmet(self, need: str) -> str | None:
        """Why this context cannot give a probe ``need``, or None."""
        if need == "known_task" and self.task == "unknown":
            return f"the task is unknown ({self.task_reason}); pass task="
        if need == "monitor":
            return "read from a GradientMonitor (monitor.report()), not run by datavet.probe"
        return None

    def copy(self, *, train: bool = True):
        """A deep copy of the model, in train (default) or eval mode."""
        model = copy.deepcopy(self.model)
        model.train(train)
        return model

    def train_step_copy(self):
        """(a train-mode copy, its trainable ``(name, parameter)`` pairs) for a probe that runs
        the user's ``train_step``; Skip when there is no step or nothing to train."""
        if self.train_step is None:
            raise Skip("no train_step given (pass train_step=fn(model, optimizer, batch))")
        model = self.copy(train=True)
        named = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
        if not named:
            raise Skip("the model has no trainable parameter")
        return model, named

    def forward(self, model, inputs=None):
        inputs = self.inputs if inputs is None else inputs
        if isinstance(inputs, dict):
            return model(**inputs)
        if isinstance(inputs, (tuple, list)):
            return model(*inputs)
        return model(inputs)

    def loss(self, output, target=None):
        return self.loss_fn(output, self.target if target is None else target)

    def isolated(self):
        """Seed every RNG the model may draw from, and restore them all on exit."""
        return isolated_rng(self.seed)

    def steps_left(self) -> float:
        """What is left of the probes' budget, in training steps of the model (inf: none)."""
        import time

        b = self.shared.get("budget")
        if not b or b["seconds"] == float("inf") or b["step_s"] <= 0:
            return float("inf")
        return (b["seconds"] - (time.perf_counter() - b["started"])) / b["step_s"]

    def cached(self, key: str, compute: Callable[[], Any]) -> Any:
        if key not in self.shared:
            self.shared[key] = compute()
        return self.shared[key]


@contextlib.contextmanager
def isolated_rng(seed: int):
    """Save torch (CPU and initialised CUDA), NumPy and ``random`` states; seed; restore.

    Only the CPU generator is seeded through ``torch.default_generator``: ``torch.manual_seed``
    would queue a seed for a CUDA context the user has not created yet, changing their RNG later.
    """
    import numpy as np
    import torch

    cuda = torch.cuda.is_available() and torch.cuda.is_initialized()
    cpu_state = torch.get_rng_state()
    cuda_states = torch.cuda.get_rng_state_all() if cuda else None
    py_state, np_state = random.getstate(), np.random.get_state()
    try:
        torch.default_generator.manual_seed(seed)
        if cuda:
            torch.cuda.manual_seed_all(seed)
        yield
    finally:
        torch.set_rng_state(cpu_state)
        if cuda_states is not None:
            torch.cuda.set_rng_state_all(cuda_states)
        random.setstate(py_state)
        np.random.set_state(np_state)
