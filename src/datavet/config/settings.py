"""The values: :class:`Settings` (what ``datavet config`` prints and an audit uses) and
:class:`Dataset` (a named dataset of the project)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from datavet.config.text import display, toml_text
from datavet.errors import UsageError
from datavet.findings import Severity
from datavet.ignores import ColumnIgnore

CONFIG_NAMES = ("datavet.toml", "pyproject.toml")
TASKS = ("auto", "classification", "regression")


class ConfigError(UsageError):
    """The configuration file is unreadable or has an unknown key or a bad value (exit 2)."""


@dataclass(frozen=True)
class Dataset:
    """A named dataset of the project: the paths of its splits, its target, and the columns the
    leakage rules key on (``group``, ``time``) or the tensor key of its inputs (``inputs``).

    ``lines`` holds where the config names it (``"table"``, ``"train"``, ``"test"`` -> line
    number, 1-based), so SARIF results and GitHub annotations can point at that line.
    """

    name: str
    train: str
    test: str | None = None
    target: str | None = None
    task: str | None = None
    group: str | None = None
    time: str | None = None
    inputs: str | None = None
    delimiter: str | None = None  # CSV field separator (default: sniffed)
    lines: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Settings:
    """The resolved settings: what ``datavet config`` prints and ``datavet audit`` uses."""

    config: Path | None = None
    select: tuple[str, ...] | None = None  # None: every rule
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    fail_on: Severity = Severity.ERROR
    severity: Mapping[str, Severity] = field(default_factory=dict)
    thresholds: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    per_column_ignores: tuple[ColumnIgnore, ...] = ()
    datasets: Mapping[str, Dataset] = field(default_factory=dict)
    target: str | None = None
    task: str = "auto"
    baselines: bool = True
    exclude: tuple[str, ...] = ()  # globs, relative to the config file's folder
    extend_exclude: tuple[str, ...] = ()

    @property
    def effective_select(self) -> list[str] | None:
        if self.select is None:
            return None
        return [*self.select, *self.extend_select]

    def rules(self) -> list:
        """The rule classes an audit with these settings runs, in code order."""
        from datavet.rules import select_rules

        return select_rules(self.effective_select, list(self.ignore))

    def audit_options(self) -> dict[str, Any]:
        """Keyword arguments for :func:`datavet.audit`."""
        return {
            "select": self.effective_select,
            "ignore": list(self.ignore),
            "fail_on": self.fail_on,
            "severity": dict(self.severity),
            "thresholds": {k: dict(v) for k, v in self.thresholds.items()},
            "per_column_ignores": self.per_column_ignores,
            "baselines": self.baselines,
        }

    def dataset_options(self, dataset: Dataset | None = None) -> dict[str, Any]:
        """What auditing ``dataset`` (None: data outside the config's datasets) takes from the
        settings, as keyword arguments of :func:`datavet.audit`: its target and task, falling
        back to the project's, and its group, time, tensor inputs and CSV delimiter. The one
        mapping ``datavet audit --dataset NAME`` and ``assert_clean(dataset=NAME)`` share."""
        d = dataset
        return {
            "target": (d.target if d else None) or self.target,
            "task": (d.task if d else None) or self.task,
            "group": d.group if d else None,
            "time": d.time if d else None,
            "inputs": d.inputs if d else None,
            "delimiter": d.delimiter if d else None,
        }

    def dataset(self, name: str) -> Dataset:
        """The dataset ``name`` of the config; a ConfigError listing the names when unknown."""
        if name not in self.datasets:
            known = ", ".join(self.datasets) or "none"
            where = f" ({display(self.config)})" if self.config else " (no config file found)"
            raise ConfigError(f"unknown dataset {name!r}; the config names: {known}{where}")
        return self.datasets[name]

    def override(
        self,
        *,
        select: Sequence[str] | None = None,
        extend_select: Sequence[str] | None = None,
        ignore: Sequence[str] | None = None,
        fail_on: str | Severity | None = None,
        target: str | None = None,
        task: str | None = None,
        baselines: bool | None = None,
    ) -> Settings:
        """Command-line flags over the file. ``select`` replaces the file's selection (its
        ``select``, ``extend-select`` and ``ignore``); ``extend_select`` and ``ignore`` add."""
        from datavet.rules import select_rules

        changes: dict[str, Any] = {}
        if select:
            changes.update(select=_selectors(select), extend_select=(), ignore=())
        if extend_select:
            base = changes.get("extend_select", self.extend_select)
            changes["extend_select"] = (*base, *_selectors(extend_select))
        if ignore:
            base = changes.get("ignore", self.ignore)
            changes["ignore"] = (*base, *_selectors(ignore))
        if fail_on is not None:
            changes["fail_on"] = Severity.parse(fail_on)
        if target is not None:
            changes["target"] = target
        if task is not None:
            changes["task"] = task
        if baselines is not None:
            changes["baselines"] = baselines
        new = replace(self, **changes)
        select_rules(new.effective_select, list(new.ignore))  # unknown codes: UsageError now
        return new

    def to_dict(self) -> dict[str, Any]:
        """Plain data with the config file's key names (``fail-on``, ``per-column-ignores``)."""
        out: dict[str, Any] = {
            "select": list(self.select) if self.select is not None else ["ALL"],
            "extend-select": list(self.extend_select),
            "ignore": list(self.ignore),
            "fail-on": self.fail_on.label,
            "target": self.target,
            "task": self.task,
            "baselines": self.baselines,
            "exclude": list(self.exclude),
            "extend-exclude": list(self.extend_exclude),
            "severity": {k: v.label for k, v in self.severity.items()},
            "thresholds": {k: dict(v) for k, v in self.thresholds.items()},
            "per-column-ignores": {
                ig.column: {"rules": list(ig.rules), "reason": ig.reason}
                for ig in self.per_column_ignores
            },
            "datasets": {
                d.name: {
                    k: v
                    for k, v in (
                        ("train", d.train),
                        ("test", d.test),
                        ("target", d.target),
                        ("task", d.task),
                        ("group", d.group),
                        ("time", d.time),
                        ("inputs", d.inputs),
                        ("delimiter", d.delimiter),
                    )
                    if v is not None
                }
                for d in self.datasets.values()
            },
        }
        return out

    def to_toml(self) -> str:
        """The settings as a ``datavet.toml``: reading it back gives the same settings."""
        source = display(self.config) if self.config else "defaults (no config file found)"
        head = [
            f"# datavet settings resolved from {source} and the command line",
            "# rules: " + ", ".join(r.code for r in self.rules()),
        ]
        return "\n".join(head) + "\n" + toml_text(self.to_dict())


def _selectors(values: Iterable[str]) -> tuple[str, ...]:
    return tuple(p.strip() for v in values for p in str(v).split(",") if p.strip())
