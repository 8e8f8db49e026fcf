"""Issue 16 §2-3: evidence ages when contradicted; exploration is seeded and opt-in."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kaos_dream import Library, ManualClock, Settings
from kaos_dream.errors import InvalidInputError
from kaos_dream.plasticity.evidence import aged, horizon_of

from .conftest import T0


@pytest.fixture
def kaos(kaos_in_process):
    """This file's CLI tests check parsing, rendering and effects: run `kaos` in-process."""
    return kaos_in_process

TASK = "deploy the payments service"


def siblings(lib: Library) -> tuple[int, int]:
    old = lib.skills.add("deploy-with-helm", "Deploy the service to the cluster with Helm").id
    new = lib.skills.add("deploy-with-argocd", "Deploy the service to the cluster with Argo CD").id
    lib.skills.add("resize-images", "Resize images")
    return old, new


def top_after_switch(lib: Library, old: int, failures: int) -> str:
    for _ in range(20):
        lib.record_outcome(old, True, task=TASK)
    for _ in range(failures):
        lib.record_outcome(old, False, task=TASK)
    return lib.search("deploy the service", kind="skill", limit=1, task=TASK)[0].name


@pytest.mark.parametrize(
    ("newest", "uses", "wins", "expected"),
    [
        ("", 0, 0, (0.0, 0.0)),
        ("111", 3, 3, (3.0, 3.0)),  # nothing contradicts: no aging
        ("0", 21, 20, (10.0, 11.0)),  # one failure halves 20 older successes (half-life 1)
        ("00", 22, 20, (5.0, 7.0)),
        ("10", 22, 21, (1 + 20 * 0.5, 1 + 20 * 0.5 + 0.5)),  # the failure is discounted by the later success
    ],
)
def test_aged_record_by_hand(newest: str, uses: int, wins: int, expected: tuple[float, float]) -> None:
    assert aged(newest, uses, wins, 1.0) == pytest.approx(expected)
    assert aged(newest, uses, wins, 0.0) == (wins, uses)  # half-life 0: the all-time record


def test_the_new_convention_wins_after_a_few_failures(lib: Library) -> None:
    old, new = siblings(lib)
    assert top_after_switch(lib, old, 3) == "deploy-with-helm"  # 20 successes at 1/8 still outweigh 3 failures
    lib.record_outcome(old, False, task=TASK)
    assert lib.search("deploy the service", kind="skill", limit=1, task=TASK)[0].id == new  # the 4th does not
    lib.record_outcome(new, True, task=TASK)
    assert lib.search("deploy the service", kind="skill", limit=1, task=TASK)[0].id == new


def test_all_time_counters_keep_the_old_convention(db_path: Path, clock: ManualClock) -> None:
    with Library(db_path, clock=clock, settings=Settings(evidence_half_life=0)) as lib:
        old, _ = siblings(lib)
        assert top_after_switch(lib, old, 10) == "deploy-with-helm"  # what main did


def test_a_record_nothing_contradicts_keeps_its_weight(lib: Library) -> None:
    old, _ = siblings(lib)
    for _ in range(40):
        lib.record_outcome(old, True, task=TASK)
    record = lib.skill_record(old)
    assert record["all_time"] == {"uses": 40, "successes": 40, "failures": 0}
    assert record["effective"] == {"uses": 40.0, "successes": 40.0, "failures": 0.0}
    assert horizon_of(1.0) == 8  # only the newest 8 are read one by one; the rest come from the counters


def test_effective_record_reads_the_newest_outcomes_in_order(lib: Library, clock: ManualClock) -> None:
    old, _ = siblings(lib)
    for ok in (False, True, True):  # oldest first
        clock.advance(60)
        lib.record_outcome(old, ok, task=TASK)
    record = lib.skill_record(old)
    # The failure came before two successes: weight 1/4. Reversed order would give 2 x 1/2 + 1 = 2.
    assert record["effective"] == {"uses": 2.25, "successes": 2.0, "failures": 0.25}
    assert record["tasks"][0]["task"] == TASK and record["tasks"][0]["effective"] == record["effective"]


def test_skill_show_reports_both_records(kaos, tmp_path: Path) -> None:
    db = tmp_path / "k.db"
    kaos("skill", "add", "deploy-with-helm", "-d", "Deploy with Helm", db=db)
    for flag in ("--success", "--success", "--failure"):
        assert kaos("record-outcome", "deploy-with-helm", flag, "--task", TASK, db=db).returncode == 0
    shown = json.loads(kaos("--json", "skill", "show", "deploy-with-helm", db=db).stdout)["record"]
    assert shown["all_time"] == {"uses": 3, "successes": 2, "failures": 1}
    assert shown["effective"] == {"uses": 2.0, "successes": 1.0, "failures": 1.0}
    assert shown["half_life_outcomes"] == 1.0 and shown["tasks"][0]["task"] == TASK
    human = kaos("skill", "show", "deploy-with-helm", db=db).stdout
    assert "2/3 all-time" in human and "1.00/2.00 effective" in human
    off = kaos("--json", "skill", "show", "deploy-with-helm", db=db, env={"KAOS_EVIDENCE_HALF_LIFE": "0"})
    assert json.loads(off.stdout)["record"]["effective"]["uses"] == 3.0
    bad = kaos("skill", "show", "deploy-with-helm", db=db, env={"KAOS_EVIDENCE_HALF_LIFE": "-1"})
    assert bad.returncode != 0 and len(bad.stderr.strip().splitlines()) == 1


def _explore_orders(lib: Library, seeds: range) -> list[list[int]]:
    return [[h.id for h in lib.search("deploy the service", kind="skill", task=TASK, explore=True, seed=s)]
            for s in seeds]


def test_explore_is_seeded_and_off_by_default(db_path: Path) -> None:
    with Library(db_path, clock=ManualClock(T0), settings=Settings()) as lib:
        old, new = siblings(lib)
        for _ in range(5):
            lib.record_outcome(old, True, task=TASK)
        greedy = [h.id for h in lib.search("deploy the service", kind="skill", task=TASK)]
        assert greedy[0] == old and greedy == [h.id for h in lib.search("deploy the service", kind="skill",
                                                                        task=TASK)]
        orders = _explore_orders(lib, range(40))
        assert orders == _explore_orders(lib, range(40))  # same seed, same data: same order
        firsts = [o[0] for o in orders]
        # Thompson sampling: the proven skill usually leads, the untried sibling sometimes does.
        assert firsts.count(old) > firsts.count(new) > 0
        assert all(sorted(o) == sorted(greedy) for o in orders)
    again = Library(db_path, clock=ManualClock(T0), settings=Settings(explore_seed=7))
    with again:
        assert [h.id for h in again.search("deploy the service", kind="skill", task=TASK, explore=True)] == \
            _explore_orders(again, range(7, 8))[0]  # the setting is the default seed


def test_explore_arguments_are_checked(lib: Library) -> None:
    siblings(lib)
    with pytest.raises(InvalidInputError, match="weighted"):
        lib.search("deploy", explore=True, rank="bm25")
    with pytest.raises(InvalidInputError, match="explore"):
        lib.search("deploy", seed=3)
    with pytest.raises(InvalidInputError, match="seed"):
        lib.search("deploy", explore=True, seed=-1)


def test_explore_through_the_cli(kaos, tmp_path: Path) -> None:
    db = tmp_path / "k.db"
    kaos("skill", "add", "deploy-with-helm", "-d", "Deploy the service with Helm", db=db)
    kaos("skill", "add", "deploy-with-argocd", "-d", "Deploy the service with Argo CD", db=db)
    args = ("--json", "search", "deploy the service", "--kind", "skill", "--explore", "--seed", "11")
    first = kaos(*args, db=db)
    assert first.returncode == 0, first.stderr
    assert first.stdout == kaos(*args, db=db).stdout
    bad = kaos("search", "deploy", "--rank", "bm25", "--explore", db=db)
    assert bad.returncode != 0 and "explore" in bad.stderr and "Traceback" not in bad.stderr
