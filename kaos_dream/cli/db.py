"""`kaos init` and `kaos db …`: create, inspect, check and migrate the database file."""

from __future__ import annotations

import typer

from ..errors import KaosError
from ..library import Library
from ..store import LATEST_VERSION, file_schema_version
from . import output
from .common import DbOption, JsonOption, open_for_read, resolve_db, wants_json

app = typer.Typer(help="Inspect and maintain the database file.", no_args_is_help=True)


def init(ctx: typer.Context, db: DbOption = None, json_out: JsonOption = False) -> None:
    """Create the library file (or bring an existing one up to the current schema).

    Example: kaos --db team.db init
    """
    path = resolve_db(ctx, db)
    with Library(path) as lib:
        info = lib.info()
    if wants_json(ctx, json_out):
        output.emit_json(info)
    else:
        output.message(f"library ready at {info['path']} (schema version {info['schema_version']})")


@app.command("info")
def info(ctx: typer.Context, db: DbOption = None, json_out: JsonOption = False) -> None:
    """Path, schema version, size and counts."""
    with open_for_read(ctx, db) as lib:
        data = lib.info()
    if wants_json(ctx, json_out):
        output.emit_json(data)
    else:
        output.fields("database", list(data.items()))


class CheckFailed(KaosError):
    pass


@app.command("check")
def check(ctx: typer.Context, db: DbOption = None, json_out: JsonOption = False) -> None:
    """Run SQLite's integrity, foreign-key and full-text checks; exit 1 when anything is wrong."""
    with open_for_read(ctx, db) as lib:
        problems = lib.check()
    if wants_json(ctx, json_out):
        output.emit_json({"ok": not problems, "problems": problems})
    elif not problems:
        output.message("ok: integrity, foreign keys and full-text indexes are clean")
    else:
        for line in problems:
            output.message(line)
    if problems:
        raise CheckFailed(f"{len(problems)} problem(s) found in {resolve_db(ctx, db)}")


@app.command("migrate")
def migrate(ctx: typer.Context, db: DbOption = None, json_out: JsonOption = False) -> None:
    """Upgrade the file to the current schema (a no-op when it is current)."""
    path = resolve_db(ctx, db)
    before = file_schema_version(path)
    with Library(path) as lib:
        after = lib.info()["schema_version"]
    result = {"path": path, "from": before, "to": after, "latest": LATEST_VERSION}
    if wants_json(ctx, json_out):
        output.emit_json(result)
    elif before == after:
        output.message(f"{path} is already at schema version {after}")
    else:
        output.message(f"{path} upgraded from schema version {before} to {after}")
