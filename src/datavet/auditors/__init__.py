"""Auditors: pure functions of split profiles. One rule per module; the docstring is its manual."""
