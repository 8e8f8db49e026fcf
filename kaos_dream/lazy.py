"""Package attributes that load on first use, so importing a package costs only what its caller uses.

``kaos --version`` must not import the library, and ``import kaos_dream.graph`` must not import numpy:
both packages list their public names with the submodule each lives in, and :func:`lazy_attributes`
gives them the module ``__getattr__`` (PEP 562) that imports a name's submodule when it is first read.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_attributes(package: str, table: Mapping[str, str], namespace: dict[str, Any]) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``package``: ``table`` maps a public name to the submodule that
    defines it; the value is imported on first use and kept in ``namespace`` (the package's globals),
    so later reads do not come back here."""

    def __getattr__(name: str) -> Any:
        module = table.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f".{module}", package), name)
        namespace[name] = value
        return value

    return __getattr__
