"""Which columns look like identifiers (patient, user, session, row keys)?

A column is ID-like when it holds text or whole numbers, has many distinct values (at least 20
and at least 1% of the rows, estimated from its KMV sketch), and either is text or has a name
that says it is a key (``id``, ``uuid``, ``patient``, ``user_id``...). Whole-number columns
without such a name (counts, ages, prices in cents) are measurements, not IDs.
"""

from __future__ import annotations

import re

from datavet.scan.profile import Profile

ID_NAME = re.compile(
    r"(^|[_\W])(id|ids|uuid|guid|key|pk|index|idx|patient|subject|user|customer|account|session"
    r"|device|participant)s?($|[_\W])",
    re.IGNORECASE,
)
CAMEL_ID = re.compile(r"[a-z0-9](Id|ID|Uuid|UUID|Key)$")
MIN_DISTINCT = 20
MIN_DISTINCT_FRACTION = 0.01


def looks_like_key_name(name: str) -> bool:
    return bool(ID_NAME.search(name) or CAMEL_ID.search(name))


def id_like_columns(profile: Profile, exclude: tuple[str, ...] = ()) -> list[str]:
    out = []
    for col in profile.columns.values():
        if col.name in exclude or col.keys is None or col.present == 0:
            continue
        separated = getattr(col, "separated", None)
        if separated is not None and separated.count + col.numeric_text >= 0.9 * col.present:
            continue  # numbers written with separators ("47,617"): V006, not identifiers
        integer = col.kind == "numeric"
        if integer and not looks_like_key_name(col.name):
            continue
        distinct = col.keys.distinct()
        if distinct >= MIN_DISTINCT and distinct >= MIN_DISTINCT_FRACTION * col.present:
            out.append(col.name)
    return out
