"""A real headless Chromium (Debian package `chromium`) for tests that open the HTML report."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from html.parser import HTMLParser
from pathlib import Path

import pytest

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def chromium() -> str:
    """The browser, or a skip (one line in pytest's summary for all browser tests) saying how to
    enable them; under CI (``CI=true``) a missing browser fails instead."""
    path = os.environ.get("DATAVET_CHROMIUM") or shutil.which("chromium")
    if path is None:
        message = (
            "Chromium not found: apt-get install chromium (or set DATAVET_CHROMIUM) to run the "
            "HTML report tests in a browser"
        )
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(message + " (required under CI)")
        pytest.skip(message)
    return path


def run(page: Path, *extra: str, timeout: float = 60) -> subprocess.CompletedProcess:
    with tempfile.TemporaryDirectory() as profile:
        return subprocess.run(
            [chromium(), *FLAGS, f"--user-data-dir={profile}", *extra, page.resolve().as_uri()],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=True,
        )


def dump_dom(page: Path) -> str:
    """The DOM after Chromium loaded the page (scripts, if any, have run)."""
    return run(page, "--dump-dom").stdout


def screenshot(page: Path, out: Path, size: str = "1200,2400") -> Path:
    out.parent.mkdir(parents=True, exist_ok=True)
    run(page, f"--screenshot={out.resolve()}", f"--window-size={size}", "--hide-scrollbars")
    return out


class Elements(HTMLParser):
    """Every start tag with its attributes, in document order."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, dict[str, str | None]]] = []
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        self.elements.append((tag, dict(attrs)))

    def with_attr(self, name: str) -> list[tuple[str, dict]]:
        return [(t, a) for t, a in self.elements if name in a]

    def tags(self, tag: str) -> list[dict]:
        return [a for t, a in self.elements if t == tag]
