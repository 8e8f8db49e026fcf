"""`kaos skill …`: add, list, show, update, deprecate, restore, rm, apply, import, import-jsonl, export."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from ..errors import SchemaOutdatedError
from ..skills import Skill
from . import output
from .common import (
    DbOption,
    JsonOption,
    complete_skill_names,
    open_for_read,
    open_for_write,
    parse_params,
    show_entry,
    wants_json,
)

app = typer.Typer(help="Manage skills: parameterised procedures agents can find and apply.", no_args_is_help=True)

SkillRef = Annotated[str, typer.Argument(help="Skill name or id.", show_default=False,
                                         autocompletion=complete_skill_names)]


def _record_text(record: dict) -> str:
    a, e = record["all_time"], record["effective"]
    return f"{a['successes']}/{a['uses']} all-time, {e['successes']:.2f}/{e['uses']:.2f} effective"


def show_skill(
    ctx: typer.Context, skill: Skill, as_json: bool, verb: str | None = None, record: dict | None = None
) -> None:
    data = skill.to_dict() if record is None else {**skill.to_dict(), "record": record}
    done = f"{verb} skill {skill.id} {skill.name!r}" if verb else None
    shown = show_entry(ctx, as_json, data, done, f"skill {skill.id}", [
        ("name", skill.name),
        ("description", skill.description),
        ("template", skill.template),
        ("parameters", skill.parameters or None),
        ("tags", skill.tags or None),
        ("deprecated", skill.deprecated),
        ("reason", skill.deprecated_reason),
        ("created", output.when(skill.created_at)),
        ("updated", output.when(skill.updated_at)),
    ])
    if shown and record is not None:
        half_life = record["half_life_outcomes"]
        aging = f"half-life {half_life:g} outcomes" if half_life > 0 else "aging off"
        output.fields(
            f"outcomes (successes/uses; effective = recent outcomes weigh more, {aging})",
            [("all tasks", _record_text(record))]
            + [(output.shorten(t["task"] or t["task_hash"], 40), _record_text(t)) for t in record["tasks"]],
        )


@app.command("add")
def add(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="Unique skill name.", show_default=False)],
    description: Annotated[str, typer.Option("--description", "-d", help="What the skill does.")] = "",
    template: Annotated[str, typer.Option("--template", "-t", help="Template with {param} placeholders.")] = "",
    tag: Annotated[list[str] | None, typer.Option("--tag", help="A tag (repeat for more).")] = None,
    db: DbOption = None,
    json_out: JsonOption = False,
) -> None:
    """Add a skill.

    Example: kaos skill add csv-to-parquet -d "Convert CSV files to Parquet" -t "Convert {path}" --tag data
    """
    with open_for_write(ctx, db, create=True) as lib:
        skill = lib.skills.add(name, description, template, tag or [])
    show_skill(ctx, skill, json_out, verb="added")


@app.command("list")
def list_(
    ctx: typer.Context,
    tag: Annotated[str | None, typer.Option(help="Only skills with this tag.")] = None,
    deprecated: Annotated[bool, typer.Option("--deprecated", help="Only deprecated skills.")] = False,
    all_: Annotated[bool, typer.Option("--all", help="Live and deprecated skills.")] = False,
    limit: Annotated[int | None, typer.Option(min=0, help="At most this many.")] = None,
    offset: Annotated[int, typer.Option(min=0, help="Skip this many first.")] = 0,
    db: DbOption = None,
    json_out: JsonOption = False,
) -> None:
    """List skills in id order (live ones unless --deprecated or --all)."""
    if deprecated and all_:
        raise typer.BadParameter("--deprecated and --all exclude each other", param_hint="--all")
    state = None if all_ else deprecated
    with open_for_read(ctx, db) as lib:
        skills = lib.skills.list(tag=tag, deprecated=state, limit=limit, offset=offset)
    if wants_json(ctx, json_out):
        output.emit_json([s.to_dict() for s in skills])
        return
    output.table(
        "skills",
        ["id", "name", "description", "tags", "deprecated"],
        ([s.id, s.name, s.description, s.tags, s.deprecated] for s in skills),
    )


@app.command("show")
def show(
    ctx: typer.Context,
    ref: SkillRef,
    body: Annotated[bool, typer.Option("--body", help="Print only the instructions (the body), byte-exact.")] = False,
    db: DbOption = None,
    json_out: JsonOption = False,
) -> None:
    """Show one skill and its outcome record: exact all-time counts beside the effective (aged) record
    that ranking uses, for all tasks and per task. --body prints just the instructions; with --json
    it adds the bundled files (path, size, sha256).

    Example: kaos skill show csv-to-parquet --json
    """
    with open_for_read(ctx, db) as lib:
        skill = lib.skills.get(ref)
        if body:
            from ..agent_skills.bundle import bundled_files

            files = bundled_files(lib.conn, skill.id)
        else:
            record = lib.skill_record(skill.id)
    if body:
        if wants_json(ctx, json_out):
            output.emit_json({"id": skill.id, "name": skill.name, "description": skill.description,
                              "body": skill.template, "files": files})
        else:
            output.emit_exact(skill.template)
        return
    show_skill(ctx, skill, json_out, record=record)


@app.command("update")
def update(
    ctx: typer.Context,
    ref: SkillRef,
    name: Annotated[str | None, typer.Option(help="New name.")] = None,
    description: Annotated[str | None, typer.Option("--description", "-d", help="New description.")] = None,
    template: Annotated[str | None, typer.Option("--template", "-t", help="New template.")] = None,
    tag: Annotated[list[str] | None, typer.Option("--tag", help="Replace the tags (repeat for more).")] = None,
    clear_tags: Annotated[bool, typer.Option("--clear-tags", help="Remove all tags.")] = False,
    db: DbOption = None,
    json_out: JsonOption = False,
) -> None:
    """Change a skill's name, description, template or tags.

    Example: kaos skill update csv-to-parquet --tag data --tag etl
    """
    if clear_tags and tag:
        raise typer.BadParameter("--tag and --clear-tags exclude each other", param_hint="--clear-tags")
    tags = [] if clear_tags else tag
    with open_for_write(ctx, db) as lib:
        skill = lib.skills.update(ref, name=name, description=description, template=template, tags=tags)
    show_skill(ctx, skill, json_out, verb="updated")


@app.command("deprecate")
def deprecate(
    ctx: typer.Context,
    ref: SkillRef,
    reason: Annotated[str | None, typer.Option(help="Why (shown in `skill show`).")] = None,
    db: DbOption = None,
    json_out: JsonOption = False,
) -> None:
    """Soft-delete a skill: hidden from search and lists, telemetry kept, reversible with `restore`."""
    with open_for_write(ctx, db) as lib:
        skill = lib.skills.deprecate(ref, reason)
    show_skill(ctx, skill, json_out, verb="deprecated")


@app.command("restore")
def restore(ctx: typer.Context, ref: SkillRef, db: DbOption = None, json_out: JsonOption = False) -> None:
    """Undo `deprecate`; a skill that is not deprecated is left exactly as it is.

    Example: kaos skill restore csv-to-parquet
    """
    current: Skill | None = None
    try:
        with open_for_read(ctx, db) as lib:  # a live skill: answered without opening the file for writing
            current = lib.skills.get(ref)
    except SchemaOutdatedError:
        pass  # an old file: the write path below migrates it
    if current is None or current.deprecated:
        with open_for_write(ctx, db) as lib:
            current = lib.skills.get(ref)
            if current.deprecated:
                show_skill(ctx, lib.skills.restore(ref), json_out, verb="restored")
                return
    if wants_json(ctx, json_out):
        output.emit_json({**current.to_dict(), "changed": False})
    else:
        output.message(f"skill {current.name} is not deprecated; nothing changed")


@app.command("rm")
def rm(ctx: typer.Context, ref: SkillRef, db: DbOption = None, json_out: JsonOption = False) -> None:
    """Delete a skill for good, with its telemetry (use `deprecate` to keep history)."""
    with open_for_write(ctx, db) as lib:
        skill = lib.skills.delete(ref)
    show_skill(ctx, skill, json_out, verb="deleted")


@app.command("apply")
def apply(
    ctx: typer.Context,
    ref: SkillRef,
    param: Annotated[list[str] | None, typer.Option("--param", "-p", help="NAME=VALUE (repeat).")] = None,
    db: DbOption = None,
    json_out: JsonOption = False,
) -> None:
    """Render a skill's template with parameters (reads only; report results with record-outcome).

    Example: kaos skill apply csv-to-parquet --param path=data/in.csv
    """
    params = parse_params(param or [])
    with open_for_read(ctx, db) as lib:
        skill = lib.skills.get(ref)
        text = lib.skills.render(skill.id, params)
    if wants_json(ctx, json_out):
        output.emit_json({"skill": skill.name, "id": skill.id, "params": params, "rendered": text})
    else:
        output.emit_exact(text)


def raise_problems(problems: list, summary: Exception) -> None:
    """One problem: it is the error line. Several: one `path:line: what` line each, then the summary."""
    from ..errors import InvalidInputError

    if len(problems) == 1:
        raise InvalidInputError(f"{problems[0]} (nothing was written)") from None
    for problem in problems:
        output.warn(str(problem))
    raise summary


@app.command("import")
def import_(
    ctx: typer.Context,
    paths: Annotated[list[Path], typer.Argument(help="Skill folders (holding SKILL.md) or trees of them.",
                                                show_default=False)],
    sync: Annotated[bool, typer.Option("--sync", help="Make the library match this one tree: update changed "
                                       "skills, deprecate those whose folder is gone.")] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print the plan; write nothing.")] = False,
    skip_invalid: Annotated[bool, typer.Option("--skip-invalid", help="Import the valid folders and list the "
                                               "others (default: any invalid folder imports nothing).")] = False,
    tag: Annotated[list[str] | None, typer.Option("--tag", help="Add this tag to each skill (repeat).")] = None,
    db: DbOption = None,
    json_out: JsonOption = False,
) -> None:
    """Import Agent Skills folders (SKILL.md with YAML front matter, plus bundled files) in one
    transaction. Every problem is one `path:line: what` line on stderr; then nothing is imported.

    Example: kaos skill import .claude/skills --sync --dry-run
    """
    from ..agent_skills.importer import SkillProblemsError, import_skills

    opener = open_for_read(ctx, db) if dry_run else open_for_write(ctx, db, create=True)
    try:
        with opener as lib:
            result = import_skills(lib, paths, sync=sync, dry_run=dry_run, skip_invalid=skip_invalid, tags=tag or [])
    except SkillProblemsError as exc:
        raise_problems(exc.problems, exc)
    for problem in result.skipped:
        output.warn(f"skipped: {problem}")
    if wants_json(ctx, json_out):
        output.emit_json(result.to_dict())
        return
    changed = [c for c in result.changes if c.action != "unchanged"]
    if changed:
        output.table("plan (dry run: nothing written)" if dry_run else "skills imported",
                     ["name", "action", "folder"], ([c.name, c.action, c.folder] for c in changed))
    counts = ", ".join(f"{n} {action}" for action, n in result.counts().items())
    output.message(f"{'would change' if dry_run else 'changed'} {result.changed}: {counts}"
                   + (f"; {len(result.skipped)} skipped" if result.skipped else ""))


@app.command("import-jsonl")
def import_jsonl(
    ctx: typer.Context,
    source: Annotated[str, typer.Argument(metavar="PATH|-", help="JSON lines, one skill a line: "
                                          '{"name", "description", "template", "tags"}; - reads stdin.',
                                          show_default=False)],
    db: DbOption = None,
    json_out: JsonOption = False,
) -> None:
    """Add many skills fast (for large libraries): every line is checked first, then rows and their
    vectors are added in batches of 5000 per transaction. Any bad line: `path:line: what` on stderr and
    nothing is written. A name the library already holds is left unchanged, so an interrupted import
    is finished by running it again.

    Example: kaos skill import-jsonl skills.jsonl
    """
    import time

    from ..agent_skills.bulk import BulkProblemsError, bulk_import, check_file, spooled
    from ..errors import InvalidInputError

    started = time.perf_counter()
    path = spooled(sys.stdin.buffer) if source == "-" else Path(source)
    try:
        try:
            is_file = path.is_file()
        except OSError as exc:  # a name too long, a loop of links: not a file to read
            raise InvalidInputError(f"{source[:200]}: cannot read ({exc.strerror})") from None
        if not is_file:
            raise InvalidInputError(f"{source[:200]}: no such file")
        check_file(path)  # before the library is opened: a bad file creates no database
        with open_for_write(ctx, db, create=True) as lib:
            result = bulk_import(lib, path, checked=True)
    except BulkProblemsError as exc:
        raise_problems(exc.problems, exc)
    finally:
        if source == "-":
            path.unlink(missing_ok=True)
    seconds = time.perf_counter() - started
    if wants_json(ctx, json_out):
        output.emit_json({**result.to_dict(), "seconds": round(seconds, 3)})
        return
    output.message(f"added {result.added} skill(s), {result.present} already present, {result.vectors} vector(s) "
                   f"in {seconds:.1f} s ({result.rows / max(seconds, 1e-9):.0f} rows/s)")


@app.command("export")
def export(
    ctx: typer.Context,
    directory: Annotated[Path, typer.Argument(help="Folder to write one skill folder per skill into.",
                                              show_default=False)],
    top: Annotated[int | None, typer.Option("--top", min=0, help="Only the N best by effective success "
                                            "(lower confidence bound).")] = None,
    min_success: Annotated[float | None, typer.Option("--min-success", min=0.0, max=1.0,
                                                      help="Only skills whose effective success rate is at "
                                                           "least this (0 to 1).")] = None,
    tag: Annotated[str | None, typer.Option("--tag", help="Only skills with this tag.")] = None,
    include_deprecated: Annotated[bool, typer.Option("--include-deprecated", help="Deprecated skills too.")] = False,
    force: Annotated[bool, typer.Option("--force", help="Overwrite files the export did not write.")] = False,
    db: DbOption = None,
    json_out: JsonOption = False,
) -> None:
    """Write skills as Agent Skills folders (DIR/NAME/SKILL.md and bundled files) with the learned
    record in metadata under kaos- keys. Reads the library only.

    Example: kaos skill export .claude/skills --min-success 0.8 --tag data
    """
    from ..agent_skills.exporter import ExportRefusedError, export_skills

    try:
        with open_for_read(ctx, db) as lib:
            result = export_skills(lib, directory, top=top, min_success=min_success, tag=tag,
                                   include_deprecated=include_deprecated, force=force)
    except ExportRefusedError as exc:
        raise_problems(exc.problems, exc)
    for line in result.skipped:
        output.warn(f"skipped: {line}")
    if wants_json(ctx, json_out):
        output.emit_json(result.to_dict())
        return
    output.message(f"exported {len(result.skills)} skill(s) to {result.directory}: {len(result.written)} file(s) "
                   f"written, {result.unchanged} unchanged, {len(result.removed)} removed"
                   + (f", {len(result.skipped)} skipped" if result.skipped else ""))
