"""Hardening: the bad-input matrix (REFERENCE 3.3), property-based tests, a corruption fuzzer
for the readers, hostile content in every output format, and nothing lost (inputs unchanged,
reports written atomically)."""
