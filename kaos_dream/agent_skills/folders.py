"""Finding skill folders in a tree and reading one folder's bytes, refusing what could hurt.

A folder holding ``SKILL.md`` is one skill; every other file under it is a bundled file (scripts/,
references/, assets/, ...), recorded by its path relative to the folder. Entries whose name starts
with ``.`` (``.git``, ``.DS_Store``) are skipped, in the tree and in a skill. Nothing is followed out
of the folder: a symlink anywhere in a skill is refused, and so are device files, FIFOs and sockets
(reading one could block), names that are not UTF-8 text or hold control characters, trees deeper
than :data:`MAX_DEPTH` and files past the size caps. Sizes are checked from ``lstat`` before a byte is
read, so a 50 MB ``SKILL.md`` costs nothing.
"""

from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from ..limits import PATH
from .format import MAX_SKILL_MD_BYTES, Problem

SKILL_FILE = "SKILL.md"
MAX_DEPTH = 16  # folders below a given PATH (and inside one skill): real trees are a few levels deep
MAX_FILE_BYTES = 5 * 1024 * 1024  # one bundled file
MAX_BUNDLE_BYTES = 20 * 1024 * 1024  # all bundled files of one skill together
MAX_FILES = 500  # bundled files of one skill
MAX_PATH_CHARS = PATH  # one bundled file's relative path


@dataclass(frozen=True)
class BundledFile:
    path: str  # relative to the skill's folder, '/'-separated
    size: int
    sha256: str
    content: bytes
    executable: bool = False  # any execute bit set: a script the harness runs


@dataclass(frozen=True)
class FolderBytes:
    """One skill folder as read from disk, before its SKILL.md is parsed."""

    folder: Path
    skill_md: bytes
    files: tuple[BundledFile, ...]


def show(path: Path | str) -> str:
    """A path for a message: as given, with undecodable bytes escaped."""
    return os.fsdecode(path).encode("utf-8", "backslashreplace").decode("utf-8")


def name_problem(name: str) -> str | None:
    """Why a directory entry's name cannot be stored as part of a path, or None."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return "its name is not UTF-8 text"
    if any(ord(c) < 32 or ord(c) == 127 for c in name) or "\\" in name:
        return "its name holds a control character or a backslash"
    return None


def safe_relative(path: str) -> bool:
    """True when ``path`` is a plain relative path inside a folder (no '..', not absolute, no empty part)."""
    if not path or len(path) > MAX_PATH_CHARS or path.startswith("/") or "\\" in path or "\x00" in path:
        return False
    return all(part not in ("", ".", "..") for part in path.split("/"))


def find_skill_folders(paths: list[Path]) -> tuple[list[Path], list[Problem]]:
    """Every skill folder under ``paths`` (a skill folder itself, or a tree holding them), in path
    order, and the problems met on the way. A folder is not searched below its SKILL.md."""
    found: list[Path] = []
    problems: list[Problem] = []
    for root in paths:
        try:
            info = os.stat(root)
        except OSError as exc:
            problems.append(Problem(show(root), 0, exc.strerror or "cannot be read"))
            continue
        if not stat.S_ISDIR(info.st_mode):
            problems.append(Problem(show(root), 0, "not a folder (give a skill folder or a tree of them)"))
            continue
        _walk(root, 0, found, problems)
    return found, problems


def _walk(folder: Path, depth: int, found: list[Path], problems: list[Problem]) -> None:
    if os.path.lexists(folder / SKILL_FILE):
        found.append(folder)
        return
    if depth >= MAX_DEPTH:
        problems.append(Problem(show(folder), 0, f"more than {MAX_DEPTH} folders deep; not searched further"))
        return
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError as exc:
        problems.append(Problem(show(folder), 0, exc.strerror or "cannot be listed"))
        return
    for entry in entries:
        if entry.name.startswith("."):
            continue
        if entry.is_symlink():
            if entry.is_dir():
                problems.append(Problem(show(entry.path), 0, "a symlink to a folder; not followed"))
            continue
        if entry.is_dir(follow_symlinks=False):
            _walk(Path(entry.path), depth + 1, found, problems)


def read_folder(folder: Path) -> FolderBytes | list[Problem]:
    """The bytes of ``folder``'s SKILL.md and bundled files, or every problem that stops reading them."""
    problems: list[Problem] = []
    skill_md_path = folder / SKILL_FILE
    where = show(skill_md_path)
    try:
        info = os.lstat(skill_md_path)
    except OSError as exc:
        return [Problem(where, 0, exc.strerror or "cannot be read")]
    if stat.S_ISLNK(info.st_mode):
        return [Problem(where, 0, "SKILL.md is a symlink; a skill's files must be inside its folder")]
    if not stat.S_ISREG(info.st_mode):
        return [Problem(where, 0, "SKILL.md is not a regular file")]
    if info.st_size > MAX_SKILL_MD_BYTES:
        return [Problem(where, 0, f"SKILL.md is {info.st_size} bytes; the limit is {MAX_SKILL_MD_BYTES}")]
    skill_md = _read_capped(skill_md_path, MAX_SKILL_MD_BYTES)
    if skill_md is None:
        return [Problem(where, 0, f"SKILL.md grew past {MAX_SKILL_MD_BYTES} bytes while being read")]
    files: list[BundledFile] = []
    _read_bundle(folder, "", 0, files, problems, [0])
    if problems:
        return problems
    return FolderBytes(folder, skill_md, tuple(sorted(files, key=lambda f: f.path)))


def _read_capped(path: Path, cap: int) -> bytes | None:
    with open(path, "rb") as fh:
        data = fh.read(cap + 1)
    return None if len(data) > cap else data


def _read_bundle(folder: Path, prefix: str, depth: int, files: list[BundledFile], problems: list[Problem],
                 total: list[int]) -> None:
    here = folder / prefix if prefix else folder
    try:
        entries = sorted(os.scandir(here), key=lambda e: e.name)
    except OSError as exc:
        problems.append(Problem(show(here), 0, exc.strerror or "cannot be listed"))
        return
    for entry in entries:
        if entry.name.startswith(".") or (not prefix and entry.name == SKILL_FILE):
            continue
        where = show(entry.path)
        bad_name = name_problem(entry.name)
        if bad_name:
            problems.append(Problem(where, 0, bad_name))
            continue
        relative = f"{prefix}/{entry.name}" if prefix else entry.name
        info = entry.stat(follow_symlinks=False)
        if stat.S_ISLNK(info.st_mode):
            problems.append(Problem(where, 0, "a symlink; a skill's files must be inside its folder, not links"))
        elif stat.S_ISDIR(info.st_mode):
            if depth + 1 >= MAX_DEPTH:
                problems.append(Problem(where, 0, f"more than {MAX_DEPTH} folders deep inside the skill"))
            else:
                _read_bundle(folder, relative, depth + 1, files, problems, total)
        elif not stat.S_ISREG(info.st_mode):
            problems.append(Problem(where, 0, "not a regular file (a device, FIFO or socket)"))
        elif info.st_size > MAX_FILE_BYTES:
            problems.append(Problem(where, 0, f"{info.st_size} bytes; a bundled file may hold {MAX_FILE_BYTES}"))
        elif len(files) >= MAX_FILES:
            problems.append(Problem(where, 0, f"more than {MAX_FILES} bundled files in one skill"))
            return
        elif len(relative) > MAX_PATH_CHARS:
            problems.append(Problem(where, 0, f"its path is longer than {MAX_PATH_CHARS} characters"))
        else:
            total[0] += info.st_size
            if total[0] > MAX_BUNDLE_BYTES:
                problems.append(Problem(show(folder), 0, f"bundled files exceed {MAX_BUNDLE_BYTES} bytes in all"))
                return
            content = _read_capped(Path(entry.path), MAX_FILE_BYTES)
            if content is None:
                problems.append(Problem(where, 0, "grew past the size cap while being read"))
                continue
            files.append(BundledFile(relative, len(content), hashlib.sha256(content).hexdigest(), content,
                                     bool(info.st_mode & 0o111)))
