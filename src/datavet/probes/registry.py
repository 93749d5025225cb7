"""The probes' view of the one registry (:data:`datavet.rules.REGISTRY`), and their selection.

A probe is listed once, in :mod:`datavet.rules`; nothing here imports torch.
"""

from __future__ import annotations

from datavet.errors import UsageError
from datavet.framework import choose
from datavet.probes.base import Probe
from datavet.rules import family

PROBES: tuple[type[Probe], ...] = family(Probe)

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


def _matches(selector: str, pool: list[type[Probe]], runner: str) -> list[type[Probe]]:
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
        p for p in PROBES if p not in pool and (p.code.startswith(sel.upper()) or p is by_name)
    ]
    if not found and others:
        from datavet.framework import NEEDS

        need = next(n for n in others[0].needs if n != runner and n in ("model", "monitor"))
        raise UsageError(
            f"{', '.join(p.code for p in others)} cannot be selected here: they need {NEEDS[need]}"
        )
    if not found:
        raise UsageError(
            f"unknown probe selector {selector!r}: use a code (M002), a prefix (M00) or a name "
            "(cannot-overfit-batch); `datavet rules` lists them"
        )
    return found


def select_probes(select=None, ignore=None, *, needs: str = "model") -> list[type[Probe]]:
    """Probes chosen by ``select`` (default: all that ``needs`` this runner) minus ``ignore``."""
    pool = [p for p in PROBES if needs in p.needs]
    return choose(pool, select, ignore, lambda sel: _matches(sel, pool, needs))
