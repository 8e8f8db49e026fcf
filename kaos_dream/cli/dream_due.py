"""`kaos dream run --if-due` answered from the file when no pass is due, before typer or the library load.

A cron job runs ``kaos dream run --apply --if-due`` every few minutes and almost every call finds
nothing to do: that answer is one indexed count (:func:`kaos_dream.due.completed_since_mark`) on a
read-only connection. Everything that might make the answer differ from the full command's — a pass
that is due, spooled hook events to replay first, a schema to migrate, an option this parser does not
know, a setting that fails its check or a ``KAOS_`` name to warn about, a server URL, any SQLite
error — returns None, and the full command runs as before.
"""

from __future__ import annotations

import os
import re
import sqlite3
import sys

from ..due import completed_since_mark, mark_for, not_due_message

_MIGRATION = re.compile(r"^(\d{4})_[a-z0-9_]+\.sql$")
_FLAGS = {"--if-due": "if_due", "--apply": "apply", "--dry-run": "dry_run", "--quiet": "quiet", "-q": "quiet",
          "--json": "json"}


def parse(args: list[str]) -> tuple[dict[str, bool], str | None] | None:
    """``[--db V] [--json] dream run [--if-due --apply --dry-run --quiet --json --db V]`` as (flags,
    db); None for anything else (help, another option, a repeated or empty value)."""
    flags = dict.fromkeys(("if_due", "apply", "dry_run", "quiet", "json"), False)
    db: str | None = None
    rest = list(args)

    def take_db() -> bool:
        nonlocal db
        name, eq, value = rest[0].partition("=")
        if name != "--db":
            return False
        if not eq:
            if len(rest) < 2:
                return False
            value = rest.pop(1)
        rest.pop(0)
        if not value.strip() or value.startswith("-"):
            return False
        db = value  # the command's --db wins over the root's, as in click
        return True

    while rest and rest[0] != "dream":
        if rest[0] == "--json":
            flags["json"] = True
            rest.pop(0)
        elif not take_db():
            return None
    if rest[:2] != ["dream", "run"]:
        return None
    del rest[:2]
    while rest:
        if rest[0] in _FLAGS:
            flags[_FLAGS[rest.pop(0)]] = True
        elif not take_db():
            return None
    if not flags["if_due"] or (flags["apply"] and flags["dry_run"]):
        return None
    return flags, db


def latest_schema_version() -> int:
    """The newest migration shipped with this checkout (the files are numbered without gaps)."""
    folder = os.path.join(os.path.dirname(os.path.dirname(__file__)), "store", "migrations")
    return max((int(m.group(1)) for name in os.listdir(folder) if (m := _MIGRATION.match(name))), default=0)


def uri_path(path: str) -> str:
    """``path`` for a ``file:`` URI: the characters a URI gives a meaning to are %-escaped (what
    ``urllib.parse.quote`` does to them, without its import)."""
    return "".join(f"%{ord(c):02X}" if c in "%?#" else c for c in path)


def count_due(path: str, mode: str) -> int | None:
    """Completed episodes the next pass of ``mode`` would account for; None when the file is not a
    current kaos-dream library that a read-only connection can read right now."""
    try:
        conn = sqlite3.connect(f"file:{uri_path(os.path.abspath(path))}?mode=ro", uri=True, timeout=0.0)
    except sqlite3.Error:
        return None
    try:
        if conn.execute("PRAGMA user_version").fetchone()[0] != latest_schema_version():
            return None
        return completed_since_mark(conn, mark_for(mode))[0]
    except sqlite3.Error:
        return None
    finally:
        conn.close()


DEFAULT_DB = "kaos.db"  # Settings.db and Settings.dream_threshold (a test keeps them equal)
DEFAULT_THRESHOLD = 100


def environment() -> tuple[str, int] | None:
    """(database, dream threshold) as Settings gives them; None when the full command must check,
    warn or report (a value that fails its check, a ``KAOS_`` name kaos does not read). With only
    KAOS_DB and a plain KAOS_DREAM_THRESHOLD set (a cron line's usual environment), they are read
    without importing Settings, whose dataclass costs such a call more than the count itself."""
    named = {name: value for name, value in os.environ.items() if name.startswith("KAOS_")}
    threshold = named.get("KAOS_DREAM_THRESHOLD", "")
    if set(named) <= {"KAOS_DB", "KAOS_DREAM_THRESHOLD"} and (
            threshold == "" or (threshold.isascii() and threshold.isdigit() and 1 <= int(threshold) < 2**63)):
        return named.get("KAOS_DB") or DEFAULT_DB, int(threshold or DEFAULT_THRESHOLD)
    from ..errors import KaosError
    from ..settings import Settings, unknown_variables

    if unknown_variables():
        return None  # the full command warns about them
    try:
        settings = Settings.from_env()
    except KaosError:
        return None  # the full command reports it
    return settings.db, settings.dream_threshold


def answer(args: list[str]) -> int | None:
    """Exit code after printing the not-due answer, or None when the full command must run."""
    parsed = parse(args)
    if parsed is None:
        return None
    flags, db = parsed
    settings = environment()
    if settings is None:
        return None
    path, threshold = db or settings[0], settings[1]
    if "://" in path or path == ":memory:" or path.startswith("file:") or not os.path.isfile(path):
        return None
    from ..harness.spool import Spool, default_base

    if Spool(default_base(path)).pending():
        return None  # replayed before the pass: it may make one due
    mode = "apply" if flags["apply"] else "dry-run"
    due = count_due(path, mode)
    if due is None or due >= threshold:
        return None
    text = not_due_message(due, mode, threshold)
    if flags["json"]:
        import json

        outcome = {"status": "not-due", "run_id": None, "mode": None, "resumed": False, "holder": None,
                   "lease_expires_at": None, "message": text, "summary": {}}  # RunOutcome.to_dict()
        sys.stdout.write(json.dumps(outcome, indent=2, ensure_ascii=False) + "\n")
    elif not flags["quiet"]:
        sys.stdout.write(text + "\n")  # numbers and fixed words: nothing to neutralise or wrap
    sys.stdout.flush()
    return 0
