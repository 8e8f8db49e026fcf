"""`kaos failure …`, `kaos alerts check` and the failure-triage `kaos dream …` commands.

Parsing and rendering only: every decision lives in ``kaos_dream.failures``. Listing commands open
the file read-only, so running them never changes it.
"""

from __future__ import annotations

import sys
from typing import Annotated, Any

import typer

from ..errors import InvalidInputError
from ..failures.diagnosis import CATEGORIES, UNREVIEWED, diagnosis_source
from . import output
from .common import (
    DbOption,
    JsonOption,
    allowed_values,
    listing,
    one_of,
    open_for_read,
    open_for_write,
    reply,
    wants_json,
)
from .dream import app as dream_app

app = typer.Typer(help="Report failures and look up what is known about them.", no_args_is_help=True)
alerts_app = typer.Typer(help="Systemic alerts: ask before spawning more agents.", no_args_is_help=True)
fix_app = typer.Typer(help="Fixes attached to failure fingerprints.", no_args_is_help=True)
dream_app.add_typer(fix_app, name="fix")

ToolOption = Annotated[str, typer.Option("--tool", "-t", help="The tool that failed (part of the fingerprint).")]
MessageArg = Annotated[
    str, typer.Argument(help="The error message, or - to read it from stdin.", show_default=False, metavar="MESSAGE")
]
FpArg = Annotated[str, typer.Argument(help="Fingerprint id or hash prefix (6+ hex characters).", metavar="FP")]
ByOption = Annotated[str | None, typer.Option("--by", help="Who did it (kept in the record).")]


def read_message(message: str) -> str:
    if message == "-":
        text = sys.stdin.read()
        if not text.strip():
            raise InvalidInputError("no error message on stdin")
        return text
    return message


def diagnosis_pairs(data: dict[str, Any]) -> list[tuple[str, Any]]:
    return [
        ("category", data["category"]),
        ("root cause", data["root_cause"]),
        ("suggested action", data["suggested_action"]),
        ("confidence", data["confidence"]),
        ("method", data["diagnostic_method"]),
        *([("learned from", f"#{data['learned_from']} (labelled by a person)")] if data.get("learned_from") else []),
        ("source", diagnosis_source(data["diagnostic_method"])),
    ]


def fix_text(fix: dict[str, Any] | None) -> str | None:
    if not fix:
        return None
    parts = [fix["summary"] or ""]
    if fix.get("skill_id") is not None:
        parts.append(f"(skill {fix['skill_id']})")
    parts.append(f"[{fix['successes']}/{fix['attempts']} worked]")
    return " ".join(p for p in parts if p)


# -- kaos failure ---------------------------------------------------------------------------------
@app.command("record")
def record(
    ctx: typer.Context,
    message: MessageArg,
    tool: ToolOption,
    agent: Annotated[str | None, typer.Option("--agent", "-a", help="Agent (episode) id that hit it.")] = None,
    db: DbOption = None,
    json_out: JsonOption = False,
) -> None:
    """Record a failure: fingerprint it, diagnose it on first sight, check for a systemic incident.

    Example: kaos failure record --tool http_get --agent a7 "HTTP 429 Too Many Requests"
    (long tracebacks: some_command 2>&1 | tail -c 1000000 | kaos failure record --tool pytest -, as a
    message holds at most 1,000,000 characters;
    a message starting with "-": kaos failure record --tool sh -- "-bash: jq: command not found")
    """
    text = read_message(message)
    with open_for_write(ctx, db, create=True) as lib:
        result = lib.failures.record(tool, text, agent)
    if wants_json(ctx, json_out):
        output.emit_json(result.to_dict())
        return
    status = "new fingerprint" if result.new else "known fingerprint"
    output.fields(f"failure {result.fingerprint_id} ({status} {result.hash[:12]})", diagnosis_pairs(result.to_dict()))
    if result.llm_note and result.diagnosis.category == "unknown":
        output.note(f"LLM diagnosis not used: {result.llm_note}")
    if result.alert_id is not None:
        output.warn(f"systemic alert {result.alert_id} raised for this failure", "bold red")


@app.command("lookup")
def lookup(
    ctx: typer.Context,
    message: MessageArg,
    tool: ToolOption,
    similar: Annotated[int, typer.Option("--similar", min=0, max=20, help="Also list up to N labelled failures "
                                         "worded differently but close in meaning (semantic search; JSON becomes "
                                         '{"match": ..., "similar": [...]}).')] = 0,
    db: DbOption = None,
    json_out: JsonOption = False,
) -> None:
    """What is known about this error: fingerprint, diagnosis, current fix (read-only; JSON null when unknown).

    Example: kaos --json failure lookup --tool http_get "HTTP 429 Too Many Requests"

    Example: kaos failure lookup --tool psql --similar 3 "could not reach the database server"
    """
    text = read_message(message)
    with open_for_read(ctx, db) as lib:
        known = lib.failures.lookup(tool, text)
        found = None if known is None else known.to_dict()
        neighbours = []
        if similar:
            from ..failures.semantic import semantic_neighbours

            neighbours = semantic_neighbours(lib, text, k=similar,
                                             exclude_id=known.fingerprint_id if known else None)
            off = lib.vectors.off_reason()
    if wants_json(ctx, json_out):
        output.emit_json({"match": found, "similar": neighbours} if similar else found)
        return
    if similar:
        _show_similar(neighbours, off)
    if found is None:
        output.message("no recorded failure matches this message", "dim")
        return
    output.fields(
        f"failure {found['fingerprint_id']} ({found['hash'][:12]}, seen {found['occurrences']}x)",
        [
            *diagnosis_pairs(found),
            ("fix", fix_text(found["fix"])),
            ("preventing skills", ", ".join(f"{p['name']} ({p['strength']:.2f})" for p in found["preventing_skills"])
             or None),
        ],
    )


@app.command("explain")
def explain(
    ctx: typer.Context,
    message: MessageArg,
    tool: Annotated[str, typer.Option("--tool", "-t", help="The tool that failed (part of the fingerprint).")] = "tool",
    json_out: JsonOption = False,
) -> None:
    """Why a message gets its fingerprint and category: each normalisation step that changed it and the
    rule or cue that decided (reads no library; a person's labels and the LLM are not consulted).

    Example: kaos failure explain --tool kubectl 'Error from server (NotFound): pods "web-7d9f8-x2k4p" not found'
    """
    from ..failures.explain import explain as explain_message

    text = read_message(message)
    result = explain_message(" ".join(tool.split()) or "tool", text)
    if wants_json(ctx, json_out):
        output.emit_json(result)
        return
    decided = result["decided_by"]
    output.fields(f"fingerprint {result['fingerprint'][:12]} (algorithm {result['algorithm']})", [
        ("read", f"{result['characters']} characters" + (" (head and tail only)" if result["cut"] else "")),
        ("key", result["key"]),
        ("exception type", result["exception_type"]),
        ("normalized", result["normalized"]),
        ("category", decided["category"]),
        ("decided by", f"{decided['tier']} {decided['name']}" if decided["name"] else "nothing (unknown)"),
        ("family", decided.get("family")),
        ("pattern", decided["pattern"]),
    ])
    for index, line in enumerate(result["lines"], 1):
        output.table(f"key line {index}: normalisation steps that changed it", ["step", "text after it"],
                     [[step["step"], step["text"]] for step in line["steps"]] or [["(none)", line["line"]]])


def _show_similar(neighbours: list[dict], off: str) -> None:
    if off:
        output.message(off, "dim")
    elif not neighbours:
        output.message("no labelled failure is close in meaning", "dim")
    else:
        output.table("similar labelled failures", ["fingerprint", "tool", "category", "cosine", "root cause"],
                     ([n["fingerprint_id"], n["tool"], n["category"], n["cosine"], n["root_cause"]]
                      for n in neighbours))


# -- kaos alerts ----------------------------------------------------------------------------------
@alerts_app.command("check")
def check(
    ctx: typer.Context,
    ignore_acked: Annotated[bool, typer.Option("--ignore-acked", help="Acknowledged alerts do not count.")] = False,
    db: DbOption = None,
    json_out: JsonOption = False,
) -> None:
    """Exit 0 when no systemic alert is open, 3 when one is (details on stderr). Read-only.

    Example: kaos alerts check && spawn-more-agents
    """
    with open_for_read(ctx, db) as lib:
        open_alerts = lib.failures.active_alerts()
    if ignore_acked:
        open_alerts = [a for a in open_alerts if a["status"] == "active"]
    if wants_json(ctx, json_out):
        output.emit_json({"clear": not open_alerts, "alerts": open_alerts})
    for alert in open_alerts:
        output.warn(
            f"kaos: systemic alert {alert['id']} ({alert['status']}): {alert['agent_count']} agents hit "
            f"{alert['tool']} failure {alert['fingerprint_id']} [{alert['category']}] — "
            f"{output.shorten(alert['root_cause'] or '', 100)}"
            + (f" (source: {UNREVIEWED})" if alert["source"] == UNREVIEWED else "")
        )
    if open_alerts:
        raise typer.Exit(3)
    if not wants_json(ctx, json_out):
        output.message("no systemic alerts")


# -- kaos dream … (triage) -------------------------------------------------------------------------
@dream_app.command("failures")
def failures(
    ctx: typer.Context,
    min_count: Annotated[int, typer.Option("--min-count", min=0, help="Only fingerprints seen at least N times.")] = 1,
    category: Annotated[str | None, typer.Option("--category", help=f"One of {', '.join(CATEGORIES)}.",
                                                                   callback=allowed_values(*CATEGORIES))] = None,
    tool: Annotated[str | None, typer.Option("--tool", help="Only this tool.")] = None,
    limit: Annotated[int, typer.Option("--limit", min=0, help="At most this many rows.")] = 100,
    db: DbOption = None,
    json_out: JsonOption = False,
) -> None:
    """Failure fingerprints, most frequent first (read-only).

    Example: kaos dream failures --min-count 3 --category infra
    """
    with open_for_read(ctx, db) as lib:
        rows = lib.failures.list(min_count=min_count, category=category, tool=tool, limit=limit)
        llm = lib.failures.llm.status()
    if wants_json(ctx, json_out):
        output.emit_json(rows)
        return
    output.table(
        "failures",
        ["id", "hash", "tool", "category", "seen", "agents", "last seen", "fix", "example"],
        [
            (
                r["id"],
                r["short_hash"],
                r["tool"],
                r["category"] if r["source"] != UNREVIEWED else f"{r['category']} ({UNREVIEWED})",
                r["occurrences"],
                r["agents"],
                output.when(r["last_seen"]),
                r["fix_summary"],
                output.shorten(r["key_text"], 60),
            )
            for r in rows
        ],
    )
    if not llm["enabled"]:
        output.note(f"LLM diagnosis: off ({llm['reason']})")  # a note, not a row: stderr


@dream_app.command("diagnose")
def diagnose(
    ctx: typer.Context,
    fingerprint: FpArg,
    category: Annotated[str | None, typer.Option("--category", help=f"Override: {', '.join(CATEGORIES)}.",
                                                                   callback=allowed_values(*CATEGORIES))] = None,
    root_cause: Annotated[str | None, typer.Option("--root-cause", help="Override the root cause.")] = None,
    action: Annotated[str | None, typer.Option("--action", help="Override the suggested action.")] = None,
    confirm: Annotated[bool, typer.Option("--confirm", help="Vouch for the model's (unreviewed) diagnosis as it "
                                          "stands, so agents are given it.")] = False,
    by: ByOption = None,
    db: DbOption = None,
    json_out: JsonOption = False,
) -> None:
    """Show a fingerprint's diagnosis (read-only), override it by hand with --category/--root-cause/--action,
    or --confirm a model's diagnosis (agents are not given a model's text until a person confirms it).

    Example: kaos dream diagnose 12 --category config --root-cause "staging key rotated" --by ana
    """
    overriding = category is not None or root_cause is not None or action is not None
    if confirm and overriding:
        raise typer.BadParameter("--confirm keeps the diagnosis as it is; it excludes --category/--root-cause/"
                                 "--action", param_hint="--confirm")
    if confirm:
        with open_for_write(ctx, db) as lib:
            data = lib.failures.confirm(fingerprint, by=by)
            history = lib.failures.history(data["id"])
    elif overriding:
        with open_for_write(ctx, db) as lib:
            current = lib.failures.get(fingerprint)
            data = lib.failures.diagnose(
                fingerprint,
                category=category or current["category"],
                root_cause=root_cause,
                suggested_action=action,
                by=by,
            )
            history = lib.failures.history(data["id"])
    else:
        with open_for_read(ctx, db) as lib:
            data = lib.failures.get(fingerprint)
            history = lib.failures.history(data["id"])
    if wants_json(ctx, json_out):
        output.emit_json({**data, "history": history})
        return
    output.fields(
        f"failure {data['id']} ({data['short_hash']})",
        [
            ("tool", data["tool"]),
            ("exception", data["exception_type"]),
            ("seen", data["occurrences"]),
            ("agents", data["agents"]),
            *diagnosis_pairs(data),
            ("diagnoser", data["diagnoser"]),
            ("fix", fix_text(data["fix"])),
            ("example", data["key_text"]),
        ],
    )
    output.table(
        "diagnosis history",
        ["when", "category", "method", "by"],
        [(output.when(h["created_at"]), h["category"], h["method"], h["decided_by"]) for h in history],
    )


@dream_app.command("systemic")
def systemic(
    ctx: typer.Context,
    ack: Annotated[int | None, typer.Option("--ack", help="Acknowledge alert ID (active → acked).")] = None,
    resolve: Annotated[int | None, typer.Option("--resolve", help="Resolve alert ID (→ resolved).")] = None,
    by: ByOption = None,
    all_alerts: Annotated[bool, typer.Option("--all", help="Include resolved alerts.")] = False,
    db: DbOption = None,
    json_out: JsonOption = False,
) -> None:
    """Systemic alerts: list them (read-only), or --ack / --resolve one.

    Example: kaos dream systemic --ack 3 --by oncall
    """
    if ack is not None and resolve is not None:
        raise InvalidInputError("give --ack or --resolve, not both")
    if ack is not None or resolve is not None:
        with open_for_write(ctx, db) as lib:
            alert_id = ack if ack is not None else resolve
            assert alert_id is not None
            changed = (
                lib.failures.ack_alert(alert_id, by) if ack is not None else lib.failures.resolve_alert(alert_id, by)
            )
            rows = [a for a in lib.failures.alerts(include_resolved=True) if a["id"] == alert_id]
        if wants_json(ctx, json_out):
            output.emit_json({"changed": changed, "alert": rows[0] if rows else None})
            return
        verb = "acknowledged" if ack is not None else "resolved"
        output.message(f"alert {alert_id} {verb}" if changed else f"alert {alert_id} was already {verb}")
        return
    with open_for_read(ctx, db) as lib:
        rows = lib.failures.alerts(include_resolved=all_alerts)
    listing(ctx, json_out, rows, "systemic alerts", ALERT_COLUMNS, (_alert_row(a) for a in rows))


ALERT_COLUMNS = ["id", "status", "failure", "tool", "category", "agents", "raised", "by"]


def _alert_row(a: dict) -> list:
    return [a["id"], a["status"], a["fingerprint_id"], a["tool"], a["category"], a["agent_count"],
            output.when(a["raised_at"]), a["resolved_by"] or a["acked_by"]]


@fix_app.command("attach")
def fix_attach(
    ctx: typer.Context,
    fingerprint: FpArg,
    summary: Annotated[str | None, typer.Option("--summary", help="What to do about this failure.")] = None,
    skill: Annotated[str | None, typer.Option("--skill", help="Skill (name or id) that fixes it.")] = None,
    by: ByOption = None,
    db: DbOption = None,
    json_out: JsonOption = False,
) -> None:
    """Attach a fix (replaces the current one; the new fix starts with fresh counters).

    Example: kaos dream fix attach 4 --summary "retry with backoff" --skill retry-with-backoff
    """
    with open_for_write(ctx, db) as lib:
        fix = lib.failures.attach_fix(fingerprint, summary=summary, skill=skill, by=by)
    reply(ctx, json_out, fix, f"fix {fix['id']} attached to failure {fix['fingerprint_id']}")


@fix_app.command("show")
def fix_show(ctx: typer.Context, fingerprint: FpArg, db: DbOption = None, json_out: JsonOption = False) -> None:
    """Every fix a fingerprint has had, with its outcome counts (read-only).

    Example: kaos dream fix show 4
    """
    with open_for_read(ctx, db) as lib:
        rows = lib.failures.fix_history(fingerprint)
    listing(ctx, json_out, rows, "fixes", FIX_COLUMNS, (_fix_row(f) for f in rows))


FIX_COLUMNS = ["id", "status", "summary", "skill", "worked", "attempts", "attached", "ended"]


def _fix_row(f: dict) -> list:
    return [f["id"], f["status"], f["summary"], f["skill_id"], f["successes"], f["attempts"],
            output.when(f["attached_at"]), f["end_reason"]]


@dream_app.command("fix-outcome")
def fix_outcome(
    ctx: typer.Context,
    fingerprint: FpArg,
    succeeded: Annotated[bool, typer.Option("--succeeded", help="Applying the fix worked.")] = False,
    failed: Annotated[bool, typer.Option("--failed", help="Applying the fix did not work.")] = False,
    agent: Annotated[str | None, typer.Option("--agent", help="Agent that applied the fix.")] = None,
    db: DbOption = None,
    json_out: JsonOption = False,
) -> None:
    """Report whether the current fix worked; a fix failing too often is withdrawn.

    Example: kaos dream fix-outcome 4 --failed --agent a12
    """
    succeeded = one_of(succeeded, failed, "--succeeded", "--failed")
    with open_for_write(ctx, db) as lib:
        result = lib.failures.record_fix_outcome(fingerprint, succeeded, agent=agent)
    if wants_json(ctx, json_out):
        output.emit_json(result)
        return
    fix = result["fix"]
    output.message(f"fix {fix['id']}: {result['successes']}/{result['attempts']} worked")
    if result["downgraded"]:
        output.message(f"fix {fix['id']} withdrawn ({fix['end_reason']}); lookups fall back to the diagnosis", "yellow")


@dream_app.command("recategorize")
def recategorize(
    ctx: typer.Context,
    no_llm: Annotated[bool, typer.Option("--no-llm", help="Heuristics only, even when a key is set.")] = False,
    db: DbOption = None,
    json_out: JsonOption = False,
) -> None:
    """Re-diagnose `unknown` fingerprints (after registering a diagnoser or configuring an LLM).

    Example: kaos dream recategorize
    """
    with open_for_write(ctx, db) as lib:
        changed = lib.failures.recategorize(use_llm=not no_llm)
        llm = lib.failures.llm.status()
    reply(ctx, json_out, {"recategorized": changed, "llm": llm}, f"{changed} fingerprint(s) recategorized")
    if not llm["enabled"] and not no_llm and not wants_json(ctx, json_out):
        output.note(f"LLM diagnosis: off ({llm['reason']})")
