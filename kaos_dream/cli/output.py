"""Rendering: rich tables for people, JSON for programs. The only module that prints results.

Everything a person reads passes :func:`visible` here, once: library text is written by agents and
models (skill descriptions, memory content, failure messages, model diagnoses), and a control
character in it would otherwise reach the terminal raw — a clear-screen, a cursor move, an OSC
title string or hidden text planted for whoever triages. Each C0 character except newline and tab,
DEL and each C1 character is shown as its ``\\xNN`` escape instead, which also defuses every
ESC/CSI/OSC sequence (its introducer is shown, the rest is plain text). JSON output escapes the same
characters the JSON way (``\\u001b``), so programs get the exact value back.
"""

from __future__ import annotations

import json
import re
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

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
# json.dumps(ensure_ascii=False) escapes C0 but writes DEL and C1 (U+009B is a one-character CSI) raw.
_JSON_RAW_CONTROL = re.compile(r"[\x7f-\x9f]")


def _escape(match: re.Match[str]) -> str:
    return f"\\x{ord(match.group(0)):02x}"


def visible(text: str) -> str:
    """``text`` safe for a terminal: control characters (not newline or tab) shown as ``\\xNN``."""
    return _CONTROL.sub(_escape, text)


def _json_dumps(value: Any, indent: int | None, sort_keys: bool = False) -> str:
    text = json.dumps(value, indent=indent, ensure_ascii=False, default=str, sort_keys=sort_keys)
    # Outside strings JSON is ASCII, so every DEL/C1 character is inside one, where \u00XX is the same value.
    return _JSON_RAW_CONTROL.sub(lambda m: f"\\u{ord(m.group(0)):04x}", text)


def emit_json(value: Any) -> None:
    """Plain JSON on stdout (not through rich, so nothing is wrapped or coloured)."""
    sys.stdout.write(_json_dumps(value, 2) + "\n")
    sys.stdout.flush()


def emit_exact(text: str) -> None:
    """A value meant for a script (a rendered template), written byte-exact and unwrapped when stdout
    is a pipe or file, then one newline (as ``echo`` does). On a terminal a person reads
    it, so its control characters are shown visibly instead."""
    if sys.stdout.isatty():
        text = visible(text)
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def error_line(text: str) -> str:
    """One line for stderr (the CLI's ``kaos: ...`` messages), neutralised."""
    return visible(text)


def warn(text: str, style: str | None = None) -> None:
    """A note for the person on stderr (alerts, export summaries), neutralised, never wrapped."""
    if sys.stderr.isatty():
        err_console.print(Text(visible(text), style=style or ""), soft_wrap=True)
    else:
        sys.stderr.write(visible(text) + "\n")
        sys.stderr.flush()


def cell(value: Any) -> Text:
    """User text rendered literally: a skill named ``[bold]`` must not become markup."""
    if value is None:
        return Text("-", style="dim")
    if isinstance(value, bool):
        return Text("yes" if value else "no")
    if isinstance(value, float):
        return Text(f"{value:.4g}")
    if isinstance(value, Node):  # a named tuple, but people read and type graph nodes as KIND:ID
        return Text(visible(str(value)))
    if isinstance(value, (list, tuple)):
        return Text(visible(", ".join(str(v) for v in value)))
    return Text(visible(str(value)))


def table(title: str | None, columns: Sequence[str], rows: Iterable[Sequence[Any]]) -> None:
    title = None if title is None else visible(title)
    grid = Table(title=title, title_justify="left", show_lines=False)
    for name in columns:
        grid.add_column(visible(name), overflow="fold")
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
    grid = Table(title=None if title is None else visible(title), title_justify="left", show_header=False,
                 box=None, pad_edge=False)
    grid.add_column(style="bold")
    grid.add_column(overflow="fold")
    for key, value in pairs:
        grid.add_row(Text(visible(key)), cell(value))
    console.print(grid)


def message(text: str, style: str | None = None) -> None:
    """A line for people. Never word-wrapped: rich's wrapping of one long line is quadratic (it splits
    the wrapped text line by line, copying the rest each time: 10 MB took 47 s) and broke commands."""
    if console.is_terminal:
        console.print(Text(visible(text), style=style or ""), soft_wrap=True)
    else:
        sys.stdout.write(visible(text) + "\n")
        sys.stdout.flush()


def when(ts: float | None) -> str | None:
    return iso(ts)


def json_text(value: Any) -> str:
    return _json_dumps(value, None, sort_keys=True)


def shorten(text: str, width: int = 80) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def write_text(text: str) -> None:
    """A document (DOT, GraphML, …) on stdout exactly as given: no wrapping, no markup."""
    sys.stdout.write(text)
    sys.stdout.flush()


def emit_json_line(value: Any) -> None:
    """One compact JSON document per line (for streams such as `log tail --follow --json`)."""
    sys.stdout.write(_json_dumps(value, None) + "\n")
    sys.stdout.flush()


def plain(text: str) -> None:
    """Stored text written as it is (the dream digest, meant to be pasted), control characters neutralised."""
    sys.stdout.write(visible(text))
    sys.stdout.flush()


def markdown(text: str) -> None:
    """Render a markdown report (the dream digest) for people."""
    from rich.markdown import Markdown

    console.print(Markdown(visible(text)))
