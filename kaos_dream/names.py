"""What may appear in a name, key, tag or agent id: printable characters only.

Control characters, Unicode format characters (category Cf: U+202E right-to-left override, U+200B
zero-width space, U+2066 isolates, U+FEFF, ...) and other non-printable code points (unassigned,
private use, surrogates, line and paragraph separators, spaces other than U+0020) make two names
that look identical differ, or make a listing display something else than what is stored.
"""

from __future__ import annotations

import getpass
import socket
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


def clean_label(value: str, what: str, limit: int, *, one_rule: bool = False) -> str:
    """``value`` stripped, or InvalidInputError naming ``what`` when it is empty, longer than ``limit``
    characters or holds a character that is not printable. ``one_rule``: too long and control
    characters get the same message ("at most N printable characters"), as memory labels and
    coordination agents have always said."""
    cleaned = value.strip()
    if not cleaned:
        raise InvalidInputError(f"{what} must not be empty")
    if one_rule and (len(cleaned) > limit or any(ord(c) < 32 for c in cleaned)):
        raise InvalidInputError(f"{what} must be at most {limit} printable characters")
    if len(cleaned) > limit:
        raise InvalidInputError(f"{what} is {len(cleaned)} characters; the limit is {limit}")
    if any(ord(c) < 32 for c in cleaned):
        raise InvalidInputError(f"{what} must not contain control characters")
    bad = first_unprintable(cleaned)
    if bad:
        raise InvalidInputError(f"{what} must be printable characters; it holds {bad}")
    return cleaned


MAX_SKILL_NAME = 200


def clean_skill_name(name: str) -> str:
    """A skill's name as `skill add` and `skill update` store it (stripped, printable, at most
    :data:`MAX_SKILL_NAME` characters), NFC-normalised: the composed and decomposed spellings of
    ``café-deploy`` look alike, so they are one name and the unique index refuses the second.
    ``db import`` holds imported names to the same rule."""
    return clean_label(unicodedata.normalize("NFC", name), "skill name", MAX_SKILL_NAME)


def clean_agent_id(agent_id: str) -> str:
    """``agent_id`` stripped, or InvalidInputError when it is empty, too long or not printable."""
    return clean_label(agent_id, "agent id", MAX_AGENT_ID)


MAX_PRINCIPAL = 200


def clean_principal(principal: str, what: str = "principal") -> str:
    """A principal (who writes: ``ci-bot``, ``alice@build-7``) checked like an agent id."""
    return clean_label(principal, what, MAX_PRINCIPAL)


def default_principal() -> str:
    """The OS user and host of this process (``user@host``): the CLI's principal when none is pinned."""
    try:
        user = getpass.getuser()
    except (KeyError, OSError):  # no passwd entry and no LOGNAME/USER (a bare container)
        user = "uid-" + str(_uid())
    host = socket.gethostname() or "localhost"
    text = f"{user}@{host}"
    return "".join(c if c.isprintable() else "?" for c in text)[:MAX_PRINCIPAL].strip() or "unknown"


def _uid() -> int | str:
    import os

    return os.getuid() if hasattr(os, "getuid") else "unknown"


def effective_principal(pinned: str) -> str:
    """``pinned`` (KAOS_PRINCIPAL, --principal) checked, else :func:`default_principal`."""
    if pinned.strip():
        return clean_principal(pinned, "the principal (--principal, KAOS_PRINCIPAL)")
    return default_principal()
