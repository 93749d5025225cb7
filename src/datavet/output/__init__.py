"""Renderers: pure functions ``Report -> str``, one module per format (the registry
:data:`FORMATS`, which every command's ``--format`` offers), and writing a rendered report."""

from __future__ import annotations

import os

from datavet.output import concise as concise_output
from datavet.output import github as github_output
from datavet.output import gitlab as gitlab_output
from datavet.output import json as json_output
from datavet.output import junit as junit_output
from datavet.output import sarif as sarif_output
from datavet.output import text as text_output


def _text(report, *, colour: bool = False) -> str:
    """Human text: the curve view for a training-log diagnosis, else the audit view."""
    data = report.to_dict()
    if data.get("curves") is not None:
        from datavet.output.text_curves import render_dict as curves_text

        return curves_text(data, colour=colour)
    return text_output.render_dict(data, colour=colour)


FORMATS = {
    "text": _text,
    "json": json_output.render,
    "junit": junit_output.render,
    "sarif": sarif_output.render,
    "github": github_output.render,
    "gitlab": gitlab_output.render,
    "concise": concise_output.render,
}
# Formats that hold several audits (named datasets) in one document.
MANY = {
    "junit": junit_output.render_many,
    "sarif": sarif_output.render_many,
    "github": github_output.render_many,
    "gitlab": gitlab_output.render_many,
    "concise": concise_output.render_many,
}


def render(report, fmt: str = "text", **options) -> str:
    # valid UTF-8 whatever the renderer took from outside the payload (a file name that is not)
    return json_output.utf8_text(FORMATS[fmt](report, **options))


def _one_line(value) -> str:
    """Data on a line of its own: no control character, no line break (nothing after it can
    start a line, so nothing can pass for a CI workflow command)."""
    return text_output.clean(str(value).replace("\r", "\\r").replace("\n", "\\n"))


def render_many(items, fmt: str = "text", **options) -> str:
    """Several audits, ``[(dataset name or None, report, locations or None), ...]``, in one
    output: a testsuite / run each in JUnit and SARIF, one capped set of annotations for
    GitHub, a section each in text. JSON holds exactly one report."""
    if fmt in MANY:
        return json_output.utf8_text(MANY[fmt](items))
    if len(items) == 1:
        return render(items[0][1], fmt, **options)
    if fmt == "text":
        return "\n".join(
            f"== dataset {_one_line(name)} ==\n" + render(report, fmt, **options)
            for name, report, _ in items
        )
    from datavet.errors import UsageError

    raise UsageError(f"--format {fmt} holds one report; choose one dataset with --dataset NAME")


def save(report, path: str | os.PathLike[str], fmt: str = "html", **options) -> None:
    """Render ``report`` in ``fmt`` (a :data:`FORMATS` key, or ``"html"``) and write it to
    ``path`` atomically (a temporary file beside it, then a rename)."""
    from datavet._io import write_atomic

    if fmt == "html":
        from datavet.output.html import render as page

        text = page(report)
    else:
        text = render(report, fmt, **options)
    write_atomic(path, text)
