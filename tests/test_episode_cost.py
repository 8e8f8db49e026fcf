"""Episode cost (issue 32 item 6): recorded by the library and `kaos agent complete|fail|kill`, shown
by `agent show`, the dream digest and the report, carried by export/import; ranking never reads it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kaos_dream import Library, Settings
from kaos_dream.clock import ManualClock
from kaos_dream.episode_cost import EpisodeCost, cost_per_success
from kaos_dream.errors import InvalidInputError

from .conftest import run_kaos


@pytest.fixture
def lib(tmp_path: Path) -> Library:
    clock = ManualClock(1_767_225_600.0)
    library = Library(tmp_path / "kaos.db", clock=clock, settings=Settings())
    library.skills.add("csv-to-parquet", "Convert CSV files to parquet", "Convert {path}")
    library.skills.add("retry-with-backoff", "Retry a rate limited call", "Retry {call}")
    yield library
    library.close()


def episode(lib: Library, agent: str, skills: list[str], task: str, cost: EpisodeCost, state: str = "completed",
            seconds: float = 10.0) -> None:
    lib.episodes.start(agent)
    for skill in skills:
        lib.record_outcome(skill, state == "completed", agent=agent, task=task)
    lib.clock.advance(seconds)  # type: ignore[attr-defined]  (a ManualClock)
    lib.episodes.end(agent, state, cost=cost)


def test_cost_is_stored_with_the_end_and_a_missing_duration_is_the_time_since_start(lib: Library) -> None:
    episode(lib, "a1", ["csv-to-parquet"], "convert a file", EpisodeCost(5200, 800, 7), seconds=42.0)
    ep = lib.episodes.get("a1")
    assert (ep.tokens_in, ep.tokens_out, ep.tool_calls, ep.duration_s) == (5200, 800, 7, 42.0)
    lib.episodes.start("a2")
    lib.episodes.add_usage("a2", EpisodeCost(tool_calls=1, tokens_in=10))
    lib.episodes.add_usage("a2", EpisodeCost(tool_calls=2))
    lib.episodes.kill("a2", cost=EpisodeCost(tokens_out=3, duration_s=5.5))
    ep = lib.episodes.get("a2")
    assert (ep.tokens_in, ep.tokens_out, ep.tool_calls, ep.duration_s) == (10, 3, 3, 5.5)
    lib.episodes.add_usage("a2", EpisodeCost(tool_calls=50))  # an ended episode keeps what it ended with
    assert lib.episodes.get("a2").tool_calls == 3
    with pytest.raises(InvalidInputError, match="tokens in must be a whole number"):
        lib.episodes.complete("a1", cost=EpisodeCost(tokens_in=-1))
    with pytest.raises(InvalidInputError, match="duration must be"):
        EpisodeCost(duration_s=float("nan")).checked()


def test_cost_per_successful_episode_by_skill_and_by_task(lib: Library) -> None:
    episode(lib, "e1", ["csv-to-parquet"], "convert a file", EpisodeCost(1000, 100, 4), seconds=10)
    episode(lib, "e2", ["csv-to-parquet", "retry-with-backoff"], "convert a file", EpisodeCost(3000, 300, 8),
            seconds=30)
    episode(lib, "e3", ["retry-with-backoff"], "fetch the orders", EpisodeCost(500, 50, 2), state="failed")
    episode(lib, "e4", ["csv-to-parquet"], "convert a file", EpisodeCost(), seconds=20)  # reported nothing
    cost = cost_per_success(lib.conn)
    overall = cost["overall"]
    assert (overall["episodes"], overall["reported"], overall["median_tokens"], overall["median_tool_calls"]) == (
        3, 2, 2200.0, 6.0)
    by_skill = {g["name"]: g for g in cost["by_skill"]}
    assert (by_skill["csv-to-parquet"]["episodes"], by_skill["csv-to-parquet"]["median_tokens"]) == (2, 2200.0)
    assert (by_skill["retry-with-backoff"]["episodes"], by_skill["retry-with-backoff"]["total_tokens"]) == (1, 3300)
    assert [(g["name"], g["episodes"]) for g in cost["by_task"]] == [("convert a file", 2)]  # the failed one: no


def test_ranking_does_not_read_cost(lib: Library) -> None:
    """The same outcomes with and without cost give the same ranking."""
    episode(lib, "r1", ["csv-to-parquet"], "convert csv", EpisodeCost(10**9, 10**9, 10**6))
    other = Library(lib.path + ".b", settings=Settings(), clock=lib.clock)
    other.skills.add("csv-to-parquet", "Convert CSV files to parquet", "Convert {path}")
    other.skills.add("retry-with-backoff", "Retry a rate limited call", "Retry {call}")
    episode(other, "r1", ["csv-to-parquet"], "convert csv", EpisodeCost())
    after = [(h.name, h.score) for h in lib.search("convert csv parquet retry", kind="skill")]
    assert after == [(h.name, h.score) for h in other.search("convert csv parquet retry", kind="skill")]
    other.close()


def test_cli_records_and_shows_cost_and_the_digest_and_report_show_it(tmp_path: Path) -> None:
    db = tmp_path / "kaos.db"
    assert run_kaos("skill", "add", "csv-to-parquet", "--description", "Convert CSV", "--template", "x",
                    db=db).returncode == 0
    assert run_kaos("agent", "start", "--id", "run-42", db=db).returncode == 0
    assert run_kaos("record-outcome", "csv-to-parquet", "--success", "--agent", "run-42", "--task",
                    "convert a file", db=db).returncode == 0
    done = run_kaos("agent", "complete", "run-42", "--tokens-in", "5200", "--tokens-out", "800", "--tool-calls", "7",
                    "--duration", "42", "--json", db=db)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["episode"]["tool_calls"] == 7
    shown = run_kaos("agent", "show", "run-42", db=db)
    assert "5,200 / 800" in shown.stdout and "42.0 s" in shown.stdout
    bad = run_kaos("agent", "fail", "run-42", "--tokens-in", "-1", db=db)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1
    digest = run_kaos("dream", "run", db=db)
    assert digest.returncode == 0, digest.stderr
    assert "cost per successful episode (median; 1 of 1 completed reported): 6,000 tokens, 7 tool calls, 42.0 s" \
        in digest.stdout
    assert "| csv-to-parquet | 1 | 6,000 | 7 | 42.0 s |" in digest.stdout
    assert "| convert a file | 1 | 6,000 | 7 | 42.0 s |" in digest.stdout
    pytest.importorskip("matplotlib")
    report = run_kaos("report", "-o", str(tmp_path / "r.html"), db=db)
    assert report.returncode == 0, report.stderr
    html = (tmp_path / "r.html").read_text()
    assert '<section id="cost">' in html and "convert a file" in html and ">6000<" in html.replace(",", "")


def test_export_import_carries_cost_and_hook_events(tmp_path: Path) -> None:
    db, copy = tmp_path / "a.db", tmp_path / "b.db"
    with Library(db, settings=Settings()) as lib:
        lib.episodes.start("x")
        lib.episodes.complete("x", cost=EpisodeCost(1, 2, 3, 4.0))
        lib.conn.execute("INSERT INTO hook_events (event_id, agent_id, kind, received_at) VALUES ('e', 'x', 'tool', 1)")
    assert run_kaos("db", "export", str(tmp_path / "e.jsonl"), db=db).returncode == 0
    imported = run_kaos("db", "import", str(tmp_path / "e.jsonl"), db=copy)
    assert imported.returncode == 0, imported.stderr
    with Library(copy, settings=Settings(), readonly=True) as lib:
        ep = lib.episodes.get("x")
        assert (ep.tokens_in, ep.tokens_out, ep.tool_calls, ep.duration_s) == (1, 2, 3, 4.0)
        assert [r[0] for r in lib.conn.execute("SELECT event_id FROM hook_events")] == ["e"]
    assert run_kaos("db", "export", str(tmp_path / "e2.jsonl"), db=copy).returncode == 0
    assert (tmp_path / "e.jsonl").read_bytes() == (tmp_path / "e2.jsonl").read_bytes()
