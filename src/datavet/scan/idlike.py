"""Which columns look like identifiers (patient, user, session, row keys)?

A column is ID-like when it has many distinct values (at least 20 and at least 1% of the rows,
estimated from its KMV sketch) and either

- has a name that says it is a key (``id``, ``uuid``, ``patient``, ``user_id``...) and holds
  text or whole numbers, or
- holds text that is not numbers (a few ``?`` placeholders in a measurement do not make it an
  ID), shaped like a key (short, no spaces: not free text) and repeated on few rows per value
  (at most ``MAX_ROWS_PER_VALUE`` on average). A category such as ``city`` or ``product``,
  each value on tens of rows, is a feature, not an identifier.

Whole-number columns without a key name (counts, ages, prices in cents) are measurements.
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
MAX_ROWS_PER_VALUE = 5  # text without a key name: an ID names a row, or a few
NUMBER_SHARE = 0.9  # text this much numbers is a measurement (with placeholders), not an ID
_MAX_KEY_LENGTH = 64


def looks_like_key_name(name: str) -> bool:
    return bool(ID_NAME.search(name) or CAMEL_ID.search(name))


def id_like_columns(
    profile: Profile, exclude: tuple[str, ...] = (), *, subjects: bool = False
) -> list[str]:
    """The ID-like columns of ``profile``. ``subjects``: also key-shaped text on many rows per
    value, which may name a subject with many rows each (a country in panel data, a patient's
    visits) or be a plain category (a city): S006 asks about those; everything that leaves ID
    columns out (S007, S001's row keys, the baselines, F003) leaves out only the identifiers."""
    out = []
    for col in profile.columns.values():
        if col.name in exclude or col.keys is None or col.present == 0:
            continue
        distinct = col.keys.distinct()
        if distinct < MIN_DISTINCT or distinct < MIN_DISTINCT_FRACTION * col.present:
            continue
        separated = getattr(col, "separated", None)
        numbers = col.numeric_text + (separated.count if separated is not None else 0)
        if looks_like_key_name(col.name):
            if separated is None or numbers < NUMBER_SHARE * col.present:
                out.append(col.name)  # not numbers written with separators ("47,617"): V006
        elif (
            col.kind == "string"
            and numbers < NUMBER_SHARE * col.present
            and (subjects or distinct * MAX_ROWS_PER_VALUE >= col.present)
            # the counted values, or (all distinct, none counted) the first ones seen
            and _key_shaped(col.values.keys() or [v for _, v in col.text_values])
        ):
            out.append(col.name)
    return out


def _key_shaped(values) -> bool:
    """Whether there are ``values`` (text) and at least 90% of them are short and without
    spaces, as keys are and free text is not."""
    seen = [str(v) for v in values]
    plain = [v for v in seen if len(v) <= _MAX_KEY_LENGTH and not any(c.isspace() for c in v)]
    return bool(seen) and len(plain) >= 0.9 * len(seen)


# What pandas writes for a DataFrame's index: ``df.to_csv()`` gives it an empty header (read back
# as "" or "Unnamed: 0"), ``df.to_parquet()`` a column ``__index_level_0__``; R's row names
# arrive as a column ``rownames`` (or an empty header, from write.csv).
INDEX_NAME = re.compile(r"^(|Unnamed: \d+(\.\d+)?)$")
INDEX_LEVEL = re.compile(r"^(__index_level_\d+__|rownames)$")
ROW_KEY_DISTINCT = 0.9  # a row key names (almost) every row once; a group key repeats


def index_columns(fields) -> list[str]:
    """The columns of ``fields`` (``pyarrow.Field`` s) that hold a row index written with the
    data: pandas' ``__index_level_N__`` or R's ``rownames`` of any type, or an unnamed /
    ``Unnamed: N`` whole-number column among the first columns (``to_csv`` writes the index
    levels first; an unnamed column after a named one is data someone left unnamed). They name
    or number rows; they describe nothing."""
    import pyarrow as pa

    out = []
    leading = True
    for f in fields:
        typ = getattr(f.type, "value_type", f.type)
        unnamed = INDEX_NAME.match(f.name) and pa.types.is_integer(typ)
        if INDEX_LEVEL.match(f.name) or (unnamed and leading):
            out.append(f.name)
        else:
            leading = False
    return out


def row_key_columns(profile: Profile, id_columns) -> list[str]:
    """The ID-like columns that name single rows (an order number, a UUID): each value on (almost)
    one row only, and for text, short values without spaces (free text is a feature, not a key).
    A copy of a row made under a fresh key differs from the original only there, so the row
    checks (S001, S002) also compare rows with these columns left out. Keys that repeat (a user,
    a patient) group rows: leaving them out would call two users' identical purchases copies."""
    out = []
    for name in id_columns:
        col = profile.columns.get(name)
        if col is None or col.keys is None or not col.present:
            continue
        if col.keys.distinct() < ROW_KEY_DISTINCT * col.present:
            continue
        if col.kind == "string" and not _key_shaped(col.values.keys()):
            continue
        out.append(name)
    return out
