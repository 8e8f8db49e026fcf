"""The shortcuts that keep a 100k dream pass near its read-and-tokenise floor give the same answers.

* Replay's per-skill totals come from the trigger-kept ``skill_stats`` when no outcome lies outside
  the window, and from the window's own rows otherwise: both must equal a direct count of the rows.
* The dream's vector backfill pools its batch without the wordllama package and stores what the
  package would have computed.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from kaos_dream import Library, ManualClock, Settings
from kaos_dream.dream.graph_phases import window_outcomes
from kaos_dream.store import transaction

from .conftest import PROJECT_ROOT, T0

HOUR = 3600.0


def _outcomes(lib: Library, rows: list[tuple[int, int, float]]) -> None:
    with transaction(lib.conn):
        lib.conn.executemany("INSERT INTO skill_uses (skill_id, success, created_at) VALUES (?, ?, ?)", rows)


def _counted(lib: Library, lo: float, hi: float) -> list[tuple[int, int, int]]:
    """The reference: the window's rows counted in Python."""
    per: dict[int, list[int]] = {}
    for skill_id, success, at in lib.conn.execute("SELECT skill_id, success, created_at FROM skill_uses"):
        if lo <= at <= hi:
            per.setdefault(skill_id, []).append(success)
    return [(s, len(v), sum(v)) for s, v in sorted(per.items())]


def _library(tmp_path: Path) -> Library:
    lib = Library(tmp_path / "lib.db", clock=ManualClock(T0), settings=Settings(semantic=False, dream_auto=False))
    for i in range(6):
        lib.skills.add(f"skill-{i}", f"does thing {i}")
    return lib


def test_window_totals_match_the_rows_on_both_paths(tmp_path: Path) -> None:
    lib = _library(tmp_path)
    _outcomes(lib, [(1, 1, T0), (1, 0, T0 + 1), (2, 1, T0 + 2), (3, 0, T0 + 3), (3, 0, T0 + 4), (3, 1, T0 + 5)])
    everything = (0.0, T0 + HOUR)  # a first pass: every outcome inside, the counters answer
    assert window_outcomes(lib.conn, *everything) == _counted(lib, *everything) == [(1, 2, 1), (2, 1, 1), (3, 3, 1)]
    later = (T0 + 2, T0 + HOUR)  # the older outcomes are outside: the window's rows answer
    assert window_outcomes(lib.conn, *later) == _counted(lib, *later) == [(2, 1, 1), (3, 3, 1)]
    _outcomes(lib, [(4, 1, T0 + 2 * HOUR)])  # dated after the window ends (a clock ahead): not counted
    assert window_outcomes(lib.conn, *everything) == _counted(lib, *everything)
    assert (4, 1, 1) not in window_outcomes(lib.conn, *everything)
    lib.close()


def test_first_pass_and_later_pass_report_the_window(tmp_path: Path) -> None:
    lib = _library(tmp_path)
    _outcomes(lib, [(1, 1, T0), (1, 1, T0), (2, 0, T0), (5, 1, T0)])
    lib.clock.advance(HOUR)
    first = lib.dream.run(apply=True).summary["phases"]["replay"]
    assert (first["skill_uses"], first["skill_successes"], first["cold_skills"]) == (4, 3, 3)
    assert [(h["name"], h["uses"]) for h in first["hot_skills"]] == [("skill-0", 2), ("skill-1", 1), ("skill-4", 1)]
    _outcomes(lib, [(2, 1, lib.now()), (6, 0, lib.now())])  # the next window holds these two only
    lib.clock.advance(HOUR)
    second = lib.dream.run(apply=True).summary["phases"]["replay"]
    assert (second["skill_uses"], second["skill_successes"], second["cold_skills"]) == (2, 1, 4)
    assert [(h["name"], h["uses"]) for h in second["hot_skills"]] == [("skill-1", 1), ("skill-5", 1)]
    lib.close()


@pytest.mark.skipif(importlib.util.find_spec("wordllama") is None, reason="the semantic extra is not installed")
def test_the_backfill_embeds_without_the_package_and_stores_its_vectors(tmp_path: Path) -> None:
    db = tmp_path / "lib.db"
    with Library(db, clock=ManualClock(T0), settings=Settings(semantic=False, dream_auto=False)) as lib:
        for i in range(40):
            lib.skills.add(f"deploy-service-{i}", f"ship build {i} to the cluster, then watch the canary")
        lib.memories.add("the deploy needs a warm cache", key="warm")
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(PROJECT_ROOT), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    build = "from kaos_dream.embedding import wordllama_fast\nassert wordllama_fast.load() is not None\n"
    assert subprocess.run([sys.executable, "-c", build], env=env, timeout=120).returncode == 0  # the tables cache
    code = ("import sys, json\nfrom kaos_dream import Library, Settings\n"
            "with Library(sys.argv[1], settings=Settings(dream_auto=False, strong_embedding_model='none')) as lib:\n"
            "    out = lib.dream.run(apply=True)\n"
            "print(json.dumps([out.summary['phases']['vectors']['embedded'],"
            " sorted(m for m in sys.modules if m.split('.')[0] in ('wordllama', 'tokenizers', 'safetensors'))]))")
    proc = subprocess.run([sys.executable, "-c", code, str(db)], capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr
    embedded, imported = json.loads(proc.stdout.strip().splitlines()[-1])
    assert embedded == 41 and imported == []
    from kaos_dream.embedding.store import skill_text

    with Library(db, settings=Settings(dream_auto=False)) as lib:
        model = lib.vectors.embedder()
        assert model is not None
        package = model._load_package()  # the reference: the wordllama package itself
        rows = lib.conn.execute("SELECT id, name, description, tags FROM skills ORDER BY id").fetchall()
        from kaos_dream.embedding.base import normalise_rows

        expected = normalise_rows(package.embed([skill_text(r[1], r[2], r[3]) for r in rows], norm=False,
                                                return_np=True))
        stored = [v for (v,) in lib.conn.execute(
            "SELECT vector FROM embeddings WHERE kind = 'skill' ORDER BY entry_id")]
        assert stored == [row.astype("<f4").tobytes() for row in expected]
