"""The optional ``report`` extra: matplotlib draws the charts, networkx lays out the graph picture."""

from __future__ import annotations

import importlib.util

from ..errors import KaosError

INSTALL_LINE = 'pip install "kaos-dream[report]"'


class ReportExtraMissing(KaosError):
    """The plotting libraries are not installed; the message is the line that installs them."""


def missing_packages() -> list[str]:
    missing = []
    for module in ("matplotlib", "networkx"):
        try:
            found = importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):  # a module set to None in sys.modules, a broken install
            found = False
        if not found:
            missing.append(module)
    return missing


def available() -> bool:
    return not missing_packages()


def require_plotting() -> None:
    missing = missing_packages()
    if missing:
        raise ReportExtraMissing(f"the report needs {' and '.join(missing)}: {INSTALL_LINE}")
