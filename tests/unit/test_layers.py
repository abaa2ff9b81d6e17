"""Import rules that hold for the package as it is, read with :mod:`ast` from src/tokenrisk.

Every ``import`` and ``from ... import`` of a project module counts, including ones
inside functions and under ``TYPE_CHECKING``.  Run this file directly to print the
figures quoted in docs/architecture.md (modules, import edges, levels, most imports per
module).

The rules (docs/architecture.md "Rules"): units import only units of a lower layer
(:data:`LAYERS`), never upwards or sideways; no module imports more than
:data:`MAX_IMPORTS` project modules; the running service never imports the devnet
builder; pure modules import only plain data; every exception derives from the one
tree; and no function takes the whole service as a parameter except the app factory.
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
    "tokenrisk.simulate.accounting": {"tokenrisk.chain.signatures"},
}
"""Pure modules and everything they may import: no I/O, so unit-tested without a node
(``chain.signatures`` is hex constants only)."""

LAYERS: list[set[str]] = [
    {"errors", "tokenrisk"},
    {"findings", "tiers", "metrics", "redaction", "logs", "caching"},
    {"model"},
    {"risk"},
    {"chain"},
    {"store", "verification", "simulate"},
    {"holders"},
    {"config", "devnet"},
    {"checks"},
    {"wiring", "processes"},
    {"service"},
    {"watch"},
    {"jobs"},
    {"api"},
    {"cli", "asgi"},
]
"""Units (top-level modules and packages of ``tokenrisk``) from the bottom up.  A module
may import its own unit and units of lower layers only: never a unit of its own layer
(sideways) or of a higher one.  ``config`` sits above ``chain`` and ``verification``
because it validates the operator's registry entries and verification settings into
their types; ``checks`` below ``service``, which builds what each check is handed."""

MAX_IMPORTS = 8
"""Most project modules one module may import (a module importing more does too much),
unless :data:`RAISED` says otherwise for that module, and why."""

RAISED: dict[str, tuple[int, str]] = {
    "tokenrisk.checks.honeypot": (
        16,
        "IsHoneypot's pipeline read top to bottom in one module (issue #30): it calls each "
        "step's module (target, speculation, top_holders, venue, trade, verification, "
        "holder_sells) and the owner-power scan, and builds the Analysis and the verdict",
    ),
    "tokenrisk.checks.holder_sells": (
        15,
        "the holders' side of IsHoneypot in one place: who holds (the index, the launch's "
        "snipers, balance and is-contract reads), how they sell (the simulator, the pool's "
        "reserves), what it gives (statistics, siphons) and the gate IsHoneypot runs it behind",
    ),
    "tokenrisk.checks.trade": (
        13,
        "one simulated trade, made ready and run: the simulator's parts it puts together "
        "(calls, liquidity, simulator) and the three ways a journey runs (eth_simulateV1, "
        "its eth_call emulation, the probe contract)",
    ),
    "tokenrisk.checks.venue": (
        12,
        "the pool IsHoneypot trades on, chosen or made in the simulation (the holder who "
        "provides it), and what the answer says of that pool and its tokens (creation, "
        "metadata, holder counts, No pairs found)",
    ),
    "tokenrisk.checks.pairs": (
        9,
        "GetPairs: the search (target, chain.created, chain.dex), the symbols read beside "
        "it and the creation blocks' stamps read beside the lookup, settled on the way "
        "out (checks.tasks: issue #27)",
    ),
    "tokenrisk.checks.top_holders": (
        9,
        "TopHolders and the holder index kept fresh for every check: the index's refresh "
        "runs beside the code check (issue #27), settled on the way out (checks.tasks)",
    ),
    "tokenrisk.checks.verification": (
        13,
        "GetContractVerification with the call tree it is built on: the target at the head "
        "(speculation, as IsHoneypot's), the trade, the trace (simulate.probe) beside it, "
        "code reads and the verifier",
    ),
    "tokenrisk.api.check_routes": (
        12,
        "every check route with the check behind it: the gate, parameters, runner, error "
        "bodies and wire, and the five checks it runs",
    ),
    "tokenrisk.api.assembly": (
        11,
        "the app's one table of contents: one import per part it puts together (middleware, "
        "gate, error bodies, the route modules, health, the page, OpenAPI)",
    ),
    "tokenrisk.api.compat.goplus_facts": (
        10,
        "everything one GoPlus entry is gathered from, in one place: the three checks it "
        "runs (IsHoneypot, GetPairs, TopHolders) with their bundles and results, and the "
        "reads only GoPlus needs (the owner scan's deployer lookup, balances, the code), "
        "which were a module apart (goplus_reads) only to stay under the limit",
    ),
}
"""Modules folded by issue #30 that may import more than :data:`MAX_IMPORTS`, each with
its most and the reason (a raise is written here with its reason, or not at all)."""

CONSTANTS = {"tokenrisk.chain.signatures"}
"""Tables of named constants that do not count towards :data:`MAX_IMPORTS`: importing
the Transfer topic from the one place it is written adds no behaviour to a module, and
counting it would push modules to write their own copy again (issue #30)."""

SERVICE_HOLDERS = {"tokenrisk.api.app.create_app", "tokenrisk.api.lifespan.lifespan_of"}
"""The only functions that receive the whole service (the composition root): the app
factory and its lifespan, which keep it for the handlers to pick each check's bundle."""


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


def unit_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def layer_violations(
    edges: dict[str, frozenset[str]], layers: list[set[str]]
) -> list[tuple[str, str]]:
    """``(importer, imported)`` pairs that go upwards or sideways, or touch a unit that
    has no layer."""
    rank = {unit: i for i, units in enumerate(layers) for unit in units}
    bad = []
    for module, targets in edges.items():
        here = rank.get(unit_of(module))
        for target in sorted(targets):
            if unit_of(target) == unit_of(module):
                continue
            there = rank.get(unit_of(target))
            if here is None or there is None or there >= here:
                bad.append((module, target))
    return bad


def crowded(edges: dict[str, frozenset[str]], most: int) -> dict[str, int]:
    """Modules importing more than ``most`` project modules (:data:`CONSTANTS` not
    counted), with their count."""
    counts = {m: len(ts - CONSTANTS) for m, ts in edges.items()}
    return {m: n for m, n in counts.items() if n > most}


def test_layers_are_one_way() -> None:
    assert layer_violations(graph(), LAYERS) == []


def test_no_module_imports_more_than_eight_project_modules() -> None:
    """At most :data:`MAX_IMPORTS`, or a module's raised count in :data:`RAISED`; and each
    raise is still needed (its module imports more than eight), so none outlives its
    reason."""
    over = crowded(graph(), MAX_IMPORTS)
    assert {m: n for m, n in over.items() if n > RAISED.get(m, (MAX_IMPORTS, ""))[0]} == {}
    assert sorted(RAISED) == sorted(m for m in over if m in RAISED)
    assert all(reason for _, reason in RAISED.values())


def test_the_checkers_catch_what_they_forbid() -> None:
    """The two checkers on a synthetic graph: they can fail."""
    layers = [{"errors"}, {"chain"}, {"store", "simulate"}, {"api"}]
    edges = {
        "tokenrisk.chain.rpc": frozenset({"tokenrisk.errors", "tokenrisk.chain.abi"}),
        "tokenrisk.chain.abi": frozenset({"tokenrisk.api.wire"}),  # upwards
        "tokenrisk.store.engine": frozenset({"tokenrisk.simulate.simulator"}),  # sideways
        "tokenrisk.api.wire": frozenset({"tokenrisk.chain.rpc", "tokenrisk.stray"}),  # no layer
        "tokenrisk.errors": frozenset(),
    }
    assert layer_violations(edges, layers) == [
        ("tokenrisk.chain.abi", "tokenrisk.api.wire"),
        ("tokenrisk.store.engine", "tokenrisk.simulate.simulator"),
        ("tokenrisk.api.wire", "tokenrisk.stray"),
    ]
    many = frozenset(f"tokenrisk.m{i}" for i in range(9))
    assert crowded({"tokenrisk.hub": many, "tokenrisk.leaf": frozenset()}, 8) == {
        "tokenrisk.hub": 9
    }
    assert crowded({"tokenrisk.hub": many}, 9) == {}
    assert crowded({"tokenrisk.hub": many - {"tokenrisk.m0"} | CONSTANTS}, 8) == {}


GLOBAL_STATE = {
    "tokenrisk.redaction": {"_secrets", "_installed"},
    "tokenrisk.chain.entropy": {"_block", "_at", "_lock"},
}
"""Module globals a function may change, with why: the process-wide secrets the log
filter redacts (registered once at start-up, never chain state); the unread bytes of
the last ``os.urandom`` block that fresh wallets are drawn from (process-wide like the
OS's CSPRNG itself, dropped in a forked child, never chain state).  Caches are not
here: every in-process cache is a ``caching.MemoryCache`` owned by a Node, a bundle
or the app (docs/architecture.md, "Caches")."""

_MUTATORS = {"append", "add", "update", "setdefault", "pop", "popitem", "clear", "put"}
_MUTATORS |= {"extend", "insert", "remove", "discard"}


def mutated_globals(source: str) -> set[str]:
    """Names assigned at module level that a function of the module changes (item
    assignment, a mutating method, ``global``): module-global state, such as a cache."""
    tree = ast.parse(source)
    names: set[str] = set()
    for node in tree.body:
        targets = [node.target] if isinstance(node, ast.AnnAssign) else []
        targets += node.targets if isinstance(node, ast.Assign) else []
        names |= {t.id for t in targets if isinstance(t, ast.Name)}
    found: set[str] = set()
    for fn in ast.walk(tree):
        if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
            found |= _changed(fn, names)
    return found


def _changed(fn: ast.AST, names: set[str]) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(fn):
        if isinstance(node, ast.Global):
            found |= set(node.names)
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store | ast.Del):
            if isinstance(node.value, ast.Name) and node.value.id in names:
                found.add(node.value.id)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            owner = node.func.value
            if node.func.attr in _MUTATORS and isinstance(owner, ast.Name) and owner.id in names:
                found.add(owner.id)
    return found


def test_no_module_global_state() -> None:
    """No module keeps state in its globals (a cache there outlives its Node and is
    shared by every test); only :data:`GLOBAL_STATE`'s entries, with their reason."""
    state = {m: mutated_globals(p.read_text(encoding="utf-8")) for m, p in modules().items()}
    assert {m: names for m, names in state.items() if names} == GLOBAL_STATE


def test_the_global_state_check_can_fail() -> None:
    source = """
_pools: dict[str, int] = {}
SEEN = set()
LIMIT = 3
counter = 0
def remember(key: str) -> None:
    _pools[key] = LIMIT
    SEEN.add(key)
def bump() -> None:
    global counter
    counter += 1
def pure(xs: list[int]) -> None:
    local = {}
    local["a"] = 1
    xs.append(LIMIT)
"""
    assert mutated_globals(source) == {"_pools", "SEEN", "counter"}


def shared_names(names: list[str]) -> dict[str, list[str]]:
    """Module file names (``engine`` for ``tokenrisk.store.engine``) that more than one
    module outside the devnet builder carries, with those modules.  Packages (their
    ``__init__``) are rooms, not modules, and do not count."""
    by_name: dict[str, list[str]] = {}
    for module in names:
        if module.startswith("tokenrisk.devnet.") or module in PACKAGES:
            continue
        by_name.setdefault(module.rsplit(".", 1)[-1], []).append(module)
    return {name: sorted(ms) for name, ms in by_name.items() if len(ms) > 1}


PACKAGES = {m for m, p in modules().items() if p.name == "__init__.py"}


def test_no_two_modules_share_a_name() -> None:
    """A newcomer finds a module by its name alone (issue #30): outside the devnet
    builder, which mirrors the service's words on purpose, every name is one module."""
    assert shared_names(sorted(modules())) == {}


def test_the_name_check_can_fail() -> None:
    names = ["tokenrisk.simulate.engine", "tokenrisk.store.engine", "tokenrisk.chain.rpc"]
    names += ["tokenrisk.devnet.rpc", "tokenrisk.holders", "tokenrisk.checks.holders"]
    assert shared_names(names) == {
        "engine": ["tokenrisk.simulate.engine", "tokenrisk.store.engine"]
    }


def service_parameters(path: Path, module: str) -> set[str]:
    """Functions in ``path`` with a parameter annotated as the service (``Service`` or
    ``Service | None``), as ``module.function``."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            args = node.args
            for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs]:
                text = ast.unparse(arg.annotation) if arg.annotation is not None else ""
                if "Service" in text.replace("|", " ").split():
                    found.add(f"{module}.{getattr(node, 'name', '<lambda>')}")
    return found


def test_no_function_receives_the_whole_service() -> None:
    takers = set().union(*(service_parameters(p, m) for m, p in modules().items()))
    assert takers == SERVICE_HOLDERS


SERVICE_EDGES = {
    "tokenrisk.api.app",  # create_app takes a ready service (tests) or opens one
    "tokenrisk.api.lifespan",  # opens and closes it while serving
    "tokenrisk.api.runner",  # holds it; the handlers take their check's bundle from it
    "tokenrisk.cli.session",  # opens it for one command, which takes its bundle
    "tokenrisk.jobs",  # the index worker opens one and hands its jobs the holder index
}
"""The only modules that know the composition root (import ``tokenrisk.service``)."""


def test_only_the_edges_know_the_composition_root() -> None:
    knowing = {m for m, targets in graph().items() if "tokenrisk.service" in targets}
    assert knowing == SERVICE_EDGES


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
    heavy = max(g, key=lambda m: len(g[m] - CONSTANTS))
    print(f"most project imports in one module: {len(g[heavy] - CONSTANTS)} ({heavy})")
    unit_edges = {(unit_of(m), unit_of(t)) for m, ts in g.items() for t in ts}
    print(f"edges between units: {len({e for e in unit_edges if e[0] != e[1]})}")
