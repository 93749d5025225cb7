"""Data checks inside a pytest suite: ``assert_clean`` fails a test with the findings as the
message, so data problems show up in pytest's own output and its JUnit XML.

No pytest plugin is registered: this is a plain function, so importing it costs nothing at
pytest start-up and the suite needs no marker or fixture.
"""

from __future__ import annotations

import os
from typing import Any

from datavet.errors import UsageError
from datavet.findings import Severity
from datavet.output.text import clean
from datavet.report import Report


def assert_clean(
    data: Any = None,
    test: Any = None,
    *,
    dataset: str | None = None,
    config: bool | str | os.PathLike = False,
    fail_on: str | Severity | None = None,
    **options: Any,
) -> Report:
    """Audit ``data`` (and ``test``) and fail the calling test when findings reach ``fail_on``.

    Parameters
    ----------
    data, test : path, DataFrame, pyarrow Table, (X, y) arrays, or a Report
        What :func:`datavet.audit` takes; a :class:`Report` is checked as it is.
    dataset : str, optional
        Audit this dataset named in the project's ``[tool.datavet.datasets]`` instead (implies
        ``config=True``): what ``datavet audit --dataset NAME`` audits, with the dataset's
        target (else the project's), task, group, time, inputs and delimiter.
    config : bool or path
        Use the project's datavet settings (``True``: found from the working directory, as the
        command line does; a path: that file). Keyword options given here win over it.
    fail_on : {"info", "warning", "error"}, optional
        Default: the config's ``fail-on``, else ``"error"``.
    **options
        Passed to :func:`datavet.audit` (``target``, ``select``, ``per_column_ignores``...).

    Returns
    -------
    Report
        The report, when nothing reached ``fail_on``.

    Raises
    ------
    AssertionError
        With one line per failing finding (and per crashed rule).

    Examples
    --------
    >>> import pandas as pd
    >>> from datavet.testing import assert_clean
    >>> df = pd.DataFrame({"x": [1.0, 2.0, 3.0, 4.0], "y": [1.0, 0.0, 2.0, 1.0],
    ...                    "label": [0, 1, 0, 1]})
    >>> assert_clean(df, target="label", select="V")
    <Report exit_code=0 findings: 0 error, 0 warning, 0 info>
    """
    __tracebackhide__ = True  # pytest shows the assertion, not this frame
    if isinstance(data, Report):
        report = data
    else:
        from datavet import config as cfg
        from datavet.api import audit

        kwargs: dict[str, Any] = {}
        if config is not False or dataset is not None:
            settings = cfg.load(None if config in (True, False) else config)
            kwargs.update(settings.audit_options())
            named = None
            if dataset is not None:
                if data is not None or test is not None:
                    raise UsageError("assert_clean: give data or dataset=, not both")
                named = settings.dataset(dataset)
                data, test = named.train, named.test
            # what `datavet audit --dataset NAME` audits: the dataset's target (else the
            # project's), task, group, time, inputs and delimiter
            kwargs.update(
                {k: v for k, v in settings.dataset_options(named).items() if v is not None}
            )
        if data is None:
            raise UsageError("assert_clean: nothing to audit (pass data or dataset=)")
        kwargs.update(options)
        if fail_on is not None:
            kwargs["fail_on"] = fail_on
        report = audit(data, test, **kwargs)
    level = report.fail_on if fail_on is None else Severity.parse(fail_on)
    if report.exit_code(level) != 0:
        raise AssertionError(failure_message(report, level))
    return report


def failure_message(report: Report, level: Severity) -> str:
    """What a failing data test prints: a headline and one line per finding that fails."""
    failing = report.failing(level)
    lines = [
        f"datavet: {len(failing)} finding{'s' if len(failing) != 1 else ''} at or above "
        f"'{level.label}'" + (f", {len(report.crashed)} crashed rule(s)" if report.crashed else "")
    ]
    for f in failing:
        where = f" [{f.split}]" if f.split else ""
        lines.append(f"  {f.severity.label} {f.code} {f.name}{where}: {clean(f.message)}")
        if f.hint:
            lines.append(f"      fix: {clean(f.hint)}")
    for o in report.crashed:
        lines.append(f"  crashed {o.code} {o.name}: {clean(o.reason or '')}")
    return "\n".join(lines)
