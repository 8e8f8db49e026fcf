"""What may appear in a name, key, tag or agent id: printable characters only.

Control characters, Unicode format characters (category Cf: U+202E right-to-left override, U+200B
zero-width space, U+2066 isolates, U+FEFF, ...) and other non-printable code points (unassigned,
private use, surrogates, line and paragraph separators, spaces other than U+0020) make two names
that look identical differ, or make a listing display something else than what is stored.
"""

from __future__ import annotations

import unicodedata


def first_unprintable(text: str) -> str | None:
    """A short description of the first character that is not printable, or None when all are."""
    for index, char in enumerate(text, 1):
        if not char.isprintable():
            name = unicodedata.name(char, "")
            label = f"U+{ord(char):04X}" + (f" {name}" if name else "")
            return f"{label} (category {unicodedata.category(char)}) at character {index}"
    return None
