"""Issue 33 item 1 and issue 36's lease: who writes (principals), how many episodes one may hold open,
and what the dream does with an episode whose client never came back.

Real files (and the PostgreSQL test server where marked), real `kaos mcp serve` processes, a manual clock.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kaos_dream import Library, ManualClock, Settings
from kaos_dream.errors import ConflictError, InvalidInputError

from .conftest import run_kaos_in_process as run_kaos

STALE = 21_600.0  # the default KAOS_EPISODE_STALE_AFTER_S


@pytest.mark.both_engines
def test_episodes_name_their_principal_and_the_library_default_is_user_at_host(lib: Library) -> None:
    import getpass
    import socket

    assert lib.episodes.start("e1").principal == f"{getpass.getuser()}@{socket.gethostname()}"
    assert lib.episodes.start("e2", principal="ci-bot").principal == "ci-bot"
    lib.record_outcome(lib.skills.add("s").id, True, agent="auto-registered")
    assert lib.episodes.get("auto-registered").principal == lib.principal
    with pytest.raises(InvalidInputError, match="principal"):
        lib.episodes.start("e3", principal="bad\u202eone")


def test_a_pinned_principal_is_checked_before_the_file_is_touched(tmp_path: Path) -> None:
    with pytest.raises(InvalidInputError, match="KAOS_PRINCIPAL"):
        Library(tmp_path / "k.db", settings=Settings(principal="\x1b[31m"))
    assert not (tmp_path / "k.db").exists()
    with Library(tmp_path / "k.db", settings=Settings(principal="deploy-bot")) as lib:
        assert lib.episodes.start().principal == "deploy-bot"


@pytest.mark.both_engines
def test_the_open_episode_cap_counts_running_episodes_that_are_not_stale(
        library_target: str, clock: ManualClock) -> None:
    settings = Settings(principal_max_open_episodes=2)
    with Library(library_target, clock=clock, settings=settings, principal="client") as lib:
        lib.episodes.start("a")
        lib.episodes.start("b")
        with pytest.raises(ConflictError, match="already has 2 running episodes"):
            lib.episodes.start("c")
        assert lib.episodes.start("x", principal="someone-else").state == "running"
        lib.episodes.kill("a")
        lib.episodes.start("c")  # ending one freed its place
        with pytest.raises(ConflictError):
            lib.episodes.start("d")
        clock.advance(STALE + 1)  # b and c crashed long ago: stale, they no longer hold places
        lib.episodes.start("d")
        lib.episodes.start("e")
        with pytest.raises(ConflictError):
            lib.episodes.start("f")


@pytest.mark.both_engines
def test_the_dream_marks_stale_episodes_killed_deterministically(library_target: str, clock: ManualClock) -> None:
    with Library(library_target, clock=clock, settings=Settings(), principal="client") as lib:
        lib.episodes.start("old-2")
        lib.episodes.start("old-1")
        clock.advance(STALE / 2)
        lib.episodes.start("young")
        lib.episodes.start("done")
        lib.episodes.complete("done")
        clock.advance(STALE / 2 + 1)
        dry = lib.dream.run()
        assert dry.summary["phases"]["leases"] == {"applied": False, "stale": 2, "killed": 0,
                                                   "episodes": ["old-1", "old-2"]}
        assert lib.episodes.get("old-1").state == "running"
        applied = lib.dream.run(apply=True)
        assert applied.summary["phases"]["leases"]["killed"] == 2
        assert "Stale episodes" in applied.digest and "old-1, old-2" in applied.digest
        for agent in ("old-1", "old-2"):
            ep = lib.episodes.get(agent)
            assert ep.state == "killed" and ep.ended_at == clock.now() and ep.processed_at == clock.now()
            assert "KAOS_EPISODE_STALE_AFTER_S" in (ep.conclusion or "")
        assert lib.episodes.get("young").state == "running" and lib.episodes.get("done").state == "completed"
        # the client comes back after all: ending a killed episode changes nothing
        assert lib.episodes.complete("old-1").changed is False
        assert lib.dream.run(apply=True).summary["phases"]["leases"]["stale"] == 0


def test_export_and_import_carry_the_principal(tmp_path: Path) -> None:
    src, out, dst = tmp_path / "a.db", tmp_path / "a.jsonl", tmp_path / "b.db"
    with Library(src, settings=Settings(), principal="ci-bot") as lib:
        lib.episodes.start("e1")
    assert run_kaos("db", "export", str(out), db=src).returncode == 0
    header = json.loads(out.read_text().splitlines()[0])
    assert "principal" in header["tables"]["agents"]["columns"]
    done = run_kaos("db", "import", str(out), db=dst)
    assert done.returncode == 0, done.stderr
    with Library(dst, settings=Settings(), readonly=True) as lib:
        assert lib.episodes.get("e1").principal == "ci-bot"


def test_one_mcp_server_is_one_principal_however_many_episodes_it_opens(tmp_path: Path) -> None:
    pytest.importorskip("mcp")
    from .test_mcp_server import call, call_error
    from .test_mcp_trust import run, server

    db = str(tmp_path / "k.db")
    with Library(db, settings=Settings()) as lib:
        lib.skills.add("deploy-safely", "Deploy with health checks", "deploy")

    async def script() -> None:
        env = {"KAOS_PRINCIPAL_MAX_OPEN_EPISODES": "4"}
        async with server(db, "--principal", "one-client", env=env) as s:
            for i in range(4):
                await call(s, "agent_start", {"agent": f"ep-{i}"})
                for _ in range(2):
                    await call(s, "record_outcome", {"skill": "deploy-safely", "success": False, "agent": f"ep-{i}"})
            assert "KAOS_PRINCIPAL_MAX_OPEN_EPISODES" in await call_error(s, "agent_start", {"agent": "ep-4"})
            for i in range(4):
                await call(s, "agent_end", {"agent": f"ep-{i}", "state": "failed"})
            for i in range(4, 8):  # ended episodes free their places: still one principal
                await call(s, "agent_start", {"agent": f"ep-{i}"})
                await call(s, "record_outcome", {"skill": "deploy-safely", "success": False, "agent": f"ep-{i}"})

    run(script)
    with Library(db, settings=Settings()) as lib:
        assert {r[0] for r in lib.conn.execute("SELECT DISTINCT principal FROM agents")} == {"one-client"}
        lib.dream.run(apply=True)
        assert not lib.skills.get("deploy-safely").deprecated
        assert lib.conn.execute("SELECT count(*) FROM proposals WHERE kind = 'prune'").fetchone()[0] == 0


def test_skill_names_are_nfc_so_composed_and_decomposed_spellings_are_one_name(tmp_path: Path) -> None:
    """Issue 33 item 4 (its NFC part): `café-deploy` typed composed and decomposed was two skills."""
    composed, decomposed = "caf\u00e9-deploy", "cafe\u0301-deploy"
    with Library(tmp_path / "k.db", settings=Settings()) as lib:
        added = lib.skills.add(decomposed, "d", "t")
        assert added.name == composed
        with pytest.raises(ConflictError, match="already exists"):
            lib.skills.add(composed, "d", "t")
        assert lib.skills.get(decomposed).id == lib.skills.get(composed).id == added.id
        other = lib.skills.add("other", "d", "t")
        with pytest.raises(ConflictError):
            lib.skills.update(other.id, name=decomposed)
