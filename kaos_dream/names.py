"""What may appear in a name, key, tag or agent id: printable characters only.

Control characters, Unicode format characters (category Cf: U+202E right-to-left override, U+200B
zero-width space, U+2066 isolates, U+FEFF, ...) and other non-printable code points (unassigned,
private use, surrogates, line and paragraph separators, spaces other than U+0020) make two names
that look identical differ, or make a listing display something else than what is stored.
"""

from __future__ import annotations

import unicodedata

from .errors import InvalidInputError

MAX_AGENT_ID = 200


def first_unprintable(text: str) -> str | None:
    """A short description of the first character that is not printable, or None when all are."""
    for index, char in enumerate(text, 1):
        if not char.isprintable():
            name = unicodedata.name(char, "")
            label = f"U+{ord(char):04X}" + (f" {name}" if name else "")
            return f"{label} (category {unicodedata.category(char)}) at character {index}"
    return None


def clean_agent_id(agent_id: str) -> str:
    """``agent_id`` stripped, or InvalidInputError when it is empty, too long or not printable."""
    cleaned = agent_id.strip()
    if not cleaned:
        raise InvalidInputError("agent id must not be empty")
    if len(cleaned) > MAX_AGENT_ID:
        raise InvalidInputError(f"agent id is {len(cleaned)} characters; the limit is {MAX_AGENT_ID}")
    if any(ord(c) < 32 for c in cleaned):
        raise InvalidInputError("agent id must not contain control characters")
    bad = first_unprintable(cleaned)
    if bad:
        raise InvalidInputError(f"agent id must be printable characters; it holds {bad}")
    return cleaned
