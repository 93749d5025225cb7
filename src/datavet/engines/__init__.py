"""Engines turn a source into a Profile. ``local`` streams batches in this process."""
