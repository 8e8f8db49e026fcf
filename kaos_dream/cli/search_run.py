"""What `kaos search` does once its arguments are read: search, then print. No typer here: the
typer command (:mod:`.search`) and the fast path (:mod:`kaos_dream.entry`) both call :func:`execute`."""

from __future__ import annotations

from collections.abc import Callable
from enum import Enum
from typing import Any

from . import output
from .libraries import GlobalOptions, open_readonly, open_writable, wants_json_output


def _plain(value: Any) -> Any:
    return value.value if isinstance(value, Enum) else value


def _render(json_out: bool, hits: list, title: str, columns: list[str], row: Callable[[Any], list]) -> None:
    """Hits as JSON for programs, or as a table numbered from 1 for people (``row`` gives a hit's cells)."""
    if json_out:
        output.emit_json([h.to_dict() for h in hits])
        return
    output.table(title, ["#", *columns], ([i, *row(h)] for i, h in enumerate(hits, 1)))


def _expanded_row(h: Any) -> list:
    lexical = h.source == "lexical"
    via = "lexical" if lexical else " → ".join(f"{p['relation']} from {p['from']}" for p in h.path)
    return [h.kind, h.id, h.name, h.score if lexical else h.activation, via, output.shorten(h.text, 50)]


def _hit_row(h: Any) -> list:
    return [h.kind, h.id, h.name, h.score, h.relevance, f"{h.successes}/{h.uses}" if h.uses else "-",
            output.shorten(h.text, 60)]


def _nothing_found(query: str, threshold: float) -> str:
    """The one stderr line of a search that returns no hit."""
    from ..search.query import content_tokens

    if not content_tokens(query):
        return "no hit: the query has no searchable word"
    return (f"no confident match: no hit reached relevance {threshold:g} "
            "(--min-relevance 0 lists every candidate)")


def execute(options: GlobalOptions, values: dict[str, Any]) -> None:
    """Run one search with the command's ``values`` (by option name, see :mod:`.search_options`)."""
    v = {name: _plain(value) for name, value in values.items()}
    query, kind, expand = v["query"], v["kind"], v["expand"]
    if query == "-":
        from .common import free_text

        query = free_text(query, "query")
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
            min_relevance=v["min_relevance"],
        )
        threshold = lib.settings.min_relevance if v["min_relevance"] is None else v["min_relevance"]
        if expand:
            from ..graph.retrieval import expand as graph_expand

            expanded = graph_expand(lib, hits, extra=expand, mode=v["mode"])
        off = lib.semantic_unavailable_reason()
    if off:
        from rich.text import Text

        output.err_console.print(Text(off), soft_wrap=True)
    json_out = wants_json_output(options, v["json_out"])
    if not hits:
        output.err_console.print(_nothing_found(query, threshold), soft_wrap=True, markup=False,
                                 highlight=False)
        if json_out:
            output.emit_json([])  # a program still reads valid JSON
        return
    if expand:
        _render(json_out, expanded, f"search: {query} (expanded through the graph)",
                ["kind", "id", "name", "score", "via", "text"], _expanded_row)
    else:
        _render(json_out, hits, f"search: {query}", ["kind", "id", "name", "score", "relevance", "uses", "text"],
                _hit_row)
