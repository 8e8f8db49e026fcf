"""`kaos agent …` (episodes) and `kaos record-outcome` (the telemetry fast path)."""

from __future__ import annotations

import json
import sys
from enum import StrEnum
from typing import Annotated

import typer

from ..episode_cost import EpisodeCost
from ..episodes import EndResult, Episode
from ..errors import InvalidInputError, KaosError
from . import output
from .common import DbOption, JsonOption, free_text, one_of, open_for_read, open_for_write, wants_json

app = typer.Typer(help="Agent sessions (episodes): start, end, inspect.", no_args_is_help=True)

AgentId = Annotated[str, typer.Argument(help="Agent id.", show_default=False)]
Conclusion = Annotated[str | None, typer.Option("--conclusion", help="What the agent concluded.", show_default=False)]
Cite = Annotated[
    list[str] | None,
    typer.Option("--cite", help="KIND:NAME the agent relied on (skill:NAME, memory:KEY); repeatable.",
                 show_default=False),
]
TokensIn = Annotated[int | None, typer.Option("--tokens-in", min=0, help="Input tokens the episode used.",
                                              show_default=False)]
TokensOut = Annotated[int | None, typer.Option("--tokens-out", min=0, help="Output tokens the episode produced.",
                                               show_default=False)]
ToolCalls = Annotated[int | None, typer.Option("--tool-calls", min=0, help="Tool calls the episode made.",
                                               show_default=False)]
Duration = Annotated[float | None, typer.Option(
    "--duration", min=0.0, help="Seconds the episode took (default: since it started).", show_default=False)]


class StateChoice(StrEnum):
    running = "running"
    completed = "completed"
    failed = "failed"
    killed = "killed"


def episode_rows(ep: Episode) -> list[tuple[str, object]]:
    return [
        ("id", ep.id),
        ("name", ep.name),
        ("state", ep.state),
        ("started", output.when(ep.started_at)),
        ("ended", output.when(ep.ended_at)),
        ("conclusion", ep.conclusion),
        ("citations", [f"{k}:{v}" for k, v in ep.citations]),
        ("tokens in / out", f"{_count(ep.tokens_in)} / {_count(ep.tokens_out)}"),
        ("tool calls", _count(ep.tool_calls)),
        ("duration", "-" if ep.duration_s is None else f"{ep.duration_s:.1f} s"),
    ]


def _count(value: int | None) -> str:
    return "-" if value is None else f"{value:,}"


def parse_citations(values: list[str] | None) -> list[tuple[str, str]]:
    from ..errors import InvalidInputError

    pairs = []
    for value in values or []:
        kind, sep, ref = value.partition(":")
        if not sep:
            raise InvalidInputError(f"--cite expects KIND:NAME, got {value!r}")
        pairs.append((kind.strip(), ref))
    return pairs


@app.command("start")
def start(
    ctx: typer.Context,
    agent_id: Annotated[str | None, typer.Option("--id", help="Agent id (default: a new random id).")] = None,
    name: Annotated[str | None, typer.Option("--name", help="A label for people.")] = None,
    db: DbOption = None,
    json_out: JsonOption = False,
) -> None:
    """Start an agent session and print its id.

    Example: kaos agent start --id run-42 --name "nightly ETL"
    """
    with open_for_write(ctx, db, create=True) as lib:
        ep = lib.episodes.start(agent_id, name)
    if wants_json(ctx, json_out):
        output.emit_json(ep.to_dict())
        return
    typer.echo(ep.id)


def _end(ctx: typer.Context, db: str | None, agent_id: str, state: str, conclusion: str | None,
         cite: list[str] | None, json_out: bool, cost: EpisodeCost) -> None:
    with open_for_write(ctx, db) as lib:
        result: EndResult = lib.episodes.end(agent_id, state, conclusion, parse_citations(cite), cost=cost)
    _report_end(ctx, result, state, json_out)


def _report_end(ctx: typer.Context, result: EndResult, state: str, json_out: bool) -> None:
    if wants_json(ctx, json_out):
        output.emit_json(result.to_dict())
        return
    ep = result.episode
    if not result.changed:
        output.message(f"agent {ep.id} had already ended ({ep.state}); nothing changed")
        return
    learned = f"learned: {result.pairs} co-activation pairs, {result.strengthened} edges strengthened"
    summary = learned if result.learned else f"nothing learned ({result.gate_reason})"
    output.message(f"agent {ep.id} {state}; {summary}")


@app.command("complete")
def complete(ctx: typer.Context, agent_id: AgentId, conclusion: Conclusion = None, cite: Cite = None,
             tokens_in: TokensIn = None, tokens_out: TokensOut = None, tool_calls: ToolCalls = None,
             duration: Duration = None, db: DbOption = None, json_out: JsonOption = False) -> None:
    """End a session successfully; its co-used skills and memories are reinforced (if the gate passes).

    Example: kaos agent complete run-42 --cite skill:csv-to-parquet --tokens-in 5200 --tokens-out 800 --tool-calls 7
    """
    _end(ctx, db, agent_id, "completed", conclusion, cite, json_out,
         EpisodeCost(tokens_in, tokens_out, tool_calls, duration))


@app.command("fail")
def fail(
    ctx: typer.Context,
    agent_id: AgentId,
    conclusion: Conclusion = None,
    cite: Cite = None,
    tool: Annotated[str | None, typer.Option("--tool", help="The tool that failed (with --error).")] = None,
    error: Annotated[str | None, typer.Option("--error", help="Its error message; '-' reads stdin.")] = None,
    tokens_in: TokensIn = None,
    tokens_out: TokensOut = None,
    tool_calls: ToolCalls = None,
    duration: Duration = None,
    db: DbOption = None,
    json_out: JsonOption = False,
) -> None:
    """End a session as failed: recorded, nothing reinforced; --tool/--error also record the failure.

    Example: kaos agent fail run-42 --tool http_post --error "HTTP 429 Too Many Requests"
    """
    if error is not None:
        error = free_text(error, "error message")
    with open_for_write(ctx, db) as lib:
        result: EndResult = lib.episodes.fail(agent_id, conclusion, parse_citations(cite), tool=tool, error=error,
                                              cost=EpisodeCost(tokens_in, tokens_out, tool_calls, duration))
    _report_end(ctx, result, "failed", json_out)


@app.command("kill")
def kill(ctx: typer.Context, agent_id: AgentId, conclusion: Conclusion = None, cite: Cite = None,
         tokens_in: TokensIn = None, tokens_out: TokensOut = None, tool_calls: ToolCalls = None,
         duration: Duration = None, db: DbOption = None, json_out: JsonOption = False) -> None:
    """End a session as killed: recorded, nothing reinforced.

    Example: kaos agent kill run-42 --tool-calls 40
    """
    _end(ctx, db, agent_id, "killed", conclusion, cite, json_out,
         EpisodeCost(tokens_in, tokens_out, tool_calls, duration))


@app.command("show")
def show(ctx: typer.Context, agent_id: AgentId, db: DbOption = None, json_out: JsonOption = False) -> None:
    """One session: state, outcomes per skill, memories its searches returned (read-only).

    Example: kaos agent show run-42
    """
    from ..validation import stored_report

    with open_for_read(ctx, db) as lib:
        ep = lib.episodes.get(agent_id)
        activity = lib.episodes.activity(agent_id)
        validation = stored_report(lib.conn, ep.id)
    if wants_json(ctx, json_out):
        output.emit_json({**ep.to_dict(), **activity, "validation": validation})
        return
    gate_rows: list[tuple[str, object]] = []
    if validation is not None:
        gate_rows = [
            ("gate", ("passed" if validation["passed"] else "rejected") + f": {validation['reason']}"),
            ("trust", validation["trust"]),
            ("novelty", validation["novelty"]),
        ]
    output.fields(f"agent {ep.id}", episode_rows(ep) + [("skill hits", activity["skill_hits"])] + gate_rows)
    if validation is not None:
        output.table("validators", ["validator", "kind", "score", "passed", "threshold", "reason"], (
            [v["validator"], v["kind"], v["score"] if v["enabled"] else "off", v["passed"], v["threshold"],
             v["reason"]] for v in validation["validators"]))
    output.table("outcomes", ["skill id", "name", "uses", "successes"],
                 ([s["skill_id"], s["name"], s["uses"], s["successes"]] for s in activity["skills"]))
    output.table("memories hit", ["memory id", "key", "hits"],
                 ([m["memory_id"], m["key"], m["hits"]] for m in activity["memories"]))


@app.command("list")
def list_(
    ctx: typer.Context,
    state: Annotated[StateChoice | None, typer.Option(help="Only sessions in this state.")] = None,
    limit: Annotated[int | None, typer.Option(min=0, help="At most this many.")] = None,
    db: DbOption = None,
    json_out: JsonOption = False,
) -> None:
    """Sessions, newest first (read-only).

    Example: kaos agent list --state running
    """
    with open_for_read(ctx, db) as lib:
        episodes = lib.episodes.list(state=state.value if state else None, limit=limit)
    if wants_json(ctx, json_out):
        output.emit_json([e.to_dict() for e in episodes])
        return
    output.table("agents", ["id", "name", "state", "started", "ended"],
                 ([e.id, e.name, e.state, output.when(e.started_at), output.when(e.ended_at)] for e in episodes))


def record_outcome(
    ctx: typer.Context,
    skill: Annotated[
        str | None, typer.Argument(help="Skill name or id (not with --stdin).", show_default=False)
    ] = None,
    success: Annotated[bool, typer.Option("--success", help="Applying the skill worked.")] = False,
    failure: Annotated[bool, typer.Option("--failure", help="Applying the skill did not work.")] = False,
    agent: Annotated[
        str | None, typer.Option("--agent", help="Agent id (registered if new); with --stdin, for lines without one.")
    ] = None,
    task: Annotated[
        str | None,
        typer.Option("--task", help="The task it was applied to (default: the agent's search that returned it)."),
    ] = None,
    stdin: Annotated[
        bool,
        typer.Option("--stdin", help='Read many outcomes as JSON Lines ({"skill": …, "success": true, "agent": …, '
                     '"task": …}) and record them in one transaction: all or nothing.'),
    ] = False,
    db: DbOption = None,
    json_out: JsonOption = False,
) -> None:
    """Report whether applying a skill worked (one telemetry row; weighted search learns from it).

    Example: kaos record-outcome csv-to-parquet --success --agent run-42 --task "convert csv to parquet"

    Many at once: kaos record-outcome --stdin --agent run-42 < outcomes.jsonl
    """
    if stdin:
        if skill is not None or success or failure or task is not None:
            raise typer.BadParameter("with --stdin each line gives skill, success and task; pass only --agent",
                                     param_hint="--stdin")
        record_outcome_lines(ctx, sys.stdin.read(), agent, db, json_out)
        return
    if skill is None:
        raise typer.BadParameter("name the skill, or pass --stdin", param_hint="SKILL")
    success = one_of(success, failure, "--success", "--failure")
    with open_for_write(ctx, db, create=True) as lib:
        outcome = lib.record_outcome(skill, success, agent=agent, task=task)
    if wants_json(ctx, json_out):
        output.emit_json(outcome.to_dict())
        return
    output.message(f"recorded {'success' if success else 'failure'} of skill {outcome.skill_id}"
                   + (f" for agent {outcome.agent_id}" if outcome.agent_id else ""))


def outcome_lines(text: str, agent: str | None) -> tuple[list[dict[str, object]], list[int]]:
    """The JSON objects of ``text``, one a line (blank lines skipped), each given ``agent`` when it
    names none, and the line number of each; a malformed line is an error naming it."""
    items: list[dict[str, object]] = []
    numbers: list[int] = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InvalidInputError(f"line {number}: not valid JSON ({exc.msg} at column {exc.colno})") from None
        if not isinstance(item, dict):
            raise InvalidInputError(f"line {number}: expected a JSON object, got {type(item).__name__}")
        if agent is not None and item.get("agent") is None:
            item["agent"] = agent
        items.append(item)
        numbers.append(number)
    if not items:
        raise InvalidInputError("no outcomes on stdin (one JSON object a line)")
    return items, numbers


def record_outcome_lines(ctx: typer.Context, text: str, agent: str | None, db: str | None, json_out: bool) -> None:
    items, numbers = outcome_lines(text, agent)
    with open_for_write(ctx, db, create=True) as lib:
        try:
            outcomes = lib.record_outcomes(items)
        except KaosError as exc:  # "outcome N: …" names the item; say which line it came from
            head, sep, rest = str(exc).partition(": ")
            if sep and head.startswith("outcome ") and head[8:].isdigit():
                raise type(exc)(f"line {numbers[int(head[8:]) - 1]}: {rest}") from None
            raise
    if wants_json(ctx, json_out):
        output.emit_json([o.to_dict() for o in outcomes])
        return
    wins = sum(o.success for o in outcomes)
    output.message(f"recorded {len(outcomes)} outcomes ({wins} successes, {len(outcomes) - wins} failures)")
