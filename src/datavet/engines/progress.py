"""Progress on stderr for long scans: rows done / total, rows/s, time left.

Quiet for scans under ``delay`` seconds and when stderr is not a terminal, unless forced.
"""

from __future__ import annotations

import sys
import time


class Progress:
    def __init__(
        self,
        label: str,
        total: int | None,
        *,
        enabled: bool | None = None,
        delay: float = 1.5,
        stream=None,
    ) -> None:
        self.stream = stream or sys.stderr
        if enabled is None:
            enabled = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.enabled = enabled
        self.label = label
        self.total = total
        self.done = 0
        self.started = time.perf_counter()
        self.delay = delay
        self.last = 0.0
        self.shown = False

    def update(self, rows: int) -> None:
        self.done += rows
        if not self.enabled:
            return
        now = time.perf_counter()
        elapsed = now - self.started
        if elapsed < self.delay or now - self.last < 0.25:
            return
        self.last = now
        rate = self.done / elapsed if elapsed > 0 else 0.0
        text = f"datavet: {self.label}: {self.done:,} rows"
        if self.total:
            left = (self.total - self.done) / rate if rate > 0 else 0.0
            text += f" of {self.total:,} ({100 * self.done / self.total:.0f}%), {_eta(left)} left"
        text += f", {rate:,.0f} rows/s"
        self.stream.write("\r" + text + "\x1b[K")
        self.stream.flush()
        self.shown = True

    def close(self) -> None:
        if self.shown:
            elapsed = time.perf_counter() - self.started
            self.stream.write(
                f"\rdatavet: {self.label}: {self.done:,} rows in {elapsed:.1f} s\x1b[K\n"
            )
            self.stream.flush()


def _eta(seconds: float) -> str:
    seconds = int(seconds)
    if seconds >= 3600:
        return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"
    if seconds >= 60:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds}s"
