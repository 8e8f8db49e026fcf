"""Assemble the report: one section per question a person asks of the library, charts inline."""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ..clock import iso
from ..graph.export import assemble, live_edges, neighbourhood, node_uses
from . import charts, queries
from .page import Cell, cards, chart, document, empty, esc, name, num, pct, table, text, when
from .records import MIN_EVIDENCE, MIN_FALL, RECENT_OUTCOMES, falling, skill_records

if TYPE_CHECKING:
    from ..library import Library

HOT_SKILLS = 5
TABLE_ROWS = 1000
GRAPH_SEEDS = 10
GRAPH_DEPTH = 2
GRAPH_NODES = 200
GRAPH_EDGES = 800
TIME_BINS = 12
MAX_MERGES = 50


def rate_points(rows: Sequence[tuple[float, int]]) -> list[tuple[float, float]]:
    """Success rate per consecutive group of outcomes (about eight groups, at least three outcomes
    each), plotted at the group's last outcome: per-N rather than per-week, so a library a few hours
    old and one a year old both show a curve."""
    if not rows:
        return []
    size = max(3, math.ceil(len(rows) / 8))
    return [(rows[min(i + size, len(rows)) - 1][0], sum(ok for _, ok in rows[i:i + size]) / len(rows[i:i + size]))
            for i in range(0, len(rows), size)]


def time_bins(times: Sequence[float], since: float | None) -> tuple[list[float], float]:
    start = since if since is not None and times and since <= min(times) else min(times)
    span = max(times) - start
    width = span / TIME_BINS if span > 0 else 3600.0
    return [start + i * width for i in range(TIME_BINS if span > 0 else 1)], width


def overview_section(lib: Library, data: dict[str, Any]) -> str:
    llm = lib.llm.status()
    agents = data["agents"]
    items = [("skills", data["skills"]), ("deprecated skills", data["deprecated_skills"]),
             ("memories", data["memories"]), ("outcomes", data["outcomes"]), ("search hits", data["search_hits"]),
             ("agent sessions", sum(agents.values())), ("graph edges", sum(data["edges"].values())),
             ("failure fingerprints", data["fingerprints"]), ("open alerts", data["open_alerts"]),
             ("pending proposals", data["pending_proposals"]), ("dream cycle", data["dream_cycle"])]
    last = data["last_run"]
    last_text = ("no dream pass yet" if last is None else
                 f"run {last['id']} ({last['mode']}, {last['status']}), finished {iso(last['finished_at']) or '-'}")
    llm_text = (f"LLM features on (model {llm['model']})" if llm["enabled"]
                else f"LLM features off: {llm['reason']}")
    states = ", ".join(f"{n} {s}" for s, n in agents.items()) or "none"
    edges = ", ".join(f"{n} {r}" for r, n in data["edges"].items()) or "none"
    return (cards(items) + "<ul>"
            + f"<li>last dream pass: {esc(last_text)}</li><li>{esc(llm_text)}</li>"
            + f"<li>agent sessions: {esc(states)}</li><li>edges by relation: {esc(edges)}</li></ul>")


def skills_section(lib: Library, since: float | None) -> str:
    records = skill_records(lib.conn)
    used = [r for r in records if r.uses]
    hot = used[:HOT_SKILLS]
    down = falling(records, HOT_SKILLS)
    chosen = {r.skill_id: r for r in hot + down}
    series = queries.outcomes(lib.conn, list(chosen), since)
    parts = []
    for key, title, group in (("skills-hot", "success rate over time: the most used skills", hot),
                              ("skills-falling", "success rate over time: falling skills", down)):
        lines = {r.name: rate_points(series[r.skill_id]) for r in group if series[r.skill_id]}
        if lines:
            parts.append(chart(key, charts.lines(title, lines, xlabel="time (UTC)", ylabel="success rate",
                                                 time_axis=True, ylim=(-0.05, 1.05))))
        else:
            parts.append(empty(f"{title}: no {'outcomes' if key == 'skills-hot' else 'skill is falling'} yet"))
        if key == "skills-falling":
            if down:
                parts.append("<ul class=\"falling\">" + "".join(
                    f"<li>{esc(r.name)}{' (deprecated)' if r.deprecated else ''}: "
                    f"{r.before_successes}/{r.before_uses} before, then {r.window_successes}/{r.window_uses}</li>"
                    for r in down) + "</ul>")
            parts.append(f"<p>Falling: the last {RECENT_OUTCOMES} outcomes of a skill (half of them when it has fewer"
                         f" than {2 * RECENT_OUTCOMES}) succeed at least {MIN_FALL:.0%} less often than the outcomes"
                         f" before them, with at least {MIN_EVIDENCE} on each side; deprecated skills count too.</p>")
    compare = used[:15]
    if compare:
        parts.append(chart("skills-record", charts.grouped_bars(
            f"all-time vs recent record (last {RECENT_OUTCOMES} outcomes) of the most used skills",
            [f"{charts.short(r.name, 18)} ({r.uses})" for r in compare],
            {"all-time": [r.rate or 0.0 for r in compare], "recent": [r.recent_rate or 0.0 for r in compare]},
            ylabel="success rate")))
        parts.append("<p>In brackets: uses (outcomes reported).</p>")
    else:
        parts.append(empty("no skill has an outcome yet"))
    shown = records[:TABLE_ROWS]
    note = (f"<p>{len(records)} skills; the {len(shown)} most used are listed. Click a column to sort. "
            f"“recent” is the last {RECENT_OUTCOMES} outcomes of each skill.</p>")
    if len(records) > len(shown):
        note += f"<p>{len(records) - len(shown)} more: <code>kaos skill list</code>.</p>"
    rows = [[Cell(name(r.name), r.name), num(r.uses), num(r.successes), num(r.rate, pct(r.rate)),
             num(r.recent_rate, pct(r.recent_rate)), num(r.hits), Cell(when(r.last_used_at), r.last_used_at or 0),
             text("deprecated" if r.deprecated else "")] for r in shown]
    parts.append(note + table([("skill", False), ("uses", True), ("successes", True), ("all-time", True),
                               ("recent", True), ("search hits", True), ("last used", False), ("state", False)],
                              rows, sortable=True, scroll=True) if shown else empty("the library has no skills"))
    parts.append(tasks_won(lib, used[:WINNING_SKILLS]))
    return "".join(parts)


def cost_section(lib: Library, since: float | None) -> str:
    """What a successful (completed) episode costs: overall, by skill and by task (medians). Shown,
    never used for ranking; the counts come from agents, hooks or `kaos agent complete --tokens-in …`."""
    from ..episode_cost import cost_per_success

    cost = cost_per_success(lib.conn, since, limit=TABLE_ROWS)
    overall = cost["overall"]
    if not overall["episodes"]:
        return empty("no episode has completed yet")
    columns = [("", False), ("successful episodes", True), ("reported", True), ("median tokens", True),
               ("median tool calls", True), ("median duration (s)", True), ("total tokens", True),
               ("total tool calls", True)]

    def row(g: dict[str, Any]) -> list[Cell]:
        seconds = g["median_duration_s"]
        return [Cell(name(g["name"]), g["name"]), num(g["episodes"]), num(g["reported"]), num(g["median_tokens"]),
                num(g["median_tool_calls"]), num(seconds, None if seconds is None else f"{seconds:.1f}"),
                num(g["total_tokens"]), num(g["total_tool_calls"])]

    parts = ["<p>Cost per successful episode. “reported”: episodes that reported tokens or tool calls "
             "(by skill and by task only those are counted).</p>",
             table([("all", False)] + columns[1:], [row(overall)])]
    for key, label in (("by_skill", "skill"), ("by_task", "task")):
        groups = cost[key]
        parts.append(table([(label, False)] + columns[1:], [row(g) for g in groups], sortable=True, scroll=True)
                     if groups else empty(f"no successful episode that reported its cost used a {label} yet"))
    return "".join(parts)


WINNING_SKILLS = 15  # the most used skills whose winning tasks are listed


def tasks_won(lib: Library, skills: list) -> str:
    """Which tasks each of the most used skills wins (outcomes reported with a task)."""
    wins = queries.winning_tasks(lib.conn, [r.skill_id for r in skills])
    rows = [[Cell(name(r.name), r.name),
             text("; ".join(f"{charts.short(task, 60)} ({w}/{u})" for task, w, u in wins[r.skill_id]))]
            for r in skills if wins[r.skill_id]]
    if not rows:
        return "<h3>tasks each skill wins</h3>" + empty("no outcome was reported with a task yet")
    return ("<h3>tasks each skill wins</h3><p>The tasks each of the most used skills succeeds on most "
            "(successes/uses on that task; outcomes reported with <code>--task</code>).</p>"
            + table([("skill", False), ("tasks won", False)], rows))


def failures_section(lib: Library, since: float | None) -> str:
    conn = lib.conn
    parts = []
    occurrences = queries.occurrences_by_category(conn, since)
    if occurrences:
        starts, width = time_bins([t for t, _ in occurrences], since)
        categories = sorted({c for _, c in occurrences})
        stacks = {c: [0] * len(starts) for c in categories}
        for t, c in occurrences:
            stacks[c][min(len(starts) - 1, int((t - starts[0]) // width))] += 1
        parts.append(chart("failures-categories", charts.stacked_bars(
            "failure occurrences by category over time", starts, width, stacks, charts.CATEGORY_COLOURS,
            ylabel="occurrences")))
    else:
        parts.append(empty("no failure recorded yet"))
    top = queries.top_fingerprints(conn, since)
    if top:
        parts.append("<h3>top fingerprints</h3>" + table(
            [("id", True), ("tool", False), ("category", False), ("seen", True), ("agents", True),
             ("example", False), ("root cause", False)],
            [[num(f["id"]), Cell(name(f["tool"]), f["tool"]), text(f["category"]), num(f["seen"]), num(f["agents"]),
              text(charts.short(f["example"], 90)), text(f["root_cause"])] for f in top], sortable=True))
    incidents = queries.incidents(conn)
    parts.append("<h3>incidents (systemic alerts)</h3>")
    if not incidents:
        parts.append(empty("no systemic alert has been raised"))
    for inc in incidents:
        a = inc.alert
        title = (f"alert {a['id']} ({a['status']}): failure {a['fingerprint_id']}, {a['tool']}, "
                 f"{a['agent_count']} agents within {a['window_s']:.0f} s")
        if inc.points:
            parts.append(chart(f"incident-{a['id']}", charts.incident(title, inc.points, a["raised_at"])))
        else:
            parts.append(empty(f"{title}: its occurrences are gone"))
    fixes = queries.fixes(conn)
    parts.append("<h3>fixes</h3>")
    if fixes:
        tried = [f for f in fixes if f["attempts"]]
        if tried:
            parts.append(chart("fixes", charts.horizontal_bars(
                "fix success rate", [f"fix {f['id']} (failure {f['fingerprint_id']})" for f in tried],
                [f["successes"] / f["attempts"] for f in tried], xlabel="success rate", xlim=(0, 1),
                colour="#2ca02c")))
        parts.append(table(
            [("fix", True), ("failure", True), ("summary", False), ("skill", False), ("status", False),
             ("attempts", True), ("success rate", True)],
            [[num(f["id"]), num(f["fingerprint_id"]), text(f["summary"]),
              Cell(name(f["skill"] or "-"), f["skill"] or ""), text(f["status"]), num(f["attempts"]),
              num(f["successes"] / f["attempts"] if f["attempts"] else None,
                  pct(f["successes"] / f["attempts"]) if f["attempts"] else "-")] for f in fixes], sortable=True))
    else:
        parts.append(empty("no fix has been attached to a failure"))
    return "".join(parts)


def graph_section(lib: Library) -> str:
    conn = lib.conn
    edges = live_edges(conn)
    if not edges:
        return empty("the graph has no edges yet")
    uses = node_uses(conn)
    linked = sorted({e.src for e in edges} | {e.dst for e in edges}, key=lambda n: (-uses.get(n, 0), n))
    keep = neighbourhood(edges, linked[:GRAPH_SEEDS], GRAPH_DEPTH, GRAPH_NODES)
    data = assemble(conn, sorted(keep), edges)
    shown = sorted(data.edges, key=lambda e: (-e.strength, e.id))[:GRAPH_EDGES]
    svg = charts.network(
        f"the {len(data.nodes)} nodes around the {min(GRAPH_SEEDS, len(linked))} most used",
        [(str(n.node), n.node.kind, n.label, n.use) for n in data.nodes],
        [(str(e.src), str(e.dst), e.relation, e.strength) for e in shown])
    caption = (f"<p>{len(linked)} nodes have edges; shown: the {len(data.nodes)} within {GRAPH_DEPTH} hops of the "
               f"{min(GRAPH_SEEDS, len(linked))} most used, with {len(shown)} of their {len(data.edges)} edges "
               "(strongest first). Size = use, width = strength, colour = relation. "
               "Everything: <code>kaos graph export --format graphml</code>.</p>")
    return chart("graph", svg) + caption


def dream_section(lib: Library, since: float | None) -> str:
    conn = lib.conn
    runs = queries.dream_runs(conn, since)
    parts = []
    if runs:
        phases: list[str] = []
        for run in runs:
            phases += [p for p, _ in run["phases"] if p not in phases]
        labels = [f"run {r['id']} ({r['mode']})" for r in runs]
        split = {p: [dict(r["phases"]).get(p, 0.0) for r in runs] for p in phases}
        if phases:
            parts.append(chart("dream-phases", charts.stacked_horizontal(
                "dream passes: time per phase", labels, split, xlabel="milliseconds")))
        parts.append(table(
            [("run", True), ("kind", False), ("mode", False), ("trigger", False), ("status", False),
             ("started", False), ("ms", True), ("error", False)],
            [[num(r["id"]), text(r["kind"]), text(r["mode"]), text(r["trigger"]), text(r["status"]),
              Cell(when(r["started_at"]), r["started_at"]), num(r["duration_ms"], f"{r['duration_ms'] or 0:.0f}"),
              text(r["error"])] for r in runs], sortable=True))
    else:
        parts.append(empty("no dream pass has run"))
    counts, recent = queries.proposals(conn, since)
    parts.append("<h3>proposals and what became of them</h3>")
    if counts:
        kinds = sorted({k for k, _ in counts})
        statuses = sorted({s for _, s in counts})
        parts.append(chart("dream-proposals", charts.grouped_bars(
            "proposals by kind and outcome", kinds, {s: [counts.get((k, s), 0) for k in kinds] for s in statuses},
            ylabel="proposals")))
        parts.append(table(
            [("proposal", True), ("kind", False), ("targets", False), ("status", False), ("score", True),
             ("rationale", False), ("decided", False), ("reason", False)],
            [[num(p["id"]), text(p["kind"]), Cell(name(" + ".join(p["names"]) or p["targets"]), p["targets"]),
              text(p["status"]), num(p["score"], "-" if p["score"] is None else f"{p['score']:.3f}"),
              text(p["rationale"]), Cell(when(p["decided_at"]), p["decided_at"] or 0), text(p["reason"])]
             for p in recent], sortable=True))
    else:
        parts.append(empty("no proposal yet"))
    waiting, merges = queries.merges(conn, MAX_MERGES)
    parts.append("<h3>pending merges</h3>")
    if merges:
        parts.append(table(
            [("proposal", True), ("skills", False), ("jaccard", True), ("why", False)],
            [[num(m["id"]), Cell(name(" + ".join(str(n) for n in m["names"] or [])), m["id"]),
              num(m["jaccard"], f"{m['jaccard']:.3f}" if m["jaccard"] is not None else "-"), text(m["rationale"])]
             for m in merges]))
        more = f"{waiting - len(merges)} more not shown; all: <code>kaos dream merges</code>. " \
            if waiting > len(merges) else ""
        parts.append(f"<p>{more}Review with <code>kaos dream merges --accept N</code> or "
                     "<code>--reject N --reason …</code>.</p>")
    else:
        parts.append(empty("no merge is waiting"))
    return "".join(parts)


def build_report(lib: Library, since: float | None = None,
                 progress: Callable[[str, int, int], None] | None = None) -> str:
    """The whole report as one HTML document, from read-only queries on ``lib``. ``progress`` is told
    (section, position, total) before each section (the CLI draws a bar from it on a terminal)."""
    charts.require_plotting()
    data = queries.overview(lib.conn)
    subtitle = (f"{os.path.basename(lib.path)}, generated {iso(lib.now())}"
                + (f"; changes over time since {iso(since)}" if since is not None else ""))
    builders: list[tuple[str, str, Callable[[], str]]] = [
        ("overview", "overview", lambda: overview_section(lib, data)),
        ("skills", "skills", lambda: skills_section(lib, since)),
        ("cost", "episode cost", lambda: cost_section(lib, since)),
        ("failures", "failures", lambda: failures_section(lib, since)),
        ("graph", "graph", lambda: graph_section(lib)),
        ("dream", "dream", lambda: dream_section(lib, since)),
    ]
    sections = []
    for position, (key, title, build) in enumerate(builders):
        if progress is not None:
            progress(key, position, len(builders))
        sections.append((key, title, build()))
    if progress is not None:
        progress("writing", len(builders), len(builders))
    return document("kaos-dream report", subtitle, sections)
