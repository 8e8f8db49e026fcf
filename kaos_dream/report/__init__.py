"""`kaos report`: what the library has learned, as one self-contained HTML file.

* :func:`build_report` renders the document from read-only queries (``queries``, ``records``);
* :func:`write_report` puts it on disk atomically, never over a file it did not write;
* charts (``charts``) need the optional ``report`` extra; :func:`available` says whether it is there.
"""

from __future__ import annotations

from .build import build_report
from .extra import INSTALL_LINE, ReportExtraMissing, available, require_plotting
from .output import write_report

__all__ = ["INSTALL_LINE", "ReportExtraMissing", "available", "build_report", "require_plotting", "write_report"]
