"""What an agent can do with a library, as plain functions that take and return JSON-ready values.

Each function here is one agent-facing operation (search, report an outcome, record a failure, …)
built from the library's own APIs. The MCP server (``mcp_server.py``) exposes them as tools; keeping
them here means the protocol layer only declares schemas and maps errors, and the behaviour can be
tested without a protocol in between. Errors are :class:`~kaos_dream.errors.KaosError` subclasses,
exactly as the library raises them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from . import limits
from .clock import iso, representable
from .episode_cost import EpisodeCost
from .episodes import END_STATES, clean_agent_id
from .errors import InvalidInputError, NotPermittedError
from .failures.diagnosis import for_agents
from .graph.nodes import labels, resolve_node
from .skills import template_parameters
from .status import library_status

if TYPE_CHECKING:
    from .library import Library

SEARCH_KINDS = ("all", "skill", "memory")
DIRECTIONS = ("out", "in", "both")
MAX_LIMIT = 100
MAX_OUTCOMES = limits.OUTCOMES


class EpisodeScope:
    """The episodes one agent host (an MCP server) may act on: those it started with ``agent_start``
    and those its configuration names (``kaos mcp serve --agent ID``, ``KAOS_MCP_AGENTS``). Any client
    could otherwise end another agent's episode or report outcomes under another agent's id, and the
    dream's several-distinct-agents rules would count one client many times."""

    def __init__(self, named: Iterable[str] = ()) -> None:
        self.named = frozenset(clean_agent_id(a) for a in named if a.strip())
        self.started: set[str] = set()

    def check(self, agent: str | None, action: str) -> None:
        """Refuse ``action`` on ``agent`` unless this scope started or names it (None: no episode claimed)."""
        if agent is None:
            return
        agent = clean_agent_id(agent)
        if agent not in self.started and agent not in self.named:
            raise NotPermittedError(
                f"this MCP server may only act on episodes it started (agent_start) or that its configuration "
                f"names (kaos mcp serve --agent ID, KAOS_MCP_AGENTS); episode {agent!r} is neither, so it "
                f"cannot {action}")


def _check_limit(limit: int, what: str = "limit") -> int:
    if isinstance(limit, bool) or not isinstance(limit, int) or not 0 <= limit <= MAX_LIMIT:
        raise InvalidInputError(f"{what} must be a whole number from 0 to {MAX_LIMIT}")
    return limit


def search(
    lib: Library,
    query: str,
    *,
    kind: str = "all",
    limit: int = 10,
    rank: str | None = None,
    expand: int = 0,
    mode: str = "gated",
    record_hits: bool = False,
    agent: str | None = None,
    task: str | None = None,
    explore: bool = False,
    seed: int | None = None,
    min_relevance: float | None = None,
) -> dict[str, Any]:
    """Skills and memories for ``query``, best first (``rank``: weighted, wilson or bm25; default from
    settings; ``explore``: seeded Thompson sampling over the effective records, weighted only).
    ``expand`` > 0 lets graph activation append up to that many related items after the
    ranked results, never reordering or evicting them. ``record_hits`` writes one hit row per
    *returned* item, graph-added ones included (the agent saw them), attributed to ``agent``;
    without it the search only reads. Each result carries its calibrated ``relevance``; results below
    ``min_relevance`` (default: the library's setting) are left out, and ``no_confident_match`` is
    true when none is left."""
    if kind not in SEARCH_KINDS:
        raise InvalidInputError(f"unknown kind {kind!r}: use all, skill or memory")
    _check_limit(limit)
    _check_limit(expand, "expand")
    wanted = None if kind == "all" else kind
    hits = lib.search(query, kind=wanted, limit=limit, rank=rank, task=task, explore=explore, seed=seed,
                      min_relevance=min_relevance)
    returned: list[Any] = list(hits)
    if expand > 0:
        from .graph.retrieval import expand as graph_expand

        kinds = ("skill", "memory") if wanted is None else (wanted,)
        returned = graph_expand(lib, hits, extra=expand, mode=mode, kinds=kinds)
    # expand keeps the ranked hits first, in order; only what it appends comes from the graph
    results = [_hit(h) for h in hits] + [_graph_item(r) for r in returned[len(hits):]]
    if record_hits:
        lib.episodes.record_hits(returned, query, agent)
    threshold = lib.settings.min_relevance if min_relevance is None else float(min_relevance)
    return {"query": query, "results": results, "no_confident_match": not hits, "min_relevance": threshold,
            "recorded_hits": len(returned) if record_hits else 0}


def _hit(hit: Any) -> dict[str, Any]:
    return {"kind": hit.kind, "id": hit.id, "name": hit.name, "text": hit.text, "score": hit.score,
            "relevance": hit.relevance, "bm25": hit.bm25, "uses": hit.uses, "successes": hit.successes,
            "source": "lexical"}


def _graph_item(item: Any) -> dict[str, Any]:
    return {"kind": item.kind, "id": item.id, "name": item.name, "text": item.text, "score": item.score,
            "source": "graph", "via": list(item.path)}


# -- episodes and outcomes -------------------------------------------------------------------------
def record_outcome(
    lib: Library, skill: str, success: bool, *, agent: str | None = None, task: str | None = None
) -> dict[str, Any]:
    """One outcome of applying ``skill``: what weighted ranking learns from."""
    outcome = lib.record_outcome(skill, success, agent=agent, task=task)
    return {**outcome.to_dict(), "skill": lib.skills.get(outcome.skill_id).name}


def record_outcomes(lib: Library, outcomes: list[Any], *, agent: str | None = None) -> dict[str, Any]:
    """Many outcomes of one agent in one transaction (all or nothing). Items carry ``skill``,
    ``success`` and optionally ``task``; the agent is the call's, never an item's."""
    if len(outcomes) > MAX_OUTCOMES:
        raise InvalidInputError(f"at most {MAX_OUTCOMES} outcomes a call, got {len(outcomes)}")
    items = []
    for n, item in enumerate(outcomes, 1):
        if not isinstance(item, dict):
            raise InvalidInputError(f"outcome {n}: expected an object with skill and success")
        if "agent" in item:
            raise InvalidInputError(f"outcome {n}: give the agent once, as the call's agent")
        items.append({**item, "agent": agent})
    recorded = lib.record_outcomes(items)
    return {"recorded": len(recorded), "successes": sum(o.success for o in recorded),
            "outcomes": [o.to_dict() for o in recorded]}


def agent_start(lib: Library, agent: str | None = None, name: str | None = None) -> dict[str, Any]:
    return lib.episodes.start(agent, name).to_dict()


def agent_end(
    lib: Library,
    agent: str,
    state: str,
    *,
    conclusion: str | None = None,
    citations: Sequence[str] = (),
    tool: str | None = None,
    message: str | None = None,
    error_tool: str | None = None,
    error: str | None = None,
    cost: EpisodeCost | None = None,
) -> dict[str, Any]:
    """End an episode (completed, failed or killed). A failed episode may name the failure that ended
    it (``tool`` + ``message``, as :func:`failure_record` names them; ``error_tool`` and ``error`` are
    the older names, still accepted): it is recorded for the agent first, so the episode-end batch
    sees it. ``cost`` (tokens, tool calls, duration) is stored with the end. Everything is validated
    before anything is written; ending an ended episode changes nothing (and records no failure)."""
    if state not in END_STATES:
        raise InvalidInputError(f"state must be one of {', '.join(END_STATES)}")
    tool = _one_name(tool, error_tool, "tool", "error_tool")
    message = _one_name(message, error, "message", "error")
    if (tool is None) != (message is None):
        raise InvalidInputError("give both tool and message (the failure's error text), or neither")
    if tool is not None and state != "failed":
        raise InvalidInputError("tool and message are for state 'failed' only")
    cost = (cost or EpisodeCost()).checked()
    cited = parse_citations(citations)
    episode = lib.episodes.get(clean_agent_id(agent))
    failure = None
    if tool is not None and message is not None and episode.state == "running":
        failure = failure_record(lib, tool, message, episode.id)
    result = lib.episodes.end(episode.id, state, conclusion, cited, cost=cost)
    return {**result.to_dict(), "failure": failure}


def _one_name(value: str | None, alias: str | None, name: str, old: str) -> str | None:
    """An argument given under its name or its older alias (not both with different values)."""
    if alias is None:
        return value
    if value is not None and value != alias:
        raise InvalidInputError(f"{old} is the older name of {name}: give one of them")
    return alias


def fix_outcome(lib: Library, failure: str, worked: bool, agent: str) -> dict[str, Any]:
    """Whether the current fix of a failure (its fingerprint id or short hash) worked when ``agent``
    applied it; a fix that fails too often is withdrawn. The fix it applied to is in the result."""
    if not isinstance(worked, bool):
        raise InvalidInputError("worked must be true or false")
    return lib.failures.record_fix_outcome(failure, worked, agent=agent)


# -- failures ---------------------------------------------------------------------------------------
def failure_record(lib: Library, tool: str, message: str, agent: str | None = None) -> dict[str, Any]:
    """Record one failure; return its fingerprint, diagnosis, current fix and preventing skills."""
    recorded = lib.failures.record(tool, message, agent)
    out = for_agents(recorded.to_dict(), recorded.fingerprint_id)
    out["fix"] = lib.failures.get(recorded.fingerprint_id)["fix"]
    out["preventing_skills"] = lib.failures.preventing_skills(recorded.fingerprint_id)
    return out


def failure_lookup(lib: Library, tool: str, message: str) -> dict[str, Any]:
    """What is known about this error (read-only): ``known`` false when it was never recorded."""
    found = lib.failures.lookup(tool, message)
    if found is None:
        return {"known": False}
    return {"known": True, **for_agents(found.to_dict(), found.fingerprint_id)}


def alerts_check(lib: Library, *, include_acked: bool = True) -> dict[str, Any]:
    """Open systemic alerts; ``clear`` is true when there are none (ask before spawning agents)."""
    alerts = lib.failures.active_alerts()
    if not include_acked:
        alerts = [a for a in alerts if a["status"] == "active"]
    keep = ("id", "status", "fingerprint_id", "short_hash", "tool", "category", "root_cause", "suggested_action",
            "agent_count", "threshold", "window_s", "raised_at", "last_seen_at", "source", "withheld")
    shown = [for_agents(a, a["fingerprint_id"]) for a in alerts]
    return {"clear": not alerts, "alerts": [{k: a.get(k) for k in keep if k in a} for a in shown]}


# -- graph ------------------------------------------------------------------------------------------
def related(
    lib: Library, node: str, *, relation: str | None = None, direction: str = "both", limit: int = 10,
    include_deprecated: bool = False,
) -> dict[str, Any]:
    """Live typed edges touching ``node`` (``skill:NAME``, ``memory:KEY``, ``failure:ID``), strongest first.
    Deprecated skills are left out, as search leaves them out, unless ``include_deprecated`` (then marked)."""
    if direction not in DIRECTIONS:
        raise InvalidInputError("direction must be out, in or both")
    _check_limit(limit)
    target = resolve_node(lib.conn, node)
    edges = lib.graph.neighbours(target, relation=relation, direction=direction)
    others = [e.dst if e.src == target else e.src for e in edges]
    names = labels(lib.conn, set(others) | {target})
    kept = [(e, o) for e, o in zip(edges, others, strict=True) if include_deprecated or not names[o].deprecated]
    return {
        "node": str(target),
        "label": names[target].label,
        "neighbours": [
            {"node": str(other), "label": names[other].label, "relation": e.relation,
             "direction": "both" if e.relation == "co_occurs_with" else ("out" if e.src == target else "in"),
             "strength": e.strength, "provenance": e.provenance, "deprecated": names[other].deprecated}
            for e, other in kept[:limit]
        ],
    }


# -- skills and memories ----------------------------------------------------------------------------
def skill_get(lib: Library, skill: str) -> dict[str, Any]:
    """The skill with its body (``template``: the instructions) and its bundled files' list (path,
    size, sha256; fetch one with :func:`skill_file`)."""
    from .agent_skills.bundle import bundled_files

    found = lib.skills.get(skill)
    return {**found.to_dict(), "parameters": list(found.parameters), "files": bundled_files(lib.conn, found.id)}


def skill_file(lib: Library, skill: str, path: str, max_bytes: int | None = None) -> dict[str, Any]:
    """One bundled file of ``skill``: text, or base64 when it is not UTF-8, capped at ``max_bytes``
    (at most the server's cap, 256 KiB)."""
    from .agent_skills.bundle import MAX_FILE_READ, bundled_file

    found = lib.skills.get(skill)
    cap = MAX_FILE_READ if max_bytes is None else min(int(max_bytes), MAX_FILE_READ)
    return bundled_file(lib.conn, found.id, found.name, path, cap)


def skill_apply(lib: Library, skill: str, params: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The skill's template with ``params`` filled in (nothing is recorded: report the outcome later).
    A result longer than ``KAOS_MCP_MAX_RENDER_CHARS`` is refused before it is built."""
    found = lib.skills.get(skill)
    values = {str(k): "" if v is None else str(v) for k, v in (params or {}).items()}
    return {"skill_id": found.id, "name": found.name, "deprecated": found.deprecated,
            "parameters": list(template_parameters(found.template)),
            "rendered": lib.skills.render(found.id, values, lib.settings.mcp_max_render_chars)}


def memory_add(
    lib: Library, content: str, *, kind: str = "note", key: str | None = None,
    metadata: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    return lib.memories.add(content, kind=kind, key=key, metadata=metadata).to_dict()


# -- status -----------------------------------------------------------------------------------------
def dream_status(lib: Library) -> dict[str, Any]:
    """What ``kaos dream status`` shows: episodes by state, live edges, telemetry rows, the dream's
    cycle, due-ness, running lease, last run and pending proposals, fingerprints and open alerts."""
    return library_status(lib.conn, lib.settings.dream_threshold)


def iso_timestamps(value: Any) -> Any:
    """``value`` with every ``*_at`` epoch turned into ISO 8601 UTC, as the CLI prints times; the
    epoch stays beside it as ``*_at_epoch`` for a client that computes with it. Nested values too."""
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in value.items():
            if (isinstance(key, str) and key.endswith("_at") and isinstance(item, int | float)
                    and not isinstance(item, bool) and representable(float(item))):
                out[key] = iso(float(item))
                out[f"{key}_epoch"] = item
            else:
                out[key] = iso_timestamps(item)
        return out
    if isinstance(value, list | tuple):
        return [iso_timestamps(v) for v in value]
    return value


def parse_citations(citations: Sequence[str]) -> tuple[tuple[str, str], ...]:
    """``["skill:csv-to-parquet", "memory:s3-throttle"]`` to ``(kind, ref)`` pairs."""
    out: list[tuple[str, str]] = []
    for item in citations:
        kind, sep, ref = str(item).partition(":")
        kind, ref = kind.strip().lower(), ref.strip()
        if not sep or kind not in ("skill", "memory", "failure") or not ref:
            raise InvalidInputError(
                f"bad citation {item!r}: use KIND:REF with KIND skill, memory or failure (e.g. skill:csv-to-parquet)"
            )
        out.append((kind, ref))
    return tuple(out)
