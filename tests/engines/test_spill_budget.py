"""--max-memory counts the row hashes a split keeps in memory: above the local engine's spill
threshold they are on disk, so a 100M-row split is not refused for 4 GB of hashes it never
holds."""

from __future__ import annotations

from datavet.engines import local
from datavet.sources.budget import HASH_BYTES, HASHES_IN_MEMORY, Budget, Estimate, hash_bytes


def test_the_budget_and_the_engine_agree_on_the_threshold():
    assert local.SPILL_ROWS == HASHES_IN_MEMORY


def test_hashes_count_up_to_the_spill_threshold():
    assert hash_bytes(1_000) == 1_000 * HASH_BYTES
    assert hash_bytes(100_000_000) == HASHES_IN_MEMORY * HASH_BYTES
    big = Estimate(name="train", rows=100_000_000, row_bytes=200, basis="metadata")
    assert big.need(65_536, 50_000) < 1 << 30  # was 4 GB of hashes alone


def test_the_running_budget_counts_the_same():
    budget = Budget(2 << 30, batch_rows=65_536, sample_rows=50_000)
    budget.seen["train"] = [100_000_000, 100_000_000 * 200, 65_536 * 200]
    assert budget.need() < 1 << 30
