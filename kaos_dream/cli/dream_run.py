"""`kaos dream run | consolidate | runs | show | proposals | merges`: the consolidation pass and its review."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ..clock import MAX_TIMESTAMP, MIN_TIMESTAMP, iso, representable
from ..dream import PROPOSAL_STATUSES, Progress, RunOutcome
from ..dream.proposals import KINDS as PROPOSAL_KINDS
from ..errors import InvalidInputError
from . import output
from .common import DbOption, JsonOption, allowed_values, open_for_read, open_for_write, wants_json
from .dream import app
from .numbers import finite

if TYPE_CHECKING:
    from ..library import Library

QuietOption = Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar and no output unless an error.")]
WaitOption = Annotated[
    float, typer.Option("--wait", metavar="SECONDS", min=0.0, callback=finite,
                        help="Wait up to SECONDS for a running dream to finish.")
]


def parse_since(text: str | None) -> float | None:
    """Epoch seconds or ISO-8601 (UTC when no offset is given), within the years 1 to 9999 that a run's
    digest can show: ``nan``, ``inf`` and far-off numbers are usage errors, raised before the file is opened."""
    if text is None:
        return None
    try:
        value = float(text)
    except ValueError:
        value = _parse_iso(text)
    if not representable(value):
        raise typer.BadParameter(f"{text!r} is not a time between {iso(MIN_TIMESTAMP)} ({MIN_TIMESTAMP:.0f}) "
                                 f"and {iso(MAX_TIMESTAMP)} ({MAX_TIMESTAMP:.0f})", param_hint="--since")
    return value


def _parse_iso(text: str) -> float:
    try:
        parsed = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise InvalidInputError(f"--since {text!r} is neither epoch seconds nor an ISO-8601 time") from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.timestamp()


def progress_bar(enabled: bool) -> contextlib.AbstractContextManager[Progress | None]:
    """A rich progress bar on stderr when it is a terminal; nothing otherwise."""
    return output.progress_bar("dream", enabled)


def millis(value: float | None) -> str | None:
    """A duration for people, with its unit (`--json` keeps the number in `*_ms` fields)."""
    return None if value is None else f"{value:.1f} ms"


def print_markdown(text: str) -> None:
    """The digest as it is stored: plain markdown, never re-wrapped or styled (it is meant to be pasted)."""
    output.write_visible("\n" + text)


def render_outcome(outcome: RunOutcome, as_json: bool, quiet: bool) -> None:
    if as_json:
        output.emit_json(outcome.to_dict())
        return
    if quiet:
        return
    if outcome.status != "completed":
        output.message(outcome.message)
        return
    output.message(outcome.message, style="bold")
    timings = outcome.summary.get("timings_ms", {})
    output.table("phases", ["phase", "time"], [(k, millis(v)) for k, v in timings.items()])
    if outcome.digest:
        print_markdown(outcome.digest)


@app.command("run")
def run(
    ctx: typer.Context,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Analyse and propose; change nothing else (default).")]
    = False,
    apply: Annotated[bool, typer.Option("--apply", help="Also decay, create emergent edges, promote and prune.")]
    = False,
    since: Annotated[str | None, typer.Option("--since", metavar="TS",
                                              help="Replay window start (epoch or ISO-8601).")] = None,
    quiet: QuietOption = False,
    wait: WaitOption = 0.0,
    if_due: Annotated[bool, typer.Option("--if-due", help="Run only if KAOS_DREAM_THRESHOLD episodes completed "
                                         "since the last pass (with --apply: since the last applied pass; "
                                         "for cron).")] = False,
    trigger: Annotated[str, typer.Option("--trigger", hidden=True)] = "manual",
    db: DbOption = None,
    json_out: JsonOption = False,
) -> None:
    """Run a dream pass: replay, decay, emergent edges, proposals, registered phases, digest.

    A dry run (the default) records proposals and a digest and changes nothing else; --apply applies
    decay, emergent edges, promote and prune (merges always wait for `kaos dream merges`). One pass at
    a time per file: a second one reports who holds the lease and exits 0.

    Example: kaos --db agents.db dream run --apply --quiet
    """
    if dry_run and apply:
        raise typer.BadParameter("--dry-run and --apply exclude each other", param_hint="--apply")
    as_json = wants_json(ctx, json_out)
    since_ts = parse_since(since)
    replay_hook_spool(ctx, db)
    with open_for_write(ctx, db) as lib, progress_bar(not quiet and not as_json) as progress:
        outcome = lib.dream.run(apply=apply, since=since_ts, wait=wait, if_due=if_due, trigger=trigger,
                                progress=progress)
    render_outcome(outcome, as_json, quiet)


def replay_hook_spool(ctx: typer.Context, db: str | None) -> None:
    """Hook events spooled while the library was busy (`kaos hook`) are applied before a pass, so the
    pass sees them; one that cannot be applied now stays spooled, and the pass goes on."""
    from ..errors import KaosError
    from ..harness.run import replay_command
    from ..harness.spool import Spool, default_base
    from .common import global_options
    from .libraries import resolve_db_path

    path = resolve_db_path(global_options(ctx), db)
    if not Spool(default_base(path)).pending():
        return
    try:
        replay_command(path)
    except (KaosError, OSError) as exc:
        sys.stderr.write(output.visible(f"kaos: spooled hook events not applied yet: {exc}") + "\n")


@app.command("consolidate")
def consolidate(
    ctx: typer.Context,
    apply: Annotated[bool, typer.Option("--apply", help="Apply pending promote and prune proposals.")] = False,
    quiet: QuietOption = False,
    wait: WaitOption = 0.0,
    db: DbOption = None,
    json_out: JsonOption = False,
) -> None:
    """Proposals only: find promote / prune / merge candidates (no replay, decay or new edges).

    Example: kaos dream consolidate --apply
    """
    as_json = wants_json(ctx, json_out)
    with open_for_write(ctx, db) as lib, progress_bar(not quiet and not as_json) as progress:
        outcome = lib.dream.consolidate(apply=apply, wait=wait, progress=progress)
    render_outcome(outcome, as_json, quiet)


@app.command("runs")
def runs(
    ctx: typer.Context,
    limit: Annotated[int, typer.Option("--limit", "-n", min=0, help="How many, newest first.")] = 20,
    db: DbOption = None,
    json_out: JsonOption = False,
) -> None:
    """List dream runs, newest first (read-only).

    Example: kaos dream runs -n 5
    """
    with open_for_read(ctx, db) as lib:
        rows = lib.dream.runs(limit)
    if wants_json(ctx, json_out):
        output.emit_json(rows)
        return
    output.table("dream runs", ["id", "kind", "mode", "trigger", "status", "cycle", "started", "duration"],
                 ([r["id"], r["kind"], r["mode"], r["trigger"], r["status"], r["cycle"], output.when(r["started_at"]),
                   millis(r["duration_ms"])] for r in rows))


@app.command("show")
def show(
    ctx: typer.Context,
    run_id: Annotated[int, typer.Argument(metavar="RUN", help="Run id (see `kaos dream runs`).")],
    db: DbOption = None,
    json_out: JsonOption = False,
) -> None:
    """Show one run: status, per-phase timings and its digest (read-only).

    Example: kaos dream show 3
    """
    with open_for_read(ctx, db) as lib:
        data = lib.dream.show(run_id)
    if wants_json(ctx, json_out):
        output.emit_json(data)
        return
    output.fields(f"dream run {run_id}", [
        ("kind", data["kind"]), ("mode", data["mode"]), ("trigger", data["trigger"]), ("status", data["status"]),
        ("cycle", data["cycle"]), ("started", output.when(data["started_at"])),
        ("finished", output.when(data["finished_at"])), ("duration", millis(data["duration_ms"])),
        ("error", data["error"]),
    ])
    output.table("phases", ["phase", "time"], ([p["phase"], millis(p["duration_ms"])] for p in data["phases"]))
    if data["digest"]:
        print_markdown(data["digest"])


@app.command("proposals")
def proposals(
    ctx: typer.Context,
    kind: Annotated[str | None, typer.Option("--kind", help="promote, prune or merge.",
                                             callback=allowed_values(*PROPOSAL_KINDS))] = None,
    status: Annotated[str, typer.Option("--status", help="pending, applied, rejected, superseded or all.",
                                        callback=allowed_values(*PROPOSAL_STATUSES, extra=("all",)))]
    = "pending",
    db: DbOption = None,
    json_out: JsonOption = False,
) -> None:
    """List proposals (read-only). Reject any pending one with `kaos dream merges --reject N --reason …`.

    Example: kaos dream proposals --kind prune --status all
    """
    with open_for_read(ctx, db) as lib:
        rows = lib.dream.proposals(kind=kind, status=None if status == "all" else status)
    if wants_json(ctx, json_out):
        output.emit_json(rows)
        return
    output.table("proposals", ["id", "kind", "targets", "status", "score", "rationale", "reason"],
                 ([r["id"], r["kind"], r["targets"], r["status"], r["score"], output.shorten(r["rationale"], 70),
                   r["reason"]] for r in rows))


@app.command("merges")
def merges(
    ctx: typer.Context,
    accept: Annotated[int | None, typer.Option("--accept", metavar="N", help="Accept merge proposal N.")] = None,
    keep: Annotated[str | None, typer.Option("--keep", metavar="K", help="With --accept: the skill to keep "
                                             "(id or name; default: the more used one).")] = None,
    reject: Annotated[int | None, typer.Option("--reject", metavar="N", help="Reject proposal N.")] = None,
    reason: Annotated[str | None, typer.Option("--reason", help="With --reject: why (required).")] = None,
    db: DbOption = None,
    json_out: JsonOption = False,
) -> None:
    """Review merge proposals: list the pending ones (read-only), --accept N [--keep K], or --reject N --reason TEXT.

    Accepting moves the other skill's outcomes, hits, graph edges and co-activations to the keeper and
    deprecates it ("merged into K via proposal N"; `kaos skill restore` undoes the deprecation).

    Example: kaos dream merges --accept 12 --keep csv-to-parquet
    """
    check_review(accept, reject, reason, keep=keep)
    if reject is not None and not (reason or "").strip():
        raise typer.BadParameter("--reject needs --reason TEXT", param_hint="--reason")

    def decide(lib: Library) -> dict[str, Any]:
        if accept is None:
            return lib.dream.reject(reject or 0, reason or "")
        keep_ref: int | str | None = int(keep) if keep is not None and keep.isdigit() else keep
        if isinstance(keep_ref, str):
            keep_ref = lib.skills.resolve_id(keep_ref)
        return lib.dream.accept_merge(accept, keep_ref)

    def decided(result: dict[str, Any]) -> str:
        if accept is None:
            return f"proposal {reject} rejected: {result['reason']}"
        return (f"proposal {accept}: skill {result['retired']} merged into {result['keeper']} "
                f"({result['skill_uses_moved']} outcomes, {result['skill_hits_moved']} hits, "
                f"{result['edges_moved'] + result['edges_merged']} edges moved)")

    review(ctx, db, wants_json(ctx, json_out), decide if accept is not None or reject is not None else None, decided,
           pending=lambda lib: lib.dream.merges(), title="pending merges", columns=["id", "skills", "names", "jaccard"],
           cells=lambda r: [r["id"], r["skills"], r["names"], r["jaccard"]],
           hint="accept: kaos dream merges --accept N [--keep K]; reject: kaos dream merges --reject N --reason TEXT")


@app.command("promotions")
def promotions(
    ctx: typer.Context,
    accept: Annotated[int | None, typer.Option("--accept", metavar="N", help="Accept promotion N.")] = None,
    reject: Annotated[int | None, typer.Option("--reject", metavar="N", help="Reject promotion N.")] = None,
    reason: Annotated[str | None, typer.Option("--reason", help="With --reject: why (default: 'rejected in "
                                               "review').")] = None,
    db: DbOption = None,
    json_out: JsonOption = False,
) -> None:
    """Review promotions (memory to skill): list the pending ones (read-only), --accept N, or --reject N.

    A promoted skill is instructions other agents retrieve and run, so promotions wait for a person
    (unless KAOS_DREAM_AUTO_PROMOTE=1). A rejected promotion comes back only if the memory changes.

    Example: kaos dream promotions --accept 7
    """
    check_review(accept, reject, reason)

    def decide(lib: Library) -> dict[str, Any]:
        if accept is None:
            return lib.dream.reject_promotion(reject or 0, reason or "rejected in review")
        return lib.dream.accept_promotion(accept)

    def decided(result: dict[str, Any]) -> str:
        if accept is None:
            return f"proposal {reject} rejected: {result['reason']}"
        return f"proposal {accept}: memory promoted to skill {result['skill_id']} {result['name']!r}"

    review(ctx, db, wants_json(ctx, json_out), decide if accept is not None or reject is not None else None, decided,
           pending=lambda lib: lib.dream.promotions(), title="pending promotions",
           columns=["id", "memory", "hits", "principals", "content"],
           cells=lambda r: [r["id"], r["key"], r["hits"], r["principal_count"] or r["agent_count"],
                                 output.shorten(r["content"] or "", 70)],
           hint="accept: kaos dream promotions --accept N; reject: kaos dream promotions --reject N [--reason TEXT]")


def check_review(accept: int | None, reject: int | None, reason: str | None, *, keep: str | None = None) -> None:
    """The option rules every review command shares: one decision at a time, each option with its own."""
    if accept is not None and reject is not None:
        raise typer.BadParameter("use either --accept or --reject", param_hint="--accept")
    if keep is not None and accept is None:
        raise typer.BadParameter("--keep goes with --accept N", param_hint="--keep")
    if reason is not None and reject is None:
        raise typer.BadParameter("--reason goes with --reject N", param_hint="--reason")


def review(
    ctx: typer.Context,
    db: str | None,
    as_json: bool,
    decide: Callable[[Library], dict[str, Any]] | None,
    decided: Callable[[dict[str, Any]], str],
    *,
    pending: Callable[[Library], list[dict[str, Any]]],
    title: str,
    columns: list[str],
    cells: Callable[[dict[str, Any]], list[Any]],
    hint: str,
) -> None:
    """A review command: apply one decision (``decide``, then say ``decided``) or list what is pending
    (read-only), with the hint for deciding under a non-empty listing."""
    if decide is not None:
        with open_for_write(ctx, db) as lib:
            result = decide(lib)
        if as_json:
            output.emit_json(result)
        else:
            output.message(decided(result))
        return
    with open_for_read(ctx, db) as lib:
        rows = pending(lib)
    if as_json:
        output.emit_json(rows)
        return
    output.table(title, columns, (cells(r) for r in rows))
    if rows:
        output.note(hint)  # a hint for the person: stderr, so a pipe gets only the rows
