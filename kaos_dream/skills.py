"""Skills: named, parameterised procedures an agent can find and apply.

Deleting a skill removes it and (through ``ON DELETE CASCADE``) its telemetry; deprecating is the
reversible, soft alternative and is what the dream's prune proposals use.
"""

from __future__ import annotations

import json
import re
import sqlite3
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar

from . import limits
from .errors import ConflictError, InvalidInputError
from .names import MAX_SKILL_NAME, clean_skill_name, first_unprintable
from .store import transaction
from .store.helpers import resolve_ref
from .store.lookalikes import claim_name, prefill_skeletons
from .store.records import as_dict, from_row
from .tokens import identifier_index_words

if TYPE_CHECKING:
    from collections.abc import Callable

    from .embedding.store import Vectors
    from .store.context import StoreContext

MAX_NAME = MAX_SKILL_NAME
MAX_TEXT = limits.TEXT
_PLACEHOLDER = re.compile(r"\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*)\}|\{|\}")
# What reads as a format field: braces around a word with no spaces. ``{{``/``}}`` are matched first so
# escaped braces never look like one; ``{}`` and braces around spaced text (code, JSON) stay literal.
_FIELD = re.compile(r"\{\{|\}\}|\{([^{}\s]+)\}")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class Skill:
    id: int
    name: str
    description: str
    template: str
    tags: tuple[str, ...]
    deprecated: bool
    deprecated_reason: str | None
    created_at: float
    updated_at: float

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> Skill:
        return from_row(cls, row, tags=tuple(json.loads(row["tags"])), deprecated=bool(row["deprecated"]))

    def to_dict(self) -> dict[str, Any]:
        return as_dict(self, tags=list(self.tags))

    @property
    def parameters(self) -> tuple[str, ...]:
        return template_parameters(self.template)


def clean_name(name: str) -> str:
    return clean_skill_name(name)


def clean_text(value: str, what: str) -> str:
    if "\x00" in value:
        raise InvalidInputError(f"{what} must not contain NUL characters")
    if len(value) > MAX_TEXT:
        raise InvalidInputError(f"{what} is {len(value)} characters; the limit is {MAX_TEXT}")
    return value


def clean_tags(tags: Iterable[str]) -> tuple[str, ...]:
    seen: list[str] = []
    given = list(tags)
    limits.capped_count(given, "tags", limits.TAGS)
    for tag in given:
        t = tag.strip()
        if not t:
            raise InvalidInputError("tags must not be empty")
        if any(ord(c) < 32 for c in t) or len(t) > MAX_NAME:
            raise InvalidInputError(f"invalid tag {t[:40]!r}")
        bad = first_unprintable(t)
        if bad:
            raise InvalidInputError(f"a tag must be printable characters; {t[:40]!r} holds {bad}")
        if t not in seen:
            seen.append(t)
    return tuple(seen)


def check_params(params: Mapping[str, str]) -> None:
    """The parameters of one apply within their caps (:mod:`.limits`): how many, each name and value."""
    limits.capped_count(params, "parameters", limits.PARAMS)
    for key, value in params.items():
        limits.capped(key, "a parameter name", limits.NAME)
        limits.capped(value, f"parameter {key!r}", limits.PARAM_VALUE)


def template_parameters(template: str) -> tuple[str, ...]:
    """Placeholder names in first-seen order (a dict keeps that order; a list membership test made a
    template with 40 000 distinct names take 6.6 s to render)."""
    names = dict.fromkeys(m.group(1) for m in _PLACEHOLDER.finditer(template) if m.group(1))
    return tuple(names)


def _why_not_a_name(field: str) -> str:
    if field[0].isdigit():
        return "positional fields are not supported"
    for mark, why in (("!", "conversions are not supported"), (":", "format specs are not supported"),
                      (".", "attribute access is not supported"), ("[", "indexing is not supported")):
        if mark in field:
            return why
    return "a parameter name is letters, digits and _, not starting with a digit"


def check_template(template: str) -> str:
    """Refuse a ``{field}`` the renderer cannot fill (``{0}``, ``{x.attr}``, ``{a[0]}``, ``{a!r}``,
    ``{a:>10}``, ...): it would never be substituted, and ``apply`` would blame the parameters."""
    for match in _FIELD.finditer(template):
        field = match.group(1)
        if field and not _IDENTIFIER.fullmatch(field):
            shown = field if len(field) <= 40 else field[:40] + "…"
            raise InvalidInputError(
                f"template field {{{shown}}} at character {match.start() + 1} is not a plain parameter name "
                f"({_why_not_a_name(field)}); use {{name}}, or {{{{ and }}}} for literal braces"
            )
    return template


def render_template(template: str, params: Mapping[str, str], max_chars: int | None = None) -> str:
    """Fill ``{name}`` placeholders; ``{{`` and ``}}`` are literal braces. With ``max_chars``, a result
    longer than that is refused before it is built (its length is summed from the pieces first).

    Missing and unknown parameters are both errors: a typo should not silently render a template.
    A template holding a field that is not a plain name (stored before add/update refused them) is
    refused with the same message add and update give.
    """
    check_template(template)
    wanted = template_parameters(template)
    missing = [p for p in wanted if p not in params]
    if missing:
        raise InvalidInputError("missing template parameter(s): " + ", ".join(missing))
    unknown = sorted(set(params) - set(wanted))
    if unknown:
        raise InvalidInputError(
            "unknown template parameter(s): " + ", ".join(unknown)
            + (f" (the template takes: {', '.join(wanted)})" if wanted else " (the template takes none)")
        )

    def substitute(match: re.Match[str]) -> str:
        token = match.group(0)
        if token == "{{":
            return "{"
        if token == "}}":
            return "}"
        if match.group(1):
            return str(params[match.group(1)])
        return token

    if max_chars is not None:
        size = len(template)
        for match in _PLACEHOLDER.finditer(template):
            size += len(substitute(match)) - len(match.group(0))
        if size > max_chars:
            raise InvalidInputError(
                f"the rendered text would be {size} characters; the limit here is {max_chars} "
                f"(KAOS_MCP_MAX_RENDER_CHARS)")
    return _PLACEHOLDER.sub(substitute, template)


R = TypeVar("R")  # the record type of the entries: Skill or Memory


class Entries(Generic[R]):
    """What the skills and memories stores share: the context, the vector store (``vectors`` builds it
    on first use: it needs numpy, which listing entries does not), and references — an entry is named
    by its id or its unique label (a skill's name, a memory's key)."""

    _TABLE: ClassVar[str]
    _LABEL: ClassVar[str]
    _NOUN: ClassVar[str]
    _RECORD: ClassVar[Any]

    def __init__(self, ctx: StoreContext, vectors: Callable[[], Vectors]) -> None:
        self._ctx = ctx
        self._vectors = vectors

    @property
    def _conn(self) -> sqlite3.Connection:
        return self._ctx.conn

    def resolve_id(self, ref: int | str) -> int:
        """An id or a label (name or key) to the entry's id; labels win over digit-strings that look like ids.
        A skill name is looked up in its NFC form, the form it is stored in."""
        if self._TABLE == "skills" and isinstance(ref, str):
            ref = unicodedata.normalize("NFC", ref)
        return resolve_ref(self._conn, self._TABLE, self._LABEL, ref, self._NOUN)

    def get(self, ref: int | str) -> R:
        """One entry by id or label; NotFoundError when there is none."""
        entry_id = self.resolve_id(ref)
        row = self._conn.execute(f"SELECT * FROM {self._TABLE} WHERE id = ?", (entry_id,)).fetchone()
        return self._RECORD.from_row(row)  # type: ignore[no-any-return]


class Skills(Entries[Skill]):
    """CRUD for skills; one instance per library."""

    _TABLE, _LABEL, _NOUN, _RECORD = "skills", "name", "skill", Skill

    def add(
        self, name: str, description: str = "", template: str = "", tags: Iterable[str] = ()
    ) -> Skill:
        """Add a skill with a unique name and return it."""
        name = clean_name(name)
        description = clean_text(description, "description")
        template = check_template(clean_text(template, "template"))
        tag_list = clean_tags(tags)
        vector = self._vectors().embed_skill(name, description, tag_list)  # before the write lock is taken
        now = self._ctx.now()
        prefill_skeletons(self._conn)  # an upgraded library's names, in short transactions of their own
        with transaction(self._conn):  # the look-alike check and the insert under one write lock
            skeleton = claim_name(self._conn, name)
            skill_id = self._vectors().add_entry(
                "skill",
                vector,
                "INSERT INTO skills (name, name_words, name_skeleton, description, template, tags, created_at, "
                "updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (name, identifier_index_words(name), skeleton, description, template, json.dumps(list(tag_list)),
                 now, now),
                f"a skill named {name!r} already exists",
            )
        return self.get(skill_id)

    def list(
        self,
        *,
        tag: str | None = None,
        deprecated: bool | None = False,
        limit: int | None = None,
        offset: int = 0,
    ) -> list[Skill]:
        """Skills in id order. ``deprecated=None`` lists both; filters apply before the LIMIT."""
        if limit is not None and limit < 0:
            raise InvalidInputError("limit must not be negative")
        if offset < 0:
            raise InvalidInputError("offset must not be negative")
        where: list[str] = []
        params: list[Any] = []
        if deprecated is not None:
            where.append("deprecated = ?")
            params.append(int(deprecated))
        if tag is not None:
            where.append("EXISTS (SELECT 1 FROM json_each(skills.tags) WHERE json_each.value = ?)")
            params.append(tag)
        sql = "SELECT * FROM skills"
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY id LIMIT ? OFFSET ?"
        params += [-1 if limit is None else limit, offset]
        return [Skill.from_row(r) for r in self._conn.execute(sql, params)]

    def count(self, *, deprecated: bool | None = None) -> int:
        """Number of skills: all (None, the default), live (False) or deprecated (True)."""
        if deprecated is None:
            return int(self._conn.execute("SELECT count(*) FROM skills").fetchone()[0])
        return int(
            self._conn.execute("SELECT count(*) FROM skills WHERE deprecated = ?", (int(deprecated),)).fetchone()[0]
        )

    def update(
        self,
        ref: int | str,
        *,
        name: str | None = None,
        description: str | None = None,
        template: str | None = None,
        tags: Iterable[str] | None = None,
    ) -> Skill:
        """Change a skill's name, description, template or tags (None leaves a field as it is)."""
        changes: dict[str, Any] = {}
        if name is not None:
            changes["name"] = clean_name(name)
            changes["name_words"] = identifier_index_words(changes["name"])
        if description is not None:
            changes["description"] = clean_text(description, "description")
        if template is not None:
            changes["template"] = check_template(clean_text(template, "template"))
        if tags is not None:
            changes["tags"] = json.dumps(list(clean_tags(tags)))
        if not changes:
            raise InvalidInputError("nothing to update: give at least one field")
        embedded = {"name", "description", "tags"} & set(changes)
        if embedded:
            self._vectors().embedder()  # load the model (once) before the write lock is taken
        if "name" in changes:
            prefill_skeletons(self._conn)
        with transaction(self._conn):
            skill_id = self.resolve_id(ref)
            if "name" in changes:
                changes["name_skeleton"] = claim_name(self._conn, changes["name"], exclude_id=skill_id)
            changes["updated_at"] = self._ctx.now()
            assignments = ", ".join(f"{column} = ?" for column in changes)
            try:
                self._conn.execute(
                    f"UPDATE skills SET {assignments} WHERE id = ?", [*changes.values(), skill_id]
                )
            except sqlite3.IntegrityError:
                raise ConflictError(f"a skill named {changes.get('name')!r} already exists") from None
            if embedded:  # the edit trigger dropped the old vector; the new text gets one in the same write
                edited = self.get(skill_id)
                self._vectors().store(
                    "skill", skill_id, self._vectors().embed_skill(edited.name, edited.description, edited.tags)
                )
        return self.get(skill_id)

    def deprecate(self, ref: int | str, reason: str | None = None) -> Skill:
        """Soft-delete a skill (hidden from search and lists, history kept); undo with ``restore``."""
        with transaction(self._conn):
            skill_id = self.resolve_id(ref)
            self._conn.execute(
                "UPDATE skills SET deprecated = 1, deprecated_reason = ?, deprecated_at = ?, updated_at = ? "
                "WHERE id = ?",
                (reason, self._ctx.now(), self._ctx.now(), skill_id),
            )
        return self.get(skill_id)

    def restore(self, ref: int | str) -> Skill:
        """Undo :meth:`deprecate`. A live skill is left alone: touching ``updated_at`` would change
        its ranking although nothing about it changed."""
        with transaction(self._conn):
            skill_id = self.resolve_id(ref)
            if not self.get(skill_id).deprecated:
                return self.get(skill_id)
            self._conn.execute(
                "UPDATE skills SET deprecated = 0, deprecated_reason = NULL, deprecated_at = NULL, "
                "updated_at = ? WHERE id = ?",
                (self._ctx.now(), skill_id),
            )
        return self.get(skill_id)

    def delete(self, ref: int | str) -> Skill:
        """Remove the skill for good; its telemetry rows go with it (cascade)."""
        with transaction(self._conn):
            skill = self.get(ref)
            self._conn.execute("DELETE FROM skills WHERE id = ?", (skill.id,))
        return skill

    def render(self, ref: int | str, params: Mapping[str, str], max_chars: int | None = None) -> str:
        """The skill's template with ``params`` filled in (at most ``max_chars``); a missing parameter is an error."""
        check_params(params)
        return render_template(self.get(ref).template, params, max_chars)
