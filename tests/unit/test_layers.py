"""Import rules that hold for the package as it is, read with :mod:`ast` from src/tokenrisk.

Every ``import`` and ``from ... import`` of a project module counts, including ones
inside functions.  Run this file directly to print the figures quoted in
docs/architecture.md (modules, import edges, levels, most imports per module).
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
from functools import cache
from pathlib import Path

import tokenrisk
from tokenrisk.errors import TokenRiskError

SRC = Path(__file__).resolve().parents[2] / "src"

RUNTIME_DEVNET = {
    "tokenrisk.devnet.instance",
    "tokenrisk.devnet.layout",
    "tokenrisk.devnet.node",
    "tokenrisk.devnet.supervisor",
}
"""The only devnet modules the running service may import (load, run and watch a built
devnet): the builder (build, deployment, trading, solc, ...) stays out."""

PURE = {
    "tokenrisk.errors": set(),
    "tokenrisk.findings": set(),
    "tokenrisk.model": {"tokenrisk.findings"},
    "tokenrisk.risk": {"tokenrisk.model", "tokenrisk.findings"},
    "tokenrisk.holders.stats": {"tokenrisk.model"},
    "tokenrisk.simulate.accounting": set(),
}
"""Pure modules and everything they may import: no I/O, so unit-tested without a node."""


@cache
def modules() -> dict[str, Path]:
    out: dict[str, Path] = {}
    for path in (SRC / "tokenrisk").rglob("*.py"):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


@cache
def graph() -> dict[str, frozenset[str]]:
    """module -> the project modules it imports."""
    known = modules()
    return {name: frozenset(_imports(path, known) - {name}) for name, path in known.items()}


def _imports(path: Path, known: dict[str, Path]) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name in known}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                found.add(full if full in known else node.module)
    return {m for m in found if m in known}


def closure(roots: list[str]) -> set[str]:
    todo, seen = list(roots), set()
    while todo:
        module = todo.pop()
        if module not in seen:
            seen.add(module)
            todo.extend(graph()[module])
    return seen


def test_the_running_service_never_imports_the_devnet_builder() -> None:
    served = closure(["tokenrisk.asgi", "tokenrisk.api.app", "tokenrisk.service"])
    assert {m for m in served if m.startswith("tokenrisk.devnet.")} <= RUNTIME_DEVNET


def test_pure_modules_import_only_plain_data() -> None:
    for module, allowed in PURE.items():
        assert graph()[module] <= allowed, module


def test_every_exception_derives_from_the_one_tree() -> None:
    strays = []
    for info in pkgutil.walk_packages(tokenrisk.__path__, "tokenrisk."):
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            own = inspect.isclass(value) and value.__module__ == info.name
            if own and issubclass(value, BaseException) and not issubclass(value, TokenRiskError):
                strays.append(f"{info.name}.{name}")
    assert strays == []


def _levels(edges: dict[str, frozenset[str]]) -> int:
    done: dict[str, int] = {}

    def visit(node: str, seen: frozenset[str]) -> int:
        if node in seen:
            return 0  # a cycle (lazy imports): counted once
        if node not in done:
            done[node] = 1 + max((visit(t, seen | {node}) for t in edges[node]), default=0)
        return done[node]

    return max(visit(n, frozenset()) for n in edges)


if __name__ == "__main__":
    g = graph()
    units = {m.split(".")[1] if "." in m else m for m in g}
    print(f"modules: {len(g)}; top-level units: {len(units)}")
    print(f"module import edges: {sum(len(ts) for ts in g.values())}")
    print(f"module import levels: {_levels(g)}")
    heavy = max(g, key=lambda m: len(g[m]))
    print(f"most project imports in one module: {len(g[heavy])} ({heavy})")
