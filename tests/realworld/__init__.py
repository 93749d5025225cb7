"""Real tables: a deterministic sample of the sweep in bench/realworld_sweep.py."""
