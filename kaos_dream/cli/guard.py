"""How a command ends: every error a user can cause becomes one line on stderr and an exit code.

Shared by the typer application (:func:`kaos_dream.cli.application.run`) and the fast paths that
answer a command before typer is imported (:mod:`kaos_dream.entry`), so both end alike. Nothing
here imports typer, click or rich.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import sys
from collections.abc import Callable

from ..errors import KaosError
from ..store.connect import describe_sqlite_error
from . import output
from .libraries import forget_resolved_db, resolved_db
from .output import error_line, shorten


def debugging() -> bool:
    return os.environ.get("KAOS_DEBUG", "").lower() in {"1", "true", "yes", "on"}


def warn_unknown_variables() -> None:
    """One stderr line per ``KAOS_…`` variable kaos does not read: a typo must not be ignored silently."""
    from ..settings import unknown_variables

    for name, guess in unknown_variables():
        hint = f" (did you mean {guess}?)" if guess else ""
        sys.stderr.write(f"kaos: warning: {name} is not a kaos setting{hint}; ignored (see `kaos config`)\n")


def fail(message: str, code: int) -> int:
    first_line = " ".join(message.strip().splitlines()[:1]) or "unknown error"
    sys.stderr.write(f"kaos: {error_line(first_line)}\n")
    return code


def strict_stdin() -> None:
    """Make reading stdin refuse bytes that are not UTF-8 instead of smuggling them in as surrogates."""
    reconfigure = getattr(sys.stdin, "reconfigure", None)
    if reconfigure is not None:
        with contextlib.suppress(OSError, ValueError):  # a closed or detached stdin: nothing to read anyway
            reconfigure(errors="strict")


def completing() -> bool:
    """True while the shell asks for completions: their output must stay clean."""
    return any(k.startswith("_KAOS_COMPLETE") for k in os.environ)


def start_command() -> None:
    """What every command does before parsing: fresh output state, the settings check, strict stdin."""
    forget_resolved_db()
    output.reset()
    if not completing():
        warn_unknown_variables()


def global_options_path() -> str:
    from ..store.engine import mask

    return resolved_db() or mask(os.environ.get("KAOS_DB") or "") or "the database"


def guarded(command: Callable[[], int]) -> int:
    """Run ``command`` and return its exit code, turning the errors it may raise into one line."""
    debug = debugging()
    try:
        return command()
    except KaosError as exc:
        if debug:
            raise
        from ..store.engine import mask

        return fail(mask(f"error: {exc}"), exc.exit_code)
    except sqlite3.Error as exc:  # PostgreSQL's errors arrive as these too (store/postgres/adapter.py)
        if debug:
            raise
        from ..store.engine import mask

        return fail("error: " + mask(describe_sqlite_error(exc, global_options_path())), 1)
    except OverflowError as exc:  # e.g. --limit 9223372036854775808: past SQLite's 64-bit integers
        if debug:
            raise
        return fail(f"usage error: a number is out of range ({exc})", 2)
    except KeyboardInterrupt:
        return fail("interrupted", 130)
    except BrokenPipeError:
        return 0
    except UnicodeError as exc:  # bytes on stdin (or in a variable) that are not UTF-8 text
        if debug:
            raise
        return fail(f"error: input is not valid UTF-8 text ({exc.reason})", 1)
    except OSError as exc:  # the environment said no: a path too long, a device error, ...
        if debug:
            raise
        where = f": {shorten(str(exc.filename), 120)}" if exc.filename else ""
        return fail(f"error: {exc.strerror or exc}{where}", 1)
    except Exception as exc:  # the last line of defence: never a traceback for the user
        if debug:
            raise
        from ..store.engine import mask

        if _from_driver(exc):  # a PostgreSQL error the adapter did not see (it describes those it runs)
            return fail(f"error: {global_options_path()}: PostgreSQL: {mask(str(exc))}", 1)
        return fail(mask(f"internal error: {type(exc).__name__}: {exc} (set KAOS_DEBUG=1 for a traceback)"), 1)


def _from_driver(exc: BaseException) -> bool:
    """True for an error raised by psycopg (checked by module, so this never imports the driver)."""
    return any(cls.__module__.split(".")[0] in ("psycopg", "psycopg_binary") for cls in type(exc).__mro__)
