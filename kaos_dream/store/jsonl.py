"""`kaos db export --jsonl` / `kaos db import`: the whole library as JSON lines, and back.

Format (``format_version`` 1), one JSON document per line, UTF-8:

* line 1, the header: ``{"format": "kaos-dream-export", "format_version": 1, "schema_version": N,
  "migrations": [[1, "foundation"], ...], "tables": {"skills": {"columns": [...], "rows": 3}, ...}}``
* then one line per row, tables in name order and rows in primary-key order:
  ``{"t": "skills", "r": [1, "csv-to-parquet", ...]}`` (values in the header's column order; a BLOB
  is ``{"b64": "..."}``; floats are written with full precision)
* last line: ``{"end": true, "rows": TOTAL}``, so a truncated file is detected.

Full-text index tables are not exported (the import rebuilds them). A migration that changes only
how rows are stored (``STORAGE_ONLY``: migrations 14 and 15 keep each task text once in ``tasks``,
under a small key; 16 names each outcome's agent by a small key in ``agent_keys``; 18 fills the
per-agent index in batches, with a column of its own that no export carries) changes no
export: a file past it is exported in the layout before it (header, tables, rows and bytes as
before), and the import loads that layout and migrates it like any older file. Nothing in the export
depends on when it was made, so export → import → export is identical byte for byte. The whole
export is read inside one read transaction: a consistent snapshot even while agents write.

Both engines: the source or the target may be a ``postgresql://`` URL. The table questions (which
tables, columns, row order, load order) are answered per engine by :mod:`.catalogue`, so the export
of a SQLite library and of its PostgreSQL copy are the same bytes. A PostgreSQL import is one
transaction (:mod:`.postgres.transfer`) that loads the tables parents first, as the server checks
each foreign key at the insert.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import hashlib
import json
import math
import sqlite3
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from ..errors import InvalidInputError, StoreError
from .catalogue import (
    TableSpec,
    broken_reference,
    data_tables,
    load_order,
    read_snapshot,
    rebuild_fulltext,
    referenced_tables,
    select_rows,
    trigger_written_tables,
)
from .connect import connect, describe_sqlite_error
from .counters import EXACT_FROM_VERSION, counter_mismatches
from .dialect import is_postgres
from .engine import mask, parse_db
from .files import file_mode, finish_as_rollback_journal, open_copy_source, staged_file
from .import_values import row_problem, text_columns
from .lookalikes import check_loaded_skeletons
from .migrations import LATEST_VERSION, MIGRATIONS, apply_migrations, check_ownership, schema_version

FORMAT = "kaos-dream-export"
FORMAT_VERSION = 1
INSERT_BATCH = 1000  # rows per executemany on PostgreSQL (one pipelined round trip each)

__all__ = ["FORMAT", "FORMAT_VERSION", "ExportResult", "ImportResult", "TableSpec", "data_tables",
           "export_database", "export_lines", "import_database", "import_lines", "library_is_empty",
           "open_export_source"]

# Migrations (by name) after which an export is still written in the layout before them.
STORAGE_ONLY = ("task_table", "task_keys", "agent_keys", "agent_index_in_batches")
# Tables a storage-only migration added: what the exported layout's rows were folded into.
_FOLDED_TABLES = ("tasks", "agent_keys")



# How the tables migrations 14 to 16 reshaped are exported: as their earlier layout, each use row
# with its wording, hex digest and agent id, the counters keyed by the hex digest (whose string order
# is the order they were always exported in); ``tasks`` and ``agent_keys`` are what those rows were
# folded into. A file at 14 keys tasks by the digest itself; from 15 on by a small id beside it, and a
# counter row's last_used_at is the newest time of its rows, which is what the triggers kept in the
# dropped column; from 16 on a use row names its agent by its key in ``agent_keys``.
_USES_COLUMNS = ("id", "skill_id", "agent_id", "success", "task", "task_hash", "created_at")
_TASK_STATS_COLUMNS = ("task_hash", "skill_id", "uses", "successes", "last_used_at")
_TASK_STATS_FROM_15 = (
    _TASK_STATS_COLUMNS,
    "SELECT {hex_t_hash} AS h, s.skill_id, s.uses, s.successes, "
    "(SELECT max(u.created_at) FROM skill_uses AS u WHERE u.task_id = s.task_id AND u.skill_id = s.skill_id) "
    "FROM skill_task_stats AS s JOIN tasks AS t ON t.id = s.task_id ORDER BY {order_hex_t_hash}, s.skill_id",
)
_TASK_TABLE_VIEWS = {
    14: {
        "skill_uses": (
            _USES_COLUMNS,
            "SELECT u.id, u.skill_id, u.agent_id, u.success, coalesce(u.task, t.text), "
            "CASE WHEN u.task_id IS NULL THEN NULL ELSE {hex_u_task_id} END, u.created_at "
            "FROM skill_uses AS u LEFT JOIN tasks AS t ON t.id = u.task_id ORDER BY u.id",
        ),
        "skill_task_stats": (
            _TASK_STATS_COLUMNS,
            "SELECT {hex_task_id} AS h, skill_id, uses, successes, last_used_at "
            "FROM skill_task_stats ORDER BY {order_hex_task_id}, skill_id",
        ),
    },
    15: {
        "skill_uses": (
            _USES_COLUMNS,
            "SELECT u.id, u.skill_id, u.agent_id, u.success, coalesce(u.task, t.text), "
            "CASE WHEN u.task_id IS NULL THEN NULL ELSE {hex_t_hash} END, u.created_at "
            "FROM skill_uses AS u LEFT JOIN tasks AS t ON t.id = u.task_id ORDER BY u.id",
        ),
        "skill_task_stats": _TASK_STATS_FROM_15,
    },
    16: {
        "skill_uses": (
            _USES_COLUMNS,
            "SELECT u.id, u.skill_id, a.agent_id, u.success, coalesce(u.task, t.text), "
            "CASE WHEN u.task_id IS NULL THEN NULL ELSE {hex_t_hash} END, u.created_at "
            "FROM skill_uses AS u LEFT JOIN tasks AS t ON t.id = u.task_id "
            "LEFT JOIN agent_keys AS a ON a.id = u.agent_key ORDER BY u.id",
        ),
        "skill_task_stats": _TASK_STATS_FROM_15,
    },
}


def _hex(expr: str, postgres: bool) -> str:
    """A 64-bit integer as 16 hex digits (two's complement for a negative one), in the engine's SQL."""
    return f"lpad(to_hex({expr}), 16, '0')" if postgres else f"printf('%016x', {expr})"


def _view_sql(template: str, postgres: bool) -> str:
    """A view of the old layout in the engine's own SQL (PostgreSQL's is run untranslated)."""
    # PostgreSQL orders by an output name only when it stands alone: there, the expression itself, in
    # byte order; on SQLite the name h.
    order = {e: (f'{_hex(e, True)} COLLATE "C"' if postgres else "h") for e in ("task_id", "t.hash")}
    return template.format(hex_u_task_id=_hex("u.task_id", postgres), hex_task_id=_hex("task_id", postgres),
                           hex_t_hash=_hex("t.hash", postgres), order_hex_task_id=order["task_id"],
                           order_hex_t_hash=order["t.hash"])


def _rows(conn: Any, sql: str) -> Iterable[tuple[Any, ...]]:
    """The rows of an export query: run as PostgreSQL's own SQL there (the catalogue's ORDER BY terms)."""
    if is_postgres(conn):
        return conn.native(sql.encode("utf-8"))
    return conn.execute(sql)


def _counts(conn: Any, tables: list[tuple[str, tuple[str, ...], str]]) -> dict[str, int]:
    return {name: int(next(iter(_rows(conn, f"SELECT count(*) FROM ({sql}) AS exported")))[0])
            for name, _, sql in tables}


def exported_counts(conn: Any) -> dict[str, int]:
    """Rows per table as an export of the library now would hold them (the layout before the
    storage-only migrations): what an import reports, so its tables add up to the rows it loaded."""
    return _counts(conn, _exported(conn, schema_version(conn)))


def export_version(version: int) -> int:
    """The schema version whose layout an export of a file at ``version`` is written in."""
    while version > 0 and MIGRATIONS[version - 1].name in STORAGE_ONLY:
        version -= 1
    return version


def _exported(conn: Any, version: int) -> list[tuple[str, tuple[str, ...], str]]:
    """``(table, columns, SELECT …)`` of every exported table, in name order, in the layout of
    :func:`export_version`."""
    layout = export_version(version)
    # A file past migrations 14 to 16 written as schema 13: its use and counter rows as views, the
    # tables they were folded into left out. Later storage-only steps (18) need no view.
    folded = layout < min(_TASK_TABLE_VIEWS) <= version
    views = _TASK_TABLE_VIEWS[min(version, max(_TASK_TABLE_VIEWS))] if folded else {}
    out = []
    for spec in data_tables(conn):
        cols = ", ".join(f'"{c}"' for c in spec.columns)
        sql = f'SELECT {cols} FROM "{spec.name}"'
        if spec.name == "schema_migrations" and layout < version:
            sql += f" WHERE version <= {int(layout)}"
        sql += f" ORDER BY {spec.order_by}"
        if folded and spec.name in _FOLDED_TABLES:
            continue
        if spec.name in views:
            columns, template = views[spec.name]
            out.append((spec.name, columns, _view_sql(template, is_postgres(conn))))
            continue
        out.append((spec.name, spec.columns, sql))
    return out



def _encode(value: Any) -> Any:
    if isinstance(value, bytes):
        return {"b64": base64.b64encode(value).decode("ascii")}
    return value


def _decode(value: Any) -> Any:
    if isinstance(value, dict):
        if set(value) != {"b64"}:
            raise InvalidInputError(f"unexpected object in a row: {json.dumps(value)[:80]}")
        try:
            return base64.b64decode(value["b64"], validate=True)
        except (binascii.Error, TypeError, ValueError):
            raise InvalidInputError(f"a b64 value is not valid base64 text: {json.dumps(value)[:80]}") from None
    if isinstance(value, list):
        raise InvalidInputError("unexpected list in a row value")
    if isinstance(value, float) and math.isnan(value):
        raise InvalidInputError("NaN is not a value SQLite can store")
    return value


def _line(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")) + "\n"


def export_lines(conn: sqlite3.Connection) -> Iterator[str]:
    """The export of the open database, one line at a time (call inside a read transaction).

    A SQLite file is checked first (``PRAGMA quick_check``: every page of every table and index): the
    export reads tables in key order and may never touch a damaged index, and an export that looks
    complete must not be taken from a file that is not."""
    if not is_postgres(conn):
        found = [str(r[0]) for r in conn.execute("PRAGMA quick_check(1)")]
        if found != ["ok"]:
            raise sqlite3.DatabaseError(f"database disk image is malformed ({found[0]})")
    version = schema_version(conn)
    layout = export_version(version)
    tables = _exported(conn, version)
    counts = _counts(conn, tables)
    migrations = [
        [int(r[0]), str(r[1])]
        for r in conn.execute("SELECT version, name FROM schema_migrations WHERE version <= ? ORDER BY version",
                              (layout,))
    ]
    header = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "schema_version": layout,
        "migrations": migrations,
        "tables": {name: {"columns": list(columns), "rows": counts[name]} for name, columns, _ in tables},
    }
    yield _line(header)
    total = 0
    for name, _, sql in tables:
        for row in _rows(conn, sql):
            total += 1
            yield _line({"t": name, "r": [_encode(v) for v in row]})
    yield _line({"end": True, "rows": total})


@dataclass(frozen=True)
class ExportResult:
    schema_version: int  # the layout the file is written in: the "schema_version" of its header
    tables: dict[str, int]
    rows: int
    target: str
    library_schema_version: int = 0  # the source library's own version (later steps storage-only)


def storage_only_between(older: int, newer: int) -> bool:
    """Whether every migration after ``older`` up to ``newer`` changes only how rows are stored."""
    return all(MIGRATIONS[v - 1].name in STORAGE_ONLY for v in range(older + 1, newer + 1))


def describe_versions(in_file: int, library: int) -> str:
    """One schema version for a person, the one the export file holds, and why the library's
    differs when it does (issue 33 item 12: "schema 18" said while the file held 17)."""
    if in_file == library:
        return f"schema version {in_file}"
    if in_file < library and storage_only_between(in_file, library):
        later = ", ".join(str(v) for v in range(in_file + 1, library + 1))
        return (f"schema version {in_file}, as written in the export; the library is at {library}, but "
                f"migration {later} changes only how rows are stored, not what an export holds")
    return f"schema version {in_file} in the export, upgraded to {library}"


def open_export_source(source: str, target: str | Path | None, *, verb: str, busy_timeout_ms: int) -> Any:
    """A read-only connection to the library an export or copy reads: a SQLite file or a
    ``postgresql://`` URL; a database without a kaos-dream library is refused (nothing to read)."""
    engine = parse_db(source)
    if engine.kind == "postgresql":
        from .postgres.transfer import open_source

        return open_source(engine, busy_timeout_ms=busy_timeout_ms, verb=verb)
    return open_copy_source(source, target, noun="export" if verb == "export" else verb, verb=verb,
                            busy_timeout_ms=busy_timeout_ms)


def export_database(source: str, out: str | Path | IO[str], *, force: bool = False,
                    busy_timeout_ms: int = 10_000) -> ExportResult:
    """Write the export of ``source`` (a file or a PostgreSQL URL) to a file path (atomically) or an
    open text stream."""
    to_file = out if isinstance(out, (str, Path)) else None
    conn = open_export_source(source, to_file, verb="export", busy_timeout_ms=busy_timeout_ms)
    shown = mask(source)
    try:
        version = schema_version(conn)
        with read_snapshot(conn):  # one snapshot for the whole export
            lines = export_lines(conn)
            if isinstance(out, (str, Path)):
                target = Path(out)
                with (
                    staged_file(target, "export", force=force, what="export", mode=file_mode(source)) as temp,
                    temp.open("w", encoding="utf-8", newline="\n") as fh,
                ):
                    total = _write(lines, fh)
                target_name = str(target)
            else:
                total = _write(lines, out)
                target_name = "-"
            counts = exported_counts(conn)
    except sqlite3.Error as exc:
        raise StoreError(describe_sqlite_error(exc, shown)) from None
    finally:
        conn.close()
    return ExportResult(export_version(version), counts, total, target_name, version)


def _write(lines: Iterable[str], fh: IO[str]) -> int:
    total = 0
    for line in lines:
        fh.write(line)
        total += 1
    fh.flush()
    return total - 2  # header and end line are not rows


# -- import ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class ImportResult:
    target: str
    schema_version: int
    upgraded_to: int
    rows: int
    tables: dict[str, int]


def _read_lines(source: str | Path | Iterable[bytes]) -> Iterator[tuple[int, bytes]]:
    """Numbered lines of an export file, an open binary stream or any iterable of encoded lines."""
    if isinstance(source, (str, Path)):
        path = Path(source)
        if not path.is_file():
            raise InvalidInputError(f"no export file at {source}")
        try:
            fh = path.open("rb")
        except OSError as exc:
            raise StoreError(f"cannot read {source}: {exc.strerror}") from None
        ctx: contextlib.AbstractContextManager[Iterable[bytes]] = fh
    else:
        ctx = contextlib.nullcontext(source)
    with ctx as stream:
        yield from enumerate(stream, start=1)


def _parse(number: int, raw: bytes) -> Any:
    try:
        return json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise InvalidInputError(f"export line {number} is not valid JSON ({exc})") from None
    except RecursionError:  # an export never nests: a row is a flat list of values
        raise InvalidInputError(f"export line {number} is nested too deeply to be a row") from None


def _check_header(header: Any) -> tuple[int, dict[str, dict[str, Any]]]:
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise InvalidInputError("not a kaos-dream export (the first line has no kaos-dream header)")
    if header.get("format_version") != FORMAT_VERSION:
        raise InvalidInputError(
            f"export format version {header.get('format_version')!r} is not supported (this kaos-dream reads "
            f"{FORMAT_VERSION})"
        )
    version = header.get("schema_version")
    if not isinstance(version, int) or version < 1:
        raise InvalidInputError("export header has no valid schema_version")
    if version > LATEST_VERSION:
        raise InvalidInputError(
            f"the export has schema version {version}, newer than this kaos-dream understands ({LATEST_VERSION}); "
            "upgrade kaos-dream to import it"
        )
    ours = [[m.version, m.name] for m in MIGRATIONS[:version]]
    if header.get("migrations") != ours:
        raise InvalidInputError(
            "the export's migrations do not match this kaos-dream's "
            f"(export: {header.get('migrations')!r}; expected: {ours!r})"
        )
    tables = header.get("tables")
    if not isinstance(tables, dict):
        raise InvalidInputError("export header has no table list")
    return version, tables


def library_is_empty(conn: Any) -> bool:
    """True when the library holds nothing but what its migrations create (seed rows included)."""
    fresh = sqlite3.connect(":memory:", isolation_level=None)
    try:
        apply_migrations(fresh, 0.0, ":memory:", upto=schema_version(conn))
        seeded = {s.name: s for s in data_tables(fresh)}
        for spec in data_tables(conn):
            if spec.name == "schema_migrations":
                continue
            ours = list(select_rows(conn, spec))
            theirs = list(select_rows(fresh, seeded[spec.name])) if spec.name in seeded else []
            if ours != theirs:
                return False
        return True
    finally:
        fresh.close()


def target_is_empty_library(target: Path, busy_timeout_ms: int) -> bool:
    """True when ``target`` is missing, zero bytes, or a kaos-dream library with no rows."""
    if not target.exists() or target.stat().st_size == 0:
        return True
    conn = connect(str(target), readonly=True, busy_timeout_ms=busy_timeout_ms)
    try:
        check_ownership(conn, str(target))
        return library_is_empty(conn)
    except sqlite3.Error as exc:
        raise StoreError(describe_sqlite_error(exc, str(target))) from None
    finally:
        conn.close()


def _refuse_data(target: str) -> StoreError:
    return StoreError(f"{target} already holds a library with data; pass --force to replace it")


def import_database(source: str | Path | IO[bytes], target: str | Path, *, force: bool = False,
                    now: float = 0.0, busy_timeout_ms: int = 10_000) -> ImportResult:
    """Build a new library at ``target`` (a file or a PostgreSQL URL) from an export file or stream.

    An existing target that holds any data is refused unless ``force`` (then it is replaced whole).
    The rows are loaded, exported again and compared with the input (so the import is exact or it
    fails), and only then made visible: a temporary file renamed into place, or one PostgreSQL
    transaction. An export of an older schema is loaded at its own version and then migrated.
    """
    return import_lines(_read_lines(source), target, force=force, now=now, busy_timeout_ms=busy_timeout_ms,
                        mode_from=source if isinstance(source, (str, Path)) else None)


def import_lines(lines: Iterator[tuple[int, bytes]], target: str | Path, *, force: bool = False, now: float = 0.0,
                 busy_timeout_ms: int = 10_000, mode_from: str | Path | None = None) -> ImportResult:
    """:func:`import_database` from numbered export lines (a copy feeds a live export in)."""
    if str(target) == ":memory:":
        raise InvalidInputError("import needs a file target, not :memory:")
    engine = parse_db(str(target))
    if engine.kind == "postgresql":
        from .postgres.transfer import open_target

        conn = open_target(engine, busy_timeout_ms=busy_timeout_ms)  # a bad URL fails before the input is read
        try:
            version, tables, raw = _read_header(lines)
            return _import_postgres(conn, version, tables, raw, lines, force=force, now=now)
        finally:
            conn.close()
    target_path = Path(target)
    empty = target_is_empty_library(target_path, busy_timeout_ms)
    if not empty and not force:
        raise _refuse_data(str(target))
    version, tables, raw = _read_header(lines)
    # The new library keeps the mode of the file it replaces, else of the export it comes from.
    mode = file_mode(target_path)
    if mode is None and mode_from is not None:
        mode = file_mode(mode_from)
    with staged_file(target_path, "import", force=target_path.exists(), what="import", mode=mode) as temp:
        conn = connect(str(temp), busy_timeout_ms=busy_timeout_ms)
        try:
            apply_migrations(conn, now, str(temp), upto=version)
            conn.execute("PRAGMA foreign_keys = OFF")  # rows arrive table by table; checked as a whole
            conn.execute("BEGIN IMMEDIATE")
            try:
                rows = _load(conn, version, tables, raw, lines)
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
            finally:
                conn.execute("PRAGMA foreign_keys = ON")
            finish_as_rollback_journal(conn, temp)
        except sqlite3.Error as exc:
            raise StoreError(f"import failed: {describe_sqlite_error(exc, mask(str(mode_from or 'the export')))}") \
                from None
        finally:
            conn.close()
        conn = connect(str(temp), busy_timeout_ms=busy_timeout_ms)
        try:
            _apply_storage_only(conn, version, str(temp))
            apply_migrations(conn, now, str(temp))
            upgraded = schema_version(conn)
            counts = exported_counts(conn)
            finish_as_rollback_journal(conn, temp)
        except sqlite3.Error as exc:
            raise StoreError(f"import failed while upgrading: {describe_sqlite_error(exc, str(target))}") from None
        finally:
            conn.close()
    return ImportResult(str(target_path.resolve()), version, upgraded, rows, counts)


def _read_header(lines: Iterator[tuple[int, bytes]]) -> tuple[int, dict[str, dict[str, Any]], bytes]:
    try:
        number, raw = next(lines)
    except StopIteration:
        raise InvalidInputError("the export is empty") from None
    version, tables = _check_header(_parse(number, raw))
    return version, tables, raw


def _import_postgres(conn: Any, version: int, tables: dict[str, dict[str, Any]], header_raw: bytes,
                     lines: Iterator[tuple[int, bytes]], *, force: bool, now: float) -> ImportResult:
    """The whole import in one transaction under the write lock: the emptiness check (so two imports
    cannot both find the database empty), the schema up to the export's version, the rows, the
    upgrade, and at COMMIT the identity sequences and the full-text index."""
    from .postgres.transfer import clear_library, migrate_inside, reset_empty_library, schema_version_of

    try:
        conn.execute("BEGIN IMMEDIATE")
        try:
            current = schema_version_of(conn)
            if current and not library_is_empty(conn):
                if not force:
                    raise _refuse_data(conn.kaos_path)
                clear_library(conn)
            if current > version:
                if any(m.name not in STORAGE_ONLY for m in MIGRATIONS[version:current]):
                    raise StoreError(
                        f"{conn.kaos_path} has schema version {current}, newer than the export's {version}; "
                        "upgrade the source first (`kaos --db SRC db migrate`) or use an empty database")
                # Only storage-only steps lie between: the (now empty) schema is rebuilt from the export's up.
                reset_empty_library(conn)
            migrate_inside(conn, now, upto=version)
            rows = _load(conn, version, tables, header_raw, lines)
            migrate_inside(conn, now)
            upgraded = schema_version_of(conn)
            counts = exported_counts(conn)
            conn.execute("COMMIT")
        except BaseException:
            conn.rollback()
            raise
    except sqlite3.Error as exc:
        raise StoreError(f"import into {conn.kaos_path} failed: {mask(str(exc))}; nothing was written") from None
    return ImportResult(conn.kaos_path, version, upgraded, rows, counts)


def _apply_storage_only(conn: sqlite3.Connection, version: int, shown: str) -> None:
    """The storage-only migrations right after the export's layout ``version``, stamped with the
    export's newest migration time: an export of a file past them does not carry them (its bytes are
    the export before them), and a file exported and imported again comes back with the same rows."""
    upto = version
    while upto < LATEST_VERSION and MIGRATIONS[upto].name in STORAGE_ONLY:
        upto += 1
    if upto > version:
        row = conn.execute("SELECT max(applied_at) FROM schema_migrations").fetchone()
        apply_migrations(conn, float(row[0] or 0.0), shown, upto=upto)


def _check_counters(conn: Any, version: int) -> None:
    """The derived counters are recounted from the loaded rows and must agree: forged counters
    (``uses=1000`` beside one use row) are refused. Exports older than schema 9 may carry the
    undercounts that migration 9 repairs; the upgrade after loading recounts those instead."""
    if version < EXACT_FROM_VERSION:
        return
    wrong = counter_mismatches(conn, limit=1)
    if wrong:
        raise InvalidInputError(
            f"the export's derived counters disagree with its rows ({wrong[0].removeprefix('counters: ')}); "
            "nothing written"
        )


def _insert(conn: Any, sql: str, name: str, rows: list[list[Any]], where: str) -> None:
    try:
        for start in range(0, len(rows), INSERT_BATCH):
            conn.executemany(sql, rows[start:start + INSERT_BATCH])
    except sqlite3.IntegrityError as exc:
        raise InvalidInputError(f"{where} cannot be loaded into {name}: {exc}") from None


def _load(conn: Any, version: int, tables: dict[str, dict[str, Any]], header_raw: bytes,
          lines: Iterator[tuple[int, bytes]]) -> int:
    """Load the rows inside the caller's write transaction and prove the load exact.

    SQLite (foreign keys off, checked at the end) takes each row as it comes. PostgreSQL checks a
    foreign key at each insert, so its rows are held (as their JSON lines) and loaded table by table
    in :func:`.catalogue.load_order`. Tables that triggers write (running counters) are loaded last
    on both, replacing what the triggers made from the other rows.
    """
    specs = {s.name: s for s in data_tables(conn)}
    if set(tables) != set(specs):
        raise InvalidInputError(
            f"the export's tables do not match schema version {version} "
            f"(unexpected: {sorted(set(tables) - set(specs))}, missing: {sorted(set(specs) - set(tables))})"
        )
    for name, spec in specs.items():
        if tables[name].get("columns") != list(spec.columns):
            raise InvalidInputError(f"the export's columns for {name} do not match schema version {version}")
    derived = trigger_written_tables(conn)
    streaming = not is_postgres(conn)
    digest = hashlib.sha256(header_raw.rstrip(b"\r\n") + b"\n")
    inserts = {
        name: f'INSERT INTO "{name}" ({", ".join(chr(34) + c + chr(34) for c in spec.columns)}) '
        f'VALUES ({", ".join("?" for _ in spec.columns)})'
        for name, spec in specs.items()
    }
    texts = text_columns(conn)
    held: dict[str, list[list[Any]]] = {name: [] for name in specs if name in derived or not streaming}
    seen: dict[str, int] = {name: 0 for name in specs}
    total = 0
    ended = False
    # The export is the whole truth: rows the migrations seeded (schema_migrations, dream_state
    # ...) are replaced by the exported ones (children before parents, for PostgreSQL's checks).
    for name in reversed(load_order(conn, list(specs))):
        if conn.execute(f'SELECT 1 FROM "{name}" LIMIT 1').fetchone():
            conn.execute(f'DELETE FROM "{name}"')
    for number, raw in lines:
        if ended:
            raise InvalidInputError(f"export line {number}: data after the end line")
        digest.update(raw.rstrip(b"\r\n") + b"\n")
        doc = _parse(number, raw)
        if isinstance(doc, dict) and doc.get("end") is True:
            if doc.get("rows") != total:
                raise InvalidInputError(f"the end line says {doc.get('rows')} rows, the file has {total}")
            ended = True
            continue
        if not isinstance(doc, dict) or set(doc) != {"t", "r"} or doc["t"] not in specs:
            raise InvalidInputError(f"export line {number} is not a row of a known table")
        name, values = doc["t"], doc["r"]
        if not isinstance(values, list) or len(values) != len(specs[name].columns):
            raise InvalidInputError(f"export line {number}: wrong number of values for {name}")
        try:
            decoded = [_decode(v) for v in values]
        except InvalidInputError as exc:
            raise InvalidInputError(f"export line {number}: {exc}") from None
        problem = row_problem(name, specs[name].columns, decoded, texts.get(name, frozenset()))
        if problem is not None:  # what the write path would refuse (issue 33 item 3)
            raise InvalidInputError(f"export line {number}: {problem}; nothing written")
        total += 1
        seen[name] += 1
        if name in held:
            held[name].append(decoded)
            continue
        try:
            conn.execute(inserts[name], decoded)
        except sqlite3.IntegrityError as exc:
            raise InvalidInputError(f"export line {number} cannot be loaded into {name}: {exc}") from None
    if not ended:
        raise InvalidInputError("the export is truncated (no end line)")
    for name, count in seen.items():
        if tables[name].get("rows") != count:
            raise InvalidInputError(f"the header says {tables[name].get('rows')} rows for {name}, found {count}")
    # A trigger-written table that other tables point at (agent_keys, made as agents are inserted) is
    # replaced by the export's rows before its children load: on PostgreSQL, replacing it after them
    # would let ON DELETE SET NULL clear their references.
    keyed = derived & referenced_tables(conn, list(specs))
    for name in load_order(conn, sorted(set(held) - (derived - keyed))):
        if name in keyed:
            conn.execute(f'DELETE FROM "{name}"')
        _insert(conn, inserts[name], name, held.pop(name), "the export's rows")
    for name in load_order(conn, sorted(held)):
        conn.execute(f'DELETE FROM "{name}"')
        _insert(conn, inserts[name], name, held.pop(name), "the export's rows")
    _check_counters(conn, version)
    # look-alike names, as `skill add` refuses them (issue 33 item 4); older schemas store no skeleton
    check_loaded_skeletons(conn, stored="name_skeleton" in specs["skills"].columns)
    rebuild_fulltext(conn)
    broken = broken_reference(conn)
    if broken:
        raise InvalidInputError(f"the export breaks a reference: {broken[0]} row {broken[1]} points at a "
                                f"missing {broken[2]}")
    again = hashlib.sha256()
    for line in export_lines(conn):
        again.update(line.encode("utf-8"))
    if again.digest() != digest.digest():
        raise InvalidInputError(
            "the export does not load back exactly (it was edited or made by another tool); nothing written"
        )
    return total
