"""What `kaos search` does once its arguments are read: search, then print. No typer here: the
typer command (:mod:`.search`) and the fast path (:mod:`kaos_dream.entry`) both call :func:`execute`."""

from __future__ import annotations

from enum import Enum
from typing import Any

from . import output
from .libraries import GlobalOptions, open_readonly, open_writable, wants_json_output


def _plain(value: Any) -> Any:
    return value.value if isinstance(value, Enum) else value


def render_expanded(json_out: bool, query: str, expanded: list) -> None:
    if json_out:
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


def execute(options: GlobalOptions, values: dict[str, Any]) -> None:
    """Run one search with the command's ``values`` (by option name, see :mod:`.search_options`)."""
    v = {name: _plain(value) for name, value in values.items()}
    query, kind, expand = v["query"], v["kind"], v["expand"]
    opener = open_writable if v["record_hits"] else open_readonly
    with opener(options, v["db"]) as lib:
        hits = lib.search(
            query,
            kind=None if kind == "all" else kind,
            limit=v["limit"],
            include_deprecated=v["include_deprecated"],
            rank=v["rank"],
            record_hits=v["record_hits"],
            agent=v["agent"],
            task=v["task"],
            explore=v["explore"],
            seed=v["seed"],
        )
        if expand:
            from ..graph.retrieval import expand as graph_expand

            expanded = graph_expand(lib, hits, extra=expand, mode=v["mode"])
        off = lib.vectors.unavailable_reason()
    if off:
        from rich.text import Text

        output.err_console.print(Text(off), soft_wrap=True)
    json_out = wants_json_output(options, v["json_out"])
    if expand:
        render_expanded(json_out, query, expanded)
        return
    if json_out:
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
