"""JSON type names for test messages and comparisons, shared by the wire and golden tests."""

from __future__ import annotations

from typing import Any


def json_type(value: Any) -> str:
    """JSON type with integer and float told apart: ``0`` is not ``0.0`` on our wire."""
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "string"
    return type(value).__name__
