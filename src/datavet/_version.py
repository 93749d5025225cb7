"""The package version, in one place low enough for every layer to read."""

__version__ = "0.1.0"
