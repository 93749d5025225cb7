"""The docs a user reads: the generated rule reference is current, links between pages resolve,
and the front page stays a front page."""

from __future__ import annotations

import re
from pathlib import Path

from datavet.docs import all_rules, rules_markdown

ROOT = Path(__file__).resolve().parents[1]


def test_the_rule_reference_is_current():
    current = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    assert current == rules_markdown(), (
        "docs/rules.md is stale: run `python -m datavet.docs > docs/rules.md` (make docs)"
    )


def test_every_rule_of_every_family_is_in_the_reference():
    text = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    for rule in all_rules():
        assert f"### {rule.code} {rule.name}" in text


def _links(path: Path):
    for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", path.read_text(encoding="utf-8")):
        if "://" not in target:
            yield target


def test_relative_links_in_readme_and_docs_resolve():
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    broken = [
        f"{page.relative_to(ROOT)} -> {target}"
        for page in pages
        for target in _links(page)
        if not (page.parent / target).exists()
    ]
    assert not broken, broken


def test_the_readme_is_a_front_page():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 300


def test_the_docs_speak_to_users():
    """No page (nor the rule text they are generated from) points at material users cannot see."""
    phrases = ("source chapter", "seed table", "the seed's", "this round", "../shared", "DESIGN.md")
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        text = page.read_text(encoding="utf-8")
        found = [p for p in phrases if p in text]
        assert not found, f"{page.name}: {found}"
