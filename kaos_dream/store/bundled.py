"""`db check` for skills' bundled files: each stored file's bytes still match its recorded sha256."""

from __future__ import annotations

import hashlib
from typing import Any


def bundled_file_problems(conn: Any, limit: int = 20) -> list[str]:
    """One line per bundled file whose content no longer hashes to its sha256 (at most ``limit``)."""
    problems: list[str] = []
    cursor = conn.execute("SELECT skill_id, path, sha256, content FROM skill_files ORDER BY skill_id, path")
    for skill_id, path, sha, content in cursor:
        if hashlib.sha256(bytes(content)).hexdigest() != sha:
            problems.append(f"bundled file: skill {skill_id} {path!r} does not match its sha256")
            if len(problems) >= limit:
                break
    return problems
