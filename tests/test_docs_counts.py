"""Docs name only what a user of the repository can open, and the counts they quote come from code."""

from __future__ import annotations

import re

from kaos_dream.failures.heuristics import BUILTINS

from .conftest import PROJECT_ROOT

SKIP_DIRS = {".git", "__pycache__", ".venv", "venv", "build", "dist", ".ruff_cache", ".pytest_cache"}
TEXT_SUFFIXES = {".py", ".md", ".toml", ".txt", ".cfg", ".yml", ".yaml", ".sh", ".json", ""}


def repository_text_files() -> list:
    files = []
    for path in PROJECT_ROOT.rglob("*"):
        if any(part in SKIP_DIRS or part.endswith(".egg-info") for part in path.relative_to(PROJECT_ROOT).parts):
            continue
        if path.is_file() and path.suffix in TEXT_SUFFIXES and path.stat().st_size < 5_000_000:
            files.append(path)
    return files


def test_no_file_cites_a_design_document_that_is_not_in_the_repository() -> None:
    assert not (PROJECT_ROOT / "DESIGN.md").exists()  # if it is ever added, this test can go
    pattern = re.compile(r"DESIGN(\.md| §)")
    this = PROJECT_ROOT / "tests" / "test_docs_counts.py"
    cited = [str(p.relative_to(PROJECT_ROOT)) for p in repository_text_files()
             if p != this and pattern.search(p.read_text(encoding="utf-8", errors="replace"))]
    assert cited == []


def test_the_readme_heuristic_count_is_the_code_s() -> None:
    readme = (PROJECT_ROOT / "README.md").read_text(encoding="utf-8")
    quoted = [int(n) for n in re.findall(r"(\d+) ordered heuristics", readme)]
    assert quoted == [len(BUILTINS)], (quoted, len(BUILTINS))
