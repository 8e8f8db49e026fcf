"""`kaos log …` (the coordination log) and `kaos policy …` (policies mined from it)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Annotated

import typer

from ..coordination import CoordinationLog, LogEntry
from ..policies import Policy
from . import output
from .common import DbOption, JsonOption, free_text, one_of, open_for_read, open_for_write, show_entry, wants_json

log_app = typer.Typer(help="The coordination log: intents, votes, decisions, commits, aborts, results.",
                      no_args_is_help=True)
policy_app = typer.Typer(help="Policies: actions the team reliably approves, mined by the dream.",
                         no_args_is_help=True)

Agent = Annotated[str, typer.Argument(help="Who is writing the entry.", show_default=False)]
Intent = Annotated[int, typer.Argument(help="Log position of the intent.", show_default=False)]
Meta = Annotated[str | None, typer.Option("--meta", help="Metadata as a JSON object.")]
Reason = Annotated[str | None, typer.Option("--reason", help="Why.")]

COLUMNS = ["pos", "kind", "agent", "intent", "action / outcome", "by policy", "when"]


def _row(e: LogEntry) -> list[object]:
    if e.kind == "intent":
        what = e.action
    elif e.approve is not None:
        what = ("approve" if e.approve else "reject") + (f": {e.reason}" if e.reason else "")
    else:
        what = e.reason or (output.json_text(e.meta) if e.meta else "")
    return [e.position, e.kind, e.agent, e.intent, what, e.policy_id, output.when(e.created_at)]


def _emit(ctx: typer.Context, entries: list[LogEntry], json_out: bool, title: str) -> None:
    if wants_json(ctx, json_out):
        output.emit_json([e.to_dict() for e in entries])
    else:
        output.table(title, COLUMNS, (_row(e) for e in entries))


def _emit_one(ctx: typer.Context, entry: LogEntry, json_out: bool) -> None:
    if wants_json(ctx, json_out):
        output.emit_json(entry.to_dict())
    else:
        output.message(f"appended {entry.kind} at position {entry.position}")


@log_app.command("intent")
def intent(
    ctx: typer.Context,
    agent: Agent,
    action: Annotated[str, typer.Argument(help="What the agent intends to do; - reads it from stdin.",
                                          show_default=False)],
    meta: Meta = None,
    auto: Annotated[bool, typer.Option("--auto", help="Let an enabled matching policy approve it at once.")] = False,
    db: DbOption = None,
    json_out: JsonOption = False,
) -> None:
    """Announce an intent.

    Example: kaos log intent agent-7 "deploy staging" --auto
    """
    action = free_text(action, "intent")
    with open_for_write(ctx, db) as lib:
        if not auto:
            _emit_one(ctx, lib.log.intent(agent, action, meta), json_out)
            return
        result = lib.log.intent_auto(agent, action, meta)
    if wants_json(ctx, json_out):
        output.emit_json(result.to_dict())
    elif result.policy_id is None:
        output.message(f"appended intent at position {result.intent.position}; no enabled policy matched")
    else:
        output.message(
            f"appended intent at position {result.intent.position}; approved by policy {result.policy_id}"
        )


@log_app.command("vote")
def vote(
    ctx: typer.Context,
    agent: Agent,
    intent_pos: Intent,
    approve: Annotated[bool, typer.Option("--approve", help="Vote for the intent.")] = False,
    reject: Annotated[bool, typer.Option("--reject", help="Vote against the intent.")] = False,
    reason: Reason = None,
    db: DbOption = None,
    json_out: JsonOption = False,
) -> None:
    """Vote on an open intent (one vote per agent).

    Example: kaos log vote reviewer-1 12 --approve --reason "tests green"
    """
    approve = one_of(approve, reject, "--approve", "--reject")
    with open_for_write(ctx, db) as lib:
        _emit_one(ctx, lib.log.vote(agent, intent_pos, approve, reason), json_out)


@log_app.command("decide")
def decide(
    ctx: typer.Context,
    intent_pos: Intent,
    by: Annotated[str, typer.Option("--by", help="Who records the decision.")] = "kaos",
    db: DbOption = None,
    json_out: JsonOption = False,
) -> None:
    """Close the vote on an intent: approved iff approvals outnumber rejections.

    Example: kaos log decide 12
    """
    with open_for_write(ctx, db) as lib:
        entry = lib.log.decide(intent_pos, by)
    if wants_json(ctx, json_out):
        output.emit_json(entry.to_dict())
    else:
        verdict = "approved" if entry.approve else "rejected"
        output.message(f"intent {intent_pos} {verdict} ({entry.reason}); decision at position {entry.position}")


def _entry_command(kind: str, append: Callable[..., LogEntry], help_text: str) -> None:
    """Register ``kaos log KIND INTENT AGENT [--meta JSON]``: `commit` and `result` take the same
    arguments and differ only in the entry they append (``append``, a :class:`CoordinationLog` method)."""

    def command(ctx: typer.Context, intent_pos: Intent, agent: Agent, meta: Meta = None, db: DbOption = None,
                json_out: JsonOption = False) -> None:
        with open_for_write(ctx, db) as lib:
            _emit_one(ctx, append(lib.log, intent_pos, agent, meta), json_out)

    log_app.command(kind, help=help_text)(command)


_entry_command("commit", CoordinationLog.commit,
               "Record that an approved intent is being carried out.  Example: kaos log commit 12 agent-7")


@log_app.command("abort")
def abort(ctx: typer.Context, intent_pos: Intent, agent: Agent, reason: Reason = None, db: DbOption = None,
          json_out: JsonOption = False) -> None:
    """Abandon an intent before it is committed.  Example: kaos log abort 12 agent-7 --reason "superseded\""""
    with open_for_write(ctx, db) as lib:
        _emit_one(ctx, lib.log.abort(intent_pos, agent, reason), json_out)


_entry_command("result", CoordinationLog.result, "Record the result of a committed intent.  "
               """Example: kaos log result 12 agent-7 --meta '{"ok": true}'""")


@log_app.command("tail")
def tail(
    ctx: typer.Context,
    n: Annotated[int, typer.Option("-n", min=0, help="How many of the last entries.")] = 20,
    follow: Annotated[bool, typer.Option("--follow", "-f", help="Keep printing new entries (Ctrl-C stops).")] = False,
    idle_exit: Annotated[
        float | None, typer.Option("--idle-exit", min=0, help="With --follow: stop after this many idle seconds.")
    ] = None,
    db: DbOption = None,
    json_out: JsonOption = False,
) -> None:
    """The last entries of the log; --follow keeps polling for new ones (read-only).

    Example: kaos log tail -n 50 --follow
    """
    as_json = wants_json(ctx, json_out)
    with open_for_read(ctx, db) as lib:
        if not follow:
            _emit(ctx, lib.log.tail(n), json_out, "coordination log")
            return
        entries, last = lib.log.tail_and_cursor(n)
        if as_json:  # a stream: JSON Lines from the first entry on, so a reader parses line by line
            for e in entries:
                output.emit_json_line(e.to_dict())
        else:
            _emit(ctx, entries, json_out, "coordination log")
        idle_since = time.monotonic()
        try:
            while idle_exit is None or time.monotonic() - idle_since < idle_exit:
                fresh = lib.log.after(last)
                if fresh:
                    for e in fresh:
                        if as_json:
                            output.emit_json_line(e.to_dict())
                        else:
                            output.message("  ".join("" if v is None else str(v) for v in _row(e)))
                    last = fresh[-1].position
                    idle_since = time.monotonic()
                else:
                    time.sleep(0.25)
        except KeyboardInterrupt:
            return


@log_app.command("show")
def show(ctx: typer.Context, intent_pos: Intent, db: DbOption = None, json_out: JsonOption = False) -> None:
    """An intent and every entry about it.  Example: kaos log show 12"""
    with open_for_read(ctx, db) as lib:
        entries = lib.log.thread(intent_pos)
    _emit(ctx, entries, json_out, f"intent {intent_pos}")


def _show_policy(ctx: typer.Context, policy: Policy, json_out: bool, verb: str | None = None) -> None:
    done = f"policy {policy.id} ({policy.action_key!r}) {verb}" if verb else None
    show_entry(ctx, json_out, policy.to_dict(), done, f"policy {policy.id}", [
        ("action", policy.action_key),
        ("status", f"{policy.status} (by {policy.status_by})"),
        ("reason", policy.status_reason),
        ("approval", f"{policy.approval_rate:.0%} over {policy.support} decided intents"),
        ("applied", policy.applied_count),
        ("last applied", output.when(policy.last_applied_at)),
        ("created", output.when(policy.created_at)),
    ])


PolicyRef = Annotated[str, typer.Argument(help="Policy id or action text.", show_default=False)]


@policy_app.command("list")
def policy_list(
    ctx: typer.Context,
    status: Annotated[str | None, typer.Option(help="proposed, enabled, disabled or demoted.")] = None,
    db: DbOption = None,
    json_out: JsonOption = False,
) -> None:
    """List policies (read-only).  Example: kaos policy list --status enabled"""
    with open_for_read(ctx, db) as lib:
        policies = lib.policies.list(status)
    if wants_json(ctx, json_out):
        output.emit_json([p.to_dict() for p in policies])
        return
    output.table(
        "policies",
        ["id", "action", "status", "approval", "support", "applied"],
        ([p.id, p.action_key, p.status, f"{p.approval_rate:.0%}", p.support, p.applied_count] for p in policies),
    )


@policy_app.command("show")
def policy_show(ctx: typer.Context, ref: PolicyRef, db: DbOption = None, json_out: JsonOption = False) -> None:
    """Show one policy (read-only).  Example: kaos policy show "deploy staging\""""
    with open_for_read(ctx, db) as lib:
        policy = lib.policies.get(ref)
    _show_policy(ctx, policy, json_out)


@policy_app.command("enable")
def policy_enable(ctx: typer.Context, ref: PolicyRef, reason: Reason = None, db: DbOption = None,
                  json_out: JsonOption = False) -> None:
    """Enable a policy so `log intent --auto` may use it.  Example: kaos policy enable 3"""
    _switch_policy(ctx, db, json_out, ref, reason, enable=True)


@policy_app.command("disable")
def policy_disable(ctx: typer.Context, ref: PolicyRef, reason: Reason = None, db: DbOption = None,
                   json_out: JsonOption = False) -> None:
    """Disable a policy; the dream never re-enables it.  Example: kaos policy disable 3 --reason "risky\""""
    _switch_policy(ctx, db, json_out, ref, reason, enable=False)


def _switch_policy(ctx: typer.Context, db: str | None, json_out: bool, ref: str, reason: str | None, *,
                   enable: bool) -> None:
    with open_for_write(ctx, db) as lib:
        policies = lib.policies
        policy = policies.enable(ref, reason=reason) if enable else policies.disable(ref, reason=reason)
    _show_policy(ctx, policy, json_out, verb="enabled" if enable else "disabled")


@policy_app.command("mine")
def policy_mine(
    ctx: typer.Context,
    apply: Annotated[bool, typer.Option("--apply", help="Enable what qualifies (default: propose only).")] = False,
    db: DbOption = None,
    json_out: JsonOption = False,
) -> None:
    """Run the dream's policy-mining phase on its own.  Example: kaos policy mine --apply"""
    with open_for_write(ctx, db) as lib:
        report = lib.policies.mine(apply=apply)
    if wants_json(ctx, json_out):
        output.emit_json(report.to_dict())
    else:
        output.message(
            f"{report.actions_seen} actions seen; proposed {output.plain(report.proposed)}, "
            f"enabled {output.plain(report.enabled)}, demoted {output.plain(report.demoted)}"
        )
