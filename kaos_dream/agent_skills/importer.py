"""`kaos skill import`: skill folders into the library in one transaction, and `--sync` of a tree.

Reading, hashing, parsing and embedding happen before the write lock is taken; the plan is made
again from the library as it is under the lock (another process may have written meanwhile), so what
is applied is always measured against the current rows. A folder whose bytes hash to the digest
stored for its skill is not parsed at all: an untouched tree costs one read and one hash per file.

A skill keeps its id when its text changes, so its telemetry (uses, outcomes, graph edges) stays.
A sync deprecates the skills it owns (imported from inside the tree) whose folder is gone, with a
reason it recognises, and restores them if the folder comes back; a skill deprecated by hand stays
deprecated.
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InvalidInputError
from ..names import confusable_skeleton
from ..skills import clean_tags
from ..store import transaction
from ..store.lookalikes import claim_name, prefill_skeletons
from ..tokens import identifier_index_words
from .folders import FolderBytes, find_skill_folders, read_folder, show
from .format import Problem, SkillDocument, folder_digest, parse_skill_md

if TYPE_CHECKING:
    from ..library import Library

SYNC_REASON = "its folder left the synced tree"


class SkillProblemsError(InvalidInputError):
    """The folders did not validate: every problem, one ``path:line: what`` line each."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = problems
        count = len(problems)
        super().__init__(f"{count} problem{'s' if count != 1 else ''} in the skill folders; nothing was imported")


@dataclass(frozen=True)
class Change:
    name: str
    action: str  # added, updated, restored, deprecated, unchanged
    folder: str | None
    skill_id: int | None = None


@dataclass
class ImportResult:
    changes: list[Change] = field(default_factory=list)
    skipped: list[Problem] = field(default_factory=list)
    dry_run: bool = False

    @property
    def changed(self) -> int:
        return sum(1 for c in self.changes if c.action != "unchanged")

    def counts(self) -> dict[str, int]:
        out = {a: 0 for a in ("added", "updated", "restored", "deprecated", "unchanged")}
        for c in self.changes:
            out[c.action] += 1
        return out

    def to_dict(self) -> dict[str, Any]:
        return {"dry_run": self.dry_run, "changed": self.changed, "counts": self.counts(),
                "changes": [{"name": c.name, "action": c.action, "folder": c.folder, "id": c.skill_id}
                            for c in self.changes],
                "skipped": [str(p) for p in self.skipped]}


@dataclass(frozen=True)
class _Existing:
    id: int
    name: str
    deprecated: bool
    reason: str | None
    tags: tuple[str, ...]
    description: str
    digest: str | None
    source: str | None


@dataclass
class _Folder:
    bytes: FolderBytes
    digest: str
    source: str
    doc: SkillDocument | None = None

    @property
    def name(self) -> str:
        return self.doc.name if self.doc else self.bytes.folder.name


def skeleton(name: str) -> str:
    """What two names that differ only by case, Unicode form or look-alike characters (a Cyrillic ``е``,
    U+2010 for ``-``: the TR39 confusable skeleton) have in common."""
    return confusable_skeleton(unicodedata.normalize("NFKC", name).casefold())


def _state(conn: Any) -> dict[str, _Existing]:
    rows = conn.execute(
        "SELECT s.id, s.name, s.deprecated, s.deprecated_reason, s.tags, s.description, p.digest, p.source "
        "FROM skills AS s LEFT JOIN skill_packages AS p ON p.skill_id = s.id ORDER BY s.id").fetchall()
    return {r[1]: _Existing(int(r[0]), r[1], bool(r[2]), r[3], tuple(json.loads(r[4])), r[5], r[6], r[7])
            for r in rows}


def _owned(source: str | None, tree: str) -> bool:
    return source is not None and (source == tree or source.startswith(tree.rstrip("/") + "/"))


def import_skills(lib: Library, paths: Iterable[str | Path], *, sync: bool = False, dry_run: bool = False,
                  skip_invalid: bool = False, tags: Iterable[str] = ()) -> ImportResult:
    """Import the skill folders under ``paths`` (``sync``: exactly one tree, whose vanished skills are
    deprecated). All or nothing: any invalid folder raises :class:`SkillProblemsError` and nothing is
    written, unless ``skip_invalid`` (the valid ones are imported, the others listed). ``dry_run``
    plans without writing."""
    roots = [Path(p) for p in paths]
    if not roots:
        raise InvalidInputError("give at least one skill folder or tree")
    if sync and len(roots) != 1:
        raise InvalidInputError("--sync takes exactly one tree")
    extra_tags = clean_tags(tags)
    tree = str(roots[0].resolve()) if sync else None
    found, problems = find_skill_folders(roots)
    folders: list[_Folder] = []
    for folder in found:
        read = read_folder(folder)
        if isinstance(read, list):
            problems.extend(read)
            continue
        digest = folder_digest(read.skill_md, [(f.path + ("*" if f.executable else ""), f.sha256) for f in read.files])
        folders.append(_Folder(read, digest, str(folder.resolve())))
    state = _state(lib.conn)
    for item in folders:
        if not _unchanged(item, state.get(item.bytes.folder.name)):
            problems.extend(_parse(item))
    problems.extend(_name_clashes(folders, state))
    bad = {p.path for p in problems}
    if problems and not skip_invalid:
        raise SkillProblemsError(problems)
    invalid_names = {f.bytes.folder.name for f in folders if _invalid(f, bad)}
    valid = [f for f in folders if not _invalid(f, bad)]
    result = ImportResult(skipped=problems, dry_run=dry_run)
    plan = _plan(valid, state, tree, invalid_names)
    if dry_run:
        result.changes = plan
        return result
    vectors = _embed(lib, valid, plan, state, extra_tags)
    if any(change.action == "added" for change in plan):
        prefill_skeletons(lib.conn)
    with transaction(lib.conn):
        state = _state(lib.conn)  # as it is under the lock
        for item in valid:  # a folder judged unchanged outside the lock may not be any more
            if item.doc is None and not _unchanged(item, state.get(item.name)):
                found_problems = _parse(item)
                if found_problems:
                    raise SkillProblemsError(found_problems)
        plan = _plan(valid, state, tree, invalid_names)
        by_name = {f.name: f for f in valid}
        result.changes = [_apply(lib, change, by_name.get(change.name), state.get(change.name), extra_tags, vectors)
                          for change in plan]
    return result


def _invalid(item: _Folder, bad: set[str]) -> bool:
    folder = show(item.bytes.folder)
    return any(p == folder or p.startswith(folder + "/") for p in bad)


def _unchanged(item: _Folder, existing: _Existing | None) -> bool:
    return existing is not None and existing.digest == item.digest and existing.source == item.source


def _parse(item: _Folder) -> list[Problem]:
    parsed = parse_skill_md(item.bytes.skill_md, show(item.bytes.folder / "SKILL.md"), item.bytes.folder.name)
    if isinstance(parsed, list):
        return parsed
    item.doc = parsed
    return []


def _name_clashes(folders: list[_Folder], state: dict[str, _Existing]) -> list[Problem]:
    """Two folders naming one skill, or a name that differs from another only by case or Unicode form."""
    problems: list[Problem] = []
    seen: dict[str, _Folder] = {}
    existing = {skeleton(name): name for name in state}
    for item in folders:
        where = show(item.bytes.folder / "SKILL.md")
        key = skeleton(item.name)
        first = seen.get(key)
        if first is not None:
            same = ("the same name" if first.name == item.name
                    else "a name differing only by case, Unicode form or look-alike characters")
            problems.append(Problem(where, 0, f"skill {item.name!r} has {same} as {show(first.bytes.folder)}"))
            continue
        seen[key] = item
        other = existing.get(key)
        if other is not None and other != item.name:
            problems.append(Problem(where, 0, f"skill {item.name!r} differs only by case, Unicode form or look-alike "
                                              f"characters from the library's skill {other!r}"))
    return problems


def _plan(valid: list[_Folder], state: dict[str, _Existing], tree: str | None,
          invalid_names: set[str]) -> list[Change]:
    changes: list[Change] = []
    for item in valid:
        existing = state.get(item.name)
        folder = show(item.bytes.folder)
        if existing is None:
            changes.append(Change(item.name, "added", folder))
        elif not _unchanged(item, existing):
            changes.append(Change(item.name, "updated", folder, existing.id))
        elif existing.deprecated and existing.reason == SYNC_REASON:
            changes.append(Change(item.name, "restored", folder, existing.id))
        else:
            changes.append(Change(item.name, "unchanged", folder, existing.id))
    if tree is not None:
        present = {f.name for f in valid} | invalid_names
        for existing in sorted(state.values(), key=lambda e: e.id):
            if not existing.deprecated and existing.name not in present and _owned(existing.source, tree):
                changes.append(Change(existing.name, "deprecated", existing.source, existing.id))
    return changes


def _tags_for(item: _Folder, existing: _Existing | None, extra: tuple[str, ...]) -> tuple[str, ...]:
    assert item.doc is not None
    base = item.doc.tags if item.doc.tags or existing is None else existing.tags
    return clean_tags([*base, *extra])


def _embed(lib: Library, valid: list[_Folder], plan: list[Change], state: dict[str, _Existing],
           extra: tuple[str, ...]) -> dict[str, Any]:
    """The fast vectors of the skills the plan adds or re-describes, in one batch before the lock."""
    model = lib.vectors.embedder()
    if model is None:
        return {}
    from ..embedding.store import skill_text

    by_name = {f.name: f for f in valid}
    wanted: dict[str, str] = {}
    for change in plan:
        item = by_name.get(change.name)
        if change.action in ("added", "updated") and item is not None and item.doc is not None:
            tags = _tags_for(item, state.get(change.name), extra)
            wanted[change.name] = skill_text(item.name, item.doc.description, tags)
    if not wanted:
        return {}
    names = list(wanted)
    return {name: (wanted[name], vector) for name, vector in zip(names, model.embed([wanted[n] for n in names]),
                                                                  strict=True)}


def _apply(lib: Library, change: Change, item: _Folder | None, existing: _Existing | None,
           extra: tuple[str, ...], vectors: dict[str, Any]) -> Change:
    conn = lib.conn
    now = lib.ctx.now()
    if change.action == "unchanged":
        return change
    if change.action == "deprecated":
        conn.execute("UPDATE skills SET deprecated = 1, deprecated_reason = ?, deprecated_at = ?, updated_at = ? "
                     "WHERE id = ?", (SYNC_REASON, now, now, change.skill_id))
        return change
    if change.action == "restored":
        conn.execute("UPDATE skills SET deprecated = 0, deprecated_reason = NULL, deprecated_at = NULL, "
                     "updated_at = ? WHERE id = ?", (now, change.skill_id))
        return change
    assert item is not None and item.doc is not None
    doc = item.doc
    tags = _tags_for(item, existing, extra)
    if existing is None:
        cur = conn.execute(
            "INSERT INTO skills (name, name_words, name_skeleton, description, template, tags, created_at, "
            "updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (doc.name, identifier_index_words(doc.name), claim_name(conn, doc.name), doc.description, doc.body,
             json.dumps(list(tags)), now, now))
        skill_id = int(cur.lastrowid)
        embedded = True
    else:
        skill_id = existing.id
        sets: dict[str, Any] = {"template": doc.body, "updated_at": now}
        embedded = doc.description != existing.description or tags != existing.tags
        if embedded:
            sets.update(description=doc.description, tags=json.dumps(list(tags)))
        if existing.deprecated and existing.reason == SYNC_REASON:
            sets.update(deprecated=0, deprecated_reason=None, deprecated_at=None)
        conn.execute(f"UPDATE skills SET {', '.join(f'{k} = ?' for k in sets)} WHERE id = ?",
                     [*sets.values(), skill_id])
        conn.execute("DELETE FROM skill_packages WHERE skill_id = ?", (skill_id,))
        conn.execute("DELETE FROM skill_files WHERE skill_id = ?", (skill_id,))
    conn.execute("INSERT INTO skill_packages (skill_id, front_matter, newline, source, digest, imported_at) "
                 "VALUES (?, ?, ?, ?, ?, ?)",
                 (skill_id, json.dumps(doc.kept, ensure_ascii=False), doc.newline, item.source, item.digest, now))
    for f in item.bytes.files:
        conn.execute("INSERT INTO skill_files (skill_id, path, size, sha256, content, executable) "
                     "VALUES (?, ?, ?, ?, ?, ?)", (skill_id, f.path, f.size, f.sha256, f.content, int(f.executable)))
    if embedded:
        _store_vector(lib, skill_id, doc, tags, vectors.get(doc.name))
    return Change(change.name, change.action, change.folder, skill_id)


def _store_vector(lib: Library, skill_id: int, doc: SkillDocument, tags: tuple[str, ...],
                  cached: tuple[str, Any] | None) -> None:
    from ..embedding.store import skill_text

    text = skill_text(doc.name, doc.description, tags)
    if cached is not None and cached[0] == text:
        vector = cached[1]
    else:  # the plan changed under the lock: embed this one now
        vector = lib.vectors.embed_skill(doc.name, doc.description, tags)
    lib.vectors.store("skill", skill_id, vector)

