"""Which database engine a ``--db`` / ``KAOS_DB`` value names, and how to show it without its password.

A ``postgresql://`` or ``postgres://`` URL selects PostgreSQL; anything else is a SQLite path, as it
always was (``:memory:`` and ``file:`` URIs included). Passwords may sit in the URL; libpq itself also
reads ``PGPASSWORD`` and ``~/.pgpass``, so nothing here looks at those. Every message that names a
database goes through :func:`mask`, which replaces a URL's password with ``***``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal
from urllib.parse import unquote, urlsplit

from ..errors import StoreError

POSTGRES_SCHEMES = ("postgresql", "postgres")
INSTALL_LINE = 'pip install "kaos-dream[postgres]"'

# scheme://user:password@ — the password is everything between the first ':' of the user part and
# the last '@' before the host (a password may itself contain '@' when not percent-encoded).
_PASSWORD = re.compile(r"(?P<head>\bpostgres(?:ql)?://[^:/?#@\s]*:)(?P<password>[^\s/?#]*)(?P<tail>@)", re.IGNORECASE)
_KEYWORD_PASSWORD = re.compile(r"(?P<head>\bpassword\s*=\s*)(?P<password>'(?:[^'\\]|\\.)*'|\S+)", re.IGNORECASE)


@dataclass(frozen=True)
class Engine:
    """``kind`` is ``sqlite`` (``target`` a path) or ``postgresql`` (``target`` the URL, password included)."""

    kind: Literal["sqlite", "postgresql"]
    target: str

    @property
    def shown(self) -> str:
        """The target as messages may print it (password masked)."""
        return mask(self.target)


def is_postgres_url(value: str) -> bool:
    scheme, sep, _ = value.partition("://")
    return bool(sep) and scheme.lower() in POSTGRES_SCHEMES


def parse_db(value: str) -> Engine:
    """The engine ``value`` selects. A postgres URL must name a database; its syntax is checked here so
    a typo fails with one line instead of a libpq error later."""
    if not is_postgres_url(value):
        return Engine("sqlite", value)
    parts = urlsplit(value)
    try:
        parts.port  # noqa: B018 - raises ValueError on a non-numeric or out-of-range port
    except ValueError as exc:
        raise StoreError(f"{mask(value)}: bad port in the PostgreSQL URL ({exc})") from None
    if not unquote(parts.path.lstrip("/")):
        raise StoreError(f"{mask(value)}: the PostgreSQL URL names no database (postgresql://user@host:5432/DBNAME)")
    return Engine("postgresql", value)


def mask(text: str) -> str:
    """``text`` with the password of every postgres URL (and any ``password=`` keyword) replaced by ``***``."""
    text = _PASSWORD.sub(lambda m: m.group("head") + "***" + m.group("tail"), text)
    return _KEYWORD_PASSWORD.sub(lambda m: m.group("head") + "***", text)


def require_driver(engine: Engine) -> None:
    """Fail with the install line when the PostgreSQL driver (psycopg 3) is not installed."""
    if engine.kind != "postgresql":
        return
    try:
        import psycopg  # noqa: F401
    except ImportError:
        raise StoreError(
            f"{engine.shown}: PostgreSQL needs the psycopg driver, which is not installed: {INSTALL_LINE}"
        ) from None
