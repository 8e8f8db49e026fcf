"""`kaos skill export DIR`: skills as Agent Skills folders a harness can load.

Each skill becomes ``DIR/NAME/SKILL.md`` (front matter in a fixed order, the learned record in
``metadata`` under ``kaos-`` keys, the body verbatim) plus its bundled files byte for byte. Every
``SKILL.md`` is checked with the importer's own validator before anything is written; a skill that
cannot be a valid folder (a name outside the format's rules, no description) is skipped and listed.

``DIR/.kaos-export.json`` lists each file the export wrote with its sha256. A later export overwrites
a file only when it is still what was written (or with ``force``), removes the files of skills that
dropped out of the selection when they are unchanged, and never writes through a symlink. Every
check runs before the first write; each file is written to a temporary name and renamed into place,
so a file is either the old one or the new one, never half of each.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import json
import os
import stat
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InvalidInputError
from .folders import SKILL_FILE, safe_relative, show
from .format import KAOS_TAGS, Problem, parse_skill_md, render_skill_md

if TYPE_CHECKING:
    from ..library import Library
    from ..skills import Skill

MANIFEST = ".kaos-export.json"
MANIFEST_FORMAT = "kaos-skill-export"


class ExportRefusedError(InvalidInputError):
    """Files in the way that the export did not write: one line each."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = problems
        super().__init__(f"{len(problems)} file(s) in the way that kaos did not write; nothing was written "
                         "(--force overwrites them)")


@dataclass
class ExportResult:
    directory: str
    skills: list[str] = field(default_factory=list)
    written: list[str] = field(default_factory=list)
    unchanged: int = 0
    removed: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"directory": self.directory, "skills": self.skills, "written": self.written,
                "unchanged": self.unchanged, "removed": self.removed, "skipped": self.skipped}


def _rate(record: dict[str, Any]) -> float | None:
    eff = record["effective"]
    return eff["successes"] / eff["uses"] if eff["uses"] > 0 else None


def _wilson(record: dict[str, Any]) -> float:
    from ..plasticity.signals import wilson_lower

    eff = record["effective"]
    return float(wilson_lower(eff["successes"], eff["uses"])) if eff["uses"] > 0 else 0.0


def learned_metadata(skill: Skill, record: dict[str, Any], last_used: float | None) -> dict[str, str]:
    """The ``kaos-`` metadata of one skill: its record as the library has learned it."""
    out = {"kaos-uses": str(record["all_time"]["uses"]), "kaos-successes": str(record["all_time"]["successes"])}
    rate = _rate(record)
    if rate is not None:
        out["kaos-success-rate"] = f"{rate:.3f}"
    if last_used is not None:
        out["kaos-last-used"] = dt.datetime.fromtimestamp(last_used, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    if skill.tags:
        out[KAOS_TAGS] = ",".join(skill.tags)
    if skill.deprecated:
        out["kaos-deprecated"] = "true"
    return out


def select(lib: Library, *, top: int | None, min_success: float | None, tag: str | None,
           include_deprecated: bool) -> list[tuple[Skill, dict[str, Any]]]:
    """The skills to export with their records: filtered, the best ``top`` by the lower bound of their
    effective success rate (more evidence first on ties, then id), in name order."""
    if top is not None and top < 0:
        raise InvalidInputError("--top must not be negative")
    if min_success is not None and not 0.0 <= min_success <= 1.0:
        raise InvalidInputError("--min-success is a rate between 0 and 1")
    chosen = []
    for skill in lib.skills.list(tag=tag, deprecated=None if include_deprecated else False):
        record = lib.skill_record(skill.id)
        rate = _rate(record)
        if min_success is not None and min_success > 0 and (rate is None or rate < min_success):
            continue
        chosen.append((skill, record))
    if top is not None:
        chosen.sort(key=lambda sr: (-_wilson(sr[1]), -sr[1]["effective"]["uses"], sr[0].id))
        chosen = chosen[:top]
    return sorted(chosen, key=lambda sr: sr[0].name)


def _package(conn: Any, skill_id: int) -> tuple[dict[str, Any], str, list[tuple[str, bytes, bool]]]:
    row = conn.execute("SELECT front_matter, newline FROM skill_packages WHERE skill_id = ?", (skill_id,)).fetchone()
    kept, newline = (json.loads(row[0]), row[1]) if row else ({}, "lf")
    files = [(r[0], bytes(r[1]), bool(r[2])) for r in conn.execute(
        "SELECT path, content, executable FROM skill_files WHERE skill_id = ? ORDER BY path", (skill_id,))]
    return kept, newline, files


def build(lib: Library, chosen: list[tuple[Skill, dict[str, Any]]]
          ) -> tuple[dict[str, bytes], set[str], list[str], list[str]]:
    """(relative path -> bytes, the executable ones, exported names, skipped lines) for the chosen skills."""
    outputs: dict[str, bytes] = {}
    executable: set[str] = set()
    names: list[str] = []
    skipped: list[str] = []
    for skill, record in chosen:
        row = lib.conn.execute("SELECT last_used_at FROM skill_stats WHERE skill_id = ?", (skill.id,)).fetchone()
        kept, newline, files = _package(lib.conn, skill.id)
        data = render_skill_md(skill.name, skill.description, skill.template, kept,
                               learned_metadata(skill, record, row[0] if row else None), newline)
        checked = parse_skill_md(data, f"{skill.name}/{SKILL_FILE}", skill.name)
        if isinstance(checked, list):
            skipped.append(f"skill {skill.name!r}: not a valid Agent Skill ({checked[0].what})")
            continue
        unsafe = [p for p, _, _ in files if not safe_relative(p) or p == SKILL_FILE]
        if unsafe:
            skipped.append(f"skill {skill.name!r}: bundled file path {unsafe[0]!r} would leave its folder")
            continue
        outputs[f"{skill.name}/{SKILL_FILE}"] = data
        for path, content, runnable in files:
            outputs[f"{skill.name}/{path}"] = content
            if runnable:
                executable.add(f"{skill.name}/{path}")
        names.append(skill.name)
    return outputs, executable, names, skipped


def export_skills(lib: Library, directory: str | Path, *, top: int | None = None, min_success: float | None = None,
                  tag: str | None = None, include_deprecated: bool = False, force: bool = False) -> ExportResult:
    """Write the selected skills as folders under ``directory`` (see the module docstring)."""
    root = Path(directory)
    _check_directory(root)
    chosen = select(lib, top=top, min_success=min_success, tag=tag, include_deprecated=include_deprecated)
    outputs, executable, names, skipped = build(lib, chosen)
    result = ExportResult(show(root), names, skipped=skipped)
    manifest = _read_manifest(root, force)
    to_write, problems = _plan_writes(root, outputs, manifest, force)
    result.unchanged = len(outputs) - len(to_write)
    stale = [p for p in sorted(manifest) if p not in outputs and _is_ours(root, p, manifest[p])]
    if problems:
        raise ExportRefusedError(problems)
    root.mkdir(parents=True, exist_ok=True)
    for path in to_write:
        _write_atomic(root / path, outputs[path], executable=path in executable)
    for path in sorted(executable - set(to_write)):  # same bytes already there: make sure the bit is too
        _set_executable(root / path, True)
    for path in stale:
        (root / path).unlink()
        _remove_empty_parents(root, Path(path).parent)
    result.written = to_write
    result.removed = stale
    written = {p: hashlib.sha256(b).hexdigest() for p, b in outputs.items()}
    kept = {p: s for p, s in manifest.items() if p not in outputs and p not in stale and (root / p).exists()}
    _write_atomic(root / MANIFEST, (json.dumps({"format": MANIFEST_FORMAT, "files": dict(sorted({**kept, **written}
                                                                                                .items()))},
                                              indent=1, ensure_ascii=False) + "\n").encode())
    return result


def _check_directory(root: Path) -> None:
    where = show(root)
    if os.path.lexists(root):
        info = os.lstat(root)
        if stat.S_ISLNK(info.st_mode) and not root.is_dir():
            raise InvalidInputError(f"{where} is a symlink to no folder")
        if not root.is_dir():
            raise InvalidInputError(f"{where} is a file, not a folder")
        _probe_writable(root, where)
        return
    parent = root.parent if str(root.parent) else Path(".")
    existing = parent
    while not existing.exists():
        existing = existing.parent
    if not existing.is_dir():
        raise InvalidInputError(f"{show(existing)} is a file, not a folder")
    _probe_writable(existing, f"{where} cannot be created: {show(existing)}")


def _probe_writable(folder: Path, where: str) -> None:
    """Create and remove one empty file: the only test that holds for root, read-only mounts and ACLs."""
    try:
        fd, name = tempfile.mkstemp(prefix=".kaos-probe-", dir=folder)
    except OSError as exc:
        raise InvalidInputError(f"{where}: the folder is not writable ({exc.strerror or exc})") from None
    os.close(fd)
    os.unlink(name)


def _read_manifest(root: Path, force: bool) -> dict[str, str]:
    path = root / MANIFEST
    if not os.path.lexists(path):
        return {}
    try:
        if os.path.islink(path):
            raise ValueError("a symlink")
        data = json.loads(path.read_bytes())
        if not isinstance(data, dict) or data.get("format") != MANIFEST_FORMAT \
                or not isinstance(data.get("files"), dict):
            raise ValueError("not a kaos export manifest")
        return {str(k): str(v) for k, v in data["files"].items() if safe_relative(str(k))}
    except (ValueError, OSError, UnicodeDecodeError) as exc:
        if force:
            return {}
        raise InvalidInputError(f"{show(path)}: unreadable export manifest ({exc}); --force starts a new one") from None


def _sha_of(path: Path) -> str | None:
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return None
    if not stat.S_ISREG(info.st_mode):
        return "-"
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _is_ours(root: Path, relative: str, sha: str) -> bool:
    return _parents_safe(root, relative) is None and _sha_of(root / relative) == sha


def _parents_safe(root: Path, relative: str) -> str | None:
    """Why writing ``relative`` under ``root`` would go through something that is not a plain folder."""
    current = root
    for part in relative.split("/")[:-1]:
        current = current / part
        if not os.path.lexists(current):
            return None
        info = os.lstat(current)
        if stat.S_ISLNK(info.st_mode):
            return f"{show(current)} is a symlink; an export never writes through one"
        if not stat.S_ISDIR(info.st_mode):
            return f"{show(current)} is a file where the export needs a folder"
    return None


def _plan_writes(root: Path, outputs: dict[str, bytes], manifest: dict[str, str],
                 force: bool) -> tuple[list[str], list[Problem]]:
    to_write: list[str] = []
    problems: list[Problem] = []
    for relative, data in sorted(outputs.items()):
        full = root / relative
        why = _parents_safe(root, relative)
        if why:
            problems.append(Problem(show(full), 0, why))
            continue
        current = _sha_of(full)
        if current is None:
            to_write.append(relative)
            continue
        if current == "-":
            if os.path.islink(full) and force:
                to_write.append(relative)  # the link itself is replaced, never written through
                continue
            problems.append(Problem(show(full), 0, "not a regular file"))
            continue
        new = hashlib.sha256(data).hexdigest()
        if current == new:
            continue
        if manifest.get(relative) == current or force:
            to_write.append(relative)
        else:
            problems.append(Problem(show(full), 0, "exists and was not written by kaos skill export"))
    return to_write, problems


def _set_executable(path: Path, executable: bool) -> None:
    mode = os.stat(path).st_mode & 0o777
    readable = (mode & 0o444) >> 2  # execute for whoever may read
    wanted = mode | readable if executable else mode & ~0o111
    if wanted != mode:
        os.chmod(path, wanted)


def _write_atomic(path: Path, data: bytes, *, executable: bool = False) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_name(f".{path.name}.kaos-tmp-{os.getpid()}")
    try:
        with open(temp, "wb") as fh:
            fh.write(data)
        if executable:
            _set_executable(temp, True)
        os.replace(temp, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            temp.unlink()


def _remove_empty_parents(root: Path, relative_dir: Path) -> None:
    current = relative_dir
    while str(current) not in ("", "."):
        try:
            (root / current).rmdir()
        except OSError:
            return
        current = current.parent
