"""The report tells the truth: falling skills, visible zero bars, agents and targets by name, tasks won."""

from __future__ import annotations

from kaos_dream import Library
from kaos_dream.report import build_report
from kaos_dream.report.records import MIN_EVIDENCE, falling, skill_records


def test_one_rising_one_falling_one_flat(lib: Library, clock) -> None:
    lib.skills.add("rising", "got better")
    lib.skills.add("flat", "always the same")
    lib.skills.add("fell", "worked, then broke")
    for i in range(12):  # rising: 2 of the first 6 succeed, then all 6 (its line goes up: 0.67 -> 1.0 overall)
        lib.record_outcome("rising", i >= 6 or i % 3 == 0)
        lib.record_outcome("flat", i % 2 == 0)
        clock.advance(60)
    for i in range(6):  # fell: 3 successes, then 3 failures, then deprecated (a small skill)
        lib.record_outcome("fell", i < 3)
        clock.advance(60)
    lib.skills.deprecate("fell")
    records = {r.name: r for r in skill_records(lib.conn)}
    assert (records["fell"].window_uses, records["fell"].before_uses) == (MIN_EVIDENCE, MIN_EVIDENCE)
    assert records["fell"].fall == 1.0 and records["rising"].fall == 0.0 and records["flat"].fall == 0.0
    assert [r.name for r in falling(list(records.values()), 5)] == ["fell"]
    doc = build_report(lib)
    assert 'data-chart="skills-falling"' in doc and "no skill is falling yet" not in doc
    listed = doc[doc.index('<ul class="falling">'):]
    listed = listed[: listed.index("</ul>")]
    assert "fell (deprecated): 3/3 before, then 0/3" in listed and "rising" not in listed


def test_too_little_evidence_is_not_falling(lib: Library, clock) -> None:
    lib.skills.add("new", "barely used")
    for ok in (True, True, False, False):  # two and two: below the minimum on each side
        lib.record_outcome("new", ok)
        clock.advance(60)
    assert falling(skill_records(lib.conn), 5) == []


def test_incident_rows_are_agents_by_name() -> None:
    from kaos_dream.report.queries import agent_labels

    hexa, hexb = "3f" * 16, "a1" * 16
    labels = agent_labels({(hexa, "nightly-etl"), (hexb, None), ("c1", "twin"), ("c2", "twin"), (None, None)})
    assert labels[(hexa, "nightly-etl")] == "nightly-etl" and labels[(hexb, None)] == hexb
    assert labels[("c1", "twin")] == "twin (c1)" and labels[("c2", "twin")] == "twin (c2)"
    assert labels[(None, None)] == "(unknown agent)"


def test_a_zero_bar_is_drawn() -> None:
    """A 0 % recent record drew nothing (it read as missing data); now it gets a visible stub."""
    import re

    from kaos_dream.report import charts

    def bars(values: list[float]) -> int:
        svg = charts.grouped_bars("t", ["a", "b"], {"all-time": values, "recent": [0.5, 0.5]}, ylabel="rate")
        return len(re.findall(r'id="patch_\d+"', svg))

    assert bars([0.0, 0.5]) == bars([0.25, 0.5]) + 1  # the same bars plus the stub for the zero


def test_the_report_says_which_tasks_each_skill_wins(lib: Library, clock) -> None:
    lib.skills.add("csv-to-parquet", "convert")
    for task, ok in (("convert the nightly export", True), ("convert the nightly export", True),
                     ("shrink the archive", False), ("load the sales csv", True)):
        lib.record_outcome("csv-to-parquet", ok, task=task)
        clock.advance(60)
    doc = build_report(lib)
    section = doc[doc.index("tasks each skill wins"):]
    section = section[: section.index("</table>")]
    assert "convert the nightly export (2/2); load the sales csv (1/1)" in section
    assert "shrink the archive" not in section  # never won


def test_proposal_targets_are_named(lib: Library) -> None:
    from kaos_dream.report.queries import target_names

    memory = lib.memories.add("staging needs the new TLS bundle", key="staging-tls").id
    skill = lib.skills.add("deploy-friday", "deploy").id
    assert target_names(lib.conn, f"memory:{memory}") == ["memory:staging-tls"]
    assert target_names(lib.conn, f"skill:{skill},memory:{memory}") == ["skill:deploy-friday", "memory:staging-tls"]
    assert target_names(lib.conn, "policy:3") == []


def test_time_axes_use_one_clock_format() -> None:
    """Seconds never appear as a bare number beside HH:MM: every tick is a date or a clock time."""
    import re
    from datetime import UTC, datetime

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from kaos_dream.report import charts

    for span, pattern in ((50, r"\d\d:\d\d:\d\d"), (3000, r"\d\d:\d\d"), (86_400 * 3, r"\d{4}-\d\d-\d\d")):
        fig, ax = plt.subplots()
        ax.plot([datetime.fromtimestamp(1.767e9 + span * i / 5, UTC) for i in range(6)], range(6))
        charts._time_axis(ax)
        fig.canvas.draw()
        labels = [t.get_text() for t in ax.get_xticklabels() if t.get_text()]
        plt.close(fig)
        assert labels and all(re.fullmatch(pattern, x) for x in labels), (span, labels)
