"""`kaos demo`: build a demo library in a fresh file, simulate agents, dream, and show the result."""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from typing import Annotated, Any

import typer

from .. import report as report_room
from ..demo import build_demo_library, settle_files
from ..errors import InvalidInputError, KaosError
from . import output
from .common import JsonOption, global_options, wants_json
from .report import write_report_of

DEFAULT_DEMO_FILE = "kaos-demo.db"


def demo(
    ctx: typer.Context,
    db: Annotated[
        str | None,
        typer.Option("--db", help="Demo file to (re)create (default ./kaos-demo.db; $KAOS_DB is not used).",
                     show_default=False),
    ] = None,
    json_out: JsonOption = False,
) -> None:
    """Simulate a team of agents on a fresh demo library (default ./kaos-demo.db), run a dream with
    --apply, and print the digest, pending merges and alerts with the commands to try next; last,
    write the HTML report of the demo library beside it (with the report extra installed).

    Example: kaos demo --db /tmp/demo.db
    """
    # `--db` before or after the command both name the demo file; $KAOS_DB usually names a real
    # library, so the demo never defaults to it.
    if any(given is not None and not given.strip() for given in (db, global_options(ctx).db)):
        raise InvalidInputError("--db must name a file")
    db = db or global_options(ctx).db or DEFAULT_DEMO_FILE
    report = build_demo_library(db)
    report["report"], report["report_note"] = demo_report(db)
    settle_files(db)
    if wants_json(ctx, json_out):
        output.emit_json(report)
        return
    agents = report["agents"]
    output.message(f"demo library written to {os.path.abspath(db)}", style="bold")
    output.message(
        f"{report['skills']} skills, {report['memories']} memories; {agents['completed']} agent sessions "
        f"completed, {agents['failed']} failed; LLM: {report['llm']}"
    )
    output.markdown(report["digest"] or "")
    titled_table(
        "pending merges (review: kaos dream merges --accept N | --reject N --reason …)",
        ["proposal", "skills", "jaccard", "why"],
        ([m["id"], " + ".join(m["names"] or []), m["jaccard"], m["rationale"]] for m in report["pending_merges"]),
    )
    titled_table(
        "systemic alerts (kaos alerts check exits 3 while one is open)",
        ["alert", "status", "fingerprint", "agents", "raised"],
        ([a["id"], a["status"], a["fingerprint_id"], a["agent_count"], output.when(a.get("raised_at"))]
         for a in report["alerts"]),
    )
    output.message("next, try:", style="bold")
    for step in report["next"]:
        output.message(f"  {step}")
    output.message(report["report_note"], style="bold" if report["report"] else "dim")


def titled_table(title: str, columns: list[str], rows: Iterable[Sequence[Any]]) -> None:
    """The demo prints a document for a person, also into a pipe (`kaos demo | less`): there a table
    is TSV, so it gets its title line and column names rather than arriving as untitled rows."""
    if output.mode.resolved() == "tsv" and not output.mode.quiet:
        output.message("")
        output.message(title)
        header = output.mode.header
        output.mode.header = True
        try:
            output.table(title, columns, rows)
        finally:
            output.mode.header = header
        return
    output.table(title, columns, rows)


def demo_report(db: str) -> tuple[str | None, str]:
    """Write ``<demo file>.html`` when the report extra is installed; (its path or None, what to say)."""
    if not report_room.available():
        return None, f"for an HTML report of this library: {report_room.INSTALL_LINE}, then kaos --db {db} report"
    target = os.path.splitext(db)[0] + ".html"
    try:
        path, _ = write_report_of(db, target)
    except KaosError as exc:  # e.g. a file of the user's under that name: the demo itself succeeded
        return None, f"no report written: {exc}"
    return os.path.abspath(path), f"report of the demo library: {os.path.abspath(path)}"
