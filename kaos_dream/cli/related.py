"""`kaos dream related skill|memory NAME_OR_ID`: neighbours in the association graph (read-only)."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

import typer

from ..plasticity.related import related as find_related
from . import output
from .common import DbOption, JsonOption, open_for_read, wants_json
from .dream import app as dream_app


class NodeKind(StrEnum):
    skill = "skill"
    memory = "memory"


@dream_app.command("related")
def related(
    ctx: typer.Context,
    kind: Annotated[NodeKind, typer.Argument(help="skill or memory.")],
    ref: Annotated[str, typer.Argument(help="Skill name, memory key, or id.", show_default=False)],
    limit: Annotated[int, typer.Option(min=0, max=1000, help="At most this many neighbours.")] = 10,
    include_deprecated: Annotated[
        bool, typer.Option("--include-deprecated", help="Also list deprecated skills (marked).")
    ] = False,
    db: DbOption = None,
    json_out: JsonOption = False,
) -> None:
    """Neighbours of a skill or memory, strongest edge first, then most co-activations.

    Deprecated skills are left out, as in search; --include-deprecated lists them, marked.

    Example: kaos dream related skill csv-to-parquet --limit 5
    """
    with open_for_read(ctx, db) as lib:
        node_id, neighbours = find_related(lib, kind.value, ref, limit, include_deprecated=include_deprecated)
    if wants_json(ctx, json_out):
        output.emit_json({"kind": kind.value, "id": node_id, "neighbours": [n.to_dict() for n in neighbours]})
        return
    output.table(
        f"related to {kind.value} {node_id}",
        ["kind", "id", "name", "relation", "direction", "strength", "co-activations"],
        ([n.kind, n.id, f"{n.name} (deprecated)" if n.deprecated else n.name, n.relation, n.direction, n.strength,
          n.coactivations] for n in neighbours),
    )
