"""`kaos search QUERY`: find skills and memories."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

import typer

from . import output
from .common import DbOption, JsonOption, open_for_read, wants_json


class KindChoice(StrEnum):
    all = "all"
    skill = "skill"
    memory = "memory"


def search(
    ctx: typer.Context,
    query: Annotated[str, typer.Argument(help="Any text; it is made safe for full-text search.", show_default=False)],
    kind: Annotated[KindChoice, typer.Option(help="What to search.")] = KindChoice.all,
    limit: Annotated[int, typer.Option(min=0, max=1000, help="At most this many results.")] = 10,
    include_deprecated: Annotated[
        bool, typer.Option("--include-deprecated", help="Also return deprecated skills.")
    ] = False,
    db: DbOption = None,
    json_out: JsonOption = False,
) -> None:
    """Search skills and memories, best match first.

    Example: kaos search "convert csv to parquet" --kind skill --limit 5
    """
    with open_for_read(ctx, db) as lib:
        hits = lib.search(
            query,
            kind=None if kind is KindChoice.all else kind.value,
            limit=limit,
            include_deprecated=include_deprecated,
        )
    if wants_json(ctx, json_out):
        output.emit_json([h.to_dict() for h in hits])
        return
    output.table(
        f"search: {query}",
        ["#", "kind", "id", "name", "score", "text"],
        ([i, h.kind, h.id, h.name, h.score, output.shorten(h.text, 60)] for i, h in enumerate(hits, 1)),
    )
