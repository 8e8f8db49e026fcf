"""Rendering: rich tables for people, JSON for programs. The only module that prints results."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Sequence
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from ..clock import iso
from ..graph.nodes import Node

console = Console(soft_wrap=False, highlight=False)
err_console = Console(stderr=True, highlight=False)


def emit_json(value: Any) -> None:
    """Plain JSON on stdout (not through rich, so nothing is wrapped or coloured)."""
    sys.stdout.write(json.dumps(value, indent=2, ensure_ascii=False, default=str) + "\n")
    sys.stdout.flush()


def cell(value: Any) -> Text:
    """User text rendered literally: a skill named ``[bold]`` must not become markup."""
    if value is None:
        return Text("-", style="dim")
    if isinstance(value, bool):
        return Text("yes" if value else "no")
    if isinstance(value, float):
        return Text(f"{value:.4g}")
    if isinstance(value, Node):  # a named tuple, but people read and type graph nodes as KIND:ID
        return Text(str(value))
    if isinstance(value, (list, tuple)):
        return Text(", ".join(str(v) for v in value))
    return Text(str(value))


def table(title: str | None, columns: Sequence[str], rows: Iterable[Sequence[Any]]) -> None:
    grid = Table(title=title, title_justify="left", show_lines=False)
    for name in columns:
        grid.add_column(name, overflow="fold")
    count = 0
    for row in rows:
        grid.add_row(*(cell(v) for v in row))
        count += 1
    if count == 0:
        console.print(Text(f"{title or 'result'}: nothing to show", style="dim"))
        return
    console.print(grid)


def fields(title: str | None, pairs: Iterable[tuple[str, Any]]) -> None:
    """A two-column key/value view for ``show`` commands."""
    grid = Table(title=title, title_justify="left", show_header=False, box=None, pad_edge=False)
    grid.add_column(style="bold")
    grid.add_column(overflow="fold")
    for key, value in pairs:
        grid.add_row(Text(key), cell(value))
    console.print(grid)


def message(text: str, style: str | None = None, *, wrap: bool = True) -> None:
    """``wrap=False`` for a line a person copies (a path): never broken at the terminal's width."""
    console.print(Text(text, style=style or ""), soft_wrap=not wrap)


def when(ts: float | None) -> str | None:
    return iso(ts)


def json_text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def shorten(text: str, width: int = 80) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def write_text(text: str) -> None:
    """A document (DOT, GraphML, …) on stdout exactly as given: no wrapping, no markup."""
    sys.stdout.write(text)
    sys.stdout.flush()


def emit_json_line(value: Any) -> None:
    """One compact JSON document per line (for streams such as `log tail --follow --json`)."""
    sys.stdout.write(json.dumps(value, ensure_ascii=False, default=str) + "\n")
    sys.stdout.flush()


def markdown(text: str) -> None:
    """Render a markdown report (the dream digest) for people."""
    from rich.markdown import Markdown

    console.print(Markdown(text))
