"""Words of user text: lower-cased tokens, stop words dropped, and the parsed form one search shares.

The lowest text primitive: full-text queries (:mod:`kaos_dream.search.query`), the task hash, the
hashing embedder and the grounding validator all split text the same way, so they import it from
here rather than from the search room above them.
"""

from __future__ import annotations

import re

MAX_TOKENS = 32
MAX_TOKEN_LEN = 64

# Letters and digits only: underscores, punctuation and control characters all separate tokens,
# as FTS5's unicode61 tokenizer does.
_TOKEN = re.compile(r"[^\W_]+", re.UNICODE)

STOP_WORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "been",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "for",
        "from",
        "had",
        "has",
        "have",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "me",
        "my",
        "no",
        "not",
        "of",
        "on",
        "or",
        "our",
        "so",
        "than",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "to",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "who",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
    ]
)


# One word of an identifier: an acronym before a capitalised word, a (capitalised) lower-case run, or
# an upper-case run; digits stay with their letters ("k8s", "utf8"). No nested quantifier: linear.
_IDENTIFIER_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z0-9]+|[A-Z0-9]+")


def identifier_words(name: str) -> str:
    """``name`` as words: camelCase, PascalCase, snake_case, kebab-case, dotted and path-like names
    split and lower-cased ("craftCraftingTable" -> "craft crafting table", "k8s.rollout.restart" ->
    "k8s rollout restart", "src/read_text_file.py" -> "src read text file py"). What the embedders
    read for a skill's name; the full-text index keeps the name itself, so it still matches exactly."""
    return " ".join(part.lower() for part in _IDENTIFIER_PART.findall(name))


def identifier_index_words(name: str) -> str:
    """The words splitting ``name`` as an identifier adds to the words the full-text tokenizer already
    cuts it into ("craftCraftingTable" -> "craft crafting table"; "git_status" -> "", since FTS5 already
    splits on the underscore). Stored beside the name (``skills.name_words``, ``memories.key_words``)
    and indexed with it, so the exact name and its words both match, and a name the tokenizer already
    splits is indexed exactly as before (no doubled term counts)."""
    segments = [match.group(0) for match in _TOKEN.finditer(name)]
    have = {segment.lower() for segment in segments}  # the words FTS5 indexes for the name itself
    extra: dict[str, None] = {}
    for segment in segments:
        if not segment.isascii():
            continue  # the splitter knows ASCII case only: "crêpeMaker" would give "cr pe maker"
        for word in identifier_words(segment).split():
            if word not in have:
                extra.setdefault(word, None)
    return " ".join(extra)


def tokenize(text: str) -> list[str]:
    """Lower-cased word tokens in order of first appearance, without duplicates."""
    seen: dict[str, None] = {}
    for match in _TOKEN.finditer(text.lower()):
        token = match.group(0)[:MAX_TOKEN_LEN]
        seen.setdefault(token, None)
    return list(seen)


def content_tokens(text: str) -> list[str]:
    """Tokens without stop words; all of them when the text is nothing but stop words."""
    if isinstance(text, Query):
        return list(text.tokens)
    tokens = tokenize(text)
    kept = [t for t in tokens if t not in STOP_WORDS]
    return (kept or tokens)[:MAX_TOKENS]


class Query(str):
    """User text parsed once: still the text (a ``str``, so every function that takes query text takes
    it), carrying its content tokens. One search passes it through candidate retrieval, coordination
    levels, the task hash and the semantic gate, which would otherwise each tokenise the text again
    (:func:`content_tokens` answers from it)."""

    tokens: tuple[str, ...]

    def __new__(cls, text: str) -> Query:
        if isinstance(text, Query):
            return text
        parsed = super().__new__(cls, text)
        parsed.tokens = tuple(content_tokens(str(text)))
        return parsed
