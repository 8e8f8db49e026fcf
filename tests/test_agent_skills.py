"""Agent Skills folders in and out (issue 32 items 1-4): validation with `path:line` problems, hostile
folders refused, all-or-nothing import, sync, export with the learned record, byte-stable round trip,
progressive disclosure. Real files, real SQLite libraries, `kaos` run as the CLI runs it."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from kaos_dream import Library
from kaos_dream.agent_skills.exporter import MANIFEST, export_skills
from kaos_dream.agent_skills.format import parse_skill_md
from kaos_dream.agent_skills.importer import SYNC_REASON, SkillProblemsError, import_skills

from .conftest import PROJECT_ROOT, file_digest, kaos_command, run_kaos_in_process


def write_skill(root: Path, name: str, description: str = "Does a thing; use it when a thing is needed.",
                body: str = "# Steps\n\n1. Do it.\n", extra: str = "", newline: str = "\n",
                files: dict[str, bytes] | None = None, folder: str | None = None) -> Path:
    skill = root / (folder or name)
    skill.mkdir(parents=True, exist_ok=True)
    front = f"---\nname: {name}\ndescription: {json.dumps(description, ensure_ascii=False)}\n{extra}---\n"
    (skill / "SKILL.md").write_bytes((front + body).replace("\n", newline).encode("utf-8"))
    for rel, data in (files or {}).items():
        (skill / rel).parent.mkdir(parents=True, exist_ok=True)
        (skill / rel).write_bytes(data)
    return skill


def fixture_tree(root: Path) -> Path:
    """Unicode, a long description, CRLF, bundled binaries, metadata and the optional fields."""
    write_skill(root, "pdf-tools", "Extract text and tables from PDFs. Use when a task mentions a PDF.",
                body="# PDF\n\nRun `python scripts/extract.py {path}`.\n",
                extra="license: Apache-2.0\ncompatibility: needs python3 and pdfplumber\n"
                      "allowed-tools: Bash Read\nmetadata:\n  author: data-team\n  version: \"1.0\"\n",
                files={"scripts/extract.py": b"import sys\nprint(sys.argv)\n",
                       "assets/logo.png": bytes(range(256)) * 8, "references/REFERENCE.md": "é🦖\n".encode()})
    (root / "pdf-tools" / "scripts" / "extract.py").chmod(0o755)
    write_skill(root / "nested", "unicode-notes", "Notes in many scripts: 日本語, Ελληνικά, emoji 🦖, RTL عربى",
                body="Übersicht — “quotes” and ‘single’ ✓\n\n```json\n{\"a\": 1}\n```\n")
    write_skill(root, "long-description", "x" * 700 + " when needed: " + "y" * 300, body="short\n")
    write_skill(root, "windows-file", "Written on Windows with CRLF line ends.", body="line one\nline two\n",
                newline="\r\n", files={"data.bin": b"\r\n\x00\xff\xfe"})
    return root


def tree_bytes(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture
def library(db_path: Path, clock) -> Library:
    lib = Library(db_path, clock=clock)
    yield lib
    lib.close()


# -- import ------------------------------------------------------------------------------------------

def test_import_keeps_body_front_matter_and_files(tmp_path: Path, library: Library) -> None:
    tree = fixture_tree(tmp_path / "tree")
    result = import_skills(library, [tree])
    assert result.counts()["added"] == 4
    pdf = library.skills.get("pdf-tools")
    assert pdf.template == "# PDF\n\nRun `python scripts/extract.py {path}`.\n"
    assert pdf.parameters == ("path",)  # the body is the template `skill apply` renders
    assert library.skills.render("pdf-tools", {"path": "a.pdf"}).endswith("extract.py a.pdf`.\n")
    kept = json.loads(library.conn.execute(
        "SELECT front_matter FROM skill_packages WHERE skill_id = ?", (pdf.id,)).fetchone()[0])
    assert kept == {"license": "Apache-2.0", "compatibility": "needs python3 and pdfplumber",
                    "allowed-tools": "Bash Read", "metadata": {"author": "data-team", "version": "1.0"}}
    files = library.conn.execute("SELECT path, size, sha256, content FROM skill_files WHERE skill_id = ? "
                                 "ORDER BY path", (pdf.id,)).fetchall()
    assert [f[0] for f in files] == ["assets/logo.png", "references/REFERENCE.md", "scripts/extract.py"]
    for path, size, sha, content in files:
        on_disk = (tree / "pdf-tools" / path).read_bytes()
        assert bytes(content) == on_disk and size == len(on_disk) and sha == hashlib.sha256(on_disk).hexdigest()
    assert library.skills.get("windows-file").template == "line one\r\nline two\r\n"


def problems_of(library: Library, *paths: Path) -> list[str]:
    with pytest.raises(SkillProblemsError) as caught:
        import_skills(library, list(paths))
    return [str(p) for p in caught.value.problems]


@pytest.mark.parametrize(("front", "line", "needle"), [
    ("name: Bad_Name\ndescription: d\n", 2, "lowercase letters, digits and single hyphens"),
    ("name: -lead\ndescription: d\n", 2, "not starting or ending with a hyphen"),
    ("name: a--b\ndescription: d\n", 2, "single hyphens"),
    ("name: " + "a" * 65 + "\ndescription: d\n", 2, "the limit is 64"),
    ("name: x\ndescription: " + "d" * 1025 + "\n", 3, "the limit is 1024"),
    ("name: x\n", 2, "no 'description'"),
    ("description: d\n", 2, "no 'name'"),
    ("name: x\ndescription: d\ncompatibility: " + "c" * 501 + "\n", 4, "the limit is 500"),
    ("name: x\ndescription: d\nmetadata:\n  version: 1.0\n", 4, "must be strings"),
    ("name: x\ndescription: d\nmetadata: [a, b]\n", 4, "mapping of string keys"),
    ("name: x\ndescription: d\nauthor: me\n", 4, "unknown front-matter field 'author'"),
    ("name: x\ndescription: d\nname: y\n", 4, "key 'name' is given twice"),  # the C loader's path
    ("name: x\ndescription: 'a * b & c'\nname: y\n", 4, "key 'name' is given twice"),  # the strict pure loader's
    ("name: x\ndescription: &a d\n", 3, "anchors"),
    ("name: x\ndescription: d\nlicense: [1]\n", 4, "'license' must be a string"),
    ("name: x\ndescription: 'unclosed\n", 4, "not valid YAML: found unexpected end of stream (while scanning a "
                                              "quoted scalar that starts on line 3)"),
    ("- just\n- a list\n", 2, "must be a mapping"),
])
def test_each_spec_rule_is_one_line_with_its_line_number(tmp_path: Path, library: Library, front: str, line: int,
                                                         needle: str) -> None:
    folder = tmp_path / "x"
    folder.mkdir()
    (folder / "SKILL.md").write_text(f"---\n{front}---\nbody\n")
    found = problems_of(library, folder)
    assert any(p.startswith(f"{folder / 'SKILL.md'}:{line}: ") and needle in p for p in found), found
    assert library.skills.count() == 0


def test_billion_laughs_is_refused_before_expansion(tmp_path: Path, library: Library) -> None:
    lines = ["a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    for i in range(1, 9):
        prev, cur = chr(ord("a") + i - 1), chr(ord("a") + i)
        lines.append(f"{cur}: &{cur} [" + ", ".join([f"*{prev}"] * 9) + "]")
    folder = tmp_path / "laughs"
    folder.mkdir()
    (folder / "SKILL.md").write_text("---\nname: laughs\ndescription: d\n" + "\n".join(lines) + "\n---\nbody\n")
    found = problems_of(library, folder)
    assert found == [f"{folder / 'SKILL.md'}:4: YAML anchors (&name) are not allowed in front matter"]


def test_alias_without_anchor_line_is_refused(tmp_path: Path, library: Library) -> None:
    folder = tmp_path / "alias"
    folder.mkdir()
    (folder / "SKILL.md").write_text("---\nname: alias\ndescription: *x\n---\nbody\n")
    assert "aliases" in problems_of(library, folder)[0]


def test_name_must_equal_the_folder_and_body_fields_must_be_plain(tmp_path: Path, library: Library) -> None:
    write_skill(tmp_path, "right-name", folder="other-folder")
    write_skill(tmp_path, "bad-body", body="line\n\nuse {x.attr} here\n")
    found = problems_of(library, tmp_path)
    assert any("differs from the folder's name 'other-folder'" in p and ":2:" in p for p in found), found
    assert any(p.startswith(str(tmp_path / "bad-body" / "SKILL.md") + ":7: template field {x.attr}")
               for p in found), found


@pytest.mark.parametrize("content", [
    b"---", b"---\n", b"---\nname: x\ndescription: d\n", b"", b"no front matter\n",
])
def test_front_matter_that_never_opens_or_closes(tmp_path: Path, library: Library, content: bytes) -> None:
    folder = tmp_path / "x"
    folder.mkdir()
    (folder / "SKILL.md").write_bytes(content)
    found = problems_of(library, folder)
    assert len(found) == 1 and f"{folder / 'SKILL.md'}:1: " in found[0]


def test_binary_and_non_utf8_skill_md(tmp_path: Path, library: Library) -> None:
    write_skill(tmp_path, "binary")
    (tmp_path / "binary" / "SKILL.md").write_bytes(b"---\nname: binary\x00\n---\n")
    write_skill(tmp_path, "latin")
    (tmp_path / "latin" / "SKILL.md").write_bytes(b"---\nname: latin\ndescription: caf\xe9\n---\n")
    found = problems_of(library, tmp_path)
    assert any("binary (it holds NUL bytes)" in p for p in found)
    assert any(p.startswith(str(tmp_path / "latin" / "SKILL.md") + ":3: SKILL.md is not UTF-8 text") for p in found)


def test_a_50_mb_skill_md_is_refused_without_reading_it(tmp_path: Path, library: Library) -> None:
    folder = write_skill(tmp_path, "huge")
    with open(folder / "SKILL.md", "r+b") as fh:
        fh.truncate(50 * 1024 * 1024)  # sparse: the size is checked from lstat, so no byte is read
    found = problems_of(library, folder)
    assert found == [f"{folder / 'SKILL.md'}: SKILL.md is 52428800 bytes; the limit is 1048576"]


def test_symlinks_special_files_and_oversized_bundles(tmp_path: Path, library: Library) -> None:
    outside = tmp_path / "secret.txt"
    outside.write_text("secret")
    linked = write_skill(tmp_path / "tree", "linked")
    (linked / "leak.txt").symlink_to(outside)
    md_link = write_skill(tmp_path / "tree", "md-link")
    (md_link / "SKILL.md").unlink()
    (md_link / "SKILL.md").symlink_to(linked / "SKILL.md")
    fifo = write_skill(tmp_path / "tree", "fifo")
    os.mkfifo(fifo / "pipe")
    big = write_skill(tmp_path / "tree", "big")
    with open(big / "blob.bin", "wb") as fh:
        fh.truncate(6 * 1024 * 1024)
    (tmp_path / "tree" / "dirlink").symlink_to(tmp_path / "tree" / "linked")
    found = problems_of(library, tmp_path / "tree")
    tree = tmp_path / "tree"
    assert f"{tree / 'linked' / 'leak.txt'}: a symlink; a skill's files must be inside its folder, not links" in found
    assert f"{tree / 'md-link' / 'SKILL.md'}: SKILL.md is a symlink; a skill's files must be inside its folder" in found
    assert f"{tree / 'fifo' / 'pipe'}: not a regular file (a device, FIFO or socket)" in found
    assert any(p.startswith(f"{tree / 'big' / 'blob.bin'}: 6291456 bytes") for p in found)
    assert f"{tree / 'dirlink'}: a symlink to a folder; not followed" in found
    assert library.skills.count() == 0


_DEEP = "import os, sys\nos.chdir(sys.argv[1])\nfor _ in range(10000):\n    os.mkdir('d')\n    os.chdir('d')\n"
# Removed from the bottom up, one level at a time: shutil.rmtree (pytest's clean-up) recurses once per
# level and would hit Python's recursion limit.
_UNDEEP = ("import os, sys\nos.chdir(sys.argv[1])\nn = 0\nwhile os.path.isdir('d'):\n    os.chdir('d')\n    n += 1\n"
           "for _ in range(n):\n    os.chdir('..')\n    os.rmdir('d')\n")


def test_10000_folders_deep_is_one_line(library: Library) -> None:
    # Outside pytest's tmp_path: were this test killed half-way, pytest's own clean-up of old temporary
    # folders would trip over the chain in every later session.
    top = Path(tempfile.mkdtemp(prefix="kaos-deep-"))
    try:
        subprocess.run([sys.executable, "-c", _DEEP, str(top)], check=True)
        result = run_kaos_in_process("skill", "import", str(top / "d"), db=library.path)
    finally:
        subprocess.run([sys.executable, "-c", _UNDEEP, str(top)], check=True)
        top.rmdir()
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("kaos: error: ") and "more than 16 folders deep" in lines[0], lines
    assert "Traceback" not in result.stderr


def test_duplicate_names_and_case_or_unicode_variants(tmp_path: Path, library: Library) -> None:
    write_skill(tmp_path / "a", "same-name")
    write_skill(tmp_path / "b", "same-name")
    found = problems_of(library, tmp_path / "a", tmp_path / "b")
    assert any("has the same name as" in p for p in found), found
    library.skills.add("Deploy-App", "hand-added")
    write_skill(tmp_path / "c", "deploy-app")
    found = problems_of(library, tmp_path / "c")
    assert any("differs only by case, Unicode form or look-alike characters from the library's skill 'Deploy-App'"
               in p for p in found), found


def test_a_folder_whose_name_looks_like_a_library_skill_is_refused(tmp_path: Path, db_path: Path) -> None:
    """Issue 33 item 4: 'ship-app' and a hand-added 'ѕhip-app' (Cyrillic dze) print the same, so an import
    of the first beside the second is refused, naming the library's skill, and nothing is written."""
    lookalike = "\u0455hip-app"
    added = run_kaos_in_process("skill", "add", lookalike, db=db_path)
    assert added.returncode == 0, added.stderr
    write_skill(tmp_path / "tree", "ship-app")
    result = run_kaos_in_process("skill", "import", str(tmp_path / "tree"), db=db_path)
    assert result.returncode == 1
    assert f"look-alike characters from the library's skill {lookalike!r}" in result.stderr, result.stderr
    listed = run_kaos_in_process("skill", "list", "--json", db=db_path)
    assert [s["name"] for s in json.loads(listed.stdout)] == [lookalike]


def test_one_invalid_folder_imports_nothing_and_skip_invalid_imports_the_rest(tmp_path: Path, db_path: Path) -> None:
    tree = fixture_tree(tmp_path / "tree")
    write_skill(tree, "broken", extra="bogus: 1\n")
    result = run_kaos_in_process("skill", "import", str(tree), db=db_path)
    assert result.returncode == 1
    assert result.stderr == (
        f"kaos: error: {tree / 'broken' / 'SKILL.md'}:4: unknown front-matter field 'bogus' "
        "(allowed: name, description, license, compatibility, metadata, allowed-tools) (nothing was written)\n")
    write_skill(tree, "broken-too", extra="bogus: 1\nname: twice\n")
    several = run_kaos_in_process("skill", "import", str(tree), db=db_path).stderr.splitlines()
    assert several[0].startswith(f"{tree / 'broken' / 'SKILL.md'}:4: ")  # one line per problem, then the summary
    assert several[1].startswith(f"{tree / 'broken-too' / 'SKILL.md'}:")
    assert several[-1] == "kaos: error: 2 problems in the skill folders; nothing was imported"
    with Library(db_path) as lib:
        assert lib.skills.count() == 0
    result = run_kaos_in_process("skill", "import", str(tree), "--skip-invalid", "--json", db=db_path)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["counts"]["added"] == 4 and len(data["skipped"]) == 2
    assert "skipped: " in result.stderr and "bogus" in result.stderr


def test_a_failed_import_leaves_the_library_byte_identical(tmp_path: Path, db_path: Path) -> None:
    write_skill(tmp_path / "good", "good-one")
    run_kaos_in_process("skill", "import", str(tmp_path / "good"), db=db_path)
    before = file_digest(db_path)
    write_skill(tmp_path / "more", "another")
    write_skill(tmp_path / "more", "bad", extra="name: twice\n")
    assert run_kaos_in_process("skill", "import", str(tmp_path / "more"), db=db_path).returncode == 1
    assert file_digest(db_path) == before


# -- sync --------------------------------------------------------------------------------------------

def test_sync_updates_keeps_telemetry_deprecates_and_restores(tmp_path: Path, library: Library) -> None:
    tree = fixture_tree(tmp_path / "tree")
    import_skills(library, [tree], sync=True)
    skill_id = library.skills.get("pdf-tools").id
    library.record_outcome("pdf-tools", True)
    library.record_outcome("pdf-tools", False)
    assert import_skills(library, [tree], sync=True).changed == 0
    (tree / "pdf-tools" / "scripts" / "extract.py").write_bytes(b"print('v2')\n")
    write_skill(tree, "long-description", "a new description", body="new body\n")
    (tree / "windows-file" / "SKILL.md").unlink()
    (tree / "windows-file" / "data.bin").unlink()
    (tree / "windows-file").rmdir()
    plan = import_skills(library, [tree], sync=True, dry_run=True)
    assert {(c.name, c.action) for c in plan.changes if c.action != "unchanged"} == {
        ("pdf-tools", "updated"), ("long-description", "updated"), ("windows-file", "deprecated")}
    assert library.skills.get("windows-file").deprecated is False  # a dry run writes nothing
    result = import_skills(library, [tree], sync=True)
    assert result.changed == 3
    assert library.skills.get("pdf-tools").id == skill_id
    assert library.skill_record(skill_id)["all_time"]["uses"] == 2
    assert library.conn.execute("SELECT content FROM skill_files WHERE skill_id = ? AND path = 'scripts/extract.py'",
                                (skill_id,)).fetchone()[0] == b"print('v2')\n"
    gone = library.skills.get("windows-file")
    assert gone.deprecated and gone.deprecated_reason == SYNC_REASON
    assert library.skills.get("long-description").template == "new body\n"
    assert import_skills(library, [tree], sync=True).changed == 0
    write_skill(tree, "windows-file", "Written on Windows with CRLF line ends.", body="line one\nline two\n",
                newline="\r\n", files={"data.bin": b"\r\n\x00\xff\xfe"})
    assert [(c.name, c.action) for c in import_skills(library, [tree], sync=True).changes
            if c.action != "unchanged"] == [("windows-file", "restored")]
    assert library.skills.get("windows-file").deprecated is False


def test_sync_leaves_hand_added_and_other_trees_alone(tmp_path: Path, library: Library) -> None:
    library.skills.add("by-hand", "added by a person")
    write_skill(tmp_path / "other", "from-elsewhere")
    import_skills(library, [tmp_path / "other"])
    write_skill(tmp_path / "tree", "in-tree")
    result = import_skills(library, [tmp_path / "tree"], sync=True)
    assert [(c.name, c.action) for c in result.changes] == [("in-tree", "added")]
    assert not library.skills.get("by-hand").deprecated and not library.skills.get("from-elsewhere").deprecated


def test_sync_cli_second_run_reports_zero_and_dry_run_does_not_write(tmp_path: Path, db_path: Path) -> None:
    tree = fixture_tree(tmp_path / "tree")
    first = run_kaos_in_process("skill", "import", "--sync", str(tree), db=db_path)
    assert first.returncode == 0 and "changed 4: 4 added" in first.stdout
    before = file_digest(db_path)
    again = run_kaos_in_process("skill", "import", "--sync", str(tree), "--json", db=db_path)
    assert json.loads(again.stdout)["changed"] == 0
    write_skill(tree, "new-one")
    plan = run_kaos_in_process("skill", "import", "--sync", str(tree), "--dry-run", db=db_path)
    assert plan.returncode == 0 and "new-one" in plan.stdout and "would change 1" in plan.stdout
    assert file_digest(db_path) == before


# -- export ------------------------------------------------------------------------------------------

def test_round_trip_is_byte_stable(tmp_path: Path, clock) -> None:
    tree = fixture_tree(tmp_path / "tree")
    with Library(tmp_path / "one.db", clock=clock) as one:
        import_skills(one, [tree])
        export_skills(one, tmp_path / "out1")
    with Library(tmp_path / "two.db", clock=clock) as two:
        import_skills(two, [tmp_path / "out1"])
        export_skills(two, tmp_path / "out2")
        rows = two.conn.execute("SELECT name, description, template, tags FROM skills ORDER BY name").fetchall()
    with Library(tmp_path / "one.db", clock=clock) as one:
        assert one.conn.execute("SELECT name, description, template, tags FROM skills ORDER BY name").fetchall() \
            == rows
    first, second = tree_bytes(tmp_path / "out1"), tree_bytes(tmp_path / "out2")
    assert first == second
    originals = tree_bytes(tree)
    for path, data in originals.items():
        name = Path(path).parts[-2] if path.endswith("SKILL.md") else None
        if name is None:  # bundled files: byte-exact, at the skill's own folder
            parts = Path(path).parts
            skill_dir = next(i for i in range(len(parts)) if (tree / Path(*parts[: i + 1]) / "SKILL.md").exists())
            exported = Path(parts[skill_dir], *parts[skill_dir + 1:])
            assert first[str(exported)] == data
    for out in ("out1", "out2"):  # a script stays runnable, data stays data
        assert os.stat(tmp_path / out / "pdf-tools" / "scripts" / "extract.py").st_mode & 0o111
        assert not os.stat(tmp_path / out / "pdf-tools" / "assets" / "logo.png").st_mode & 0o111
    assert first["windows-file/SKILL.md"].startswith(b"---\r\nname: windows-file\r\n")
    assert first["windows-file/SKILL.md"].endswith(b"---\r\nline one\r\nline two\r\n")
    for path, data in first.items():  # every exported SKILL.md passes the importer's validator
        if path.endswith("SKILL.md"):
            assert not isinstance(parse_skill_md(data, path, Path(path).parent.name), list)


def test_export_writes_the_learned_record_and_filters(tmp_path: Path, library: Library) -> None:
    tree = fixture_tree(tmp_path / "tree")
    import_skills(library, [tree], tags=["pdf"])
    library.skills.update("unicode-notes", tags=["notes"])
    for ok in (True, True, True, False):
        library.record_outcome("pdf-tools", ok)
    library.record_outcome("long-description", False)
    library.skills.deprecate("windows-file")
    result = export_skills(library, tmp_path / "out")
    assert result.skills == ["long-description", "pdf-tools", "unicode-notes"]
    text = (tmp_path / "out" / "pdf-tools" / "SKILL.md").read_text()
    assert "  author: data-team\n  version: '1.0'\n  kaos-uses: '4'\n  kaos-successes: '3'\n" in text
    eff = library.skill_record("pdf-tools")["effective"]
    assert 0.5 < eff["successes"] / eff["uses"] < 0.75  # recent outcomes weigh more: the last one failed
    assert f"kaos-success-rate: '{eff['successes'] / eff['uses']:.3f}'" in text
    assert "kaos-last-used: '" in text and "kaos-tags: pdf" in text
    assert export_skills(library, tmp_path / "top", top=1).skills == ["pdf-tools"]
    assert export_skills(library, tmp_path / "min", min_success=0.5).skills == ["pdf-tools"]
    assert export_skills(library, tmp_path / "tag", tag="notes").skills == ["unicode-notes"]
    assert "windows-file" in export_skills(library, tmp_path / "all", include_deprecated=True).skills


def test_export_refuses_foreign_files_and_removes_its_own_stale_ones(tmp_path: Path, db_path: Path) -> None:
    tree = fixture_tree(tmp_path / "tree")
    run_kaos_in_process("skill", "import", str(tree), db=db_path)
    out = tmp_path / "out"
    (out / "pdf-tools").mkdir(parents=True)
    (out / "pdf-tools" / "SKILL.md").write_text("my own file\n")
    refused = run_kaos_in_process("skill", "export", str(out), db=db_path)
    assert refused.returncode == 1
    assert f"{out / 'pdf-tools' / 'SKILL.md'}: exists and was not written by kaos skill export" in refused.stderr
    assert sorted(p.name for p in out.rglob("*")) == ["SKILL.md", "pdf-tools"]  # nothing written
    assert run_kaos_in_process("skill", "export", str(out), "--force", db=db_path).returncode == 0
    assert "kaos-uses" in (out / "pdf-tools" / "SKILL.md").read_text()
    again = run_kaos_in_process("skill", "export", str(out), "--json", db=db_path)
    assert json.loads(again.stdout)["written"] == []  # unchanged files are not rewritten
    run_kaos_in_process("skill", "deprecate", "windows-file", db=db_path)
    gone = json.loads(run_kaos_in_process("skill", "export", str(out), "--json", db=db_path).stdout)
    assert gone["removed"] == ["windows-file/SKILL.md", "windows-file/data.bin"]
    assert not (out / "windows-file").exists()
    manifest = json.loads((out / MANIFEST).read_text())
    assert "windows-file/SKILL.md" not in manifest["files"] and "pdf-tools/SKILL.md" in manifest["files"]


def test_export_never_writes_through_a_symlink(tmp_path: Path, db_path: Path) -> None:
    write_skill(tmp_path / "tree", "linked-out")
    run_kaos_in_process("skill", "import", str(tmp_path / "tree"), db=db_path)
    out, elsewhere = tmp_path / "out", tmp_path / "elsewhere"
    out.mkdir()
    elsewhere.mkdir()
    (out / "linked-out").symlink_to(elsewhere)
    result = run_kaos_in_process("skill", "export", str(out), "--force", db=db_path)
    assert result.returncode == 1 and "is a symlink; an export never writes through one" in result.stderr
    assert list(elsewhere.iterdir()) == []


def test_export_skips_a_stored_path_that_would_leave_its_folder(tmp_path: Path, library: Library) -> None:
    import_skills(library, [fixture_tree(tmp_path / "tree")])
    skill_id = library.skills.get("unicode-notes").id
    with library.transaction():  # what a hand-edited or hostile `db import` could hold
        library.conn.execute("INSERT INTO skill_files (skill_id, path, size, sha256, content) VALUES (?, ?, 1, ?, ?)",
                             (skill_id, "../../escaped.txt", hashlib.sha256(b"x").hexdigest(), b"x"))
    result = export_skills(library, tmp_path / "out" / "skills")
    assert result.skipped == ["skill 'unicode-notes': bundled file path '../../escaped.txt' would leave its folder"]
    assert "unicode-notes" not in result.skills and not (tmp_path / "out" / "escaped.txt").exists()
    assert not (tmp_path / "escaped.txt").exists()


def test_export_directory_that_is_a_file_or_not_writable(tmp_path: Path, db_path: Path) -> None:
    write_skill(tmp_path / "tree", "some-skill")
    run_kaos_in_process("skill", "import", str(tmp_path / "tree"), db=db_path)
    a_file = tmp_path / "file"
    a_file.write_text("x")
    result = run_kaos_in_process("skill", "export", str(a_file), db=db_path)
    assert (result.returncode, result.stderr) == (1, f"kaos: error: {a_file} is a file, not a folder\n")
    read_only = Path("/proc/self") if os.geteuid() == 0 else tmp_path / "ro"
    if os.geteuid() != 0:
        read_only.mkdir()
        read_only.chmod(0o555)
    result = run_kaos_in_process("skill", "export", str(read_only / "skills"), db=db_path)
    assert result.returncode == 1 and len(result.stderr.splitlines()) == 1 and "not writable" in result.stderr
    assert "Traceback" not in result.stderr


# -- progressive disclosure --------------------------------------------------------------------------

def test_show_body_and_search_without_bodies(tmp_path: Path, db_path: Path) -> None:
    tree = fixture_tree(tmp_path / "tree")
    run_kaos_in_process("skill", "import", str(tree), db=db_path)
    env = {**os.environ, "PYTHONPATH": str(PROJECT_ROOT)}
    body = subprocess.run([*kaos_command(), "--db", str(db_path), "skill", "show", "windows-file", "--body"],
                          capture_output=True, env=env, check=True)
    assert body.stdout == b"line one\r\nline two\r\n\n"  # byte-exact, then one newline as `echo` does
    shown = json.loads(run_kaos_in_process("skill", "show", "pdf-tools", "--body", "--json", db=db_path).stdout)
    assert [f["path"] for f in shown["files"]] == ["assets/logo.png", "references/REFERENCE.md", "scripts/extract.py"]
    found = json.loads(run_kaos_in_process("search", "pdf tables", "--json", db=db_path).stdout)
    text = json.dumps(found)
    assert "pdf-tools" in text and "extract.py" not in text  # the description, never the body


def test_agent_tools_skill_get_and_skill_file(tmp_path: Path, library: Library) -> None:
    from kaos_dream import agent_tools

    import_skills(library, [fixture_tree(tmp_path / "tree")])
    got = agent_tools.skill_get(library, "pdf-tools")
    assert got["template"].startswith("# PDF") and len(got["files"]) == 3
    assert got["files"][0] == {"path": "assets/logo.png", "size": 2048, "executable": False,
                               "sha256": hashlib.sha256(bytes(range(256)) * 8).hexdigest()}
    assert got["files"][2]["path"] == "scripts/extract.py" and got["files"][2]["executable"] is True
    text = agent_tools.skill_file(library, "pdf-tools", "references/REFERENCE.md")
    assert text["text"] == "é🦖\n" and text["truncated"] is False
    binary = agent_tools.skill_file(library, "windows-file", "data.bin", max_bytes=4)
    assert binary["truncated"] is True and binary["base64"] == "DQoA/w=="
    cut = agent_tools.skill_file(library, "pdf-tools", "references/REFERENCE.md", max_bytes=4)
    assert cut["text"] == "é" and cut["truncated"] is True  # the emoji's bytes were cut: dropped, still text
    from kaos_dream.errors import NotFoundError

    with pytest.raises(NotFoundError, match="no bundled file 'nope'"):
        agent_tools.skill_file(library, "pdf-tools", "nope")


# -- both engines, db export / import / check ------------------------------------------------------

@pytest.mark.both_engines
def test_import_sync_export_on_either_engine(tmp_path: Path, lib: Library) -> None:
    tree = fixture_tree(tmp_path / "tree")
    assert import_skills(lib, [tree], sync=True).counts()["added"] == 4
    assert import_skills(lib, [tree], sync=True).changed == 0
    lib.record_outcome("pdf-tools", True)
    export_skills(lib, tmp_path / "out")
    assert (tmp_path / "out" / "pdf-tools" / "assets" / "logo.png").read_bytes() == bytes(range(256)) * 8
    assert "kaos-uses: '1'" in (tmp_path / "out" / "pdf-tools" / "SKILL.md").read_text()
    assert lib.check() == []
    from kaos_dream import agent_tools

    assert agent_tools.skill_file(lib, "windows-file", "data.bin", max_bytes=4)["base64"] == "DQoA/w=="
    assert agent_tools.skill_get(lib, "pdf-tools")["files"][2]["executable"] is True


def test_db_export_import_carries_packages_and_files_and_check_sees_damage(tmp_path: Path, db_path: Path,
                                                                             kaos) -> None:
    run_kaos_in_process("skill", "import", str(fixture_tree(tmp_path / "tree")), db=db_path)
    with Library(db_path) as lib:  # outcomes past a fold of the per-agent index (every 256th row)
        lib.record_outcomes([{"skill": "pdf-tools", "success": i % 3 > 0, "agent": f"a{i % 4}", "task": f"t{i % 5}"}
                             for i in range(300)])
    dump = tmp_path / "dump.jsonl"
    assert kaos("db", "export", str(dump), db=db_path).returncode == 0
    header = json.loads(dump.read_text().splitlines()[0])
    assert header["tables"]["skill_files"]["rows"] == 4 and header["tables"]["skill_packages"]["rows"] == 4
    copy = tmp_path / "copy.db"
    assert kaos("db", "import", str(dump), db=copy).returncode == 0
    again = tmp_path / "again.jsonl"
    kaos("db", "export", str(again), db=copy)
    assert again.read_bytes() == dump.read_bytes()
    export_skills(Library(copy), tmp_path / "out")
    assert (tmp_path / "out" / "windows-file" / "data.bin").read_bytes() == b"\r\n\x00\xff\xfe"
    import sqlite3

    conn = sqlite3.connect(copy)
    conn.execute("UPDATE skill_files SET content = X'0000000000' WHERE path = 'data.bin'")  # same size, other bytes
    conn.commit()
    conn.close()
    checked = kaos("db", "check", db=copy)
    assert checked.returncode != 0 and "bundled file: skill" in checked.stdout + checked.stderr


def test_mcp_skill_get_lists_files_and_skill_file_reads_one(tmp_path: Path, db_path: Path) -> None:
    """A real `kaos mcp serve` process driven by the MCP SDK's client; reading writes nothing."""
    pytest.importorskip("mcp")
    from .test_mcp_server import call, call_error, drive

    run_kaos_in_process("skill", "import", str(fixture_tree(tmp_path / "tree")), db=db_path)
    before = file_digest(db_path)

    async def script(s) -> None:  # noqa: ANN001 - the SDK's ClientSession
        got = await call(s, "skill_get", {"skill": "pdf-tools"})
        assert got["template"].startswith("# PDF") and [f["path"] for f in got["files"]] == [
            "assets/logo.png", "references/REFERENCE.md", "scripts/extract.py"]
        one = await call(s, "skill_file", {"skill": "pdf-tools", "path": "scripts/extract.py"})
        assert one["text"] == "import sys\nprint(sys.argv)\n" and one["truncated"] is False
        capped = await call(s, "skill_file", {"skill": "pdf-tools", "path": "assets/logo.png", "max_bytes": 10**9})
        assert capped["size"] == 2048 and capped["truncated"] is False  # under the 256 KiB cap: whole
        assert "no bundled file" in await call_error(s, "skill_file", {"skill": "pdf-tools", "path": "../x"})
        found = await call(s, "search", {"query": "pdf", "kind": "skill"})
        assert "Run `python" not in json.dumps(found)  # search never carries a body

    drive(str(db_path), script)
    assert file_digest(db_path) == before
