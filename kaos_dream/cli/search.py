"""`kaos search QUERY`: find skills and memories."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

import typer
from rich.text import Text

from . import output
from .common import DbOption, JsonOption, open_for_read, open_for_write, wants_json
from .graph import Mode as ModeChoice


class KindChoice(StrEnum):
    all = "all"
    skill = "skill"
    memory = "memory"


class RankChoice(StrEnum):
    weighted = "weighted"
    wilson = "wilson"
    bm25 = "bm25"


def render_expanded(ctx: typer.Context, query: str, expanded: list, json_out: bool) -> None:
    if wants_json(ctx, json_out):
        output.emit_json([h.to_dict() for h in expanded])
        return
    output.table(
        f"search: {query} (expanded through the graph)",
        ["#", "kind", "id", "name", "score", "via", "text"],
        (
            [i, h.kind, h.id, h.name, h.score if h.source == "lexical" else h.activation,
             "lexical" if h.source == "lexical" else " → ".join(f"{p['relation']} from {p['from']}" for p in h.path),
             output.shorten(h.text, 50)]
            for i, h in enumerate(expanded, 1)
        ),
    )


def search(
    ctx: typer.Context,
    query: Annotated[str, typer.Argument(help="Any text; it is made safe for full-text search.", show_default=False)],
    kind: Annotated[KindChoice, typer.Option(help="What to search.")] = KindChoice.all,
    limit: Annotated[int, typer.Option(min=0, max=1000, help="At most this many results.")] = 10,
    include_deprecated: Annotated[
        bool, typer.Option("--include-deprecated", help="Also return deprecated skills.")
    ] = False,
    rank: Annotated[
        RankChoice | None,
        typer.Option(help="weighted: relevance x recent outcomes (default, $KAOS_RANK); wilson: the seed "
                     "formula; bm25: lexical order.", show_default=False),
    ] = None,
    explore: Annotated[
        bool, typer.Option("--explore", help="Weighted only: rank skills by a seeded Thompson draw from their "
                           "recent record, so untried alternatives get tried sometimes.")
    ] = False,
    seed: Annotated[
        int | None, typer.Option("--seed", min=0, max=2**32 - 1, help="Seed of the --explore draw (default: "
                                 "$KAOS_EXPLORE_SEED); the same seed and data give the same order.",
                                 show_default=False)
    ] = None,
    task: Annotated[
        str | None, typer.Option("--task", help="Rank by outcomes on this task (default: the query itself).")
    ] = None,
    agent: Annotated[str | None, typer.Option("--agent", help="Agent id the hits are recorded for.")] = None,
    record_hits: Annotated[
        bool, typer.Option("--record-hits", help="Record one hit row per result (the only search that writes).")
    ] = False,
    expand: Annotated[
        int, typer.Option("--expand", min=0, max=50, help="Add up to N items the graph links to the hits "
                          "(spreading activation); lexical hits keep their places.")
    ] = 0,
    mode: Annotated[
        ModeChoice, typer.Option(help="Activation mode for --expand.")
    ] = ModeChoice.gated,
    db: DbOption = None,
    json_out: JsonOption = False,
) -> None:
    """Search skills and memories, best match first.

    Example: kaos search "convert csv to parquet" --kind skill --limit 5 --agent run-42 --record-hits

    Example: kaos search "deploy failed" --expand 3 --mode adaptive

    Example: kaos search "convert csv to parquet" --kind skill --explore --seed 7
    """
    opener = open_for_write if record_hits else open_for_read
    with opener(ctx, db) as lib:
        hits = lib.search(
            query,
            kind=None if kind is KindChoice.all else kind.value,
            limit=limit,
            include_deprecated=include_deprecated,
            rank=rank.value if rank else None,
            record_hits=record_hits,
            agent=agent,
            task=task,
            explore=explore,
            seed=seed,
        )
        if expand:
            from ..graph.retrieval import expand as graph_expand

            expanded = graph_expand(lib, hits, extra=expand, mode=mode.value)
        off = lib.vectors.unavailable_reason()
    if off:
        output.err_console.print(Text(off), soft_wrap=True)
    if expand:
        render_expanded(ctx, query, expanded, json_out)
        return
    if wants_json(ctx, json_out):
        output.emit_json([h.to_dict() for h in hits])
        return
    output.table(
        f"search: {query}",
        ["#", "kind", "id", "name", "score", "uses", "text"],
        (
            [i, h.kind, h.id, h.name, h.score, f"{h.successes}/{h.uses}" if h.uses else "-", output.shorten(h.text, 60)]
            for i, h in enumerate(hits, 1)
        ),
    )
