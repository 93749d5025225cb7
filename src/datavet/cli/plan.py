"""Job planning for ``datavet audit`` and ``datavet check``: the settings of a parsed command
line, and which audits to run (the given files, or the datasets the config names)."""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType

from datavet.config import Dataset, Settings, excluded, find_config, load
from datavet.config.text import display
from datavet.errors import UsageError
from datavet.framework import NothingSelected


@dataclass(frozen=True)
class Job:
    """One audit the command line runs: a named dataset from the config, or paths given."""

    name: str | None
    train: str
    test: str | None
    target: str | None
    task: str
    locations: Mapping[str, tuple[str, int]] = field(default_factory=dict)
    group: str | None = None
    time: str | None = None
    inputs: str | None = None
    delimiter: str | None = None


def config_path(args) -> Path | None:
    """The config file a parsed command line reads: ``--config``, else the one found; None with
    ``--isolated``."""
    if _isolated(args):
        return None
    config = getattr(args, "config", None)
    return Path(config) if config is not None else find_config()


def _isolated(args) -> bool:
    """``--isolated``; with ``--config`` too it is a usage error: the file named would be
    ignored."""
    if not getattr(args, "isolated", False):
        return False
    if getattr(args, "config", None) is not None:
        raise UsageError("--config and --isolated cannot be used together")
    return True


def from_args(args) -> Settings:
    """Settings for a parsed command line: the config file (``--config``, or found; none with
    ``--isolated``) with the flags over it."""
    settings = Settings() if _isolated(args) else load(getattr(args, "config", None))
    flags = {k: getattr(args, k, None) for k in ("select", "extend_select", "ignore")}
    try:
        return settings.override(
            **flags,
            fail_on=getattr(args, "fail_on", None),
            target=None,  # --target applies to the audited data, not to the file's default
            task=None,
            baselines=None if getattr(args, "baselines", True) else False,
        )
    except NothingSelected as exc:
        # --select replaces the file's selection; otherwise the file's part of it shows too
        if settings.config is None or flags["select"]:
            raise
        file = display(settings.config)
        where = f"{file} and the command line" if any(flags.values()) else file
        raise UsageError(f"{exc} ({where})") from None


def plan(settings: Settings, args) -> list[Job]:
    """The audits for ``datavet audit``: the given TRAIN/TEST, or the config's datasets
    (all of them, or those named with ``--dataset``)."""
    train = getattr(args, "train", None)
    wanted = getattr(args, "dataset", None) or []
    target = getattr(args, "target", None)
    task = getattr(args, "task", None)
    if train is not None:
        if wanted:
            raise UsageError("give either TRAIN or --dataset, not both")
        test = getattr(args, "test", None)
        named = dataset_for(settings, train, test)
        return [_job(settings, named, train, test, target, task)]
    if getattr(args, "test", None) is not None:
        raise UsageError("--test needs TRAIN")
    if not settings.datasets:
        where = (
            f"{display(settings.config)} has no datasets"
            if settings.config
            else "no config file found"
        )
        raise UsageError(
            f"nothing to audit: give TRAIN, or name datasets in [tool.datavet.datasets] ({where})"
        )
    unknown = [n for n in wanted if n not in settings.datasets]
    if unknown:
        known = ", ".join(settings.datasets)
        raise UsageError(f"unknown dataset {unknown[0]!r}; the config names: {known}")
    names = list(dict.fromkeys(wanted)) or list(settings.datasets)
    return [_job(settings, settings.datasets[n], None, None, target, task) for n in names]


def plan_files(settings: Settings, files: Sequence[str], args, note=None) -> list[Job]:
    """The audits for ``datavet check FILE...`` (the pre-commit hook): a file that is part of
    config datasets (a split itself, a file in a split's directory, or one its glob matches) is
    audited as each of those whole datasets (so train/test overlap is still checked), any other
    file alone. A file that ``exclude`` / ``extend-exclude`` matches is skipped,
    with a line to ``note`` (a callable taking the text) saying which pattern matched."""
    jobs: list[Job] = []
    seen: set[str] = set()
    for f in files:
        pattern = excluded(settings, f)
        if pattern is not None:
            if note is not None:
                where = display(settings.config) if settings.config else "the settings"
                note(f"skipped {f}: excluded by {pattern!r} ({where})")
            continue
        target, task = getattr(args, "target", None), getattr(args, "task", None)
        holding = datasets_holding(settings, f)
        for named in holding:  # every dataset the file is part of, audited whole
            key = f"dataset:{named.name}"
            if key not in seen:
                seen.add(key)
                jobs.append(_job(settings, named, None, None, target, task))
        key = f"file:{_norm(f)}"
        if not holding and key not in seen:
            seen.add(key)
            jobs.append(_job(settings, None, f, None, target, task))
    return jobs


def datasets_holding(settings: Settings, path: str | os.PathLike) -> list[Dataset]:
    """The config's datasets that ``path`` is part of, in the config's order: a split that is
    the file, a directory the file is in (a Hive partition of it), or a glob it matches."""
    file = _norm(path)
    return [
        d
        for d in settings.datasets.values()
        if any(split is not None and _holds(split, file) for split in (d.train, d.test))
    ]


def _holds(split: str, file: str) -> bool:
    """Whether the split ``split`` (a path, directory or glob of the config) takes in ``file``
    (normalised by :func:`_norm`). A URL names no local file, but for ``file://``."""
    from datavet._io import glob_regex, split_glob
    from datavet.sources.fs import is_glob, is_url

    if split.startswith("file://"):  # a local file named as a URL
        from urllib.parse import unquote, urlsplit

        split = unquote(urlsplit(split).path)
    elif is_url(split):
        return False
    where = _norm(split)
    if where == file:
        return True
    if os.path.isdir(split):
        return file.startswith(where.rstrip(os.sep) + os.sep)
    if os.path.lexists(split) or not is_glob(split):
        return False
    base, pattern = split_glob(Path(os.path.abspath(split)).as_posix())
    try:
        rel = Path(file).relative_to(os.path.normcase(base or "/")).as_posix()
    except ValueError:
        return False
    return glob_regex(os.path.normcase(pattern)).fullmatch(rel) is not None


def _job(settings, named: Dataset | None, train, test, target, task) -> Job:
    if named is not None and train is None:
        train, test = named.train, named.test
    own = settings.dataset_options(named)  # what assert_clean(dataset=NAME) audits too
    if target is None:  # --target '' is passed on, to be refused as an empty name
        target = own["target"]
    task = task or own["task"]
    locations: dict[str, tuple[str, int]] = {}
    if named is not None and settings.config is not None:
        uri = _repo_uri(settings.config)
        try:
            text = settings.config.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError):
            text = []

        def at(line: int) -> tuple[str, int, int | None]:
            end = len(text[line - 1]) + 1 if 0 < line <= len(text) else None
            return (uri, line, end)

        table = named.lines.get("table", 1)
        locations["dataset"] = at(table)
        for split in ("train", "test"):
            locations[split] = at(named.lines.get(split, table))
    else:
        for split, path in (("train", train), ("test", test)):
            if path is not None and Path(path).is_file():
                locations[split] = (_repo_uri(Path(path)), 1)
        if "train" in locations:
            locations["dataset"] = locations["train"]
    return Job(
        name=named.name if named else None,
        train=str(train),
        test=str(test) if test is not None else None,
        target=target,
        task=task,
        locations=MappingProxyType(locations),
        group=own["group"],
        time=own["time"],
        inputs=own["inputs"],
        delimiter=own["delimiter"],
    )


def per_dataset_paths(path: str | os.PathLike, jobs: Sequence[Job]) -> list[Path]:
    """``reports/audit.html`` -> ``reports/audit-NAME.html``, a file of its own for every job:
    jobs whose names come out alike (``d2023/train.csv`` and ``d2024/train.csv``; datasets
    ``a/b`` and ``a_b``; names differing only in case) are numbered in the order they are
    audited (``audit-train-1.html``, ``audit-train-2.html``), never one report written over
    another."""
    p = Path(path)
    labels = [_label(job) for job in jobs]
    counts = Counter(label.casefold() for label in labels)
    taken = set(counts)
    numbers: Counter[str] = Counter()
    out = []
    for label in labels:
        key = label.casefold()
        if counts[key] > 1:
            while f"{label}-{numbers[key] + 1}".casefold() in taken:
                numbers[key] += 1
            numbers[key] += 1
            label = f"{label}-{numbers[key]}"
            taken.add(label.casefold())
        out.append(p.with_name(f"{p.stem}-{label}{p.suffix}"))
    return out


def _label(job: Job) -> str:
    label = job.name or Path(job.train).stem
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", label).strip("._") or "dataset"


def _norm(path) -> str:
    return os.path.normcase(os.path.abspath(str(path)))


def dataset_for(settings: Settings, train, test) -> Dataset | None:
    """The config dataset whose paths these are (to point SARIF at its config line)."""
    t = _norm(train)
    for d in settings.datasets.values():
        same_test = (test is None and d.test is None) or (
            test is not None and d.test is not None and _norm(test) == _norm(d.test)
        )
        if _norm(d.train) == t and same_test:
            return d
    return None


def _repo_root() -> Path | None:
    workspace = os.environ.get("GITHUB_WORKSPACE")
    if workspace:
        return Path(workspace).resolve()
    here = Path.cwd().resolve()
    for folder in (here, *here.parents):
        if (folder / ".git").exists():
            return folder
    return None


def _repo_uri(path: Path) -> str:
    """How GitHub code scanning names a file: relative to the repository root, with /."""
    absolute = Path(path).resolve()
    for root in (_repo_root(), Path.cwd().resolve()):
        if root is None:
            continue
        try:
            return absolute.relative_to(root).as_posix()
        except ValueError:
            continue
    return absolute.as_uri()
