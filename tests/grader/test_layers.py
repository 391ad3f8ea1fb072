"""The grader's architecture holds: its layers (import-linter's contracts, which `make lint`
checks) and no import cycle between any two of its modules."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import grimp

from tests.conftest import REPO


def _cycles(graph: grimp.ImportGraph, modules: set[str]) -> list[list[str]]:
    """Strongly connected groups of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for target in graph.find_modules_directly_imported_by(module) & modules:
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            group = []
            while True:
                member = stack.pop()
                group.append(member)
                if member == module:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for module in sorted(modules):
        if module not in index:
            visit(module)
    return found


def test_no_two_modules_of_the_grader_import_each_other():
    graph = grimp.build_graph("autograder")
    modules = {m for m in graph.modules if "mutants_and_variants" not in m}
    assert len(modules) > 40
    assert _cycles(graph, modules) == []


def test_a_cycle_is_found_where_there_is_one():
    graph = grimp.ImportGraph()
    for module in ("a", "b", "c"):
        graph.add_module(module)
    graph.add_import(importer="a", imported="b")
    graph.add_import(importer="b", imported="c")
    graph.add_import(importer="c", imported="a")
    assert _cycles(graph, {"a", "b", "c"}) == [["a", "b", "c"]]


def test_the_layers_are_kept():
    result = subprocess.run([str(Path(sys.executable).parent / "lint-imports"), "--no-cache"],
                            cwd=REPO, capture_output=True, text=True, timeout=300,
                            check=False)
    assert result.returncode == 0, result.stdout[-3000:]
    assert "0 broken" in result.stdout
