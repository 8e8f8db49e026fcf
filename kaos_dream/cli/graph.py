"""`kaos graph …`: typed edges, spreading activation, online learning and reversible pruning.

Nodes are written KIND:REF — `skill:NAME` (or id), `memory:KEY` (or id), `failure:ID`.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

import typer

from .. import graph as kg
from ..errors import InvalidInputError
from ..graph.export import MAX_DEPTH, graph_data, render
from ..graph.nodes import resolve_node
from ..graph.relations import DEFAULT_EXTRA, DEFAULT_SEEDS, RELATIONS
from . import output
from .common import DbOption, JsonOption, allowed_values, free_text, open_for_read, open_for_write, reply, wants_json
from .numbers import finite, finite_days

app = typer.Typer(
    help="The typed causal graph: link, show, activate, observe outcomes, prune and restore edges.",
    no_args_is_help=True,
)

NodeArg = Annotated[str, typer.Argument(help="KIND:REF, e.g. skill:deploy, memory:tls, failure:12.",
                                        show_default=False)]
RelationArg = Annotated[str, typer.Argument(help="caused, enabled, prevented, fact, meta or co_occurs_with.",
                                            show_default=False, callback=allowed_values(*RELATIONS))]


class Mode(StrEnum):
    additive = "additive"
    gated = "gated"
    adaptive = "adaptive"


class ExportFormat(StrEnum):
    dot = "dot"
    graphml = "graphml"
    json = "json"


class Strategy(StrEnum):
    weight = "weight"
    coverage = "coverage"
    random = "random"


def _edge_row(e) -> list:
    return [e.id, str(e.src), e.relation, str(e.dst), round(e.strength, 4), e.provenance,
            f"{e.verified_correct}/{e.verifications}", "pruned" if e.pruned_at else ""]


def _names(lib, edge) -> tuple[str, str]:  # noqa: ANN001 - Library and Edge, imported lazily
    """The edge's ends as names (``skill:deploy-friday``), as the person typed them; JSON keeps ids."""
    from ..graph.nodes import references

    names = references(lib.conn, [edge.src, edge.dst])
    return names[edge.src], names[edge.dst]


EDGE_COLUMNS = ["id", "src", "relation", "dst", "strength", "provenance", "verified", "state"]


@app.command("link")
def link(
    ctx: typer.Context,
    src: NodeArg,
    relation: RelationArg,
    dst: NodeArg,
    strength: Annotated[float | None, typer.Option(min=0.0, max=1.0, callback=finite,
                                                   help="Edge strength (default 0.8).")] = None,
    db: DbOption = None,
    json_out: JsonOption = False,
) -> None:
    """Declare an edge (or update it: a declaration sets strength and provenance `declared`).

    Example: kaos graph link skill:deploy-friday caused failure:12
    """
    with open_for_write(ctx, db) as lib:
        edge = lib.graph.link(resolve_node(lib.conn, src), relation, resolve_node(lib.conn, dst), strength=strength)
        a, b = _names(lib, edge)
    reply(ctx, json_out, edge.to_dict(), f"edge {edge.id}: {a} -{edge.relation}-> {b} (strength {edge.strength:.2f})")


@app.command("unlink")
def unlink(ctx: typer.Context, src: NodeArg, relation: RelationArg, dst: NodeArg, db: DbOption = None,
           json_out: JsonOption = False) -> None:
    """Delete an edge.

    Example: kaos graph unlink skill:deploy-friday caused failure:12
    """
    with open_for_write(ctx, db) as lib:
        edge = lib.graph.unlink(resolve_node(lib.conn, src), relation, resolve_node(lib.conn, dst))
        a, b = _names(lib, edge)
    reply(ctx, json_out, edge.to_dict(), f"removed edge {edge.id}: {a} -{edge.relation}-> {b}")


@app.command("evidence")
def evidence(
    ctx: typer.Context,
    src: NodeArg,
    relation: RelationArg,
    dst: NodeArg,
    contradicts: Annotated[bool, typer.Option("--contradicts", help="Evidence against the edge (r = 0).")] = False,
    db: DbOption = None,
    json_out: JsonOption = False,
) -> None:
    """Add observed evidence: skill caused failure, skill prevented failure, memory enabled skill.

    Example: kaos graph evidence skill:retry-with-backoff prevented failure:12
    """
    with open_for_write(ctx, db) as lib:
        edge = lib.graph.add_evidence(resolve_node(lib.conn, src), relation, resolve_node(lib.conn, dst),
                                      correct=not contradicts)
        a, b = _names(lib, edge)
    if wants_json(ctx, json_out):
        output.emit_json(edge.to_dict())
        return
    output.message(f"edge {edge.id}: {a} -{edge.relation}-> {b} now {edge.strength:.3f} "
                   f"({edge.verified_correct}/{edge.verifications} supporting)")


@app.command("show")
def show(
    ctx: typer.Context,
    node: NodeArg,
    relation: Annotated[str | None, typer.Option(help="Only this relation.",
                                                 callback=allowed_values(*RELATIONS))] = None,
    include_pruned: Annotated[bool, typer.Option("--pruned", help="Also list pruned edges.")] = False,
    db: DbOption = None,
    json_out: JsonOption = False,
) -> None:
    """A node's edges, in and out, strongest first (read-only).

    Example: kaos graph show failure:12 --relation prevented
    """
    with open_for_read(ctx, db) as lib:
        target = resolve_node(lib.conn, node)
        edges = lib.graph.neighbours(target, relation=relation, include_pruned=include_pruned)
    if wants_json(ctx, json_out):
        output.emit_json({"node": str(target), "edges": [e.to_dict() for e in edges]})
        return
    output.table(f"edges of {target}", EDGE_COLUMNS, (_edge_row(e) for e in edges))


@app.command("activate")
def activate_cmd(
    ctx: typer.Context,
    query: Annotated[str | None, typer.Argument(help="Seed from the top search hits of this text (- reads stdin).",
                                                show_default=False)] = None,
    from_nodes: Annotated[list[str] | None, typer.Option("--from", help="Seed node (repeatable).")] = None,
    mode: Annotated[Mode, typer.Option(help="How prevented edges act.")] = Mode.gated,
    top: Annotated[int, typer.Option(min=0, max=1000, help="Show this many nodes.")] = 10,
    beta: Annotated[float | None, typer.Option(min=0.0, callback=finite,
                                                    help="Gate strength β₀ (default $KAOS_GRAPH_BETA).")] = None,
    seeds: Annotated[int, typer.Option(min=1, max=100, help="Search hits used as seeds.")] = DEFAULT_SEEDS,
    db: DbOption = None,
    json_out: JsonOption = False,
) -> None:
    """Spread activation from a query or nodes; show what lights up and the path that reached it (read-only).

    Example: kaos graph activate "deploy failed on friday" --mode adaptive --top 5
    """
    if (query is None) == (not from_nodes):
        raise InvalidInputError("give either a QUERY or one or more --from NODE")
    query = free_text(query, "query") if query is not None else None
    with open_for_read(ctx, db) as lib:
        if query is not None:
            seed_map = kg.seeds_from_query(lib, query, limit=seeds)
        else:
            seed_map = {resolve_node(lib.conn, n): 1.0 for n in from_nodes or []}
        act = kg.activate(lib, seed_map, mode=mode.value, beta=beta)
        items = kg.describe(lib, act, seed_map, top=top)
    if wants_json(ctx, json_out):
        output.emit_json({"mode": mode.value, "seeds": {str(k): v for k, v in seed_map.items()},
                          "nodes": [i.to_dict() for i in items]})
        return

    def path_text(item) -> str:
        if item.seed and not item.path:
            return "(seed)"
        return " ".join(f"{s['from']} -{s['relation']}{'->' if s['direction'] == 'forward' else '<-'}"
                        for s in item.path) + f" {item.node}"

    output.table(f"activation ({mode.value})", ["#", "node", "label", "activation", "hop", "path"],
                 ([i, it.node, output.shorten(it.label, 40), round(it.score, 4), it.hop, path_text(it)]
                  for i, it in enumerate(items, 1)))


@app.command("search")
def search_cmd(
    ctx: typer.Context,
    query: Annotated[str, typer.Argument(help="Any text; - reads it from stdin.", show_default=False)],
    limit: Annotated[int, typer.Option(min=0, max=1000, help="Lexical results kept (never evicted).")] = 10,
    extra: Annotated[int, typer.Option(min=0, max=100, help="At most this many items added by the graph.")]
    = DEFAULT_EXTRA,
    mode: Annotated[Mode, typer.Option(help="Activation mode.")] = Mode.gated,
    db: DbOption = None,
    json_out: JsonOption = False,
) -> None:
    """Search, then let graph activation add a bounded number of related items (read-only).

    Example: kaos graph search "postgres backup" --extra 3
    """
    query = free_text(query, "query")
    with open_for_read(ctx, db) as lib:
        results = kg.search_expanded(lib, query, limit=limit, extra=extra, mode=mode.value)
    if wants_json(ctx, json_out):
        output.emit_json([r.to_dict() for r in results])
        return
    output.table(f"search (expanded): {query}", ["#", "kind", "id", "name", "source", "score", "via"],
                 ([i, r.kind, r.id, r.name, r.source, round(r.score, 4),
                   " ".join(f"{s['from']} {s['relation']}" for s in r.path)] for i, r in enumerate(results, 1)))


@app.command("observe")
def observe_cmd(
    ctx: typer.Context,
    action: Annotated[str, typer.Option("--action", help="The node that was applied.", show_default=False)],
    outcome: Annotated[list[str] | None, typer.Option("--outcome", help="A node that happened (repeatable).")]
    = None,
    absent: Annotated[list[str] | None, typer.Option("--absent", help="A node checked and not seen (repeatable).")]
    = None,
    open_world: Annotated[bool, typer.Option("--open-world", help="Unreported caused-targets are unknown, "
                                             "not absent.")] = False,
    db: DbOption = None,
    json_out: JsonOption = False,
) -> None:
    """Check the action's caused/prevented edges against what happened: w ← w + η (r − w).

    Example: kaos graph observe --action skill:deploy-friday --outcome failure:12 --absent failure:7
    """
    with open_for_write(ctx, db) as lib:
        result = kg.observe(lib, resolve_node(lib.conn, action),
                         happened=[resolve_node(lib.conn, n) for n in outcome or []],
                         absent=[resolve_node(lib.conn, n) for n in absent or []],
                         closed_world=not open_world)
    if wants_json(ctx, json_out):
        output.emit_json(result.to_dict())
        return
    output.table(f"observed {result.action}", ["edge", "relation", "dst", "before", "after", "correct"],
                 ([u.edge_id, u.relation, u.dst, round(u.before, 4), round(u.after, 4), u.correct]
                  for u in result.updates))
    if result.skipped:
        output.message(f"not observable, left alone: edges {', '.join(map(str, result.skipped))}", "dim")


@app.command("neglect")
def neglect_cmd(
    ctx: typer.Context,
    days: Annotated[float, typer.Option(min=0.0, callback=finite_days,
                                      help="Edges unverified for this many days lose confidence.")]
    = 7.0,
    db: DbOption = None,
    json_out: JsonOption = False,
) -> None:
    """Causal edges with no evidence lose λ_neglect of their strength (the dream runs this per cycle).

    Example: kaos graph neglect --days 7
    """
    with open_for_write(ctx, db) as lib:
        changed = kg.neglect(lib, since=lib.now() - days * 86_400.0)
    reply(ctx, json_out, {"changed": changed}, f"{changed} edge(s) lost confidence")


@app.command("record-query")
def record_query_cmd(
    ctx: typer.Context,
    query: Annotated[str, typer.Argument(help="A query whose retrieval pruning must preserve; - reads it from stdin.",
                                         show_default=False)],
    target: Annotated[str | None, typer.Option(help="The node that is the right answer.")] = None,
    db: DbOption = None,
    json_out: JsonOption = False,
) -> None:
    """Add a query to the log that sparsification uses as its quality objective.

    Example: kaos graph record-query "deploy failed" --target skill:rollback
    """
    query = free_text(query, "query")
    with open_for_write(ctx, db) as lib:
        seed_map = kg.seeds_from_query(lib, query)
        if not seed_map:
            raise InvalidInputError(f"query {query!r} matches nothing, so it cannot seed activation")
        node = resolve_node(lib.conn, target) if target else None
        qid = kg.record_query(lib, query, seed_map, node)
    reply(ctx, json_out, {"id": qid, "seeds": len(seed_map)}, f"recorded query {qid} ({len(seed_map)} seed nodes)")


@app.command("prune")
def prune_cmd(
    ctx: typer.Context,
    strategy: Annotated[Strategy, typer.Option(help="Which edges go first.")] = Strategy.weight,
    epsilon: Annotated[float | None, typer.Option(min=0.0, max=1.0, callback=finite, help="Allowed quality drop "
                                                  "(default $KAOS_GRAPH_PRUNE_EPSILON).")] = None,
    max_fraction: Annotated[float, typer.Option(min=0.0, max=1.0, callback=finite,
                                                  help="Prune at most this share of edges.")]
    = 0.5,
    seed: Annotated[int, typer.Option(min=0, help="Seed for the random strategy.")] = 0,
    apply: Annotated[bool, typer.Option("--apply", help="Prune (reversibly); without it, only show the plan.")]
    = False,
    db: DbOption = None,
    json_out: JsonOption = False,
) -> None:
    """Sparsify the graph while retrieval quality on recorded queries stays within ε (dry run by default).

    Example: kaos graph prune --strategy coverage --epsilon 0.02 --apply
    """
    opener = open_for_write if apply else open_for_read
    with opener(ctx, db) as lib:
        report = kg.sparsify(lib, strategy=strategy.value, epsilon=epsilon, max_fraction=max_fraction, apply=apply,
                          seed=seed)
    if wants_json(ctx, json_out):
        output.emit_json(report.to_dict())
        return
    data = report.to_dict()
    data.pop("pruned_edge_ids")
    output.fields("prune" + ("" if apply else " (dry run: nothing changed)"), list(data.items()))
    if report.run:
        output.message(f"undo with: kaos graph restore --run {report.run}")


@app.command("pruned")
def pruned_cmd(ctx: typer.Context, run: Annotated[str | None, typer.Option(help="Only this run.")] = None,
               db: DbOption = None, json_out: JsonOption = False) -> None:
    """Pruned edges that can still be restored (read-only).

    Example: kaos graph pruned --run prune-1
    """
    with open_for_read(ctx, db) as lib:
        rows = kg.pruned(lib, run=run)
    if wants_json(ctx, json_out):
        output.emit_json(rows)
        return
    output.table("pruned edges", ["run", "edge", "src", "relation", "dst", "strength", "strategy", "pruned"],
                 ([r["run"], r["edge_id"], r["src"], r["relation"], r["dst"], r["strength"], r["strategy"],
                   output.when(r["pruned_at"])] for r in rows))


@app.command("restore")
def restore_cmd(
    ctx: typer.Context,
    run: Annotated[str | None, typer.Option(help="Restore every edge of this prune run.")] = None,
    edge: Annotated[list[int] | None, typer.Option("--edge", help="Restore this edge id (repeatable).")] = None,
    db: DbOption = None,
    json_out: JsonOption = False,
) -> None:
    """Bring pruned edges back.

    Example: kaos graph restore --run prune-1
    """
    with open_for_write(ctx, db) as lib:
        ids = kg.restore(lib, run=run, edge_ids=edge or [])
    reply(ctx, json_out, {"restored": ids}, f"restored {len(ids)} edge(s)")


@app.command("purge")
def purge_cmd(
    ctx: typer.Context,
    older_than_days: Annotated[float, typer.Option("--older-than-days", min=0.0, callback=finite_days,
                                                   help="Delete edges pruned at least this long ago.")] = 30.0,
    db: DbOption = None,
    json_out: JsonOption = False,
) -> None:
    """Delete pruned edges for good (their prune records keep a snapshot).

    Example: kaos graph purge --older-than-days 30
    """
    with open_for_write(ctx, db) as lib:
        n = kg.purge(lib, older_than_s=older_than_days * 86_400.0)
    reply(ctx, json_out, {"purged": n}, f"purged {n} edge(s)")


@app.command("export")
def export_cmd(
    ctx: typer.Context,
    fmt: Annotated[ExportFormat | None, typer.Option("--format", help="dot (Graphviz), graphml (Gephi, yEd) or "
                                                     "json (the default).", show_default=False)] = None,
    around: Annotated[str | None, typer.Option("--around", metavar="NODE",
                                               help="Only the nodes within --depth hops of this node.")] = None,
    depth: Annotated[int, typer.Option(min=0, max=MAX_DEPTH, help="Hops from --around (either direction).")] = 2,
    db: DbOption = None,
) -> None:
    """Write the live graph (or the part around a node) to stdout as DOT, GraphML or JSON (read-only).

    Nodes are KIND:ID with the skill name, memory key or "failure N" as label and their use count;
    edges carry relation, strength and provenance. Pruned edges are left out.

    Example: kaos graph export --format dot --around skill:deploy --depth 2 > graph.dot
    """
    if fmt not in (None, ExportFormat.json) and wants_json(ctx, False):
        raise typer.BadParameter(f"--json asks for JSON but --format is {fmt.value}; give one of them",
                                 param_hint="--format")
    with open_for_read(ctx, db) as lib:
        node = resolve_node(lib.conn, around) if around is not None else None
        text = render(graph_data(lib.conn, node, depth), (fmt or ExportFormat.json).value)
    output.write_text(text)
