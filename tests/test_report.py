"""`kaos report` through the real binary: a self-contained file, read-only, escaped, fast enough."""

from __future__ import annotations

import html
import json
import re
import sys
from pathlib import Path

import pytest

from kaos_dream import Library
from kaos_dream.demo import build_demo_library
from kaos_dream.report import build_report
from kaos_dream.report.records import RECENT_OUTCOMES, falling, skill_records

from .conftest import file_digest, run_kaos, run_kaos_in_process
from .report_libraries import RTL_OVERRIDE, big_library, hostile_library
from .scaling import children_cpu_seconds

SECTIONS = ("overview", "skills", "failures", "graph", "dream")


@pytest.fixture(scope="module")
def demo_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("demo") / "demo.db"
    build_demo_library(str(path))
    return path


def report_of(db: Path, out: Path, *args: str) -> str:
    r = run_kaos("report", "--out", str(out), *args, db=db)
    assert r.returncode == 0, r.stderr
    assert str(out.resolve()) in r.stdout
    return out.read_text(encoding="utf-8")


def test_demo_report_is_one_self_contained_file_and_reads_only(demo_db: Path, tmp_path: Path) -> None:
    before = file_digest(demo_db)
    doc = report_of(demo_db, tmp_path / "report.html")
    assert file_digest(demo_db) == before  # byte for byte
    wal = demo_db.with_name(demo_db.name + "-wal")  # SQLite's read-only open may leave an empty one
    assert not wal.exists() or wal.stat().st_size == 0
    for key in SECTIONS:
        assert f'<section id="{key}">' in doc
    # nothing to fetch: no URL a browser would load, no external script, stylesheet or font
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)""", doc, re.I)
    assert "@import" not in doc and "url(http" not in doc
    assert "default-src 'none'" in doc
    charts = re.findall(r'<figure class="chart" data-chart="([^"]+)"><svg', doc)
    assert {"skills-hot", "skills-record", "failures-categories", "graph", "dream-phases",
            "dream-proposals"} <= set(charts)
    assert any(c.startswith("incident-") for c in charts)  # the demo's systemic wave
    assert "http-retry-backoff" in doc and "kaos dream merges --accept N" in doc
    assert doc.count("<script>") == 1  # only the table sorter


def test_report_is_deterministic_and_since_limits_the_time_charts(demo_db: Path, tmp_path: Path) -> None:
    stamp = re.compile(r"generated \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")
    first = report_of(demo_db, tmp_path / "a.html")
    again = report_of(demo_db, tmp_path / "a.html")  # an earlier report is replaced
    assert stamp.search(first) and stamp.sub("", again) == stamp.sub("", first)  # only the clock differs
    later = report_of(demo_db, tmp_path / "b.html", "--since", "2099-01-01")
    assert "changes over time since 2099-01-01" in later
    assert 'data-chart="skills-hot"' not in later and 'data-chart="failures-categories"' not in later
    assert "no dream pass has run" in later
    assert 'data-chart="skills-record"' in later  # totals stay all-time


def test_empty_library_report(tmp_path: Path) -> None:
    db = tmp_path / "empty.db"
    assert run_kaos("init", db=db).returncode == 0
    doc = report_of(db, tmp_path / "r.html")
    for key in SECTIONS:
        assert f'<section id="{key}">' in doc
    for phrase in ("the library has no skills", "no failure recorded yet", "the graph has no edges yet",
                   "no dream pass has run", "no merge is waiting"):
        assert phrase in doc
    assert "<figure" not in doc


def test_hostile_names_are_escaped_everywhere(tmp_path: Path) -> None:
    db = tmp_path / "hostile.db"
    names = hostile_library(db)
    doc = report_of(db, tmp_path / "r.html")
    body = doc.split("</style>", 1)[1]
    assert body.count("<script") == 1 and "onerror=" not in body.replace("onerror=&quot;", "")
    assert "<img" not in body and "<b>bold" not in body
    for name in names:
        assert f"<bdi>{html.escape(name, quote=True)}</bdi>" in doc
    assert f"<bdi>{RTL_OVERRIDE}</bdi>" in doc  # isolated: it cannot reverse the text around it
    assert "\x1b" not in doc and "\x07" not in doc  # a control character in a key is replaced
    svgs = re.findall(r"<svg.*?</svg>", doc, re.S)
    assert svgs and all("<script" not in s and "window.__pwned" not in s for s in svgs)


def test_big_library_renders_within_budget(tmp_path: Path) -> None:
    """The report lists at most 1000 skills and 200 graph nodes, so 10x the library costs about the
    same: CPU time of the `kaos` process (never wall time) at 1k and 10k skills in one run (measured
    2.5 s and 2.1 s). Drawing every skill would cost ~10x."""
    small_db, db = tmp_path / "small.db", tmp_path / "big.db"
    big_library(small_db, skills=1_000, outcomes=6_000, edges=2_000)
    big_library(db)
    out = tmp_path / "big.html"
    small = children_cpu_seconds(lambda: report_of(small_db, tmp_path / "small.html"))
    cpu = children_cpu_seconds(lambda: report_of(db, out))
    doc = out.read_text(encoding="utf-8")
    size = out.stat().st_size
    print(f"report CPU: {small:.2f} s at 1k skills, {cpu:.2f} s at 10k; {size / 1e6:.2f} MB")
    assert cpu <= 3 * small, f"10k skills took {cpu:.2f} s of CPU, 1k {small:.2f} s"
    assert size <= 5_000_000
    assert "10000 skills; the 1000 most used are listed" in doc
    assert "more not shown; all: <code>kaos dream merges</code>" in doc
    assert re.search(r"shown: the 200 within 2 hops", doc)


def test_recent_record_and_falling_skills(lib: Library, clock) -> None:
    lib.skills.add("steady", "works")
    lib.skills.add("slipping", "used to work")
    for i in range(30):
        lib.record_outcome("steady", i % 5 != 0)
        lib.record_outcome("slipping", i < 20)  # 20 successes, then 10 failures
        clock.advance(60)
    records = {r.name: r for r in skill_records(lib.conn)}
    slip = records["slipping"]
    assert (slip.uses, slip.successes, slip.recent_uses, slip.recent_successes) == (30, 20, RECENT_OUTCOMES, 0)
    assert slip.drop == pytest.approx(20 / 30)
    assert records["steady"].recent_rate == pytest.approx(0.8)
    assert [r.name for r in falling(list(records.values()), 5)] == ["slipping"]
    doc = build_report(lib)
    assert 'data-chart="skills-falling"' in doc


def test_out_refuses_a_stranger_file_a_device_the_database_and_missing_folders(demo_db: Path, tmp_path: Path) -> None:
    # Refusals are parsing and checking before anything is written: in this process, through the
    # console script's own entry (tests/conftest.py run_kaos_in_process).
    stranger = tmp_path / "notes.html"
    stranger.write_text("my notes")
    r = run_kaos_in_process("report", "--out", str(stranger), db=demo_db)
    assert r.returncode == 1 and "is not a kaos report; remove it or choose another --out" in r.stderr
    assert stranger.read_text() == "my notes"
    before = file_digest(demo_db)
    r = run_kaos_in_process("report", "--out", str(demo_db), db=demo_db)
    assert r.returncode == 1 and "is the database itself" in r.stderr and file_digest(demo_db) == before
    r = run_kaos_in_process("report", "--out", "/dev/null", db=demo_db)
    assert r.returncode == 1 and "is not a regular file" in r.stderr
    link = tmp_path / "link.html"
    link.symlink_to(stranger)
    r = run_kaos_in_process("report", "--out", str(link), db=demo_db)
    assert r.returncode == 1 and "is not a regular file" in r.stderr and stranger.read_text() == "my notes"
    r = run_kaos_in_process("report", "--out", str(tmp_path / "nope" / "r.html"), db=demo_db)
    assert r.returncode == 1 and "does not exist" in r.stderr
    r = run_kaos_in_process("report", "--since", "yesterday-ish", db=demo_db)
    assert r.returncode == 1 and "neither epoch seconds nor an ISO-8601 time" in r.stderr
    r = run_kaos_in_process("report", "--out", str(tmp_path / "x.html"), db=tmp_path / "missing.db")
    assert r.returncode == 1 and not (tmp_path / "missing.db").exists() and not (tmp_path / "x.html").exists()
    assert "Traceback" not in r.stderr
    assert not list(tmp_path.glob(".*.tmp"))


def test_json_output(demo_db: Path, tmp_path: Path) -> None:
    r = run_kaos("--json", "report", "--out", str(tmp_path / "r.html"), db=demo_db)
    data = json.loads(r.stdout)
    written = tmp_path / "r.html"
    assert data["path"] == str(written.resolve()) and data["bytes"] == written.stat().st_size


HIDE_PLOTTING = (
    "import sys; sys.modules['matplotlib'] = None; sys.modules['networkx'] = None; "
    "from kaos_dream.entry import main; sys.argv = ['kaos'] + sys.argv[1:]; main()"
)


def test_without_the_extra_report_prints_the_install_line(demo_db: Path, tmp_path: Path) -> None:
    import subprocess

    from .conftest import PROJECT_ROOT

    out = tmp_path / "r.html"
    proc = subprocess.run([sys.executable, "-c", HIDE_PLOTTING, "--db", str(demo_db), "report", "--out", str(out)],
                          capture_output=True, text=True, cwd=PROJECT_ROOT, timeout=60)
    assert proc.returncode == 1
    assert proc.stderr.strip().splitlines() == [
        'kaos: error: kaos report draws its charts with matplotlib; install it with: pip install "kaos-dream[report]"']
    assert not out.exists()
    # the rest of the CLI does not need the extra
    proc = subprocess.run([sys.executable, "-c", HIDE_PLOTTING, "--db", str(demo_db), "graph", "export",
                           "--format", "dot"], capture_output=True, text=True, cwd=PROJECT_ROOT, timeout=60)
    assert proc.returncode == 0 and proc.stdout.startswith("digraph kaos {")


def test_report_help() -> None:
    r = run_kaos("report", "--help")
    assert r.returncode == 0 and "--out" in r.stdout and "--since" in r.stdout


def test_demo_ends_with_its_report(tmp_path: Path) -> None:
    db = tmp_path / "demo.db"
    r = run_kaos("demo", "--db", str(db))
    assert r.returncode == 0, r.stderr
    written = tmp_path / "demo.html"
    assert r.stdout.rstrip().endswith(f"report of the demo library: {written}")
    assert '<section id="graph">' in written.read_text(encoding="utf-8")
    data = json.loads(run_kaos("--json", "demo", "--db", str(db)).stdout)
    assert data["report"] == str(written)


def test_demo_without_the_extra_says_how_to_get_the_report(tmp_path: Path) -> None:
    import subprocess

    from .conftest import PROJECT_ROOT

    db = tmp_path / "demo.db"
    proc = subprocess.run([sys.executable, "-c", HIDE_PLOTTING, "demo", "--db", str(db)], capture_output=True,
                          text=True, cwd=PROJECT_ROOT, timeout=120, env={"COLUMNS": "300", "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.rstrip().endswith(f'for an HTML report of this library: pip install "kaos-dream[report]", '
                                         f"then kaos --db {db} report")
    assert not (tmp_path / "demo.html").exists()
