"""`kaos search`'s options, in one table that both the typer command and the fast path read.

The typer command (:mod:`.search`) is generated from :func:`options`, so its help and its errors
are typer's. The fast path (:func:`parse`, used by :mod:`kaos_dream.entry` before typer is imported)
accepts only arguments it can read exactly as click would, and returns None for anything else —
``--help``, an unknown option, a value out of range, a missing query — so that typer judges those,
and help and error messages come from one place. A search called from a shell loop then costs no
typer, click, pydantic or rich (~0.1 s of CPU per call).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..argv import ROOT_FLAGS, ROOT_VALUE_OPTIONS
from .libraries import DB_HELP, JSON_HELP
from .output import FORMATS

COMMAND = "search"
QUERY_HELP = ("Any text; it is made safe for full-text search. - reads it from stdin; put -- before a query that "
              "begins with -.")
DOC = """Search skills and memories, best match first.

    Example: kaos search "convert csv to parquet" --kind skill --limit 5 --agent run-42 --record-hits

    Example: kaos search "deploy failed" --expand 3 --mode adaptive

    Example: kaos search "convert csv to parquet" --kind skill --explore --seed 7
    """


@dataclass(frozen=True)
class Option:
    """One option: ``kind`` is flag, int, number (0 to 1), text or choice; ``minimum``/``maximum`` bound
    an int."""

    name: str
    flag: str
    help: str
    kind: str
    default: Any = None
    choices: tuple[str, ...] | Callable[[], tuple[str, ...]] = ()
    minimum: int | None = None
    maximum: int | None = None
    show_default: bool = True

    def values(self) -> tuple[str, ...]:
        """A choice's allowed values."""
        return self.choices() if callable(self.choices) else self.choices


def activation_modes() -> tuple[str, ...]:
    """The graph's activation modes, asked for only when ``--mode`` is given (their module loads numpy)."""
    from ..graph.activation import MODES

    return MODES


@functools.cache
def options() -> tuple[Option, ...]:
    """The table; a choice's values may be a function, called when they are needed."""
    return (
        Option("kind", "--kind", "What to search.", "choice", "all", ("all", "skill", "memory")),
        Option("limit", "--limit", "At most this many results.", "int", 10, minimum=1, maximum=1000),
        Option("include_deprecated", "--include-deprecated", "Also return deprecated skills.", "flag", False),
        Option("rank", "--rank", "weighted: relevance x recent outcomes (default, $KAOS_RANK); wilson: the seed "
               "formula; bm25: lexical order.", "choice", None, ("weighted", "wilson", "bm25"), show_default=False),
        Option("explore", "--explore", "Weighted only: rank skills by a seeded Thompson draw from their recent "
               "record, so untried alternatives get tried sometimes.", "flag", False),
        Option("seed", "--seed", "Seed of the --explore draw (default: $KAOS_EXPLORE_SEED); the same seed and "
               "data give the same order.", "int", None, minimum=0, maximum=2**32 - 1, show_default=False),
        Option("min_relevance", "--min-relevance", "Drop hits whose calibrated relevance (0-1, the observed "
               "share of such hits that answer the query) is below this (default: $KAOS_MIN_RELEVANCE, else "
               "the tuned default); 0 keeps every candidate.", "number", None, show_default=False),
        Option("task", "--task", "Rank by outcomes on this task (default: the query itself).", "text"),
        Option("agent", "--agent", "Agent id the hits are recorded for.", "text"),
        Option("record_hits", "--record-hits", "Record one hit row per result (the only search that writes).",
               "flag", False),
        Option("expand", "--expand", "Add up to N items the graph links to the hits (spreading activation); "
               "lexical hits keep their places.", "int", 0, minimum=0, maximum=50),
        Option("mode", "--mode", "Activation mode for --expand.", "choice", "gated", activation_modes),
        Option("db", "--db", DB_HELP, "text", show_default=False),
        Option("json_out", "--json", JSON_HELP, "flag", False),
    )


# Options every printing command also takes, copied from the root's (see cli.application._shared_options).
SHARED_VALUE_OPTIONS = {"--format": FORMATS}
SHARED_FLAGS = ("--header", "--quiet")

_WHOLE_NUMBER = re.compile(r"(0|[1-9][0-9]*)")
_DECIMAL = re.compile(r"[0-9]{1,3}(\.[0-9]{1,12})?|\.[0-9]{1,12}")


@dataclass
class Parsed:
    """What a command line asked for: the search's values by name, and the root and shared options."""

    values: dict[str, Any]
    root_db: str | None = None
    root_json: bool = False
    format: str | None = None
    header: bool = False
    quiet: bool = False
    limit_given: bool = False


class _Unsure(Exception):
    """Arguments click must judge (it prints the help or the error)."""


def _value(option: Option, raw: str) -> Any:
    if raw.startswith("-") and raw != "-":
        raise _Unsure  # click would take it as the value; rare enough to leave to click
    if option.kind == "text":
        return raw
    if option.kind == "choice":
        if raw not in option.values():
            raise _Unsure
        return raw
    if option.kind == "number":
        if not _DECIMAL.fullmatch(raw) or not 0.0 <= float(raw) <= 1.0:
            raise _Unsure
        return float(raw)
    if not _WHOLE_NUMBER.fullmatch(raw):
        raise _Unsure
    number = int(raw)
    if (option.minimum is not None and number < option.minimum) or (
            option.maximum is not None and number > option.maximum):
        raise _Unsure
    return number


def _take(args: list[str], at: int, inline: str | None) -> tuple[str, int]:
    """An option's value: after ``=`` or the next argument."""
    if inline is not None:
        return inline, at
    if at + 1 >= len(args):
        raise _Unsure
    return args[at + 1], at + 1


def _root(args: list[str], parsed: Parsed) -> int:
    """Read the root options before the command name; returns the position of the command name."""
    at = 0
    while at < len(args):
        flag, eq, inline = args[at].partition("=")
        if flag == "--principal":
            raise _Unsure  # who writes: the recorded hits name it, so typer's path opens the library with it
        if flag in ROOT_VALUE_OPTIONS:
            raw, at = _take(args, at, inline if eq else None)
            if flag == "--db":
                if raw.startswith("-") and raw != "-":
                    raise _Unsure
                parsed.root_db = raw
            else:
                if raw not in FORMATS:
                    raise _Unsure
                parsed.format = raw
        elif args[at] in ROOT_FLAGS:
            parsed.root_json |= args[at] == "--json"
            parsed.header |= args[at] == "--header"
            parsed.quiet |= args[at] == "--quiet"
        else:
            return at
        at += 1
    raise _Unsure  # no command


def parse(args: list[str]) -> Parsed | None:
    """``kaos [ROOT OPTIONS] search …`` read as click reads it, or None when click must judge it."""
    parsed = Parsed({option.name: option.default for option in options()})
    by_flag = {option.flag: option for option in options()}
    try:
        at = _root(args, parsed)
        if args[at] != COMMAND:
            return None
        query: list[str] = []
        at += 1
        while at < len(args):
            arg = args[at]
            if arg.startswith("-") and arg != "-":
                flag, eq, inline = arg.partition("=")
                option = by_flag.get(flag)
                if flag in SHARED_VALUE_OPTIONS:
                    raw, at = _take(args, at, inline if eq else None)
                    if raw not in SHARED_VALUE_OPTIONS[flag]:
                        raise _Unsure
                    parsed.format = raw
                elif flag in SHARED_FLAGS and not eq:
                    parsed.header |= flag == "--header"
                    parsed.quiet |= flag == "--quiet"
                elif option is None:
                    raise _Unsure  # --help, --, an unknown or misspelt option
                elif option.kind == "flag":
                    if eq:
                        raise _Unsure
                    parsed.values[option.name] = True
                else:
                    raw, at = _take(args, at, inline if eq else None)
                    parsed.values[option.name] = _value(option, raw)
                    parsed.limit_given |= option.name == "limit"
            else:
                query.append(arg)
            at += 1
    except _Unsure:
        return None
    if len(query) != 1 or not query[0].strip():
        return None  # no query, two, or a blank one: click says what is wrong (a usage error)
    parsed.values["query"] = query[0]
    return parsed


def names_command(args: list[str]) -> bool:
    """True when these arguments (root options first) run `kaos search`, whether or not :func:`parse` can read them."""
    try:
        at = _root(args, Parsed({}))
    except _Unsure:
        return False
    return args[at] == COMMAND
