"""Bulk import of skills from JSON lines, for libraries of a million rows (issue 35 item 4).

``kaos skill import`` reads SKILL.md folders in one transaction and ``kaos db import`` rebuilds a
whole library and compares it with its source: neither is meant for adding a million skills. This
path streams a file of ``{"name", "description", "template", "tags"}`` objects twice, in bounded
memory:

1. check every line (the same rules as ``kaos skill add``) and every name's uniqueness within the
   file (8-byte digests, ~50 MB for a million names); any problem: ``path:line: what`` lines and
   nothing is written;
2. add the rows in batches of :data:`BATCH`, each batch's fast vectors computed before its
   transaction, rows and vectors committed together. A name the library already holds is counted as
   present and left as it is, so a run killed part-way is finished by running it again.

Ids follow the file's order. The ANN graph (:mod:`kaos_dream.embedding.ann`) is brought up to date
at the end, as the dream would.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from ..errors import InvalidInputError
from ..names import confusable_skeleton
from ..skills import check_template, clean_name, clean_tags, clean_text
from ..store import transaction
from ..store.lookalikes import lookalike_message, lookalike_of, prefill_skeletons

if TYPE_CHECKING:
    from ..library import Library

BATCH = 5000  # rows per transaction: a writer beside the import waits at most one batch
SHOWN_PROBLEMS = 20  # problem lines printed before the count of the rest
FIELDS = {"name", "description", "template", "tags"}


@dataclass
class BulkResult:
    rows: int  # lines in the file
    added: int
    present: int  # names the library already held (left unchanged)
    vectors: int  # fast vectors written with the rows
    graphs: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class BulkProblemsError(InvalidInputError):
    """The file has problems; nothing was written. ``problems`` are ``path:line: what`` lines."""

    def __init__(self, problems: list[str], total: int) -> None:
        self.problems = problems
        super().__init__(f"{total} problem(s) in the file; nothing was imported")


def _parse(line: str) -> tuple[str, str, str, tuple[str, ...]]:
    try:
        obj = json.loads(line)
    except ValueError as exc:
        raise InvalidInputError(f"not JSON ({exc.msg})") from None
    if not isinstance(obj, dict):
        raise InvalidInputError("a line must be a JSON object")
    unknown = sorted(set(obj) - FIELDS)
    if unknown:
        raise InvalidInputError(f"unknown field(s) {', '.join(unknown)} (expected {', '.join(sorted(FIELDS))})")
    name, description, template, tags = (obj.get("name"), obj.get("description", ""), obj.get("template", ""),
                                         obj.get("tags", []))
    if not isinstance(name, str):
        raise InvalidInputError("name must be a string")
    if not isinstance(description, str) or not isinstance(template, str):
        raise InvalidInputError("description and template must be strings")
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        raise InvalidInputError("tags must be a list of strings")
    return (clean_name(name), clean_text(description, "description"),
            check_template(clean_text(template, "template")), clean_tags(tags))


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    try:
        with path.open(encoding="utf-8", errors="strict") as f:
            for number, line in enumerate(f, 1):
                if line.strip():
                    yield number, line
    except UnicodeDecodeError as exc:
        raise InvalidInputError(f"{path}: not UTF-8 text ({exc.reason})") from None
    except OSError as exc:
        raise InvalidInputError(f"{path}: cannot read ({exc.strerror})") from None


def check_file(path: Path) -> int:
    """Lines of ``path`` after checking them all; raises :class:`BulkProblemsError` on any problem."""
    problems: list[str] = []
    total = rows = 0
    seen: set[bytes] = set()
    looks: dict[bytes, int] = {}  # confusable skeleton's digest -> the line that had it first
    for number, line in _lines(path):
        rows += 1
        try:
            name = _parse(line)[0]
        except InvalidInputError as exc:
            total += 1
            if len(problems) < SHOWN_PROBLEMS:
                problems.append(f"{path}:{number}: {exc}")
            continue
        digest = hashlib.blake2b(name.encode(), digest_size=8).digest()
        if digest in seen:
            total += 1
            if len(problems) < SHOWN_PROBLEMS:
                problems.append(f"{path}:{number}: the name {name[:60]!r} appears earlier in the file")
            continue
        seen.add(digest)
        first = looks.setdefault(hashlib.blake2b(confusable_skeleton(name).encode(), digest_size=8).digest(), number)
        if first != number:
            total += 1
            if len(problems) < SHOWN_PROBLEMS:
                problems.append(f"{path}:{number}: the name {name[:60]!r} looks like the name on line {first} "
                                "(the same Unicode confusable skeleton)")
    if total:
        raise BulkProblemsError(problems, total)
    return rows


def _batches(path: Path) -> Iterator[list[tuple[str, str, str, tuple[str, ...]]]]:
    batch = []
    for _, line in _lines(path):
        batch.append(_parse(line))
        if len(batch) == BATCH:
            yield batch
            batch = []
    if batch:
        yield batch


def spooled(stream: IO[bytes]) -> Path:
    """A binary stream copied to a temporary file (the caller removes it): the file is read twice."""
    with tempfile.NamedTemporaryFile(prefix="kaos-bulk-", suffix=".jsonl", delete=False) as spool:
        shutil.copyfileobj(stream, spool)
    return Path(spool.name)


def _refuse_lookalikes(lib: Library, source: Path) -> None:
    """Before anything is written: no name of the file looks like a skill the library holds under another
    spelling (issue 33 item 4; one index lookup a name; :func:`check_file` compares the file's own names)."""
    prefill_skeletons(lib.conn)
    for number, line in _lines(source):
        name = _parse(line)[0]
        other = lookalike_of(lib.conn, name, confusable_skeleton(name))
        if other is not None:
            raise InvalidInputError(f"{source}:{number}: {lookalike_message(name, other)}; nothing written")


def bulk_import(lib: Library, source: Path, *, checked: bool = False) -> BulkResult:
    """Add the skills of a JSON-lines file (``checked``: :func:`check_file` already passed, as the CLI
    runs it before it opens, and so creates, the library)."""
    if not source.is_file():
        raise InvalidInputError(f"{source}: no such file")
    rows = check_file(source) if not checked else sum(1 for _ in _lines(source))
    _refuse_lookalikes(lib, source)
    vectors = lib.vectors
    model = vectors.embedder()
    conn = lib.conn
    added = present = stored = 0
    for batch in _batches(source):
        names = json.dumps([b[0] for b in batch])
        held = {r[0] for r in conn.execute("SELECT name FROM skills WHERE name IN (SELECT value FROM json_each(?))",
                                           (names,))}
        fresh = [b for b in batch if b[0] not in held]
        embedded = vectors.embed_skills([(n, d, t) for n, d, _, t in fresh]) if model is not None and fresh else None
        now = lib.clock.now()
        with transaction(conn):
            held_now = {r[0] for r in conn.execute(
                "SELECT name FROM skills WHERE name IN (SELECT value FROM json_each(?))", (names,))}
            keep = [i for i, b in enumerate(fresh) if b[0] not in held_now]  # another writer may have added one
            conn.executemany(
                "INSERT INTO skills (name, name_skeleton, description, template, tags, created_at, updated_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                ((fresh[i][0], confusable_skeleton(fresh[i][0]), fresh[i][1], fresh[i][2],
                  json.dumps(list(fresh[i][3])), now, now) for i in keep))
            if embedded is not None and keep:
                ids = dict(conn.execute("SELECT name, id FROM skills WHERE name IN (SELECT value FROM json_each(?))",
                                        (json.dumps([fresh[i][0] for i in keep]),)).fetchall())
                stored += vectors.store_many("skill", [ids[fresh[i][0]] for i in keep], embedded[keep])
        added += len(keep)
        present += len(batch) - len(keep)
    return BulkResult(rows, added, present, stored, vectors.save_graphs())
