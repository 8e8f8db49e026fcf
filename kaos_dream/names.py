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

from . import limits
from .errors import InvalidInputError

MAX_AGENT_ID = limits.NAME


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


MAX_SKILL_NAME = limits.NAME


def clean_skill_name(name: str) -> str:
    """A skill's name as `skill add` and `skill update` store it (stripped, printable, at most
    :data:`MAX_SKILL_NAME` characters), NFC-normalised: the composed and decomposed spellings of
    ``café-deploy`` look alike, so they are one name and the unique index refuses the second.
    ``db import`` holds imported names to the same rule."""
    return clean_label(unicodedata.normalize("NFC", name), "skill name", MAX_SKILL_NAME)


def clean_agent_id(agent_id: str) -> str:
    """``agent_id`` stripped, or InvalidInputError when it is empty, too long or not printable."""
    return clean_label(agent_id, "agent id", MAX_AGENT_ID)


MAX_PRINCIPAL = limits.NAME


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


_PROTOTYPES: dict[str, str] | None = None


def _prototypes() -> dict[str, str]:
    """Unicode's confusables data (UTS #39) as ``source character -> prototype string``.

    confusable_homoglyphs (MIT) ships Unicode's confusables.txt as a table that lists every pair in
    both directions, so the direction is recovered here from what the standard guarantees: a source
    is one code point with exactly one target, and a prototype is never itself a source. A character
    with two or more partners, or one used inside a multi-character prototype (``rn`` for ``m``), is a
    prototype; of an isolated pair either one may stand for both, and the lower code point does.
    Loaded on first use (about 0.1 s): only writes of a skill name need it.
    """
    global _PROTOTYPES
    if _PROTOTYPES is None:
        from confusable_homoglyphs.utils import load

        table: dict[str, list[str]] = {}
        for key, partners in load("confusables.json").items():
            # right-to-left characters are stored wrapped in U+200E marks; the data is the character
            table.setdefault(key.replace("\u200e", ""), []).extend(p["c"].replace("\u200e", "") for p in partners)
        inside = {c for key, partners in table.items() for t in (key, *partners) if len(t) > 1 for c in t}
        mapping: dict[str, str] = {}
        for key, partners in table.items():
            if len(key) != 1 or len(partners) != 1 or key in inside:
                continue
            target = partners[0]
            if len(target) > 1 or len(table.get(target, ())) > 1 or target in inside or ord(target) < ord(key):
                mapping[key] = target
        _PROTOTYPES = mapping
    return _PROTOTYPES


def confusable_skeleton(text: str) -> str:
    """The Unicode TR39 skeleton of ``text``: NFD, each character replaced by its prototype, NFD again.
    Two names look alike exactly when their skeletons are equal (``dеploy`` with a Cyrillic ``е``,
    ``deploy‐prod`` with U+2010, ``café`` composed or decomposed)."""
    mapping = _prototypes()
    decomposed = unicodedata.normalize("NFD", text)
    return unicodedata.normalize("NFD", "".join(mapping.get(c, c) for c in decomposed))
