"""Torch helpers shared by the probes. Imported only inside functions that run a probe."""

from __future__ import annotations

from typing import Any

import torch

MAX_ROWS = 20  # example rows kept in a finding (the JSON schema caps examples at 20)


def device_of(model) -> torch.device:
    """The device of the model's first parameter (or buffer); CPU for a stateless model."""
    for t in model.parameters():
        return t.device
    for t in model.buffers():
        return t.device
    return torch.device("cpu")


def to_device(obj: Any, device: torch.device) -> Any:
    if isinstance(obj, torch.Tensor):
        return obj.to(device)
    if isinstance(obj, dict):
        return {k: to_device(v, device) for k, v in obj.items()}
    if isinstance(obj, (tuple, list)):
        return type(obj)(to_device(v, device) for v in obj)
    return obj


def tensors(obj: Any) -> list[torch.Tensor]:
    """Every tensor in a (nested) tensor / tuple / list / dict, in order."""
    if isinstance(obj, torch.Tensor):
        return [obj]
    if isinstance(obj, dict):
        return [t for v in obj.values() for t in tensors(v)]
    if isinstance(obj, (tuple, list)):
        return [t for v in obj for t in tensors(v)]
    return []


def first_dim(obj: Any) -> int | None:
    for t in tensors(obj):
        if t.ndim:
            return int(t.shape[0])
    return None


def take_rows(obj: Any, rows: slice, batch: int) -> Any:
    """``obj`` with every tensor whose first dimension is the batch sliced to ``rows``."""
    if isinstance(obj, torch.Tensor):
        return obj[rows] if obj.ndim and obj.shape[0] == batch else obj
    if isinstance(obj, dict):
        return {k: take_rows(v, rows, batch) for k, v in obj.items()}
    if isinstance(obj, (tuple, list)):
        return type(obj)(take_rows(v, rows, batch) for v in obj)
    return obj


def nonfinite(obj: Any, batch: int | None) -> dict | None:
    """NaN / inf counts of the floating tensors in ``obj`` and the batch rows that hold them.

    ``rows`` is None when no tensor has the batch as its first dimension.
    """
    nan = inf = 0
    rows: set[int] | None = None
    for t in tensors(obj):
        if not (t.is_floating_point() or t.is_complex()):
            continue
        if t.is_nested:  # eval-mode fast paths pass nested tensors between layers
            t = t.to_padded_tensor(0.0)
        t = t.detach()
        bad = ~torch.isfinite(t)
        if not bool(bad.any()):
            continue
        nan += int(torch.isnan(t).sum())
        inf += int(torch.isinf(t).sum())
        if batch is not None and t.ndim and t.shape[0] == batch:
            found = bad.reshape(batch, -1).any(1).nonzero().flatten().tolist()
            rows = (rows or set()) | set(found)
    if nan == 0 and inf == 0:
        return None
    ordered = sorted(rows) if rows is not None else None
    return {"nan": nan, "inf": inf, "rows": ordered, "n_rows": len(ordered or ())}


def module_label(name: str, module) -> str:
    """``'0' (LogFeature)``; the root module by its class alone."""
    kind = type(module).__name__
    return f"{name!r} ({kind})" if name else f"the model ({kind})"


def bad_gradients(model) -> list[str]:
    return [
        n
        for n, p in model.named_parameters()
        if p.grad is not None and not bool(torch.isfinite(p.grad).all())
    ]


def rows_phrase(rows: list[int] | None, n_rows: int) -> str:
    if rows is None:
        return ""
    shown = rows[:MAX_ROWS]
    more = f" (+{n_rows - len(shown)} more)" if n_rows > len(shown) else ""
    word = "row" if n_rows == 1 else "rows"
    return f"sample {word} {shown}{more}"
