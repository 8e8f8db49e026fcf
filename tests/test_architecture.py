"""The package's import graph points one way (docs/architecture.md).

grimp (which import-linter brings) reads every import statement of the package, those under
``if TYPE_CHECKING:`` and inside functions included, so a cycle cannot hide in an annotation or a
lazy import. ``lint-imports`` (run by .ci/run) checks the layer order stated in pyproject.toml; these
tests check what holds whatever the order: no cycle at all, and the library composed, not imported.
"""

from __future__ import annotations

import grimp
import pytest

# Who may import kaos_dream.library: the public API (the package itself) and the rooms above the library.
LIBRARY_USERS = ("agent_skills", "agent_tools", "cli", "demo", "harness", "health", "mcp_server", "report")


def may_import_library(module: str) -> bool:
    room = module.split(".")[1] if "." in module else None
    return room is None or room in LIBRARY_USERS


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph("kaos_dream", include_external_packages=False)


def strongly_connected_components(nodes: list[str], edges: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm, iterative (no recursion limit), nodes visited in the order given."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    components: list[list[str]] = []
    for root in nodes:
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, successors = work[-1]
            for succ in successors:
                if succ not in index:
                    index[succ] = low[succ] = len(index)
                    stack.append(succ)
                    on_stack.add(succ)
                    work.append((succ, iter(sorted(edges[succ]))))
                    break
                if succ in on_stack:
                    low[node] = min(low[node], index[succ])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    components.append(sorted(component))
    return components


def test_the_components_of_a_small_graph_are_found() -> None:
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"e", "d"}}
    found = sorted(strongly_connected_components(sorted(edges), edges))
    assert found == [["a", "b", "c"], ["d"], ["e"]]


def test_no_module_of_the_package_is_in_an_import_cycle(graph: grimp.ImportGraph) -> None:
    modules = sorted(graph.modules)
    assert len(modules) > 100  # the whole package was read, not an empty graph
    edges = {m: set(graph.find_modules_directly_imported_by(m)) for m in modules}
    cycles = [c for c in strongly_connected_components(modules, edges) if len(c) > 1]
    assert cycles == [], "import cycles: " + "; ".join(" <-> ".join(c) for c in cycles)


def test_the_library_is_imported_only_by_the_public_api_and_its_consumers(graph: grimp.ImportGraph) -> None:
    importers = graph.find_modules_that_directly_import("kaos_dream.library")
    assert sorted(m for m in importers if not may_import_library(m)) == []
