"""Issue 33 item 12: `db export` and `db import` name one schema version, the one in the file.

main said "schema version 18" on stderr while the file's header held 17, and the import then said
"17, upgraded to 18" for a step that changes only how rows are stored.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from kaos_dream import Library, Settings
from kaos_dream.store.jsonl import describe_versions

from .conftest import run_kaos_in_process as run_kaos


def test_export_and_import_say_the_version_the_file_holds(tmp_path: Path) -> None:
    src, out, dst = tmp_path / "a.db", tmp_path / "a.jsonl", tmp_path / "b.db"
    with Library(src, settings=Settings()) as lib:
        lib.skills.add("s", "d", "t")
    exported = run_kaos("db", "export", str(out), db=src)
    assert exported.returncode == 0, exported.stderr
    in_file = json.loads(out.read_text().splitlines()[0])["schema_version"]
    said = [int(v) for v in re.findall(r"schema version (\d+)", exported.stderr)]
    assert said == [in_file], exported.stderr
    imported = run_kaos("db", "import", str(out), db=dst)
    assert imported.returncode == 0, imported.stderr
    assert [int(v) for v in re.findall(r"schema version (\d+)", imported.stdout)] == [in_file], imported.stdout
    assert "upgraded" not in imported.stdout


def test_a_storage_only_step_is_explained_not_called_an_upgrade() -> None:
    # migration 18 (the per-agent index in batches) changes only how rows are stored
    text = describe_versions(17, 18)
    assert text.startswith("schema version 17, as written in the export") and "upgraded" not in text
    assert "migration 18 changes only how rows are stored" in text
    assert describe_versions(12, 18) == "schema version 12 in the export, upgraded to 18"
    assert describe_versions(18, 18) == "schema version 18"
