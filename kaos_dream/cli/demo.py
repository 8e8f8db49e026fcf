"""`kaos demo`: build a demo library in a fresh file, simulate agents, dream, and show the result."""

from __future__ import annotations

import os
from typing import Annotated

import typer

from ..demo import build_demo_library
from . import output
from .common import JsonOption, wants_json


def demo(
    ctx: typer.Context,
    db: Annotated[str, typer.Option("--db", help="Demo file to (re)create.")] = "kaos-demo.db",
    json_out: JsonOption = False,
) -> None:
    """Simulate a team of agents on a fresh demo library (default ./kaos-demo.db), run a dream with
    --apply, and print the digest, pending merges and alerts with the commands to try next.

    Example: kaos demo --db /tmp/demo.db
    """
    report = build_demo_library(db)
    if wants_json(ctx, json_out):
        output.emit_json(report)
        return
    agents = report["agents"]
    output.message(f"demo library written to {os.path.abspath(db)}", style="bold")
    output.message(
        f"{report['skills']} skills, {report['memories']} memories; {agents['completed']} agent sessions "
        f"completed, {agents['failed']} failed; LLM: {report['llm']}"
    )
    output.markdown(report["digest"] or "")
    output.table(
        "pending merges (review: kaos dream merges --accept N | --reject N --reason …)",
        ["proposal", "skills", "jaccard", "why"],
        ([m["id"], " + ".join(m["names"] or []), m["jaccard"], m["rationale"]] for m in report["pending_merges"]),
    )
    output.table(
        "systemic alerts (kaos alerts check exits 3 while one is open)",
        ["alert", "status", "fingerprint", "agents", "raised"],
        ([a["id"], a["status"], a["fingerprint_id"], a["agent_count"], output.when(a.get("raised_at"))]
         for a in report["alerts"]),
    )
    output.message("next, try:", style="bold")
    for step in report["next"]:
        output.message(f"  {step}")
