"""Skills and memories: CRUD, pagination, soft deletion, templates, metadata."""

from __future__ import annotations

import pytest

from kaos_dream import ConflictError, InvalidInputError, Library, ManualClock, NotFoundError
from kaos_dream.skills import render_template


def test_add_get_by_id_and_name(mem_lib: Library) -> None:
    skill = mem_lib.skills.add("csv-to-parquet", "Convert CSV", "Convert {path}", ["data", "etl", "data"])
    assert skill.tags == ("data", "etl")
    assert mem_lib.skills.get(skill.id) == skill
    assert mem_lib.skills.get("csv-to-parquet") == skill
    assert mem_lib.skills.get(str(skill.id)) == skill
    assert skill.parameters == ("path",)


def test_name_that_looks_like_an_id_resolves_to_the_name_first(mem_lib: Library) -> None:
    first = mem_lib.skills.add("alpha")
    numbered = mem_lib.skills.add(str(first.id + 5))
    assert mem_lib.skills.get(str(first.id + 5)).id == numbered.id
    assert mem_lib.skills.get(str(first.id)).id == first.id


@pytest.mark.parametrize("name", ["", "   ", "a\nb", "x" * 201])
def test_bad_names_rejected(mem_lib: Library, name: str) -> None:
    with pytest.raises(InvalidInputError):
        mem_lib.skills.add(name)
    assert mem_lib.skills.count() == 0


def test_duplicate_name_is_a_conflict(mem_lib: Library) -> None:
    mem_lib.skills.add("dup")
    with pytest.raises(ConflictError, match="already exists"):
        mem_lib.skills.add(" dup ")
    other = mem_lib.skills.add("other")
    with pytest.raises(ConflictError):
        mem_lib.skills.update(other.id, name="dup")
    assert mem_lib.skills.get(other.id).name == "other"


def test_unknown_refs_are_not_found(mem_lib: Library) -> None:
    for call in (
        lambda: mem_lib.skills.get("nope"),
        lambda: mem_lib.skills.get(99),
        lambda: mem_lib.skills.update("nope", description="x"),
        lambda: mem_lib.skills.deprecate("nope"),
        lambda: mem_lib.skills.delete(42),
        lambda: mem_lib.memories.get("nope"),
        lambda: mem_lib.memories.delete(7),
    ):
        with pytest.raises(NotFoundError):
            call()


def test_list_filters_apply_before_limit(mem_lib: Library) -> None:
    for i in range(10):
        mem_lib.skills.add(f"s{i}", tags=["even"] if i % 2 == 0 else ["odd"])
    mem_lib.skills.deprecate("s0")
    mem_lib.skills.deprecate("s3")
    even_live = mem_lib.skills.list(tag="even", limit=2)
    assert [s.name for s in even_live] == ["s2", "s4"]
    assert [s.name for s in mem_lib.skills.list(tag="even", limit=2, offset=2)] == ["s6", "s8"]
    assert [s.name for s in mem_lib.skills.list(deprecated=True)] == ["s0", "s3"]
    assert len(mem_lib.skills.list(deprecated=None)) == 10
    assert len(mem_lib.skills.list()) == 8
    with pytest.raises(InvalidInputError):
        mem_lib.skills.list(limit=-1)


def test_update_changes_fields_and_time(mem_lib: Library, clock: ManualClock) -> None:
    skill = mem_lib.skills.add("s", "old")
    clock.advance(60)
    updated = mem_lib.skills.update("s", description="new", tags=["t"])
    assert (updated.description, updated.tags) == ("new", ("t",))
    assert updated.updated_at == skill.updated_at + 60
    assert updated.created_at == skill.created_at
    with pytest.raises(InvalidInputError, match="nothing to update"):
        mem_lib.skills.update("s")


def test_deprecate_restore_roundtrip(mem_lib: Library) -> None:
    mem_lib.skills.add("s", "describe")
    dep = mem_lib.skills.deprecate("s", reason="superseded")
    assert dep.deprecated and dep.deprecated_reason == "superseded"
    assert mem_lib.search("describe") == []
    back = mem_lib.skills.restore("s")
    assert not back.deprecated and back.deprecated_reason is None
    assert [h.name for h in mem_lib.search("describe")] == ["s"]


def test_delete_removes_the_skill(mem_lib: Library) -> None:
    mem_lib.skills.add("s", "describe")
    mem_lib.skills.delete("s")
    assert mem_lib.skills.count() == 0
    assert mem_lib.search("describe") == []
    assert mem_lib.check() == []


def test_render_template() -> None:
    assert render_template("Convert {path} to {fmt}", {"path": "a.csv", "fmt": "parquet"}) == "Convert a.csv to parquet"
    assert render_template("literal {{braces}} and {x}", {"x": "1"}) == "literal {braces} and 1"
    assert render_template("no params", {}) == "no params"
    with pytest.raises(InvalidInputError, match="missing template parameter.*fmt"):
        render_template("Convert {path} to {fmt}", {"path": "a"})
    with pytest.raises(InvalidInputError, match="unknown template parameter.*pth"):
        render_template("Convert {path}", {"path": "a", "pth": "b"})


def test_memories_crud_and_metadata(mem_lib: Library) -> None:
    m = mem_lib.memories.add("TLS 1.0 is rejected", kind="insight", key="tls", metadata='{"run": 4}')
    assert (m.kind, m.key, m.metadata) == ("insight", "tls", {"run": 4})
    assert mem_lib.memories.get("tls") == m
    auto = mem_lib.memories.add("Another note")
    assert auto.key.startswith("note-")
    with pytest.raises(ConflictError):
        mem_lib.memories.add("Another note")
    assert [x.key for x in mem_lib.memories.list(kind="insight")] == ["tls"]
    assert len(mem_lib.memories.list(limit=1, offset=1)) == 1
    mem_lib.memories.delete("tls")
    assert mem_lib.memories.count() == 1


@pytest.mark.parametrize("meta", ["{not json", "[1, 2]", "42", '"text"'])
def test_bad_metadata_rejected(mem_lib: Library, meta: str) -> None:
    with pytest.raises(InvalidInputError, match="metadata"):
        mem_lib.memories.add("content", metadata=meta)
    assert mem_lib.memories.count() == 0


def test_empty_memory_rejected(mem_lib: Library) -> None:
    with pytest.raises(InvalidInputError):
        mem_lib.memories.add("   ")
    with pytest.raises(InvalidInputError):
        mem_lib.memories.add("x", key=" ")
