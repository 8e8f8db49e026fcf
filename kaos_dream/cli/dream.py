"""`kaos dream …`: the learning side of the library — status, consolidation, review and triage.

Feature modules add their commands to :data:`app` (``@app.command(...)``); this module holds the
group and the read-only `status` command.
"""

from __future__ import annotations

import typer

from ..status import library_status
from . import output
from .common import DbOption, JsonOption, open_for_read, wants_json

app = typer.Typer(
    help="What the library has learned: status, consolidation, merge review, failure triage.",
    no_args_is_help=True,
)


@app.command("status")
def status(ctx: typer.Context, db: DbOption = None, json_out: JsonOption = False) -> None:
    """Episodes by state, live edges by relation, telemetry row counts (read-only)."""
    with open_for_read(ctx, db) as lib:
        data = library_status(lib.conn)
    if wants_json(ctx, json_out):
        output.emit_json(data)
        return
    output.table("episodes", ["state", "count"], sorted(data["agents"].items()))
    output.table("edges", ["relation", "count"], sorted(data["edges"].items()))
    output.table("telemetry", ["table", "rows"], sorted(data["telemetry"].items()))
