"""Search: safe query building, BM25 candidates, and ranking."""

from .lexical import Hit, lexical_candidates
from .query import STOP_WORDS, content_tokens, fts_query, tokenize

__all__ = ["Hit", "lexical_candidates", "STOP_WORDS", "content_tokens", "fts_query", "tokenize"]
