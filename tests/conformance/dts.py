"""Reading a published client's TypeScript declarations (``.d.ts``) and checking JSON
values against them.

Only the subset such generated declaration files use: ``export interface X { ... }``
with nested object literals, ``export declare type X = ...``, unions with ``|``,
``string``/``number``/``boolean``/``null``/``any``, ``T[]``, ``Array<T>``, index
signatures ``{ [k: string]: T }`` and references to other declared names.  Anything else
raises, so a new construct in a new client version fails the test instead of passing it.
A field is required unless declared with ``?``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

TOKEN = re.compile(r"\s*(\[|\]|\{|\}|<|>|\(|\)|\||;|,|\?|:|=|[A-Za-z_$][\w$]*|\S)")


@dataclass
class Declarations:
    """The named types of one or more files, and the methods' promised types."""

    types: dict[str, Any] = field(default_factory=dict)
    methods: dict[str, Any] = field(default_factory=dict)


def tokens(text: str) -> list[str]:
    text = re.sub(r"/\*.*?\*/|//[^\n]*", " ", text, flags=re.S)
    return [m.group(1) for m in TOKEN.finditer(text) if m.group(1).strip()]


class Parser:
    """A recursive-descent reader of the subset (see the module docstring)."""

    def __init__(self, text: str) -> None:
        self.toks = tokens(text)
        self.i = 0

    def peek(self) -> str | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def take(self, expected: str | None = None) -> str:
        tok = self.toks[self.i]
        if expected is not None and tok != expected:
            raise ValueError(f"expected {expected!r}, found {tok!r} at token {self.i}")
        self.i += 1
        return tok

    def union(self) -> Any:
        options = [self.postfix()]
        while self.peek() == "|":
            self.take("|")
            options.append(self.postfix())
        return options[0] if len(options) == 1 else ("union", options)

    def postfix(self) -> Any:
        kind = self.primary()
        while self.peek() == "[" and self.toks[self.i + 1] == "]":
            self.take("[")
            self.take("]")
            kind = ("array", kind)
        return kind

    def primary(self) -> Any:
        tok = self.take()
        if tok == "{":
            return self.members()
        if tok == "(":
            inner = self.union()
            self.take(")")
            return inner
        if tok == "Array" and self.peek() == "<":
            self.take("<")
            inner = self.union()
            self.take(">")
            return ("array", inner)
        if tok == "Promise" and self.peek() == "<":
            self.take("<")
            inner = self.union()
            self.take(">")
            return ("promise", inner)
        if re.fullmatch(r"[A-Za-z_$][\w$]*", tok):
            return ("name", tok)
        raise ValueError(f"unsupported type token {tok!r}")

    def members(self) -> Any:
        """After ``{``: fields (name, optional, type) or one index signature."""
        fields: list[tuple[str, bool, Any]] = []
        while self.peek() != "}":
            if self.peek() == "[":
                self.take("[")
                self.take()
                self.take(":")
                self.take("string")
                self.take("]")
                self.take(":")
                value = self.union()
                self._end_member()
                self.take("}")
                return ("map", value)
            name = self.take()
            optional = self.peek() == "?"
            if optional:
                self.take("?")
            self.take(":")
            fields.append((name, optional, self.union()))
            self._end_member()
        self.take("}")
        return ("object", fields)

    def _end_member(self) -> None:
        if self.peek() in (";", ","):
            self.take()

    def declarations(self, into: Declarations) -> None:
        """Every top-level declaration; class members that are arrow-typed properties
        (``name: (args) => Promise<T>;``) become ``methods``."""
        while self.peek() is not None:
            tok = self.take()
            if tok == "interface":
                name = self.take()
                self.take("{")
                into.types[name] = self.members()
            elif tok == "type":
                name = self.take()
                self.take("=")
                into.types[name] = self.union()
            elif tok == "class":
                self.take()
                self.take("{")
                self._class_body(into)

    def _class_body(self, into: Declarations) -> None:
        while self.peek() != "}":
            if self.peek() in ("private", "public", "readonly"):
                self.take()
                continue
            name = self.take()
            if self.peek() == ";":
                self.take()
                continue
            self.take(":")
            self.take("(")
            depth = 1
            while depth:
                tok = self.take()
                depth += {"(": 1, ")": -1}.get(tok, 0)
            self.take("=")
            self.take(">")
            into.methods[name] = self.union()
            self._end_member()
        self.take("}")


def read(*texts: str) -> Declarations:
    found = Declarations()
    for text in texts:
        Parser(text).declarations(found)
    return found


def problems(value: Any, kind: Any, decl: Declarations, path: str = "$") -> list[str]:
    """Every place where ``value`` (parsed JSON) does not have the declared type."""
    tag = kind[0]
    if tag == "name":
        return _named(value, kind[1], decl, path)
    if tag == "union":
        found = [problems(value, k, decl, path) for k in kind[1]]
        return [] if any(not p for p in found) else [f"{path}: {value!r} matches no variant"]
    if tag == "array":
        if not isinstance(value, list):
            return [f"{path}: expected an array, got {type(value).__name__}"]
        return [p for i, v in enumerate(value) for p in problems(v, kind[1], decl, f"{path}[{i}]")]
    if tag == "map":
        if not isinstance(value, dict):
            return [f"{path}: expected an object, got {type(value).__name__}"]
        return [p for k, v in value.items() for p in problems(v, kind[1], decl, f"{path}.{k}")]
    if tag == "object":
        if not isinstance(value, dict):
            return [f"{path}: expected an object, got {type(value).__name__}"]
        out: list[str] = []
        for name, optional, field_kind in kind[1]:
            if name not in value:
                out += [] if optional else [f"{path}.{name}: missing"]
            else:
                out += problems(value[name], field_kind, decl, f"{path}.{name}")
        return out
    if tag == "promise":
        return problems(value, kind[1], decl, path)
    raise ValueError(f"unknown kind {kind!r}")


PRIMITIVES = {
    "string": lambda v: isinstance(v, str),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "any": lambda v: True,
}


def _named(value: Any, name: str, decl: Declarations, path: str) -> list[str]:
    if name in PRIMITIVES:
        ok = PRIMITIVES[name](value)
        return [] if ok else [f"{path}: expected {name}, got {value!r}"]
    if name not in decl.types:
        raise ValueError(f"type {name} is not declared")
    return problems(value, decl.types[name], decl, path)
