"""The digest: a deterministic markdown report of one dream run.

:func:`render_digest` is a pure function of the run's header and phase summaries (no timings, no
clock reads), so the same library state always renders the same text; `kaos demo` prints it.
Phases registered by other features add their own section by returning ``PhaseResult.digest``.
"""

from __future__ import annotations

from typing import Any

from ..clock import iso
from .phases import ORDER_DIGEST, DreamContext, PhaseResult, register_phase


def _pct(wins: int, uses: int) -> str:
    return f"{wins}/{uses} ({wins / uses:.0%})" if uses else "0/0"


def _md(text: Any) -> str:
    """User text inside markdown: escape the characters that would change its meaning."""
    out = str(text)
    for ch in ("\\", "`", "*", "_", "[", "]", "|", "<", ">"):
        out = out.replace(ch, "\\" + ch)
    return " ".join(out.split())


def _num(value: float | None, unit: str = "") -> str:
    if value is None:
        return "-"
    whole = unit != " s" and float(value).is_integer()
    return (f"{value:,.0f}" if whole else f"{value:,.1f}") + unit


def cost_lines(cost: dict[str, Any] | None) -> list[str]:
    """The Activity section's cost of a successful episode (medians), overall and by skill, when any
    completed episode of the window reported tokens or tool calls."""
    if not cost or not cost["overall"]["reported"]:
        return []
    o = cost["overall"]
    lines = [f"- cost per successful episode (median; {o['reported']} of {o['episodes']} completed reported): "
             f"{_num(o['median_tokens'])} tokens, {_num(o['median_tool_calls'])} tool calls, "
             f"{_num(o['median_duration_s'], ' s')}"]
    for key, label in (("by_skill", "skill"), ("by_task", "task")):
        if cost[key]:
            lines += ["", f"| {label} | successful episodes | median tokens | median tool calls | median duration |",
                      "|---|---|---|---|---|"]
            lines += [f"| {_md(g['name'])} | {g['episodes']} | {_num(g['median_tokens'])} | "
                      f"{_num(g['median_tool_calls'])} | {_num(g['median_duration_s'], ' s')} |" for g in cost[key]]
    return lines


def render_digest(
    header: dict[str, Any], results: dict[str, dict[str, Any]], sections: dict[str, str] | None = None,
    db_hint: str = "",
) -> str:
    """Markdown for a run. ``header``: id, mode, kind, trigger, since, started_at, cycle."""
    kaos = f"kaos{db_hint}"
    lines = [
        f"# Dream digest — run {header['id']} ({header['kind']}, {header['mode']})",
        "",
        f"- started: {iso(header['started_at'])}; window since: "
        f"{iso(header['since']) if header['since'] else 'the beginning'}",
        f"- trigger: {header['trigger']}; dream cycle: {header.get('cycle', 0)}",
        "",
    ]
    recs: list[str] = []
    rep = results.get("replay")
    if rep:
        eps = rep.get("episodes", {})
        ep_text = ", ".join(f"{n} {s}" for s, n in sorted(eps.items())) or "none"
        lines += ["## Activity", "", f"- episodes ended in the window: {ep_text}; still running: {rep['running']}",
                  f"- skill outcomes: {_pct(rep['skill_successes'], rep['skill_uses'])} successful; "
                  f"memory retrievals: {rep['memory_hits']}"]
        if rep.get("unprocessed_episodes"):
            lines.append(f"- ended episodes not yet processed by the episode-end batch: {rep['unprocessed_episodes']}")
        lines += cost_lines(rep.get("cost"))
        lines.append("")
        lines += ["## Hot skills", ""]
        if rep["hot_skills"]:
            lines += ["| skill | uses | success |", "|---|---|---|"]
            lines += [f"| {_md(h['name'])} (#{h['id']}) | {h['uses']} | {_pct(h['successes'], h['uses'])} |"
                      for h in rep["hot_skills"]]
        else:
            lines.append("- no skill outcomes in the window")
        lines += ["", "## Cold skills", "",
                  f"- {rep['cold_skills']} of {rep['live_skills']} live skills had no outcome in the window"]
        if rep["never_used_examples"]:
            names = ", ".join(f"{_md(s['name'])} (#{s['id']})" for s in rep["never_used_examples"])
            lines.append(f"- never used: {names}")
        lines.append("")
    dec = results.get("decay")
    emg = results.get("emergent")
    if dec or emg:
        lines += ["## Graph", ""]
        if dec:
            verb = "weakened" if dec["applied"] else "would weaken"
            lines.append(f"- decay (LTD): {verb} {dec['edges_weakened']} of {dec['edges_considered']} edges "
                         f"by {dec['strength_lost']:.4f} in total; {dec['at_floor_total']} at the floor "
                         f"(pruning candidates)")
        if emg:
            verb = "created" if emg["applied"] else "would create"
            n = emg["created"] if emg["applied"] else emg["candidates"]
            lines.append(f"- emergent co_occurs_with edges: {verb} {n}")
            for e in emg["examples"]:
                src, dst = _md(e.get("src_name", e["src"])), _md(e.get("dst_name", e["dst"]))
                lines.append(f"  - {src} — {dst}: strength {e['strength']:.2f} after {e['count']:g} co-uses")
        lines.append("")
    pro = results.get("proposals")
    if pro:
        lines += ["## Proposals", "", "| kind | qualifying | new | superseded | pending |", "|---|---|---|---|---|"]
        for kind in ("promote", "prune", "merge"):
            k = pro[kind]
            lines.append(f"| {kind} | {k['qualifying']} | {k['created']} | {k['superseded']} "
                         f"| {pro['pending'].get(kind, 0)} |")
        if pro["applied"]:
            lines.append("")
            lines.append(f"- applied: {pro.get('promoted', 0)} memories promoted to skills, "
                         f"{pro.get('pruned', 0)} skills pruned (deprecated, reversible)")
        if pro["pending_merges"]:
            lines += ["", "Pending merges (best first):", ""]
            for m in pro["pending_merges"]:
                named = _md(m.get("names", m["targets"]))
                lines.append(f"- #{m['id']} {named} (Jaccard {m['score']:.2f}): {_md(m['rationale'])}")
            recs.append(f"review merges: `{kaos} dream merges`, then `{kaos} dream merges --accept N` "
                        f"or `--reject N --reason TEXT`")
        if pro["pending"].get("promote"):
            recs.append(f"review promotions (memory to skill): `{kaos} dream promotions`, then "
                        f"`{kaos} dream promotions --accept N` or `--reject N`")
        if not pro["applied"] and pro["pending"].get("prune"):
            recs.append(f"apply the pending prune proposals: `{kaos} dream run --apply`")
        lines.append("")
    for _name, text in (sections or {}).items():
        if text:
            lines += [text.rstrip(), ""]
    if header["mode"] == "dry-run" and dec and dec["edges_weakened"]:
        recs.append(f"decay and emergent edges take effect with `{kaos} dream run --apply`")
    recs.append(f"see earlier runs: `{kaos} dream runs`; this report again: `{kaos} dream show {header['id']}`")
    lines += ["## Next", ""] + [f"- {r}" for r in recs]
    return "\n".join(lines).rstrip() + "\n"


def digest_phase(ctx: DreamContext, _: Any) -> PhaseResult:
    header = {"id": ctx.run_id, "mode": ctx.mode, "kind": ctx.kind, "trigger": ctx.trigger, "since": ctx.since,
              "started_at": ctx.started_at, "cycle": ctx.cycle}
    text = render_digest(header, ctx.results, ctx.digests)
    return PhaseResult({"lines": text.count("\n")}, digest=text)


register_phase("digest", digest_phase, order=ORDER_DIGEST, kinds=("run", "consolidate"))
