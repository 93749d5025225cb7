"""A value computed on a thread of its own while the caller goes on.

After the scan an audit has three independent pieces of evidence to compute: the row checks
(S001-S003: sorting the row hashes), the near-duplicate rows (S007) and the baselines (the B
rules: fitting the linear models). Each is mostly NumPy, which releases the GIL, so they run
side by side with each other and with the rules that need none of them; a rule that needs one
waits for it (:meth:`Later.get`). The results are the same as computed one after another.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)


class Later(Generic[T_co]):
    """``function(*args)``, started now on a daemon thread (or computed right here when
    ``thread`` is false: one worker asked for, everything in order on the calling thread).

    :meth:`get` waits for the value and returns it, or raises what ``function`` raised (to
    every caller that asks)."""

    def __init__(
        self, function: Callable[..., T_co], *args, name: str = "datavet-later", thread: bool = True
    ) -> None:
        self._done = threading.Event()
        self._value: T_co | None = None
        self._error: BaseException | None = None
        if thread:
            worker = threading.Thread(
                target=self._run, args=(function, args), name=name, daemon=True
            )
            worker.start()
        else:
            self._run(function, args)

    def _run(self, function: Callable[..., T_co], args: tuple) -> None:
        try:
            self._value = function(*args)
        except BaseException as exc:  # noqa: BLE001 - raised again by get(), in the reader
            self._error = exc
        finally:
            self._done.set()

    def done(self) -> bool:
        return self._done.is_set()

    def get(self) -> T_co:
        self._done.wait()
        if self._error is not None:
            raise self._error
        return self._value  # type: ignore[return-value]

    @staticmethod
    def now(value: T | Later[T]) -> T:
        """``value`` itself, or what it stands for when it is a :class:`Later`."""
        return value.get() if isinstance(value, Later) else value
