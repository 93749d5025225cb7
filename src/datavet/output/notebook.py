"""A report in a Jupyter notebook (``Report._repr_html_``)."""

from __future__ import annotations

import html


def render(report) -> str:
    """The full HTML report (verdict, findings, charts) inside an ``<iframe srcdoc>``, so its
    styles never reach the notebook's page and the notebook's never reach it. The frame is
    sandboxed: nothing in it may run a script (the report has none). Its title carries the
    verdict for screen readers."""
    from datavet.output.html import render as page

    counts = ", ".join(f"{n} {k}" for k, n in report.counts().items())
    verdict = "passed" if report.passed else f"failed (exit code {report.exit_code()})"
    title = html.escape(f"datavet report: {verdict}; findings: {counts}", quote=True)
    return (
        '<div class="datavet-report">'
        f'<iframe srcdoc="{html.escape(page(report), quote=True)}" title="{title}" '
        'sandbox="allow-same-origin allow-popups allow-popups-to-escape-sandbox" '
        'style="width: 100%; height: 720px; border: 1px solid #d0d5dd; border-radius: 6px">'
        "</iframe></div>"
    )
