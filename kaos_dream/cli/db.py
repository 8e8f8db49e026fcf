"""`kaos init` and `kaos db …`: create, inspect, check and migrate the database file."""

from __future__ import annotations

import os
import sys
from dataclasses import asdict
from typing import Annotated, Any

import typer

from ..clock import SystemClock
from ..errors import KaosError, StoreError
from ..health import check_file
from ..library import Library
from ..settings import Settings
from ..store import LATEST_VERSION, file_schema_version
from ..store.backup import backup_database
from ..store.connect import missing_library_message
from ..store.copy import copy_library
from ..store.engine import is_postgres_url, mask
from ..store.jsonl import describe_versions, export_database, import_database
from ..store.name_words import refresh_name_words
from . import output
from .common import DbOption, JsonOption, open_for_read, open_for_write, resolve_db, wants_json
from .libraries import require_postgres_driver

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
    """Path, schema version, size and counts, and which semantic-search tier is on (fast: embedded on
    every write; strong: backfilled by the dream and `kaos db reindex`), with the reason a tier is off.

    Example: kaos db info --json
    """
    from ..embedding.packages import tier_status  # numpy-free: db info loads no model and no numpy

    with open_for_read(ctx, db) as lib:
        data: dict[str, Any] = {**lib.info(), "semantic": tier_status(lib.settings)}
    if wants_json(ctx, json_out):
        output.emit_json(data)
    else:
        tiers = data.pop("semantic")
        rows = list(data.items()) + [
            (f"semantic {name} tier", f"{t['model']} (on)" if t["on"] else t["off_reason"])
            for name, t in tiers.items()]
        output.fields("database", rows)


class CheckFailed(KaosError):
    pass


@app.command("check")
def check(ctx: typer.Context, db: DbOption = None, json_out: JsonOption = False) -> None:
    """Run SQLite's integrity, foreign-key and full-text checks and recount the derived counters
    (skill_stats, skill_task_stats) from skill_uses; exit 1 when anything is wrong.

    A damaged file or one with a too-new or outdated schema is reported as a problem (not refused),
    and the file is never written.

    Example: kaos db check --json
    """
    problems = check_file(resolve_db(ctx, db))
    if wants_json(ctx, json_out):
        output.emit_json({"ok": not problems, "problems": problems})
    elif not problems:
        output.message("ok: integrity, foreign keys, full-text indexes and derived counters are clean")
    else:
        for line in problems:
            output.message(line)
    if problems:
        raise CheckFailed(f"{len(problems)} problem(s) found in {resolve_db(ctx, db)}")


@app.command("migrate")
def migrate(ctx: typer.Context, db: DbOption = None, json_out: JsonOption = False) -> None:
    """Upgrade the file (or PostgreSQL database) to the current schema (a no-op when it is current)."""
    path = resolve_db(ctx, db)
    remote = is_postgres_url(path)
    if path != ":memory:" and not remote and not os.path.exists(path):
        raise StoreError(missing_library_message(path))
    if remote:
        from ..store.postgres.migrations import database_schema_version

        before = database_schema_version(path)
    else:
        before = file_schema_version(path)
    if remote and before == 0:  # an empty database is not a library to upgrade: `kaos init` creates one
        raise StoreError(missing_library_message(mask(path)))
    with Library(path) as lib:
        after = lib.info()["schema_version"]
    shown = mask(path)  # a PostgreSQL URL may hold a password
    result = {"path": shown, "from": before, "to": after, "latest": LATEST_VERSION}
    if wants_json(ctx, json_out):
        output.emit_json(result)
    elif before == after:
        output.message(f"{shown} is already at schema version {after}")
    else:
        output.message(f"{shown} upgraded from schema version {before} to {after}")


@app.command("reindex")
def reindex(
    ctx: typer.Context,
    all_rows: Annotated[bool, typer.Option("--all", help="Recompute every vector, not only missing or stale ones.")]
    = False,
    drop_unused: Annotated[bool, typer.Option(
        "--drop-unused", help="Delete the vectors of models neither tier uses (never done otherwise); says how many.")]
    = False,
    db: DbOption = None,
    json_out: JsonOption = False,
) -> None:
    """Compute the semantic-search vectors that are missing or were made by another model or version.

    Both tiers: the fast model's vectors (written with every skill and memory) and, when its package is
    installed, the strong model's (never written on an add; the dream backfills a bounded batch per
    pass, this command does the rest). Run it after changing $KAOS_EMBEDDING_MODEL or
    $KAOS_STRONG_EMBEDDING_MODEL or upgrading a model package. Exits 1 (one line) when the fast model
    is not installed. Vectors of a model no tier uses (a tier turned off with
    KAOS_STRONG_EMBEDDING_MODEL=none, a replaced model) are kept and counted; --drop-unused deletes them.

    It first indexes the identifier words of any skill name or memory key written without them (plain
    SQL, an older import: what `kaos db check` reports), so "crafting table" finds craftCraftingTable.

    Example: kaos db reindex --json
    """
    with open_for_write(ctx, db) as lib, output.progress_bar("reindex", not wants_json(ctx, json_out)) as progress:
        split = refresh_name_words(lib.conn)  # committed on its own: a missing model cannot undo it
        if sum(split.values()) and not wants_json(ctx, json_out):
            output.message(f"indexed the identifier words of {split['skills']} skill name(s) and "
                           f"{split['memories']} memory key(s)")
        done = lib.vectors.reindex(force=all_rows, drop_unused=drop_unused, progress=progress)
        dropped = done.pop("dropped", None)
        status = lib.vectors.status()
        unused = lib.vectors.unused_count()
    result = {"embedded": done, **status, "unused_vectors": unused, "identifier_words_indexed": split}
    if dropped is not None:
        result["dropped_vectors"] = dropped
    if wants_json(ctx, json_out):
        output.emit_json(result)
    else:
        output.message(f"embedded {done['skill']} skills and {done['memory']} memories with "
                       f"{status['model']} {status['model_version']}")
        strong = done.get("strong")
        if strong is not None:
            output.message(f"strong tier: embedded {strong['skill']} skills and {strong['memory']} memories with "
                           f"{status['strong_model']} {status['strong_model_version']}")
        else:
            output.message(status["strong_off_reason"] or "the strong tier is off")
        for kind in ("skill", "memory"):
            s = status[kind]
            line = f"{kind}: {s['current']} of {s['rows']} current, {s['stale']} stale, {s['missing']} missing"
            if "strong" in s:
                line += f"; strong tier {s['strong']} of {s['rows']}"
            output.message(line)
        if dropped is not None:
            output.message(f"dropped {dropped} vector(s) of models no tier uses")
        if unused:
            output.message(f"kept {unused} vector(s) of models no tier uses (`kaos db reindex --drop-unused` "
                           "deletes them)")


@app.command("backup")
def backup(
    ctx: typer.Context,
    target: Annotated[str, typer.Argument(metavar="PATH", help="File to write the copy to.", show_default=False)],
    force: Annotated[bool, typer.Option("--force", help="Replace PATH if it already exists.")] = False,
    db: DbOption = None,
    json_out: JsonOption = False,
) -> None:
    """Write a consistent copy of the library to PATH while agents keep working (SQLite's online backup).

    The copy is written under a temporary name, integrity-checked, then renamed to PATH, so PATH is
    never half-written. An existing PATH is refused unless --force.

    Example: kaos db backup backups/kaos-$(date +%F).db
    """
    settings = Settings.from_env()
    result = backup_database(resolve_db(ctx, db), target, force=force, busy_timeout_ms=settings.busy_timeout_ms)
    if wants_json(ctx, json_out):
        output.emit_json(asdict(result))
    else:
        output.message(
            f"backed up {result.source} to {result.target} "
            f"(schema version {result.schema_version}, {result.size_bytes} bytes)"
        )


@app.command("export")
def export(
    ctx: typer.Context,
    target: Annotated[
        str, typer.Argument(metavar="[PATH|-]", help="File to write, or - for standard output.", show_default=False)
    ] = "-",
    jsonl: Annotated[bool, typer.Option("--jsonl", help="JSON lines (the only format; the default).")] = True,
    force: Annotated[bool, typer.Option("--force", help="Replace PATH if it already exists.")] = False,
    db: DbOption = None,
) -> None:
    """Export every table as JSON lines: a header with the schema version, one line per row, an end line.

    The export is one consistent snapshot and does not depend on when it was made, so
    export -> import -> export gives the same bytes. The format is described in docs/cli.md.

    Example: kaos db export --jsonl library.jsonl
    """
    settings = Settings.from_env()
    path = resolve_db(ctx, db)
    if target == "-":
        result = export_database(path, sys.stdout, busy_timeout_ms=settings.busy_timeout_ms)
        return
    result = export_database(path, target, force=force, busy_timeout_ms=settings.busy_timeout_ms)
    versions = describe_versions(result.schema_version, result.library_schema_version)
    output.note(f"exported {result.rows} rows ({versions}) to {result.target}")


@app.command("import")
def import_(
    ctx: typer.Context,
    source: Annotated[
        str, typer.Argument(metavar="PATH|-", help="An export made by `kaos db export`; - reads stdin.")
    ],
    force: Annotated[
        bool, typer.Option("--force", help="Replace a target library that already holds data.")
    ] = False,
    db: DbOption = None,
    json_out: JsonOption = False,
) -> None:
    """Build the library file from an export (into a new or empty file; --force replaces one with data).

    The rows are loaded into a temporary file, exported again and compared with the input, and only
    then renamed into place; an export of an older schema is upgraded after loading. Derived
    counters (skill_stats, skill_task_stats) are recounted from the rows and must agree.

    Example: kaos --db restored.db db import library.jsonl
    """
    settings = Settings.from_env()
    stream = sys.stdin.buffer if source == "-" else source
    result = import_database(
        stream, resolve_db(ctx, db), force=force, now=SystemClock().now(), busy_timeout_ms=settings.busy_timeout_ms
    )
    if wants_json(ctx, json_out):
        output.emit_json(asdict(result))
    else:
        versions = describe_versions(result.schema_version, result.upgraded_to)
        output.message(f"imported {result.rows} rows into {result.target} ({versions})")


@app.command("copy")
def copy(
    ctx: typer.Context,
    source: Annotated[str, typer.Argument(metavar="SRC", help="The library to copy: a file or a postgresql:// URL.",
                                          show_default=False)],
    target: Annotated[str, typer.Argument(metavar="DST", help="Where to copy it: a file or a postgresql:// URL "
                                          "(the database must exist).", show_default=False)],
    force: Annotated[
        bool, typer.Option("--force", help="Replace a DST library that already holds data.")
    ] = False,
    json_out: JsonOption = False,
) -> None:
    """Copy a library between engines (SQLite file <-> PostgreSQL database, or file to file, server to server).

    SRC is read in one snapshot and never written. DST is built all-or-nothing (a temporary file
    renamed into place, or one PostgreSQL transaction) and its export must equal SRC's byte for byte,
    or nothing is written. A DST that already holds a library with data is refused unless --force;
    a missing file, an empty database or an empty library is filled. Identity sequences continue
    after the copied ids and the full-text index is rebuilt on DST. Passwords are masked in output.

    Example: kaos db copy kaos.db postgresql://kaos@db.internal:5432/kaos
    """
    for given in (source, target):
        if not given.strip():
            raise StoreError("db copy needs a file or a postgresql:// URL for SRC and DST")
        require_postgres_driver(given)
    settings = Settings.from_env()
    result = copy_library(source, target, force=force, now=SystemClock().now(),
                          busy_timeout_ms=settings.busy_timeout_ms)
    if wants_json(ctx, json_out):
        output.emit_json(asdict(result))
    else:
        upgraded = "" if result.upgraded_to == result.schema_version else f", upgraded to {result.upgraded_to}"
        output.message(f"copied {result.rows} rows from {result.source} ({result.source_engine}) to "
                       f"{result.target} ({result.target_engine}; schema version {result.schema_version}{upgraded})")
