"""Rendering: rich tables for people, tab-separated lines for pipes, JSON for programs.

The only module that prints results. Every value a person or a pipe sees goes through
:func:`plain` (one place for number, list and flag formatting, so no Python repr leaks out) and then
:func:`visible`, once: library text is written by agents and models (skill descriptions, memory
content, failure messages, model diagnoses), and a control character in it would otherwise reach
the terminal raw — a clear-screen, a cursor move, an OSC title string or hidden text planted for
whoever triages. Each C0 character except newline and tab, DEL and each C1 character is shown as its
``\\xNN`` escape instead, which also defuses every ESC/CSI/OSC sequence (its introducer is shown,
the rest is plain text); bidirectional and invisible format characters (U+202E, U+2066-U+2069,
U+200B-U+200F, U+2060-U+2064, U+FEFF, ...) are shown as ``\\uXXXX``, so a reviewer never reads
reordered or hidden text. JSON output escapes the same characters the JSON way (``\\u001b``), so
programs get the exact value back. The output format is chosen once per command: ``table`` on a
terminal, ``tsv`` when stdout is not a terminal, or what ``--format`` / ``--json`` asked for.
"""

from __future__ import annotations

import contextlib
import functools
import json
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..clock import iso
from ..graph.nodes import Node

if TYPE_CHECKING:  # rich loads with the first table or styled line a terminal gets, not with every command
    from rich.console import Console
    from rich.text import Text

FORMATS = ("table", "tsv", "json")
TERMINAL_ROW_LIMIT = 50  # rows a listing shows on a terminal before "N more; use --limit"
NO_WRAP_WIDTH = 1_000_000  # a console this wide never wraps: pipes get whole lines


def stdout_is_terminal() -> bool:
    isatty = getattr(sys.stdout, "isatty", None)
    try:
        return bool(isatty and isatty())
    except ValueError:  # a closed stdout
        return False


@dataclass
class OutputMode:
    """What the running command was asked for; reset by :func:`reset` before each command."""

    format: str | None = None  # None: table on a terminal, tsv otherwise
    header: bool = False  # tsv: print the column names as the first line
    quiet: bool = False  # --quiet: nothing on stdout but JSON that was asked for; errors still on stderr
    limit_given: bool | None = None  # set by a parser that is not click's (None: ask click)

    def resolved(self) -> str:
        return self.format or ("table" if stdout_is_terminal() else "tsv")


mode = OutputMode()


def reset() -> None:
    mode.format, mode.header, mode.quiet, mode.limit_given = None, False, False, None


def limit_given() -> bool:
    """True when the running command's ``--limit`` came from the command line: the user chose the
    length, so a terminal listing is not cut short."""
    if mode.limit_given is not None:
        return mode.limit_given
    from .compat import ParameterSource, get_current_context

    ctx = get_current_context(silent=True)
    return bool(ctx and "limit" in ctx.params and ctx.get_parameter_source("limit") == ParameterSource.COMMANDLINE)


def set_format(name: str) -> None:
    if name not in FORMATS:
        raise ValueError(f"unknown format {name!r}")
    mode.format = name


def wants_json_format() -> bool:
    return mode.format == "json"


def _console() -> Console:
    """A console for the current stdout: wrapped to the terminal, never wrapped into a pipe."""
    from rich.console import Console

    if stdout_is_terminal():
        return Console(soft_wrap=False, highlight=False)
    return Console(soft_wrap=True, highlight=False, width=NO_WRAP_WIDTH, color_system=None)


class _StdoutConsole:
    """Looks like a rich Console; built per call so a redirected sys.stdout (tests, pipes) is used."""

    def print(self, *objects: Any, **kwargs: Any) -> None:
        _console().print(*objects, **kwargs)


console = _StdoutConsole()


@functools.cache
def _err_console() -> Console:
    from rich.console import Console

    return Console(stderr=True, highlight=False, soft_wrap=True)


def __getattr__(name: str) -> Any:
    """``output.err_console``: the stderr console, built on first use (it needs rich)."""
    if name == "err_console":
        return _err_console()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

# Control characters (C0 but newline and tab, DEL, C1) and the invisible and bidirectional format
# characters (issue 33 item 2): a U+202E right-to-left override or a U+2066 isolate makes a reviewer
# read reordered text, a zero-width space or joiner hides a difference. Soft hyphen U+00AD, Arabic
# letter mark U+061C, Mongolian vowel separator U+180E, U+200B-U+200F (zero-width space, joiners,
# LRM, RLM), U+2028/U+2029 (line and paragraph separators), U+202A-U+202E (embeddings, overrides),
# U+2060-U+2064 (word joiner, invisible operators), U+2066-U+206F (isolates, deprecated format
# controls), U+FEFF (zero-width no-break space), U+FFF9-U+FFFB (interlinear annotation).
_CONTROL = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2064"
    "\u2066-\u206f\ufeff\ufff9-\ufffb]")
# json.dumps(ensure_ascii=False) escapes C0 but writes DEL and C1 (U+009B is a one-character CSI) raw.
_JSON_RAW_CONTROL = re.compile(r"[\x7f-\x9f]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group(0))
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def visible(text: str) -> str:
    """``text`` safe for a terminal: control characters (not newline or tab) shown as ``\\xNN``, bidi and
    invisible format characters as ``\\uXXXX``."""
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
    if stdout_is_terminal():
        text = visible(text)
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def error_line(text: str) -> str:
    """One line for stderr (the CLI's ``kaos: ...`` messages), neutralised."""
    return visible(text)


def warn(text: str, style: str | None = None) -> None:
    """A warning for the person on stderr (alerts), neutralised, never wrapped; shown even with --quiet."""
    if sys.stderr.isatty():
        from rich.text import Text

        _err_console().print(Text(visible(text), style=style or ""), soft_wrap=True)
    else:
        sys.stderr.write(visible(text) + "\n")
        sys.stderr.flush()


def note(text: str) -> None:
    """A progress or status line on stderr (kept off stdout so pipes get only results); --quiet hides it."""
    if not mode.quiet:
        warn(text)


def number(value: float) -> str:
    """Four significant digits, never in exponent form (``0.000001055``, not ``1.055e-06``)."""
    if value != value or value in (float("inf"), float("-inf")):
        return str(value)
    short = f"{value:.4g}"
    if "e" not in short:
        return short
    from decimal import Decimal  # rare (tiny or huge numbers): not worth its import on every call

    text = format(Decimal(short), "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def plain(value: Any) -> str:
    """The one text form of a value shown to a person or a pipe: no Python reprs, no brackets.

    ``None`` is ``-``; booleans are yes/no; floats keep four significant digits; lists and tuples
    are comma-separated; graph nodes are ``KIND:ID``.
    """
    if type(value) is str:  # the common case first: a listing formats every field of every row
        return value
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return number(value)
    if isinstance(value, Node):  # a named tuple, but people read and type graph nodes as KIND:ID
        return str(value)
    if isinstance(value, (list, tuple, set, frozenset)):
        items = sorted(value, key=str) if isinstance(value, (set, frozenset)) else value
        return ", ".join(plain(v) for v in items) if items else "none"
    if isinstance(value, dict):
        return ", ".join(f"{k}={plain(v)}" for k, v in value.items()) if value else "none"
    return str(value)


def cell(value: Any) -> Text:
    """User text rendered literally: a skill named ``[bold]`` must not become markup."""
    from rich.text import Text

    if value is None:
        return Text("-", style="dim")
    return Text(visible(plain(value)))


def tsv_field(value: Any) -> str:
    """One tab-separated field: tabs and line breaks inside a value become spaces."""
    if value is None:
        return "-"
    text = visible(plain(uncut(value)))
    # After visible() the only separators left that splitlines() knows are these four.
    if "\t" in text or "\n" in text or "\u2028" in text or "\u2029" in text:
        return " ".join(text.replace("\t", " ").splitlines())
    return text


def _write_lines(lines: Iterable[str]) -> None:
    for line in lines:
        sys.stdout.write(line + "\n")
    sys.stdout.flush()


def _limit_hint(hidden: int) -> str:
    return f"… {hidden} more; use --limit to see them (or pipe the output for every row)"


def table(title: str | None, columns: Sequence[str], rows: Iterable[Sequence[Any]]) -> None:
    """A listing: a rich table on a terminal, one tab-separated row a line into a pipe.

    On a terminal a listing longer than :data:`TERMINAL_ROW_LIMIT` shows that many rows and a
    "N more" line unless the user gave ``--limit``; pipes always get every row.
    """
    if mode.quiet and mode.format != "json":
        return
    fmt = mode.resolved()
    if fmt == "json":  # a command that has no JSON form of its own: rows as objects
        emit_json([{c: uncut(v) for c, v in zip(columns, row, strict=False)} for row in rows])
        return
    if fmt == "tsv":
        header = ["\t".join(tsv_field(c) for c in columns)] if mode.header else []
        _write_lines(header + ["\t".join(tsv_field(v) for v in row) for row in rows])
        return
    from rich.text import Text

    title = None if title is None else visible(title)
    whole = limit_given()
    shown: list[list[Text]] = []
    count = 0
    for row in rows:
        count += 1
        if count <= TERMINAL_ROW_LIMIT or whole:
            shown.append([cell(v) for v in row])
    if count == 0:
        console.print(Text(f"{title or 'result'}: nothing to show", style="dim"))
        return
    headers = [visible(name) for name in columns]
    if _fits(headers, shown, _console().width):
        _print_grid(title, headers, shown)
    else:
        _print_records(title, headers, shown)
    if count > TERMINAL_ROW_LIMIT and not whole:
        console.print(Text(_limit_hint(count - TERMINAL_ROW_LIMIT), style="dim"))


# Columns holding names a person reads and types back: never broken inside, on any terminal width.
NAME_COLUMNS = frozenset({"name", "key", "skill", "agent", "node"})
MIN_OTHER_WIDTH = 6  # the narrowest the other columns may get before a listing turns into records


def _fits(headers: list[str], rows: list[list[Text]], width: int) -> bool:
    """True when every name column can keep its longest cell on one line and the other columns
    still get :data:`MIN_OTHER_WIDTH` or what they need if less (plus rich's box: a border and two
    padding cells per column)."""
    from rich.cells import cell_len

    names = [i for i, h in enumerate(headers) if h in NAME_COLUMNS]
    widest = [max([cell_len(headers[i])] + [cell_len(r[i].plain) for r in rows]) for i in range(len(headers))]
    need = sum(w if i in names else min(w, MIN_OTHER_WIDTH) for i, w in enumerate(widest))
    need += 3 * len(headers) + 1
    return need <= width


def _print_grid(title: str | None, headers: list[str], rows: list[list[Text]]) -> None:
    from rich.table import Table

    grid = Table(title=title, title_justify="left", show_lines=False)
    for name in headers:
        if name in NAME_COLUMNS:
            grid.add_column(name, no_wrap=True)  # the other columns give way
        else:
            grid.add_column(name, overflow="fold")
    for row in rows:
        grid.add_row(*row)
    console.print(grid)


def _print_records(title: str | None, headers: list[str], rows: list[list[Text]]) -> None:
    """Too narrow for a table that keeps names whole: one ``column: value`` line per field, a blank
    line between rows. Lines are never broken (the terminal wraps a long one, a copy gets it whole)."""
    from rich.text import Text

    if title:
        console.print(Text(title, style="bold"), soft_wrap=True)
    for n, row in enumerate(rows):
        if n:
            console.print("")
        for header, value in zip(headers, row, strict=False):
            console.print(Text.assemble((f"{header}: ", "bold"), value), soft_wrap=True)


def fields(title: str | None, pairs: Iterable[tuple[str, Any]]) -> None:
    """A two-column key/value view for ``show`` commands (``key<TAB>value`` lines into a pipe)."""
    if mode.quiet and mode.format != "json":
        return
    fmt = mode.resolved()
    if fmt == "json":
        emit_json({key: value for key, value in pairs})
        return
    if fmt == "tsv":
        _write_lines(f"{tsv_field(key)}\t{tsv_field(value)}" for key, value in pairs)
        return
    from rich.table import Table
    from rich.text import Text

    grid = Table(title=None if title is None else visible(title), title_justify="left", show_header=False,
                 box=None, pad_edge=False)
    grid.add_column(style="bold")
    grid.add_column(overflow="fold")
    for key, value in pairs:
        grid.add_row(Text(visible(key)), cell(value))
    console.print(grid)


def message(text: str, style: str | None = None) -> None:
    """A line for people; into a pipe it is written as is, never wrapped. Never word-wrapped on a
    terminal either: rich's wrapping of one long line is quadratic (it splits the wrapped text line
    by line, copying the rest each time: 10 MB took 47 s) and broke commands."""
    if mode.quiet:
        return
    if not stdout_is_terminal():
        _write_lines([visible(text)])
        return
    from rich.text import Text

    console.print(Text(visible(text), style=style or ""), soft_wrap=True)


def when(ts: float | None) -> str | None:
    return iso(ts)


def json_text(value: Any) -> str:
    return _json_dumps(value, None, sort_keys=True)


class Shortened(str):
    """A table cell cut to fit a terminal that still carries the whole text: TSV and JSON never truncate."""

    full: str


def shorten(text: str, width: int = 80) -> str:
    """``text`` on one line, cut with ``…`` at ``width`` for a terminal's table (pipes get it whole)."""
    flat = " ".join(text.split())
    if len(flat) <= width:
        return flat
    cut = Shortened(flat[: width - 1] + "…")
    cut.full = text
    return cut


def uncut(value: Any) -> Any:
    """The whole text behind a :func:`shorten` cell (any other value as it is)."""
    return value.full if isinstance(value, Shortened) else value


def write_text(text: str) -> None:
    """A document (DOT, GraphML, …) on stdout exactly as given: no wrapping, no markup."""
    sys.stdout.write(text)
    sys.stdout.flush()


def emit_json_line(value: Any) -> None:
    """One compact JSON document per line (for streams such as `log tail --follow --json`)."""
    sys.stdout.write(_json_dumps(value, None) + "\n")
    sys.stdout.flush()


def write_visible(text: str) -> None:
    """Stored text written as it is (the dream digest, meant to be pasted), control characters neutralised."""
    sys.stdout.write(visible(text))
    sys.stdout.flush()


def markdown(text: str) -> None:
    """Render a markdown report (the dream digest) for people; a pipe gets the markdown source."""
    if mode.quiet:
        return
    if not stdout_is_terminal():
        _write_lines(visible(text).rstrip("\n").splitlines())
        return
    from rich.markdown import Markdown

    console.print(Markdown(visible(text)))


@contextlib.contextmanager
def progress_bar(label: str, enabled: bool = True) -> Iterator[Callable[[str, int, int], None] | None]:
    """A rich progress bar on stderr for slow work, fed (step, position, total): only when stderr is a
    terminal and neither --quiet nor JSON output was asked for; None otherwise (pipes stay clean)."""
    if not enabled or mode.quiet or mode.format == "json" or not sys.stderr.isatty():
        yield None
        return
    from rich.progress import BarColumn, TextColumn, TimeElapsedColumn
    from rich.progress import Progress as RichProgress

    bar = RichProgress(TextColumn(f"{label}: {{task.description}}"), BarColumn(), TimeElapsedColumn(),
                       console=_err_console(), transient=True)
    task = bar.add_task("starting", total=1)
    with bar:
        def update(step: str, position: int, total: int) -> None:
            bar.update(task, description=step, completed=position, total=max(total, 1))

        yield update
