"""Shared CLI plumbing: the ``--db`` / ``--json`` options and opening the library for a command."""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager
from typing import Annotated, Any

import typer

from ..errors import InvalidInputError
from ..library import Library
from .libraries import (
    DB_HELP,
    JSON_HELP,
    GlobalOptions,
    forget_resolved_db,
    open_readonly,
    open_writable,
    resolve_db_path,
    resolved_db,
    wants_json_output,
)

__all__ = ["GlobalOptions", "forget_resolved_db", "resolved_db"]  # re-exported for the command modules

DbOption = Annotated[str | None, typer.Option("--db", help=DB_HELP, show_default=False)]
JsonOption = Annotated[bool, typer.Option("--json", help=JSON_HELP)]


def global_options(ctx: typer.Context) -> GlobalOptions:
    root = ctx.find_root()
    if not isinstance(root.obj, GlobalOptions):
        root.obj = GlobalOptions()
    return root.obj


def resolve_db(ctx: typer.Context, db: str | None) -> str:
    return resolve_db_path(global_options(ctx), db)


def wants_json(ctx: typer.Context, json_flag: bool) -> bool:
    """``--json`` (here or before the command) or ``--format json``: the command prints its JSON form."""
    return wants_json_output(global_options(ctx), json_flag)


def show_entry(ctx: typer.Context, json_flag: bool, data: Any, done: str | None, title: str,
               pairs: list[tuple[str, Any]]) -> bool:
    """A skill or memory: ``data`` as JSON when asked for, the one line ``done`` after a change, or
    else its ``pairs`` under ``title``; True when it showed the fields (the caller may add more)."""
    from . import output

    if wants_json(ctx, json_flag):
        output.emit_json(data)
        return False
    if done:
        output.message(done)
        return False
    output.fields(title, pairs)
    return True


def reply(ctx: typer.Context, json_flag: bool, data: Any, text: str) -> None:
    """What a command that changed something prints: ``data`` as JSON when asked for, else the one
    line ``text`` for people."""
    from . import output

    if wants_json(ctx, json_flag):
        output.emit_json(data)
    else:
        output.message(text)


def listing(ctx: typer.Context, json_flag: bool, data: Any, title: str, columns: list[str],
            rows: Iterable[Sequence[Any]]) -> None:
    """What a command that lists records prints: ``data`` as JSON when asked for, else ``rows`` (read
    only then, so a generator over ``data`` costs nothing for JSON) as a table under ``title``."""
    from . import output

    if wants_json(ctx, json_flag):
        output.emit_json(data)
    else:
        output.table(title, columns, rows)


def open_for_write(ctx: typer.Context, db: str | None, *, create: bool = False) -> AbstractContextManager[Library]:
    """Open (migrating if needed) for a command that changes the library (see :func:`open_writable`)."""
    return open_writable(global_options(ctx), db, create=create)


def open_for_read(ctx: typer.Context, db: str | None) -> AbstractContextManager[Library]:
    """Open read-only: a read command can never write, migrate or create the file."""
    return open_readonly(global_options(ctx), db)


def allowed_values(*allowed: str, extra: tuple[str, ...] = ()):
    """A typer callback that makes any other value a usage error (exit 2), like click's Choice,
    while the help keeps the sentence that explains the values."""
    names = tuple(allowed) + tuple(extra)

    def check(value: str | None) -> str | None:
        if value is not None and value not in names:
            raise typer.BadParameter(f"{value!r} is not one of {', '.join(names)}")
        return value

    return check


def one_of(first: bool, second: bool, first_name: str, second_name: str) -> bool:
    """The answer a pair of opposite flags gives: True for ``first_name``, False for ``second_name``.

    Both or neither is a usage error: with click's ``--a/--b`` form the last flag silently won, so
    ``--approve --reject`` counted as a rejection.
    """
    if first and second:
        raise typer.BadParameter(f"{first_name} and {second_name} exclude each other", param_hint=second_name)
    if not first and not second:
        raise typer.BadParameter(f"say {first_name} or {second_name}", param_hint=f"{first_name}/{second_name}")
    return first


def parse_params(pairs: list[str]) -> dict[str, str]:
    """``k=v`` pairs from ``--param`` options."""

    params: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise InvalidInputError(f"--param expects NAME=VALUE, got {pair!r}")
        params[key.strip()] = value
    return params


def complete_skill_names(ctx: typer.Context, incomplete: str) -> list[str]:
    """Shell completion for a skill argument: live skill names starting with what was typed.

    Reads the library read-only (``--db`` given so far, else ``$KAOS_DB`` / ./kaos.db); a missing
    or unreadable file completes nothing rather than printing an error into the shell.
    """
    root = ctx.find_root()
    path = (ctx.params.get("db") or root.params.get("db") or os.environ.get("KAOS_DB") or "kaos.db")
    try:
        with Library(path, readonly=True) as lib:
            return [s.name for s in lib.skills.list() if s.name.startswith(incomplete)]
    except Exception:  # completion must never break the shell: no file, a damaged one, a bad setting
        return []


STDIN_HINT = ("a text that begins with '-' goes after -- (kaos failure record -t pytest -- '-x: boom'), "
              "or pass - and give it on stdin")


def free_text(value: str, what: str) -> str:
    """A free-text argument: ``-`` reads it from stdin (a text beginning with ``-`` also passes after
    ``--``); empty stdin is refused with a one-line message."""
    if value != "-":
        return value
    import sys

    from ..errors import InvalidInputError

    text = sys.stdin.read()
    if not text.strip():
        raise InvalidInputError(f"no {what} on stdin")
    return text.rstrip("\n")
