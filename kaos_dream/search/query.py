"""Turning any user text into a safe FTS5 query.

FTS5 has its own syntax (``AND``, ``NEAR``, ``*``, ``"``, ``-``, column filters …); passing user text
straight to ``MATCH`` lets a stray quote raise a syntax error. Here the text is split into word
tokens (:mod:`kaos_dream.tokens`), stop words are dropped, and each token is quoted and OR-joined, so
every input is valid.
"""

from __future__ import annotations

from ..tokens import MAX_TOKEN_LEN, MAX_TOKENS, STOP_WORDS, Query, content_tokens, tokenize

__all__ = ["MAX_TOKENS", "MAX_TOKEN_LEN", "STOP_WORDS", "Query", "content_tokens", "fts_query", "tokenize"]


def fts_query(text: str) -> str | None:
    """An FTS5 MATCH expression for ``text``, or ``None`` when it has no searchable word."""
    tokens = content_tokens(text)  # a parsed Query answers without tokenising again
    if not tokens:
        return None
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in tokens)
