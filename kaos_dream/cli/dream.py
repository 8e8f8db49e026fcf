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
    """Dream cycle and whether a pass is due, episodes by state, live edges, telemetry, failures (read-only).

    Example: kaos dream status --json
    """
    with open_for_read(ctx, db) as lib:
        data = library_status(lib.conn, lib.settings.dream_threshold)
    if wants_json(ctx, json_out):
        output.emit_json(data)
        return
    d = data["dream"]
    output.fields("dream", [
        ("cycle", d["cycle"]),
        ("completed since last dream", f"{d['completed_since_last_dream']} (automatic pass every {d['threshold']})"),
        ("completed since last applied dream", f"{d['completed_since_last_apply']} (`dream run --apply --if-due` "
                                               f"fires at {d['threshold']})"),
        ("running now", None if d["running"] is None else d["running"].get("holder")),
        ("last run", None if d["last_run"] is None else f"#{d['last_run']['id']} {d['last_run']['mode']} "
                                                          f"{d['last_run']['status']}"),
        ("pending proposals", d["pending_proposals"]),
        ("failure fingerprints", data["failures"]["fingerprints"]),
        ("open alerts", data["failures"]["open_alerts"]),
    ])
    output.table("episodes", ["state", "count"], sorted(data["agents"].items()))
    output.table("edges", ["relation", "count"], sorted(data["edges"].items()))
    output.table("telemetry", ["table", "rows"], sorted(data["telemetry"].items()))
