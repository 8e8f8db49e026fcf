"""Learning curves of the benchmarks as one SVG beside their ``results.md``, drawn by the report's charts.

A benchmark describes its curves as :class:`Panel` objects built from its ``results.json`` (so the
chart can be redrawn from committed results without re-running the measurement); :func:`write_curves`
draws one panel per workload, stacked. Without the ``report`` extra nothing is drawn and the caller
is told why, so a benchmark never fails for want of a plotting library.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .charts import figure, short, to_svg
from .extra import INSTALL_LINE, available


@dataclass
class Panel:
    title: str
    xlabel: str
    ylabel: str
    series: dict[str, list[tuple[float, float]]] = field(default_factory=dict)
    ylim: tuple[float, float] | None = (0.0, 1.02)


def curves_svg(panels: Sequence[Panel]) -> str:
    with figure(height=0.6 + 2.6 * len(panels), bottom_in=0.5) as fig:
        axes = fig.subplots(len(panels), 1, squeeze=False)[:, 0]  # type: ignore[attr-defined]
        fig.subplots_adjust(hspace=0.75)  # type: ignore[attr-defined]
        for ax, panel in zip(axes, panels, strict=True):
            for label, points in panel.series.items():
                ax.plot([x for x, _ in points], [y for _, y in points], marker="o", markersize=3, linewidth=1.4,
                        label=short(label))
            if panel.ylim is not None:
                ax.set_ylim(*panel.ylim)
            ax.set(title=panel.title, xlabel=panel.xlabel, ylabel=panel.ylabel)
            ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), fontsize=8, frameon=False)
        return to_svg(fig)


def write_curves(panels: Sequence[Panel], target: Path) -> str:
    """Write the chart (an SVG document) to ``target``; return a line saying what happened."""
    drawable = [p for p in panels if p.series]
    if not drawable:
        return f"no learning curve in the results; {target.name} not written"
    if not available():
        return f"learning curves not drawn ({INSTALL_LINE} draws them into {target.name})"
    target.write_text('<?xml version="1.0" encoding="utf-8"?>\n' + curves_svg(drawable), "utf-8")
    return f"learning curves drawn into {target}"
