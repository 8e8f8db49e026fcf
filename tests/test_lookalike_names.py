"""Look-alike skill names (issue 33 item 4): a name whose TR39 confusable skeleton equals an existing
skill's is refused on `skill add`, a rename, `skill import` and `db import`, on both engines, naming the
existing skill and the character that differs; `db check` reports pairs an older version let in.

Every CLI call here is a real `kaos` process."""

from __future__ import annotations

import json
import sqlite3
import unicodedata
from pathlib import Path

import pytest

from kaos_dream import Library, Settings
from kaos_dream.names import _prototypes, confusable_skeleton
from kaos_dream.store.lookalikes import LOOKUP_SQL

from .conftest import query, run_kaos, target_digest
from .pg_server import needs_postgres

CYRILLIC = "d\u0435ploy-prod"  # U+0435 CYRILLIC SMALL LETTER IE for the e
HYPHEN = "deploy\u2010prod"  # U+2010 HYPHEN for the hyphen-minus
NFD_CAFE = unicodedata.normalize("NFD", "café-deploy")


def test_the_skeleton_equates_the_audits_look_alikes_and_nothing_else() -> None:
    assert confusable_skeleton(CYRILLIC) == confusable_skeleton(HYPHEN) == confusable_skeleton("deploy-prod")
    assert confusable_skeleton(NFD_CAFE) == confusable_skeleton("café-deploy")
    assert confusable_skeleton("\u0440\u0430ypal") == confusable_skeleton("paypal")  # Cyrillic er and a
    for different in ("deploy-prad", "deploy_prod", "deploy-prod2", "Deploy-prod", "café-deplay"):
        assert confusable_skeleton(different) != confusable_skeleton("deploy-prod"), different
    # The mapping is a skeleton: a prototype is never mapped again, so skeleton(skeleton(x)) == skeleton(x).
    mapping = _prototypes()
    assert len(mapping) > 6000
    assert not [s for s, t in mapping.items() if any(c in mapping for c in t)]
    sample = "".join(sorted(mapping)[::7])
    assert confusable_skeleton(confusable_skeleton(sample)) == confusable_skeleton(sample)


def _one_error_line(result, *words: str) -> str:
    assert result.returncode == 1, (result.returncode, result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    for word in words:
        assert word in lines[0], (word, lines[0])
    return lines[0]


def _names(db: str | Path) -> list[str]:
    listed = run_kaos("skill", "list", "--json", db=db)
    assert listed.returncode == 0, listed.stderr
    return [s["name"] for s in json.loads(listed.stdout)]


def _add_rename_and_refuse(db: str) -> None:
    assert run_kaos("skill", "add", "deploy-prod", "--description", "ship it", db=db).returncode == 0
    assert run_kaos("skill", "add", "café-deploy", db=db).returncode == 0
    assert run_kaos("skill", "add", "rotate-logs", db=db).returncode == 0
    before = target_digest(db)
    _one_error_line(run_kaos("skill", "add", CYRILLIC, db=db), "looks like the existing skill 'deploy-prod'",
                    "U+0435 CYRILLIC SMALL LETTER IE")
    _one_error_line(run_kaos("skill", "add", HYPHEN, db=db), "'deploy-prod'", "U+2010 HYPHEN")
    _one_error_line(run_kaos("skill", "add", NFD_CAFE, db=db), "already exists")
    _one_error_line(run_kaos("skill", "update", "rotate-logs", "--name", CYRILLIC, db=db),
                    "looks like the existing skill 'deploy-prod'")
    assert target_digest(db) == before  # nothing written by any refusal
    assert _names(db) == ["deploy-prod", "café-deploy", "rotate-logs"]
    # A rename to a look-alike of its own old name is no clash (it is the same skill).
    renamed = run_kaos("skill", "update", "deploy-prod", "--name", CYRILLIC, db=db)
    assert renamed.returncode == 0, renamed.stderr
    assert run_kaos("skill", "add", "deploy-prod", db=db).returncode == 1
    assert run_kaos("db", "check", db=db).returncode == 0


@pytest.mark.both_engines
def test_add_and_rename_refuse_a_look_alike(library_target: str) -> None:
    assert run_kaos("init", db=library_target).returncode == 0
    _add_rename_and_refuse(library_target)


def _plant_pair(target: str) -> None:
    """A look-alike pair as an older kaos-dream let it in: the second row written by plain SQL, with no
    stored skeleton (as rows from before migration 23 have)."""
    with Library(target, settings=Settings()) as lib, lib.transaction() as conn:
        conn.execute("INSERT INTO skills (name, description, template, tags, created_at, updated_at) "
                     "VALUES (?, '', '', '[]', 1, 1)", (CYRILLIC,))


def _check_reports_pair_and_add_fills_skeletons(db: str) -> None:
    assert run_kaos("skill", "add", "deploy-prod", db=db).returncode == 0
    _plant_pair(db)
    result = run_kaos("db", "check", "--json", db=db)
    assert result.returncode == 1, result.stderr
    problems = json.loads(result.stdout)["problems"]
    assert any("'deploy-prod'" in p and repr(CYRILLIC) in p and "look alike" in p and "U+0435" in p
               for p in problems), problems
    # The unskeletoned row is seen by the next write of a name: it fills the missing skeletons first (in
    # short transactions of their own, so an upgraded large library never holds the lock for long), then
    # refuses a third look-alike, naming the first; the refused name itself is not stored.
    _one_error_line(run_kaos("skill", "add", HYPHEN, db=db), "'deploy-prod'")
    assert query(db, "SELECT name_skeleton FROM skills WHERE name = ?", (CYRILLIC,)) == [("deploy-prod",)]
    assert query(db, "SELECT count(*) FROM skills WHERE name = ?", (HYPHEN,)) == [(0,)]


@pytest.mark.both_engines
def test_db_check_reports_a_pair_and_a_write_fills_old_rows(library_target: str) -> None:
    assert run_kaos("init", db=library_target).returncode == 0
    _check_reports_pair_and_add_fills_skeletons(library_target)


def _export_with_pair(tmp_path: Path) -> Path:
    src = tmp_path / "src.db"
    assert run_kaos("init", db=src).returncode == 0
    assert run_kaos("skill", "add", "deploy-prod", db=src).returncode == 0
    _plant_pair(str(src))
    dump = tmp_path / "pair.jsonl"
    assert run_kaos("db", "export", "--jsonl", str(dump), db=src).returncode == 0
    return dump


def test_db_import_refuses_an_export_holding_look_alikes_on_sqlite(tmp_path: Path) -> None:
    dump = _export_with_pair(tmp_path)
    target = tmp_path / "dst.db"
    _one_error_line(run_kaos("db", "import", str(dump), db=target), "look-alike skill names 'deploy-prod' and",
                    "nothing written")
    assert not target.exists()
    copied = tmp_path / "copy.db"  # `db copy` loads through the same checks
    _one_error_line(run_kaos("db", "copy", str(tmp_path / "src.db"), str(copied)), "look-alike skill names")
    assert not copied.exists()


@needs_postgres
def test_db_import_refuses_an_export_holding_look_alikes_on_postgresql(tmp_path: Path, pg_url: str) -> None:
    dump = _export_with_pair(tmp_path)
    before = target_digest(pg_url)
    _one_error_line(run_kaos("db", "import", str(dump), db=pg_url), "look-alike skill names 'deploy-prod' and")
    assert target_digest(pg_url) == before


def test_db_import_refuses_a_forged_skeleton(tmp_path: Path) -> None:
    """A stored skeleton that is not the name's would hide the name from the look-alike lookup."""
    src = tmp_path / "src.db"
    assert run_kaos("init", db=src).returncode == 0
    assert run_kaos("skill", "add", "deploy-prod", db=src).returncode == 0
    lines = run_kaos("db", "export", db=src).stdout.splitlines()
    columns = json.loads(lines[0])["tables"]["skills"]["columns"]
    forged = []
    for line in lines:
        doc = json.loads(line)
        if isinstance(doc, dict) and doc.get("t") == "skills":
            doc["r"][columns.index("name_skeleton")] = "something-else"
            line = json.dumps(doc, separators=(",", ":"))
        forged.append(line)
    dump = tmp_path / "forged.jsonl"
    dump.write_text("\n".join(forged) + "\n", encoding="utf-8")
    target = tmp_path / "dst.db"
    _one_error_line(run_kaos("db", "import", str(dump), db=target), "name skeleton that is not its name's")
    assert not target.exists()


def test_the_lookup_is_one_index_search_not_a_pass_over_every_name(tmp_path: Path) -> None:
    """On a large library an add must not skeletonise every name: the look-alike lookup and the fill's
    search for rows without a skeleton both use the index (SQLite's plan says so)."""
    db = tmp_path / "lib.db"
    with Library(str(db), settings=Settings()) as lib:
        lib.skills.add("deploy-prod")
        for sql, params in ((LOOKUP_SQL, ("x", "x", -1)),
                            ("SELECT id, name FROM skills WHERE name_skeleton IS NULL ORDER BY id LIMIT 1000", ())):
            plan = " ".join(str(r[-1]) for r in lib.conn.execute("EXPLAIN QUERY PLAN " + sql, params))
            assert "INDEX skills_name_skeleton" in plan and "SCAN" not in plan, plan


@pytest.mark.parametrize("name", [CYRILLIC, HYPHEN])
def test_a_promoted_memory_never_takes_a_look_alike_name(tmp_path: Path, name: str) -> None:
    """The dream names a promoted skill itself; it skips a name that looks like a taken one."""
    from kaos_dream.dream.proposals import _promoted_name

    db = tmp_path / "lib.db"
    with Library(str(db), settings=Settings()) as lib:
        lib.skills.add("promoted-" + name)
        with lib.transaction() as conn:
            chosen, skeleton = _promoted_name(conn, "deploy-prod", 7)
    assert chosen == "promoted-deploy-prod-7" and skeleton == confusable_skeleton(chosen)


def test_sqlite_file_from_before_the_migration_keeps_working(tmp_path: Path) -> None:
    """schema_v21's skills have no skeleton column; after the upgrade they are NULL until a write."""
    import shutil

    fixture = Path(__file__).parent / "fixtures" / "schema_v21.db"
    db = tmp_path / "old.db"
    shutil.copyfile(fixture, db)
    assert run_kaos("db", "migrate", db=db).returncode == 0
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT count(*) FROM skills WHERE name_skeleton IS NULL").fetchone()[0] == 3
    _one_error_line(run_kaos("skill", "add", "csv-to-parquet", db=db), "already exists")
    _one_error_line(run_kaos("skill", "add", "csv-to-p\u0430rquet", db=db), "'csv-to-parquet'")
    assert run_kaos("skill", "add", "rotate-logs", db=db).returncode == 0
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT count(*) FROM skills WHERE name_skeleton IS NULL").fetchone()[0] == 0


@pytest.mark.both_engines
def test_racing_processes_add_at_most_one_of_a_look_alike_set(library_target: str) -> None:
    """Six `kaos skill add` processes at once, each a different spelling that looks like 'deploy-prod':
    the check and the insert share one write lock, so exactly one is stored and the others are refused."""
    import os
    import subprocess

    from .conftest import SUITE_ENV, kaos_command

    assert run_kaos("init", db=library_target).returncode == 0
    spellings = ["deploy-prod", CYRILLIC, HYPHEN, "depl\u043ey-prod", "deploy-pr\u03bfd", "\u0501eploy-prod"]
    assert len({confusable_skeleton(s) for s in spellings}) == 1
    env = {k: v for k, v in os.environ.items() if not k.startswith("KAOS_")}
    env.update(SUITE_ENV, PYTHONPATH=str(Path(__file__).resolve().parent.parent))
    procs = [subprocess.Popen([*kaos_command(), "--db", library_target, "skill", "add", s], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for s in spellings]
    results = [(p.wait(timeout=120), p.stderr.read() if p.stderr else "") for p in procs]
    for p in procs:
        for stream in (p.stdout, p.stderr):
            if stream:
                stream.close()
    assert sorted(code for code, _ in results) == [0, 1, 1, 1, 1, 1], results
    assert all("looks like the existing skill" in err or "already exists" in err for code, err in results if code)
    stored = [row[0] for row in query(library_target, "SELECT name FROM skills")]
    assert len(stored) == 1 and stored[0] in spellings


def test_bulk_import_refuses_look_alikes_in_the_file_and_against_the_library(tmp_path: Path) -> None:
    """`skill import-jsonl`: a file whose names look alike is refused before a library file exists; a name
    that looks like a library skill is refused before any row is written."""
    within = tmp_path / "within.jsonl"
    within.write_text('{"name": "deploy-prod"}\n' + json.dumps({"name": CYRILLIC}) + "\n", encoding="utf-8")
    db = tmp_path / "lib.db"
    _one_error_line(run_kaos("skill", "import-jsonl", str(within), db=db), "looks like the name on line 1")
    assert not db.exists()
    assert run_kaos("skill", "add", "deploy-prod", db=db).returncode == 0
    against = tmp_path / "against.jsonl"
    against.write_text('{"name": "rotate-logs"}\n' + json.dumps({"name": HYPHEN}) + "\n", encoding="utf-8")
    _one_error_line(run_kaos("skill", "import-jsonl", str(against), db=db),
                    "looks like the existing skill 'deploy-prod'", "U+2010")
    assert _names(db) == ["deploy-prod"]
