"""`kaos report`: write the HTML report of a library (the work is in kaos_dream.report)."""

from __future__ import annotations

import os
from typing import Annotated

import typer

from .. import report
from . import output
from .common import DbOption, JsonOption, open_for_read, resolved_db, wants_json
from .dream_run import parse_since


def report_cmd(
    ctx: typer.Context,
    out: Annotated[str, typer.Option("--out", "-o", metavar="FILE", help="Where to write the HTML file.")]
    = "report.html",
    since: Annotated[str | None, typer.Option("--since", metavar="TS", help="Charts over time start here "
                                              "(epoch seconds or ISO-8601; totals stay all-time).")] = None,
    force: Annotated[bool, typer.Option("--force", help="Replace an existing file that is not a report.")] = False,
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
    with open_for_read(ctx, db) as lib:
        document = report.build_report(lib, since=since_ts)
    path = report.write_report(document, out, resolved_db() or "", force=force)
    if wants_json(ctx, json_out):
        output.emit_json({"path": os.path.abspath(path), "bytes": len(document.encode())})
        return
    output.message(f"report written to {os.path.abspath(path)}")
