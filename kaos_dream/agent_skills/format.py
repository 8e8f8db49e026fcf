"""The Agent Skills ``SKILL.md`` format: parse one file's bytes, check it against the specification,
and write one back.

A ``SKILL.md`` is YAML front matter between two ``---`` lines, then a Markdown body. The front matter
is a mapping with ``name`` (1-64 characters: lowercase letters, digits and single hyphens inside,
equal to the folder's name) and ``description`` (1-1024 characters), optionally ``license``,
``compatibility`` (at most 500 characters), ``metadata`` (string keys to string values) and
``allowed-tools`` (a string). Nothing else.

The YAML is read with PyYAML's safe loader, narrowed further: an anchor or an alias is refused (a
few lines of aliases expand to billions of nodes) and so is a key given twice (YAML keeps the last
one silently, so what a person reads would not be what is stored). Every problem is reported as
``path:line: what is wrong``, all of them, not just the first.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import Any

import yaml

from ..errors import InvalidInputError
from ..skills import check_template, clean_name

MAX_SKILL_MD_BYTES = 1_048_576  # the instructions an agent loads in one go; a bigger file is not one
MAX_NAME_CHARS = 64
MAX_DESCRIPTION_CHARS = 1024
MAX_COMPATIBILITY_CHARS = 500
MAX_METADATA_ENTRIES = 100
MAX_METADATA_CHARS = 4096  # one key or value
KAOS_PREFIX = "kaos-"  # metadata keys kaos writes on export (the learned record); re-derived, never imported
KAOS_TAGS = "kaos-tags"  # the one kaos- key read back: the skill's tags, comma-separated
KEPT_FIELDS = ("license", "compatibility", "metadata", "allowed-tools")
KNOWN_FIELDS = ("name", "description", *KEPT_FIELDS)
_NAME = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a file: where (path, 1-based line; 0 when the whole file) and what."""

    path: str
    line: int
    what: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.what}" if self.line else f"{self.path}: {self.what}"


@dataclass(frozen=True)
class SkillDocument:
    """A valid ``SKILL.md``: the fields kaos stores, the body verbatim and the file's line ending."""

    name: str
    description: str
    body: str
    kept: dict[str, Any] = field(default_factory=dict)  # license, compatibility, metadata, allowed-tools
    tags: tuple[str, ...] = ()
    newline: str = "lf"


class _Refused(yaml.YAMLError):
    def __init__(self, line: int, what: str) -> None:
        super().__init__(what)
        self.line = line
        self.what = what


class _NoDuplicateKeys:
    """Refuse a mapping key given twice (YAML's loaders keep the last one silently)."""

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)  # type: ignore[attr-defined]
            try:
                duplicate = key in seen
            except TypeError:
                raise _Refused(key_node.start_mark.line, "a front-matter key must be a plain value") from None
            if duplicate:
                raise _Refused(key_node.start_mark.line, f"key {_show(key)} is given twice")
            seen.add(key)
        return super().construct_mapping(node, deep=deep)  # type: ignore[misc]


class StrictSafeLoader(_NoDuplicateKeys, yaml.SafeLoader):
    """PyYAML's safe loader without anchors, aliases or duplicate keys."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        event = self.peek_event()
        if isinstance(event, yaml.AliasEvent):
            raise _Refused(event.start_mark.line, "YAML aliases (*name) are not allowed in front matter")
        if getattr(event, "anchor", None) is not None:
            raise _Refused(event.start_mark.line, "YAML anchors (&name) are not allowed in front matter")
        return super().compose_node(parent, index)


# PyYAML's C-accelerated safe loader (libyaml), when the wheel has it: about 4x faster. Its composer is
# C code that cannot be told to refuse anchors and aliases, so it only reads front matter holding no
# '&' and no '*' at all (then there can be neither); anything else goes through StrictSafeLoader.
_FastLoader: Any = None
if hasattr(yaml, "CSafeLoader"):
    class _FastStrictLoader(_NoDuplicateKeys, yaml.CSafeLoader):  # type: ignore[name-defined,misc]
        pass

    _FastLoader = _FastStrictLoader


def load_front_matter(front: str) -> Any:
    """The YAML in ``front`` with the strict rules, by the fastest loader that can enforce them."""
    loader = _FastLoader if _FastLoader is not None and "&" not in front and "*" not in front else StrictSafeLoader
    return yaml.load(front, Loader=loader)  # noqa: S506 - safe loaders only


def _show(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "…"


def split_front_matter(data: bytes, path: str) -> tuple[str, str, int, str] | Problem:
    """(front matter text, body text, line of the first front-matter line, newline) or the problem."""
    if b"\x00" in data:
        return Problem(path, 0, "SKILL.md is binary (it holds NUL bytes), not UTF-8 text")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        return Problem(path, line, f"SKILL.md is not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start})")
    if text.startswith("\ufeff"):
        text = text[1:]  # a byte-order mark some editors add: not part of the document
    opening = text.split("\n", 1)[0]
    if opening.rstrip("\r").rstrip(" \t") != "---":
        return Problem(path, 1, "SKILL.md must start with a '---' line opening the YAML front matter")
    newline = "crlf" if opening.endswith("\r") else "lf"
    lines = text.splitlines(keepends=True)
    for number, line in enumerate(lines[1:], start=2):
        if line.rstrip("\r\n").rstrip(" \t") == "---":
            front = "".join(lines[1 : number - 1])
            body = "".join(lines[number:])
            return front, body, 2, newline
    return Problem(path, 1, "the front matter is never closed: no second '---' line")


def parse_skill_md(data: bytes, path: str, folder_name: str) -> SkillDocument | list[Problem]:
    """The document in ``data`` (the bytes of ``path``), or every problem found in it."""
    if len(data) > MAX_SKILL_MD_BYTES:
        return [Problem(path, 0, f"SKILL.md is {len(data)} bytes; the limit is {MAX_SKILL_MD_BYTES}")]
    split = split_front_matter(data, path)
    if isinstance(split, Problem):
        return [split]
    front, body, first_line, newline = split
    try:
        loaded = load_front_matter(front)
    except _Refused as exc:
        return [Problem(path, first_line + exc.line, exc.what)]
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = first_line + mark.line if mark is not None else first_line
        what = exc.problem or exc.context
        if exc.problem and exc.context and exc.context_mark is not None:
            what += f" ({exc.context} that starts on line {first_line + exc.context_mark.line})"
        return [Problem(path, line, f"front matter is not valid YAML: {what}")]
    except yaml.YAMLError as exc:
        return [Problem(path, first_line, f"front matter is not valid YAML: {exc}")]
    if loaded is None:
        loaded = {}
    if not isinstance(loaded, dict):
        return [Problem(path, first_line, "front matter must be a mapping of fields (name: …, description: …)")]
    lines = _key_lines(front, first_line)
    problems: list[Problem] = []

    def problem(key: str, what: str) -> None:
        problems.append(Problem(path, lines.get(key, first_line), what))

    for key in loaded:
        if key not in KNOWN_FIELDS:
            problem(str(key), f"unknown front-matter field {_show(key)} (allowed: {', '.join(KNOWN_FIELDS)})")
    name = loaded.get("name")
    if name is None:
        problems.append(Problem(path, first_line, "front matter has no 'name'"))
    elif not isinstance(name, str):
        problem("name", "'name' must be a string")
    else:
        for what in _name_problems(name, folder_name):
            problem("name", what)
    description = loaded.get("description")
    if description is None:
        problems.append(Problem(path, first_line, "front matter has no 'description'"))
    elif not isinstance(description, str) or not description.strip():
        problem("description", "'description' must be non-empty text")
    elif len(description) > MAX_DESCRIPTION_CHARS:
        problem("description", f"'description' is {len(description)} characters; the limit is {MAX_DESCRIPTION_CHARS}")
    elif "\x00" in description:
        problem("description", "'description' must not contain NUL characters")
    for key in ("license", "allowed-tools", "compatibility"):
        value = loaded.get(key)
        if value is not None and not isinstance(value, str):
            problem(key, f"{key!r} must be a string (quote it)")
    compatibility = loaded.get("compatibility")
    if isinstance(compatibility, str) and len(compatibility) > MAX_COMPATIBILITY_CHARS:
        problem("compatibility",
                f"'compatibility' is {len(compatibility)} characters; the limit is {MAX_COMPATIBILITY_CHARS}")
    metadata = loaded.get("metadata")
    if metadata is not None:
        for what in _metadata_problems(metadata):
            problem("metadata", what)
    try:
        check_template(body)
    except InvalidInputError as exc:
        problems.append(Problem(path, first_line + front.count("\n") + 1 + _template_line(body, str(exc)), str(exc)))
    if problems:
        return problems
    assert isinstance(name, str) and isinstance(description, str)
    kept = {k: loaded[k] for k in KEPT_FIELDS if k in loaded}
    tags: tuple[str, ...] = ()
    if isinstance(metadata, dict):
        own = {k: v for k, v in metadata.items() if not k.startswith(KAOS_PREFIX)}
        tags = tuple(t.strip() for t in str(metadata.get(KAOS_TAGS, "")).split(",") if t.strip())
        if own:
            kept["metadata"] = own
        else:
            kept.pop("metadata", None)
    return SkillDocument(name, description, body, kept, tags, newline)


def _template_line(body: str, message: str) -> int:
    match = re.search(r"at character (\d+)", message)
    return body[: int(match.group(1)) - 1].count("\n") if match else 0


def _key_lines(front: str, first_line: int) -> dict[str, int]:
    """Line of each top-level key (for messages); a key YAML accepted but this misses gets the first line."""
    out: dict[str, int] = {}
    for offset, line in enumerate(front.splitlines()):
        match = re.match(r"([^\s#:][^:]*?)\s*:", line)
        if match and match.group(1) not in out:
            out[match.group(1).strip("'\"")] = first_line + offset
    return out


def _name_problems(name: str, folder_name: str) -> list[str]:
    problems: list[str] = []
    if not name:
        return ["'name' must not be empty"]
    if len(name) > MAX_NAME_CHARS:
        problems.append(f"'name' is {len(name)} characters; the limit is {MAX_NAME_CHARS}")
    if not _NAME.fullmatch(name):
        problems.append(
            f"'name' {_show(name)} must be lowercase letters, digits and single hyphens, "
            "not starting or ending with a hyphen")
    else:
        try:
            clean_name(name)  # the rule `kaos skill add` applies, so an imported name meets it too
        except InvalidInputError as exc:
            problems.append(str(exc))
    if name != folder_name:
        problems.append(f"'name' {_show(name)} differs from the folder's name {_show(folder_name)}")
    return problems


def _metadata_problems(metadata: Any) -> list[str]:
    if not isinstance(metadata, dict):
        return ["'metadata' must be a mapping of string keys to string values"]
    if len(metadata) > MAX_METADATA_ENTRIES:
        return [f"'metadata' has {len(metadata)} entries; the limit is {MAX_METADATA_ENTRIES}"]
    problems: list[str] = []
    for key, value in metadata.items():
        if not isinstance(key, str) or not isinstance(value, str):
            problems.append(f"metadata {_show(key)}: keys and values must be strings (quote them)")
        elif len(key) > MAX_METADATA_CHARS or len(value) > MAX_METADATA_CHARS:
            problems.append(f"metadata {_show(key)}: a key or value is longer than {MAX_METADATA_CHARS} characters")
        elif "\x00" in key or "\x00" in value:
            problems.append(f"metadata {_show(key)}: NUL characters are not allowed")
    return problems


# -- writing ----------------------------------------------------------------------------------------

class _OneLineDumper(yaml.SafeDumper):
    """Every string on one line: text with line breaks, tabs or edge spaces goes double-quoted, where
    they are escapes, so the file's line ending can be applied without touching a value."""


def _represent_str(dumper: yaml.SafeDumper, value: str) -> Any:
    style = '"' if any(c in value for c in "\n\r\t") or value != value.strip() else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_OneLineDumper.add_representer(str, _represent_str)


def render_skill_md(name: str, description: str, body: str, kept: dict[str, Any], kaos: dict[str, str],
                    newline: str = "lf") -> bytes:
    """A spec-valid ``SKILL.md``: front matter in a fixed field order (name, description, license,
    compatibility, allowed-tools, metadata with the ``kaos-`` keys after the folder's own), then the
    body verbatim. The same stored skill always gives the same bytes."""
    front: dict[str, Any] = {"name": name, "description": description}
    for key in ("license", "compatibility", "allowed-tools"):
        if key in kept:
            front[key] = kept[key]
    metadata = {**kept.get("metadata", {}), **kaos}
    if metadata:
        front["metadata"] = metadata
    text = yaml.dump(front, Dumper=_OneLineDumper, allow_unicode=True, sort_keys=False, width=float("inf"),
                     default_flow_style=False)
    eol = "\r\n" if newline == "crlf" else "\n"
    if eol != "\n":
        text = text.replace("\n", eol)  # values never hold a raw line break (above): these are line ends
    return f"---{eol}{text}---{eol}{body}".encode()


def folder_digest(skill_md: bytes, files: list[tuple[str, str]]) -> str:
    """What a sync compares: SKILL.md's bytes and each bundled file's path and sha256, in path order."""
    h = hashlib.sha256(skill_md)
    for path, sha in sorted(files):
        h.update(b"\x00" + path.encode("utf-8") + b"\x00" + sha.encode("ascii"))
    return h.hexdigest()
