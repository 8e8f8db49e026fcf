"""Charts as inline SVG text, drawn by matplotlib (the ``report`` extra).

Why matplotlib to SVG rather than plotly's offline HTML (measured for the choice, plotly 7.1 and
matplotlib 3.11 wheels): plotly inlines its 4.8 MB ``plotly.min.js`` into every file, so even an empty
report would nearly fill the 5 MB budget of a 10k-skill one, and it runs a large script in the reader's
browser; matplotlib writes static vector drawings (a few tens of kB each) that need no script, print
and mail well, and come out byte-identical for the same library. The price is install weight
(≈25 MB of wheels beside numpy, against plotly's ≈10 MB) and no hover or zoom.

Text is drawn as glyph outlines (``svg.fonttype = path``), so a chart looks the same with or without
the reader's fonts and no name from the library appears in it as markup.
"""

from __future__ import annotations

import io
import math
import re
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime

from .extra import require_plotting

RELATION_COLOURS = {
    "caused": "#d62728", "prevented": "#2ca02c", "enabled": "#1f77b4",
    "co_occurs_with": "#7f7f7f", "fact": "#9467bd", "meta": "#ff7f0e",
}
CATEGORY_COLOURS = {
    "transient": "#17becf", "config": "#bcbd22", "code": "#d62728", "infra": "#9467bd", "unknown": "#7f7f7f",
}
_STYLE = {
    "svg.fonttype": "path", "svg.hashsalt": "kaos-dream-report", "font.size": 9.0,
    "axes.spines.top": False, "axes.spines.right": False, "axes.grid": True, "grid.alpha": 0.3,
    "figure.dpi": 100.0,
}
_SVG_OPEN = re.compile(r"<svg\b[^>]*>")
_COMMENT = re.compile(r"<!--.*?-->", re.S)


CHAR_IN = 0.075  # inches one 9-point character takes, for margins that fit the longest tick label
LEGEND_RIGHT = 0.78  # room on the right for a legend of shortened names


@contextmanager
def figure(width: float = 8.0, height: float = 3.2, *, left_chars: int = 4, bottom_in: float = 0.45,
           right: float = LEGEND_RIGHT) -> Iterator[object]:
    """A fresh matplotlib Figure (no pyplot, so no global state or GUI backend) in the report style.

    Margins are set from the longest tick label instead of by matplotlib's constrained layout,
    which measured 40 % of each chart's drawing time (0.19 s against 0.11 s for a line chart)."""
    require_plotting()
    import matplotlib
    from matplotlib.figure import Figure

    with matplotlib.rc_context(_STYLE):
        fig = Figure(figsize=(width, height))
        fig.subplots_adjust(left=min(0.5, (0.45 + CHAR_IN * left_chars) / width), right=right,
                            bottom=min(0.6, bottom_in / height), top=1 - 0.35 / height)
        yield fig


def to_svg(fig: object) -> str:
    """The figure as an ``<svg>`` element that scales to its container (no XML prolog or DOCTYPE)."""
    buf = io.StringIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a glyph missing from the bundled font is drawn as a box, not an error
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None})  # type: ignore[attr-defined]
    text = buf.getvalue()
    # matplotlib notes each drawn string in a comment beside its outlines: drop them, so no library
    # text reaches the page inside a chart at all (and the file is smaller)
    text = _COMMENT.sub("", text[text.index("<svg"):])
    opening = _SVG_OPEN.search(text)
    assert opening is not None
    tag = re.sub(r'\s(width|height)="[^"]*"', "", opening.group(0))
    tag = tag.replace("<svg", '<svg width="100%" role="img"', 1)
    return tag + text[opening.end():]


def when(ts: float) -> datetime:
    return datetime.fromtimestamp(ts, UTC).replace(tzinfo=None)


def _time_axis(ax: object) -> None:
    import matplotlib.dates as mdates

    locator = mdates.AutoDateLocator(minticks=3, maxticks=8)
    ax.xaxis.set_major_locator(locator)  # type: ignore[attr-defined]
    # One clock format on every chart: dates as YYYY-MM-DD, times of day always as HH:MM (HH:MM:SS when
    # the ticks are seconds apart), never a bare "20" for 20 seconds beside "03:07" on another chart.
    formats = ["%Y", "%Y-%m", "%Y-%m-%d", "%H:%M", "%H:%M", "%H:%M:%S"]
    offsets = ["", "%Y", "%Y-%m", "%Y-%m-%d", "%Y-%m-%d", "%Y-%m-%d %H:%M"]
    formatter = mdates.ConciseDateFormatter(locator, formats=formats, zero_formats=formats, offset_formats=offsets)
    ax.xaxis.set_major_formatter(formatter)  # type: ignore[attr-defined]


def short(text: str, width: int = 32) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def lines(title: str, series: dict[str, Sequence[tuple[float, float]]], *, xlabel: str, ylabel: str,
          time_axis: bool = False, ylim: tuple[float, float] | None = None, height: float = 3.2) -> str:
    """One line (with markers) per series of (x, y) points; x in epoch seconds when ``time_axis``."""
    with figure(height=height) as fig:
        ax = fig.subplots()  # type: ignore[attr-defined]
        for label, points in series.items():
            xs = [when(x) for x, _ in points] if time_axis else [x for x, _ in points]
            ax.plot(xs, [y for _, y in points], marker="o", markersize=3, linewidth=1.4, label=short(label))
        if time_axis:
            _time_axis(ax)
        if ylim is not None:
            ax.set_ylim(*ylim)
        ax.set(title=title, xlabel=xlabel, ylabel=ylabel)
        if series:
            ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), fontsize=8, frameon=False)
        return to_svg(fig)


def stacked_bars(title: str, starts: Sequence[float], width_s: float, stacks: dict[str, Sequence[int]],
                 colours: dict[str, str], *, ylabel: str) -> str:
    """Counts per time bin (bins start at ``starts``, each ``width_s`` long), stacked by key."""
    with figure() as fig:
        ax = fig.subplots()  # type: ignore[attr-defined]
        bottom = [0] * len(starts)
        xs = [when(s + width_s / 2) for s in starts]
        bar_width = max(width_s, 1.0) / 86_400.0 * 0.9  # matplotlib dates are in days
        for key, counts in stacks.items():
            ax.bar(xs, counts, width=bar_width, bottom=bottom, label=key, color=colours.get(key))
            bottom = [b + c for b, c in zip(bottom, counts, strict=True)]
        _time_axis(ax)
        ax.set(title=title, ylabel=ylabel)
        ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), fontsize=8, frameon=False)
        return to_svg(fig)


def incident(title: str, points: Sequence[tuple[str, float]], raised_at: float) -> str:
    """An incident window: one dot per occurrence, agents down the side, time along the bottom."""
    agents = sorted({a for a, _ in points})
    row = {a: i for i, a in enumerate(agents)}
    labels = [short(a, 24) for a in agents]
    with figure(height=max(1.8, 0.9 + 0.22 * len(agents)), left_chars=max(map(len, labels), default=4),
                right=0.97) as fig:
        ax = fig.subplots()  # type: ignore[attr-defined]
        ax.scatter([when(t) for _, t in points], [row[a] for a, _ in points], s=28, color="#d62728", zorder=3)
        ax.axvline(when(raised_at), color="#333333", linestyle="--", linewidth=1, label="alert raised")
        ax.set_yticks(range(len(agents)), labels)
        _time_axis(ax)
        ax.set(title=title)
        ax.legend(loc="upper left", fontsize=8, frameon=False)
        return to_svg(fig)


def horizontal_bars(title: str, labels: Sequence[str], values: Sequence[float], *, xlabel: str,
                    xlim: tuple[float, float] | None = None, colour: str = "#1f77b4") -> str:
    ticks = [short(x, 40) for x in labels]
    with figure(height=max(1.8, 0.9 + 0.25 * len(labels)), left_chars=max(map(len, ticks), default=4),
                right=0.97) as fig:
        ax = fig.subplots()  # type: ignore[attr-defined]
        ax.barh(range(len(labels)), values, color=colour)
        ax.set_yticks(range(len(labels)), ticks)
        ax.invert_yaxis()
        if xlim is not None:
            ax.set_xlim(*xlim)
        ax.set(title=title, xlabel=xlabel)
        return to_svg(fig)


def stacked_horizontal(title: str, labels: Sequence[str], parts: dict[str, Sequence[float]], *, xlabel: str) -> str:
    """One bar per label, split into named parts (a dream pass split into its phases)."""
    import matplotlib

    cmap = matplotlib.colormaps["tab20"]
    with figure(height=max(1.8, 1.0 + 0.28 * len(labels)), left_chars=max(map(len, labels), default=4)) as fig:
        ax = fig.subplots()  # type: ignore[attr-defined]
        left = [0.0] * len(labels)
        for i, (name, values) in enumerate(parts.items()):
            ax.barh(range(len(labels)), values, left=left, label=name, color=cmap(i % 20))
            left = [a + b for a, b in zip(left, values, strict=True)]
        ax.set_yticks(range(len(labels)), list(labels))
        ax.invert_yaxis()
        ax.set(title=title, xlabel=xlabel)
        ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), fontsize=7, frameon=False)
        return to_svg(fig)


def grouped_bars(title: str, groups: Sequence[str], series: dict[str, Sequence[int]], *, ylabel: str) -> str:
    """Bars side by side per group (proposals per kind, one bar per status)."""
    longest = max(map(len, groups), default=4)
    with figure(height=2.6 + 0.04 * longest, bottom_in=0.35 + 0.5 * CHAR_IN * longest) as fig:
        ax = fig.subplots()  # type: ignore[attr-defined]
        width = 0.8 / max(1, len(series))
        top = max((v for values in series.values() for v in values), default=0) or 1
        for i, (name, values) in enumerate(series.items()):
            xs = [g + i * width for g in range(len(groups))]
            bars = ax.bar(xs, values, width=width, label=name)
            # a zero draws no bar and reads as missing data: mark it with a stub of the bar's colour
            zeros = [x for x, v in zip(xs, values, strict=True) if v == 0]
            if zeros:
                ax.bar(zeros, [top * 0.012] * len(zeros), width=width, color=bars.patches[0].get_facecolor(),
                       edgecolor="#333333", linewidth=0.6)
        ax.set_xticks([g + 0.4 - width / 2 for g in range(len(groups))], list(groups), rotation=30, ha="right")
        ax.set(title=title, ylabel=ylabel)
        ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), fontsize=8, frameon=False)
        return to_svg(fig)


def network(title: str, nodes: Sequence[tuple[str, str, str, int]], edges: Sequence[tuple[str, str, str, float]],
            *, labelled: int = 30, seed: int = 7) -> str:
    """A node-link drawing: nodes (id, kind, label, use) sized by use; edges (src, dst, relation,
    strength) as width and colour. Only the ``labelled`` most-used nodes carry a label, so the
    picture stays readable at a couple of hundred nodes. The layout is seeded: same graph, same picture."""
    import networkx as nx
    from matplotlib.collections import LineCollection
    from matplotlib.lines import Line2D

    graph = nx.Graph()
    graph.add_nodes_from(n[0] for n in nodes)
    graph.add_weighted_edges_from((s, d, w) for s, d, _, w in edges)
    k = 1.6 / math.sqrt(max(1, len(nodes)))
    pos = nx.spring_layout(graph, seed=seed, k=k, iterations=80)
    biggest = max((n[3] for n in nodes), default=0) or 1
    with figure(width=10.0, height=7.5, left_chars=0, bottom_in=0.1, right=0.84) as fig:
        ax = fig.subplots()  # type: ignore[attr-defined]
        ax.set_axis_off()
        segments = [(pos[s], pos[d]) for s, d, _, _ in edges]
        ax.add_collection(LineCollection(
            segments, linewidths=[0.3 + 2.2 * w for *_, w in edges],
            colors=[RELATION_COLOURS.get(r, "#7f7f7f") for _, _, r, _ in edges], alpha=0.55, zorder=1))
        markers = {"skill": "o", "memory": "s", "failure": "^"}
        fills = {"skill": "#4c72b0", "memory": "#55a868", "failure": "#c44e52"}
        for kind, marker in markers.items():
            mine = [n for n in nodes if n[1] == kind]
            if mine:
                ax.scatter([pos[n[0]][0] for n in mine], [pos[n[0]][1] for n in mine],
                           s=[24 + 500 * math.sqrt(n[3] / biggest) for n in mine], marker=marker,
                           color=fills[kind], edgecolors="white", linewidths=0.6, zorder=2)
        for n in sorted(nodes, key=lambda n: (-n[3], n[0]))[:labelled]:
            x, y = pos[n[0]]
            ax.annotate(short(n[2], 28), (x, y), xytext=(4, 4), textcoords="offset points", fontsize=7, zorder=3)
        present = sorted({r for _, _, r, _ in edges})
        handles = [Line2D([0], [0], color=RELATION_COLOURS.get(r, "#7f7f7f"), linewidth=2.5, label=r)
                   for r in present]
        handles += [Line2D([0], [0], marker=m, linestyle="", color=fills[k], label=k, markersize=7)
                    for k, m in markers.items() if any(n[1] == k for n in nodes)]
        ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8, frameon=False)
        ax.set_title(title)
        ax.autoscale_view()
        return to_svg(fig)
