"""Every cap on what a caller hands kaos-dream, in one place (issue 33 item 5).

The library checks these where a value enters (a skill, a memory, a search, an episode, a failure ...), so
the CLI and the MCP tools refuse the same over-long value with the same one-line message, before anything
is written; the MCP tools also declare them in their JSON schemas. docs/cli.md ("Limits", which its MCP
section points to) lists them, and tests/test_field_caps.py checks that the docs say these numbers.

Names and references are short (a person reads them in a list); free text is large but bounded, so one
agent cannot store megabytes through a field that was meant for a sentence.
"""

from __future__ import annotations

from collections.abc import Sized

from .errors import InvalidInputError

NAME = 200  # a skill name, a memory key or kind, a tag, an agent (episode) id or label, a principal, a tool name
REF = NAME  # a skill, memory or failure given by name, key, id or hash prefix
NODE = NAME + 16  # a graph node as KIND:REF (the longest kind, "failure:", and a REF)
TEXT = 1_000_000  # a skill's description or template, a memory's content, a failure's error text
QUERY = 10_000  # a search query
TASK = 10_000  # the task an outcome or a search is about
CONCLUSION = 100_000  # what an episode concluded
REASON = 2_000  # a coordination vote's or abort's reason, a policy's status reason
DIAGNOSIS = 2_000  # a hand-set root cause or suggested action, a fix's summary
ACTION = 2_000  # a coordination intent's action
PATH = 1_024  # a bundled file's path inside a skill
METADATA_BYTES = 65_536  # a memory's or log entry's metadata, as compact UTF-8 JSON: labels and ids, not payloads
TAGS = 100  # tags on one skill
CITATIONS = 1_000  # citations at one episode end
PARAMS = 10_000  # parameters given to one skill apply
PARAM_VALUE = TEXT  # one parameter's value
OUTCOMES = 1_000  # outcomes in one record_outcomes call: a step's worth, not a bulk import
PREFERENCE_KEY = 100  # a preference's key (`kaos config pref`)
PREFERENCE_VALUE = 4_000  # a preference's statement

# (what, cap, unit, where it applies) for the docs and their test.
TABLE: tuple[tuple[str, int, str, str], ...] = (
    ("name", NAME, "characters", "skill name, memory key and kind, tag, agent id and label, principal, tool name"),
    ("reference", REF, "characters", "a skill, memory or failure given by name, key, id or hash prefix"),
    ("graph node", NODE, "characters", "KIND:REF (kaos graph, MCP related)"),
    ("text", TEXT, "characters", "skill description and template, memory content, failure message"),
    ("query", QUERY, "characters", "search query, a query recorded for graph pruning"),
    ("task", TASK, "characters", "the task of a search or an outcome"),
    ("conclusion", CONCLUSION, "characters", "an episode's conclusion"),
    ("reason", REASON, "characters", "a coordination vote's or abort's reason, a policy's enable or disable reason"),
    ("diagnosis", DIAGNOSIS, "characters", "a hand-set root cause or suggested action, a fix's summary"),
    ("action", ACTION, "characters", "a coordination intent's action"),
    ("path", PATH, "characters", "a bundled file's path (skill file, MCP skill_file)"),
    ("metadata", METADATA_BYTES, "bytes of JSON", "memory metadata, coordination meta"),
    ("tags", TAGS, "items", "tags on one skill"),
    ("citations", CITATIONS, "items", "citations at one episode end"),
    ("parameters", PARAMS, "items", "parameters of one skill apply (each value at most the text cap)"),
    ("outcomes", OUTCOMES, "items", "outcomes in one record_outcomes call"),
    ("preference key", PREFERENCE_KEY, "characters", "a preference's key"),
    ("preference value", PREFERENCE_VALUE, "characters", "a preference's statement"),
)


def capped(value: str, what: str, limit: int) -> str:
    """``value`` when it is at most ``limit`` characters, else InvalidInputError naming ``what``."""
    if len(value) > limit:
        raise InvalidInputError(f"{what} is {len(value)} characters; the limit is {limit}")
    return value


def capped_optional(value: str | None, what: str, limit: int) -> str | None:
    return None if value is None else capped(value, what, limit)


def capped_count(items: Sized, what: str, limit: int) -> None:
    """InvalidInputError when ``items`` holds more than ``limit`` entries."""
    if len(items) > limit:
        raise InvalidInputError(f"{len(items)} {what} given; the limit is {limit}")
