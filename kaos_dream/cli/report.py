"""`kaos report`: write the HTML report of a library (the work is in kaos_dream.report)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer

from .. import report
from ..library import Library
from . import output
from .common import DbOption, JsonOption, reply, resolve_db, wants_json
from .dream_run import parse_since


def write_report_of(db: str, out: str | Path, since: float | None = None,
                    progress: Callable[[str, int, int], None] | None = None) -> tuple[Path, int]:
    """Render the library at ``db`` (opened read-only) into ``out``; the path written and its size."""
    with Library(db, readonly=True) as lib:
        document = report.build_report(lib, since=since, progress=progress)
    return report.write_report(document, out, db), len(document.encode())


def report_cmd(
    ctx: typer.Context,
    out: Annotated[str, typer.Option("--out", "-o", metavar="FILE", help="Where to write the HTML file (an "
                                     "earlier report there is replaced, no other file).")]
    = "report.html",
    since: Annotated[str | None, typer.Option("--since", metavar="TS", help="Charts over time start here "
                                              "(epoch seconds or ISO-8601; totals stay all-time).")] = None,
    db: DbOption = None,
    json_out: JsonOption = False,
) -> None:
    """Write one self-contained HTML file showing what the library learned: overview, skills,
    failures, graph and dream passes (read-only; no server, no network; needs the report extra).

    Example: kaos report --out report.html --since 2026-01-01
    """
    if not report.available():
        raise report.ReportExtraMissing(f"kaos report draws its charts with matplotlib; install it with: "
                                        f"{report.INSTALL_LINE}")
    since_ts = parse_since(since)
    with output.progress_bar("report", not wants_json(ctx, json_out)) as progress:
        path, size = write_report_of(resolve_db(ctx, db), out, since_ts, progress)
    reply(ctx, json_out, {"path": os.path.abspath(path), "bytes": size}, f"report written to {os.path.abspath(path)}")
