"""``datavet rules`` (every rule of every family) and ``datavet rule CODE`` (one rule's
documentation: its What/Why/How docstring and thresholds)."""

from __future__ import annotations

import inspect


def add_parsers(sub) -> None:
    sub.add_parser("rules", help="list every rule")
    r = sub.add_parser("rule", help="explain one rule")
    r.add_argument("code", metavar="CODE", help="a rule code (V001) or name (nan-values)")


def run_rules() -> int:
    from datavet.rules import CURVE_RULES, PROBES, RULES

    rows = [(r.code, r.name, r.severity.label, r.summary) for r in (*RULES, *PROBES, *CURVE_RULES)]
    w = [max(len(row[i]) for row in rows) for i in range(3)]
    print(f"{'code':<{w[0]}}  {'name':<{w[1]}}  {'default':<{max(w[2], 7)}}  summary")
    for code, name, sev, summary in rows:
        print(f"{code:<{w[0]}}  {name:<{w[1]}}  {sev:<{max(w[2], 7)}}  {summary}")
    return 0


def run_rule(key: str) -> int:
    from datavet.rules import lookup

    rule = lookup(key)
    doc = inspect.cleandoc(rule.__doc__ or "")
    print(f"{rule.code} {rule.name} (default severity: {rule.severity.label})\n")
    print(doc)
    if rule.thresholds:
        print("\nThresholds: " + ", ".join(f"{k} = {v}" for k, v in rule.thresholds.items()))
    return 0
