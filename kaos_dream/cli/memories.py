"""`kaos memory …`: add, list, show, rm."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from ..memories import Memory
from . import output
from .common import DbOption, JsonOption, open_for_read, open_for_write, show_entry, wants_json

app = typer.Typer(help="Manage memories: observations, results and notes.", no_args_is_help=True)

MemoryRef = Annotated[str, typer.Argument(help="Memory key or id.", show_default=False)]


def show_memory(ctx: typer.Context, memory: Memory, as_json: bool, verb: str | None = None) -> None:
    done = f"{verb} memory {memory.id} {memory.key!r}" if verb else None
    show_entry(ctx, as_json, memory.to_dict(), done, f"memory {memory.id}", [
        ("key", memory.key),
        ("kind", memory.kind),
        ("content", memory.content),
        ("metadata", output.json_text(memory.metadata) if memory.metadata else None),
        ("created", output.when(memory.created_at)),
        ("updated", output.when(memory.updated_at)),
    ])


@app.command("add")
def add(
    ctx: typer.Context,
    content: Annotated[str, typer.Argument(help="The memory's text; '-' reads it from stdin.", show_default=False)],
    kind: Annotated[str, typer.Option(help="Kind, e.g. note, insight, result.")] = "note",
    key: Annotated[str | None, typer.Option(help="Unique key (default: derived from kind and content).")] = None,
    meta: Annotated[str | None, typer.Option("--meta", help="Metadata as a JSON object.")] = None,
    db: DbOption = None,
    json_out: JsonOption = False,
) -> None:
    """Add a memory.

    Example: kaos memory add "Staging DB rejects TLS 1.0 clients" --kind insight --key staging-tls
    """
    if content == "-":
        content = sys.stdin.read()
    with open_for_write(ctx, db, create=True) as lib:
        memory = lib.memories.add(content, kind=kind, key=key, metadata=meta)
    show_memory(ctx, memory, json_out, verb="added")


@app.command("list")
def list_(
    ctx: typer.Context,
    kind: Annotated[str | None, typer.Option(help="Only memories of this kind.")] = None,
    limit: Annotated[int | None, typer.Option(min=0, help="At most this many.")] = None,
    offset: Annotated[int, typer.Option(min=0, help="Skip this many first.")] = 0,
    db: DbOption = None,
    json_out: JsonOption = False,
) -> None:
    """List memories in id order."""
    with open_for_read(ctx, db) as lib:
        memories = lib.memories.list(kind=kind, limit=limit, offset=offset)
    if wants_json(ctx, json_out):
        output.emit_json([m.to_dict() for m in memories])
        return
    output.table(
        "memories",
        ["id", "key", "kind", "content"],
        ([m.id, m.key, m.kind, output.shorten(m.content)] for m in memories),
    )


@app.command("show")
def show(ctx: typer.Context, ref: MemoryRef, db: DbOption = None, json_out: JsonOption = False) -> None:
    """Show one memory."""
    with open_for_read(ctx, db) as lib:
        show_memory(ctx, lib.memories.get(ref), json_out)


@app.command("rm")
def rm(ctx: typer.Context, ref: MemoryRef, db: DbOption = None, json_out: JsonOption = False) -> None:
    """Delete a memory, with its telemetry."""
    with open_for_write(ctx, db) as lib:
        memory = lib.memories.delete(ref)
    show_memory(ctx, memory, json_out, verb="deleted")
