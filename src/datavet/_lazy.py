"""Heavy optional modules bound at module level but imported on first use.

``from datavet._lazy import pandas as pd`` keeps ``pd.DataFrame`` and friends working in a
module's code while importing that module costs nothing: pandas (about 0.3-0.5 s) loads the
first time an attribute of ``pd`` is read. Each attribute read is cached on the proxy, so a
hot loop pays the indirection once.
"""

from __future__ import annotations

import importlib
import sys
from types import ModuleType


class LazyModule:
    """Stands for the module ``name``; the first attribute read imports it."""

    def __init__(self, name: str) -> None:
        self.__dict__["_name"] = name

    def __getattr__(self, attr: str):
        value = getattr(self._module(), attr)
        self.__dict__[attr] = value  # cached: later reads are plain attribute reads
        return value

    def _module(self) -> ModuleType:
        return importlib.import_module(self.__dict__["_name"])

    def loaded(self) -> bool:
        """Whether the module has been imported (by anyone): a value can only be one of its
        types if it has."""
        return self.__dict__["_name"] in sys.modules

    def __repr__(self) -> str:
        return f"<lazy module {self.__dict__['_name']!r}>"


pandas = LazyModule("pandas")
