"""Every test checks something: a test function that can pass without asserting is a
defect (issue #30).  Read with ``ast`` over ``tests/``, no test is run.

A test asserts when, outside any ``if``/``match`` branch, it has an ``assert``, a
``pytest.raises``/``pytest.fail``, or a call to an assert helper: a function of the test
tree that asserts, or one named ``assert_*``/``check*``/``expect`` (Playwright).  Asserts
in a loop count (the loop's data is the test's own); asserts only under an ``if`` do not,
since the branch may never be taken.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from functools import cache
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
HELPER_PREFIXES = ("assert", "check", "expect")
STOPS = (ast.If, ast.Match, ast.IfExp, ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
"""Nodes whose inside may not run: branches, and functions defined in the test."""


def _functions(tree: ast.AST) -> Iterator[ast.FunctionDef | ast.AsyncFunctionDef]:
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield node


def _callee(call: ast.Call) -> str:
    func = call.func
    if isinstance(func, ast.Attribute):
        owner = func.value.id if isinstance(func.value, ast.Name) else ""
        return f"{owner}.{func.attr}" if owner == "pytest" else func.attr
    return func.id if isinstance(func, ast.Name) else ""


def _checks(node: ast.AST, helpers: frozenset[str]) -> bool:
    """``node`` itself is a check (not looking inside it)."""
    if isinstance(node, ast.Assert):
        return True
    if isinstance(node, ast.Raise) and node.exc is not None:
        raised = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
        return isinstance(raised, ast.Name) and raised.id == "AssertionError"
    if isinstance(node, ast.Call):
        name = _callee(node)
        return (
            name in ("pytest.raises", "pytest.fail", "pytest.warns")
            or name in helpers
            or name.startswith(HELPER_PREFIXES)
        )
    return False


def _own(node: ast.AST) -> bool:
    """An assert the test writes itself (not a helper's)."""
    return isinstance(node, ast.Assert | ast.Raise) or (
        isinstance(node, ast.Call) and _callee(node).startswith("pytest.")
    )


def _unconditional(nodes: Iterable[ast.AST]) -> Iterator[ast.AST]:
    """Every node below ``nodes`` that runs whichever branch is taken: not inside an
    ``if`` (unless both its branches check: then the ``if`` itself stands for a check),
    a ``match`` or a function defined in the test."""
    for node in nodes:
        yield node
        if not isinstance(node, STOPS):
            yield from _unconditional(ast.iter_child_nodes(node))


def _branches_check(node: ast.AST, helpers: frozenset[str]) -> bool:
    """An ``if`` whose body and ``else`` both check (an ``elif`` is a nested ``if``)."""
    return (
        isinstance(node, ast.If)
        and bool(node.orelse)
        and all(
            any(_checks(n, helpers) or _branches_check(n, helpers) for n in _unconditional(b))
            for b in (node.body, node.orelse)
        )
    )


def asserts_unconditionally(fn: ast.AST, helpers: frozenset[str]) -> bool:
    """The test checks whichever branch it takes.  When it writes asserts of its own, one
    of those must run (a helper call beside asserts that all sit in branches, such as a
    request helper checking the status, does not make the test's own checks run)."""
    body = fn.body if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef) else [fn]
    reached = list(_unconditional(body))
    if any(_own(n) for n in ast.walk(fn)):
        helpers = frozenset()
        return any(
            (_checks(n, helpers) and _own(n)) or _branches_check(n, helpers) for n in reached
        )
    return any(_checks(n, helpers) for n in reached)


def helpers_in(trees: Iterable[ast.AST]) -> frozenset[str]:
    """Functions of the test tree that check something (anywhere in their body)."""
    names = set()
    for tree in trees:
        for fn in _functions(tree):
            if not fn.name.startswith("test") and any(
                _checks(n, frozenset()) for n in ast.walk(fn)
            ):
                names.add(fn.name)
    return frozenset(names)


def silent_tests(trees: dict[str, ast.AST]) -> list[str]:
    """``path::test`` for each test function that can pass without asserting."""
    helpers = helpers_in(trees.values())
    return [
        f"{path}::{fn.name}"
        for path, tree in trees.items()
        for fn in _functions(tree)
        if fn.name.startswith("test_") and not asserts_unconditionally(fn, helpers)
    ]


@cache
def _tree() -> dict[str, ast.AST]:
    return {
        str(p.relative_to(TESTS)): ast.parse(p.read_text(encoding="utf-8"))
        for p in sorted(TESTS.rglob("*.py"))
    }


def test_every_test_asserts_whatever_branch_it_takes() -> None:
    assert silent_tests(_tree()) == []


def test_the_check_finds_a_test_that_asserts_only_in_a_branch() -> None:
    source = """
def helper(x):
    assert x
def test_only_if(flag):
    if flag:
        assert flag
def test_nothing():
    value = 1 + 1
def test_in_a_nested_function():
    def inner():
        assert False
def test_plain():
    assert 1
def test_loop(xs):
    for x in xs:
        assert x
def test_raises():
    with pytest.raises(ValueError):
        int("x")
def test_helper():
    helper(1)
def test_branch_then_assert(flag):
    if flag:
        pass
    assert not flag
def test_both_branches(flag):
    if flag:
        assert flag
    elif flag is None:
        raise AssertionError("none")
    else:
        assert not flag
def test_helper_beside_branch_asserts(flag):
    helper(flag)
    if flag:
        assert flag
def test_one_branch_of_three(flag):
    if flag:
        assert flag
    elif flag is None:
        pass
    else:
        assert not flag
"""
    found = silent_tests({"synthetic.py": ast.parse(source)})
    assert found == [
        "synthetic.py::test_only_if",
        "synthetic.py::test_nothing",
        "synthetic.py::test_in_a_nested_function",
        "synthetic.py::test_helper_beside_branch_asserts",
        "synthetic.py::test_one_branch_of_three",
    ]
