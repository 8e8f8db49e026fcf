"""A skill's bundled files as stored (progressive disclosure: the list first, one file on request)."""

from __future__ import annotations

from typing import Any

from ..errors import InvalidInputError, NotFoundError
from ..limits import PATH, capped

MAX_FILE_READ = 256 * 1024  # bytes of one bundled file handed to an agent in one call


def bundled_files(conn: Any, skill_id: int) -> list[dict[str, Any]]:
    """Path, size, sha256 and executable flag of each bundled file, in path order (no content)."""
    return [{"path": r[0], "size": int(r[1]), "sha256": r[2], "executable": bool(r[3])} for r in conn.execute(
        "SELECT path, size, sha256, executable FROM skill_files WHERE skill_id = ? ORDER BY path", (skill_id,))]


def bundled_file(conn: Any, skill_id: int, skill_name: str, path: str,
                 max_bytes: int = MAX_FILE_READ) -> dict[str, Any]:
    """One bundled file: UTF-8 text as ``text``, anything else base64 as ``base64``; at most
    ``max_bytes`` of it (``truncated`` says when there was more)."""
    if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes <= 0:
        raise InvalidInputError("max_bytes must be a positive whole number")
    capped(path, "the bundled file's path", PATH)
    row = conn.execute("SELECT size, sha256, substr(content, 1, ?) FROM skill_files WHERE skill_id = ? AND path = ?",
                       (max_bytes, skill_id, path)).fetchone()
    if row is None:
        raise NotFoundError(f"skill {skill_name!r} has no bundled file {path!r}")
    data = bytes(row[2])
    out: dict[str, Any] = {"skill": skill_name, "path": path, "size": int(row[0]), "sha256": row[1],
                           "truncated": int(row[0]) > len(data)}
    text = _utf8(data, out["truncated"])
    if text is not None:
        out["text"] = text
    else:
        import base64

        out["base64"] = base64.b64encode(data).decode("ascii")
    return out


def _utf8(data: bytes, truncated: bool) -> str | None:
    """``data`` as text, or None when it is not UTF-8. A cut may split the last character: an
    incomplete sequence at the end of a truncated read is dropped, an invalid byte anywhere is not."""
    import codecs

    try:
        return codecs.getincrementaldecoder("utf-8")().decode(data, final=not truncated)
    except UnicodeDecodeError:
        return None
