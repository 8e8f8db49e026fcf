"""Which library file a command uses and how it opens it; no typer, so fast paths share it."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..errors import InvalidInputError, StoreError

if TYPE_CHECKING:
    from ..library import Library

DB_HELP = "Database file (default: $KAOS_DB or ./kaos.db)."
JSON_HELP = "Print JSON for programs instead of a table."


@dataclass
class GlobalOptions:
    """The root's ``--db`` and ``--json`` (``kaos --db X --json COMMAND``)."""

    db: str | None = None
    json: bool = False
    principal: str | None = None  # the root's --principal (else KAOS_PRINCIPAL, else user@host)


_resolved: list[str] = []  # the database the running command opened, for error messages


def resolve_db_path(options: GlobalOptions, db: str | None) -> str:
    """The command's ``--db``, else the root's, else ``$KAOS_DB``, else the settings' default."""
    if any(given is not None and not given.strip() for given in (db, options.db)):
        raise InvalidInputError("--db must name a file")  # an empty --db must not quietly mean ./kaos.db
    if db or options.db or os.environ.get("KAOS_DB"):
        path = db or options.db or os.environ["KAOS_DB"]
    else:
        from ..settings import Settings

        path = Settings.from_env().db
    _resolved[:] = [path]
    require_postgres_driver(path)
    return path


def require_postgres_driver(path: str) -> None:
    """A PostgreSQL URL needs the psycopg driver: without it, the install line (before any work)."""
    if "://" not in path:  # a file path: nothing to import on the search fast path
        return
    from ..store.engine import parse_db, require_driver

    require_driver(parse_db(path))


def resolved_db() -> str | None:
    """The database path the current command resolved, password masked (None before it got that far)."""
    if not _resolved:
        return None
    from ..store.engine import mask

    return mask(_resolved[0])


def forget_resolved_db() -> None:
    _resolved.clear()


def wants_json_output(options: GlobalOptions, json_flag: bool) -> bool:
    """``--json`` (here or before the command) or ``--format json``: the command prints its JSON form."""
    from . import output

    return json_flag or options.json or output.wants_json_format()


@contextlib.contextmanager
def open_writable(options: GlobalOptions, db: str | None, *, create: bool = False) -> Iterator[Library]:
    """Open (migrating if needed) for a command that changes the library.

    Only the commands that add content (``create=True``; listed in ``store.connect.CREATING_COMMANDS``)
    create a missing file: for every other command a missing file is a mistyped ``--db``, and a cron
    job must hear about it instead of working on a new empty library.
    """
    from ..library import Library
    from ..store.connect import missing_library_message
    from ..store.engine import is_postgres_url

    path = resolve_db_path(options, db)
    remote = is_postgres_url(path)
    if not create and not remote and path != ":memory:" and not path.startswith("file:") and not os.path.exists(path):
        raise StoreError(missing_library_message(path))
    lib = Library(path, create=create or not remote, principal=options.principal)
    try:
        yield lib
    finally:
        lib.close()


@contextlib.contextmanager
def open_readonly(options: GlobalOptions, db: str | None) -> Iterator[Library]:
    """Open read-only: a read command can never write, migrate or create the file."""
    from ..library import Library

    lib = Library(resolve_db_path(options, db), readonly=True)
    try:
        yield lib
    finally:
        lib.close()
