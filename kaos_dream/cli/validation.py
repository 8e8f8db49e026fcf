"""`kaos prefs …` (the preferences the alignment validator checks) and `kaos dream validations`."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from ..validation.gate import list_reports
from . import output
from .common import DbOption, JsonOption, open_for_read, open_for_write, wants_json
from .dream import app as dream_app

prefs_app = typer.Typer(help="User preferences the alignment validator checks conclusions against.",
                        no_args_is_help=True)


@prefs_app.command("set")
def prefs_set(
    ctx: typer.Context,
    key: Annotated[str, typer.Argument(help="A short name for the preference.", show_default=False)],
    value: Annotated[str, typer.Argument(help="The preference, in plain words.", show_default=False)],
    db: DbOption = None,
    json_out: JsonOption = False,
) -> None:
    """Set (or replace) a preference.

    Example: kaos prefs set deploys "never deploy to production on Fridays"
    """
    with open_for_write(ctx, db, create=True) as lib:
        lib.preferences.set(key, value)
        stored = lib.preferences.all()
    if wants_json(ctx, json_out):
        output.emit_json({"key": key.strip(), "value": stored[key.strip()], "set": True})
    else:
        output.message(f"preference {key.strip()!r} set")


@prefs_app.command("list")
def prefs_list(ctx: typer.Context, db: DbOption = None, json_out: JsonOption = False) -> None:
    """List preferences (read-only).  Example: kaos prefs list --json"""
    with open_for_read(ctx, db) as lib:
        prefs = lib.preferences.all()
    if wants_json(ctx, json_out):
        output.emit_json(prefs)
    else:
        output.table("preferences", ["key", "value"], sorted(prefs.items()))


@prefs_app.command("rm")
def prefs_rm(
    ctx: typer.Context,
    key: Annotated[str, typer.Argument(help="The preference to remove.", show_default=False)],
    db: DbOption = None,
    json_out: JsonOption = False,
) -> None:
    """Remove a preference.  Example: kaos prefs rm deploys"""
    with open_for_write(ctx, db) as lib:
        lib.preferences.remove(key)
    if wants_json(ctx, json_out):
        output.emit_json({"key": key.strip(), "removed": True})
    else:
        output.message(f"preference {key.strip()!r} removed")


def validator_summary(report: dict[str, Any]) -> str:
    parts = []
    for v in report["validators"]:
        if not v["enabled"]:
            parts.append(f"{v['validator']}=off")
        elif v["passed"] is None:
            parts.append(f"{v['validator']}={v['score']:.2f}")
        else:
            parts.append(f"{v['validator']}={v['score']:.2f}{'' if v['passed'] else '✗'}")
    return " ".join(parts)


@dream_app.command("validations")
def validations(
    ctx: typer.Context,
    failed: Annotated[bool, typer.Option("--failed", help="Only episodes the gate rejected.")] = False,
    limit: Annotated[int, typer.Option(min=1, max=10_000, help="At most this many, newest first.")] = 50,
    db: DbOption = None,
    json_out: JsonOption = False,
) -> None:
    """Validator scores, trust, novelty and the gate decision per episode (read-only).

    Example: kaos dream validations --failed --limit 20
    """
    with open_for_read(ctx, db) as lib:
        reports = list_reports(lib.conn, failed_only=failed, limit=limit)
    if wants_json(ctx, json_out):
        output.emit_json(reports)
        return
    output.table(
        "validations" + (" (rejected only)" if failed else ""),
        ["agent", "gate", "trust", "novelty", "validators", "reason"],
        (
            [r["agent_id"], "pass" if r["passed"] else "reject", r["trust"], r["novelty"], validator_summary(r),
             output.shorten(r["reason"], 60)]
            for r in reports
        ),
    )
