"""`kaos mcp serve`: the library as Model Context Protocol tools, over stdio.

Needs the optional ``mcp`` package (``pip install "kaos-dream[mcp]"``); importing this module without
it raises ``ModuleNotFoundError`` and the CLI turns that into a one-line install hint.

The protocol layer only declares each tool's JSON schema (from the annotated signature) and its
description, and maps errors; what a tool does lives in :mod:`kaos_dream.agent_tools`.

**One connection per server, calls serialised.** A stdio server belongs to one client (one agent
host), so concurrency between agents is concurrency between *processes*: each server has its own
connection, and the engine orders their writes exactly as for many ``kaos`` commands at once: on a
SQLite file its WAL, ``BEGIN IMMEDIATE`` and busy timeout; on PostgreSQL one advisory write lock per
database, waited for at most the same busy timeout (servers on many hosts share one library). A
server restarted under a PostgreSQL library costs the next call a reconnect, never a half-written
call (store/postgres/adapter.py). Inside one server the SDK runs synchronous tools on worker
threads and may run two calls at once; a shared connection must then not be used by two threads at
the same time, because ``transaction()`` *joins* a transaction that is already open on the
connection — a second thread would commit or roll back the first one's half-done work. So every
call takes one lock, and any transaction a call left open is rolled back before the lock is
released. Keeping the connection (instead of opening the file per call) keeps the graph's CSR cache
(keyed on the edges' own change counter, so it sees other processes' edge writes) and the LLM client warm, and a bad
file is reported once at start-up instead of on every call. Between calls the connection is in
autocommit with no open read transaction, so it holds no lock and never blocks other processes (on
either engine).
The price: with ``ANTHROPIC_API_KEY`` set, a call that waits on the LLM (diagnosing a failure seen
for the first time, LLM validators at episode end) delays this client's next call by up to
``KAOS_LLM_TIMEOUT_S`` per LLM question — a wall-clock deadline however the model server behaves
(hangs, trickles, Retry-After) — so a stuck model never blocks the server for longer; other servers
are not affected (no write lock is held during LLM calls).

**Identity.** A server acts only on the episodes it started (``agent_start``) or that its
configuration names (``kaos mcp serve --agent ID``, ``KAOS_MCP_AGENTS``): ending, reporting outcomes,
recording hits or failures for any other episode is refused with an error that says so. Every
episode it opens names the server's principal (``kaos mcp serve --principal``, ``KAOS_PRINCIPAL``,
else user@host), so a client that opens many episodes is still one vote in the dream's prune and
promotion rules, and it may hold at most ``KAOS_PRINCIPAL_MAX_OPEN_EPISODES`` of them at once.
"""

from __future__ import annotations

import inspect
import logging
import sqlite3
import threading
from collections.abc import Callable, Iterable
from typing import Annotated, Any, Literal, TypeVar

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp_types import ToolAnnotations
from pydantic import Field, ValidationError

from . import __version__, limits
from . import agent_tools as tools
from .agent_skills.bundle import MAX_FILE_READ
from .episode_cost import MAX_COUNT, MAX_DURATION_S, EpisodeCost
from .errors import KaosError
from .failures.records import MAX_TOOL_CHARS
from .library import Library
from .store.connect import connection_path, describe_sqlite_error

log = logging.getLogger("kaos_dream.mcp")

T = TypeVar("T")

INSTRUCTIONS = (
    "kaos-dream: a skill and memory library that learns from use. Typical episode: agent_start, search "
    "(record_hits=true, agent=…), skill_get/skill_apply, record_outcome for each skill you applied, "
    "failure_lookup / failure_record when a tool fails (fix_outcome once you tried the fix it suggested), then "
    "agent_end with what the episode cost. Check alerts_check before spawning "
    "more agents. This server acts only on the episodes it started (or that its configuration names). "
    "Reviewing merges and promotions, confirming model-written diagnoses, applying dream proposals and "
    "acknowledging or resolving alerts are human-only: they are CLI commands (kaos dream merges, kaos dream "
    "promotions, kaos dream diagnose --confirm, kaos dream run --apply, kaos dream systemic), not tools."
)

READ = ToolAnnotations(read_only_hint=True, open_world_hint=False)
WRITE = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)
SEARCH = WRITE  # reads, unless record_hits is set

Agent = Annotated[
    str | None,
    Field(description="Your episode (agent) id, from agent_start; telemetry is attributed to it.",
          max_length=limits.NAME),
]
Limit = Annotated[int, Field(ge=0, le=tools.MAX_LIMIT, description="At most this many results.")]
# Every field has the cap the library enforces for the CLI too (kaos_dream/limits.py, issue 33 item 5;
# docs/cli.md and docs/mcp.md list them): the schema declares it, so a client sees it, and a field past it
# is refused before any library call. What a schema cannot say (metadata's size in bytes, the fields
# inside record_outcomes' items) the library refuses as a tool error with the same message as the CLI's.
Tool = Annotated[str, Field(description="The tool or command that failed, e.g. 'http_get' or 'pytest'.",
                            max_length=MAX_TOOL_CHARS)]
Message = Annotated[str, Field(description="The error text (a traceback is fine; it is normalised).",
                               max_length=limits.TEXT)]
SkillRef = Annotated[str, Field(description="Skill name or id.", max_length=limits.REF)]
Task = Annotated[str | None, Field(description="The task it was applied to (default: your latest search that "
                                   "returned this skill).", max_length=limits.TASK)]


class LibraryGate:
    """Runs library calls one at a time on one :class:`Library` and turns errors into tool errors."""

    def __init__(self, lib: Library, scope: tools.EpisodeScope | None = None) -> None:
        self.lib = lib
        self.scope = scope or tools.EpisodeScope()
        self._lock = threading.Lock()

    def call_as(self, agent: str | None, action: str, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
        """:meth:`call`, after checking that this server may ``action`` on episode ``agent``."""

        def scoped(lib: Library, *a: Any, **kw: Any) -> T:
            self.scope.check(agent, action)
            return fn(lib, *a, **kw)

        scoped.__name__ = getattr(fn, "__name__", "call")
        return self.call(scoped, *args, **kwargs)

    def call(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
        with self._lock:
            try:
                return tools.iso_timestamps(fn(self.lib, *args, **kwargs))
            except KaosError as exc:
                raise ToolError(str(exc)) from None
            except sqlite3.Error as exc:
                raise ToolError(describe_sqlite_error(exc, connection_path(self.lib.conn))) from None
            except Exception as exc:  # a bug, not bad input: keep serving, say what broke
                log.exception("internal error in %s", getattr(fn, "__name__", fn))
                raise ToolError(f"internal error: {type(exc).__name__}: {exc}") from None
            finally:
                if self.lib.conn.in_transaction:
                    self.lib.conn.execute("ROLLBACK")


def concise_validation(exc: ValidationError) -> str:
    """Pydantic's report, one clause per bad argument, without its documentation links."""
    parts = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err["loc"]) or "arguments"
        parts.append(f"{where}: required" if err["type"] == "missing" else f"{where}: {err['msg']}")
    return "invalid arguments: " + "; ".join(parts)


class KaosMCPServer(MCPServer):
    """MCPServer that also rejects unknown argument names (a typo must not silently use a default)
    and reports schema violations in one line."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.argument_names: dict[str, frozenset[str]] = {}

    def register(self, fn: Callable[..., Any], annotations: ToolAnnotations) -> None:
        self.add_tool(fn, annotations=annotations)
        self.argument_names[fn.__name__] = frozenset(inspect.signature(fn).parameters)

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        allowed = self.argument_names.get(name)
        if allowed is not None:
            unknown = sorted(set(arguments) - allowed)
            if unknown:
                raise ToolError(
                    f"Error executing tool {name}: unknown argument(s) {', '.join(unknown)}"
                    f" (this tool takes: {', '.join(sorted(allowed)) or 'nothing'})"
                )
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if isinstance(exc, UnexpectedToolError) or not isinstance(exc.__cause__, ValidationError):
                raise
            raise ToolError(f"Error executing tool {name}: {concise_validation(exc.__cause__)}") from None


def build_server(lib: Library, agents: Iterable[str] = ()) -> KaosMCPServer:
    """An MCP server whose tools act on ``lib`` (one call at a time), on the episodes it starts and on
    ``agents`` (with those of ``KAOS_MCP_AGENTS``)."""
    named = [*agents, *lib.settings.mcp_agents.split(",")]
    gate = LibraryGate(lib, tools.EpisodeScope(named))
    server = KaosMCPServer("kaos-dream", version=__version__, instructions=INSTRUCTIONS, log_level="WARNING")

    def search(
        query: Annotated[str, Field(description="Any text; it is made safe for full-text search.",
                                    max_length=limits.QUERY)],
        kind: Annotated[Literal["all", "skill", "memory"], Field(description="What to search.")] = "all",
        limit: Limit = 10,
        rank: Annotated[
            Literal["weighted", "wilson", "bm25"] | None,
            Field(description="weighted: relevance x recent outcomes (default); wilson: the seed "
                  "formula; bm25: text relevance only."),
        ] = None,
        explore: Annotated[
            bool, Field(description="Weighted only: rank skills by a seeded Thompson draw from their recent record, "
                        "so untried alternatives get tried sometimes. Off by default.")
        ] = False,
        seed: Annotated[
            int | None, Field(ge=0, le=2**32 - 1, description="Seed of the explore draw (default: the library's "
                              "setting); the same seed and data give the same order.")
        ] = None,
        expand: Annotated[
            int, Field(ge=0, le=tools.MAX_LIMIT, description="Let the causal graph append up to N related items "
                       "after the ranked results (never reordering them); 0 = off.")
        ] = 0,
        mode: Annotated[
            Literal["additive", "gated", "adaptive"], Field(description="Activation mode for expand.")
        ] = "gated",
        record_hits: Annotated[
            bool, Field(description="Record what this search returned to you (pass agent): it feeds the episode's "
                        "learning and gives record_outcome its task context.")
        ] = False,
        agent: Agent = None,
        task: Annotated[
            str | None, Field(description="Rank by outcomes on this task (default: the query itself).",
                              max_length=limits.TASK)
        ] = None,
        min_relevance: Annotated[
            float | None, Field(ge=0.0, le=1.0, description="Leave out results whose relevance (the calibrated "
                                "chance that a result answers the query) is below this; default: the library's "
                                "setting. no_confident_match is true when nothing is left.")
        ] = None,
    ) -> dict[str, Any]:
        """Find skills and memories for a task, best first, with each skill's uses/successes and a relevance
        in [0, 1]. no_confident_match says when nothing fits. Writes only with record_hits."""
        return gate.call_as(agent if record_hits else None, "record hits for it", tools.search, query, kind=kind,
                            limit=limit, rank=rank, expand=expand, mode=mode, record_hits=record_hits, agent=agent,
                            task=task, explore=explore, seed=seed, min_relevance=min_relevance)

    def record_outcome(
        skill: SkillRef,
        success: Annotated[bool, Field(description="Did applying the skill work?")],
        agent: Agent = None,
        task: Task = None,
    ) -> dict[str, Any]:
        """Report whether applying a skill worked. Proven skills rise in search, failing ones sink."""
        return gate.call_as(agent, "record outcomes for it", tools.record_outcome, skill, success, agent=agent,
                            task=task)

    def record_outcomes(
        outcomes: Annotated[
            list[dict[str, Any]],
            Field(description='Each {"skill": name or id, "success": true or false, "task": optional text} '
                  f'(skill at most {limits.REF} characters, task at most {limits.TASK}).',
                  max_length=limits.OUTCOMES),
        ],
        agent: Agent = None,
    ) -> dict[str, Any]:
        """Report many outcomes at once (one transaction: all are recorded or, on a bad item, none).
        Cheaper than one record_outcome call each at the end of a step that applied several skills."""
        return gate.call_as(agent, "record outcomes for it", tools.record_outcomes, outcomes, agent=agent)

    def agent_start(
        agent: Annotated[
            str | None, Field(description="Episode id to use (default: a new random id).", max_length=limits.NAME)
        ] = None,
        name: Annotated[str | None, Field(description="A label for people.", max_length=limits.NAME)] = None,
    ) -> dict[str, Any]:
        """Start an episode (agent session); returns its id. Pass it as agent= to the other tools, and end
        it with agent_end."""
        started = gate.call(tools.agent_start, agent, name)
        gate.scope.started.add(started["id"])
        return started

    def agent_end(
        agent: Annotated[str, Field(description="The episode id from agent_start.", max_length=limits.NAME)],
        state: Annotated[Literal["completed", "failed", "killed"], Field(description="How the episode ended.")],
        conclusion: Annotated[str | None, Field(description="What you concluded or produced.",
                                                max_length=limits.CONCLUSION)] = None,
        citations: Annotated[
            list[Annotated[str, Field(max_length=limits.NODE)]],
            Field(description="What you relied on, as KIND:REF (skill:NAME, memory:KEY, failure:ID).",
                  max_length=limits.CITATIONS)
        ] = [],  # noqa: B006  (pydantic copies defaults; this is the schema's default, never mutated)
        tool: Annotated[
            str | None, Field(description="With state=failed: the tool whose failure ended the episode.",
                              max_length=MAX_TOOL_CHARS)
        ] = None,
        message: Annotated[
            str | None, Field(description="With state=failed: that failure's error text (as in failure_record).",
                              max_length=limits.TEXT)
        ] = None,
        error_tool: Annotated[str | None, Field(description="Older name of tool, still accepted.",
                                                max_length=MAX_TOOL_CHARS)] = None,
        error: Annotated[str | None, Field(description="Older name of message, still accepted.",
                                           max_length=limits.TEXT)] = None,
        tokens_in: Annotated[
            int | None, Field(ge=0, le=MAX_COUNT, description="Input tokens the episode used.")] = None,
        tokens_out: Annotated[
            int | None, Field(ge=0, le=MAX_COUNT, description="Output tokens the episode produced.")] = None,
        tool_calls: Annotated[int | None, Field(ge=0, le=MAX_COUNT, description="Tool calls the episode made.")] = None,
        duration_s: Annotated[
            float | None, Field(ge=0, le=MAX_DURATION_S, description="Seconds it took (default: since agent_start).")
        ] = None,
    ) -> dict[str, Any]:
        """End your episode. Only a completed episode that passes validation reinforces the skills and
        memories it used; failed and killed ones are recorded without reinforcing anything. With state=failed,
        tool + message record the failure first. Report what the episode cost (tokens, tool calls,
        duration) here: it is shown in reports, never used for ranking. Ending an ended episode changes nothing."""
        cost = EpisodeCost(tokens_in, tokens_out, tool_calls, duration_s)
        return gate.call_as(agent, "end it", tools.agent_end, agent, state, conclusion=conclusion,
                            citations=citations, tool=tool, message=message, error_tool=error_tool, error=error,
                            cost=cost)

    def fix_outcome(
        failure: Annotated[str, Field(description="The failure's fingerprint id or hash prefix (from "
                                      "failure_record or failure_lookup).", max_length=limits.REF)],
        worked: Annotated[bool, Field(description="Did applying the suggested fix work?")],
        agent: Annotated[str, Field(description="Your episode id, from agent_start.", max_length=limits.NAME)],
    ) -> dict[str, Any]:
        """Report whether the fix failure_record or failure_lookup suggested worked for you. A fix that
        keeps failing is withdrawn, so the next agent gets the diagnosis instead of a bad fix."""
        return gate.call_as(agent, "report fix outcomes for it", tools.fix_outcome, failure, worked, agent)

    def failure_record(tool: Tool, message: Message, agent: Agent = None) -> dict[str, Any]:
        """Record a failure you hit: returns its fingerprint, diagnosis (category, root cause, suggested
        action), the current fix and skills known to prevent it, and alert_id if this failure just raised
        a systemic alert."""
        return gate.call_as(agent, "record failures for it", tools.failure_record, tool, message, agent)

    def failure_lookup(tool: Tool, message: Message) -> dict[str, Any]:
        """What is known about an error before you act on it: diagnosis, current fix, preventing skills
        (known=false if never seen). Read-only."""
        return gate.call(tools.failure_lookup, tool, message)

    def alerts_check(
        include_acked: Annotated[bool, Field(description="Count alerts a human already acknowledged.")] = True,
    ) -> dict[str, Any]:
        """Open systemic alerts (many agents failing the same way); clear=true when none. Call before
        spawning agents. Read-only: acknowledging and resolving alerts is human-only (kaos dream systemic)."""
        return gate.call(tools.alerts_check, include_acked=include_acked)

    def related(
        node: Annotated[str, Field(description="KIND:REF, e.g. skill:csv-to-parquet, memory:s3-throttle, failure:12.",
                                   max_length=limits.NODE)],
        relation: Annotated[
            Literal["co_occurs_with", "caused", "enabled", "prevented", "fact", "meta"] | None,
            Field(description="Only this relation."),
        ] = None,
        direction: Annotated[Literal["out", "in", "both"], Field(description="Edge direction from the node.")] = "both",
        limit: Limit = 10,
        include_deprecated: Annotated[
            bool, Field(description="Also list deprecated skills (each neighbour says deprecated true/false).")
        ] = False,
    ) -> dict[str, Any]:
        """Graph neighbours of a skill, memory or failure, strongest edge first; deprecated skills only
        when include_deprecated. Read-only."""
        return gate.call(tools.related, node, relation=relation, direction=direction, limit=limit,
                         include_deprecated=include_deprecated)

    def skill_get(skill: SkillRef) -> dict[str, Any]:
        """A skill's description, template (its body: the instructions), template parameters and its
        bundled files' list (path, size, sha256; read one with skill_file). Read-only."""
        return gate.call(tools.skill_get, skill)

    def skill_file(
        skill: SkillRef,
        path: Annotated[str, Field(description="The bundled file's path inside the skill, as skill_get lists it.",
                                   max_length=limits.PATH)],
        max_bytes: Annotated[int | None, Field(description=f"Return at most this many bytes (cap {MAX_FILE_READ}; "
                                               "a larger value returns that many).")] = None,
    ) -> dict[str, Any]:
        """One bundled file of a skill (scripts/, references/, assets/): UTF-8 text as text, other bytes as
        base64; truncated says the file is longer than what was returned. Read-only."""
        return gate.call(tools.skill_file, skill, path, max_bytes)

    def skill_apply(
        skill: SkillRef,
        params: Annotated[
            dict[Annotated[str, Field(max_length=limits.NAME)],
                 Annotated[str, Field(max_length=limits.PARAM_VALUE)] | int | float | bool] | None,
            Field(description="Values for the template's {placeholders}; every placeholder is required.",
                  max_length=limits.PARAMS),
        ] = None,
    ) -> dict[str, Any]:
        """Render a skill's template with parameters. Records nothing: report how it went with
        record_outcome."""
        return gate.call(tools.skill_apply, skill, params)

    def memory_add(
        content: Annotated[str, Field(description="The observation, result or note.", max_length=limits.TEXT)],
        kind: Annotated[str, Field(description="A label such as note, insight, result.",
                                   max_length=limits.NAME)] = "note",
        key: Annotated[str | None, Field(description="Unique key (default: derived from kind and content).",
                                         max_length=limits.NAME)] = None,
        metadata: Annotated[dict[str, Any] | None, Field(
            description=f"A JSON object stored with it (at most {limits.METADATA_BYTES} bytes as compact JSON).")
        ] = None,
    ) -> dict[str, Any]:
        """Store a memory for later searches."""
        return gate.call(tools.memory_add, content, kind=kind, key=key, metadata=metadata)

    def dream_status() -> dict[str, Any]:
        """What the library has learned (episodes, graph edges, telemetry), the dream's state (cycle, due,
        last run, pending proposals) and open alerts. Read-only: running the dream with --apply, accepting
        merges and applying proposals are human-only (kaos dream run / merges / proposals)."""
        return gate.call(tools.dream_status)

    for fn, kind in (
        (agent_start, WRITE), (search, SEARCH), (skill_get, READ), (skill_file, READ), (skill_apply, READ),
        (record_outcome, WRITE),
        (record_outcomes, WRITE),
        (memory_add, WRITE), (failure_lookup, READ), (failure_record, WRITE), (fix_outcome, WRITE), (agent_end, WRITE),
        (alerts_check, READ), (related, READ), (dream_status, READ),
    ):
        server.register(fn, kind)
    return server


def serve(db: str | None, agents: Iterable[str] = (), principal: str | None = None) -> None:
    """Open the library (creating it if needed) and serve MCP on stdin/stdout until the client leaves.
    Every episode the client opens names ``principal`` (else KAOS_PRINCIPAL, else user@host)."""
    lib = Library(db, principal=principal)
    try:
        build_server(lib, agents).run("stdio")
    finally:
        lib.close()
