"""The OpenAPI document says what the handlers enforce (they parse parameters themselves,
to answer our own 400 messages, so FastAPI alone would describe optional strings)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastapi import FastAPI

_ADDRESS_SCHEMA = {"type": "string", "pattern": "^0x[0-9a-fA-F]{40}$"}
_PARAMETERS: dict[str, dict[str, Any]] = {
    "address": _ADDRESS_SCHEMA,
    "pair": _ADDRESS_SCHEMA,
    "router": _ADDRESS_SCHEMA,
    "chainID": {"type": "integer", "minimum": 1, "maximum": 999_999_999_999},
    "simulateLiquidity": {"type": "boolean"},
    "forceSimulateLiquidity": {"type": "boolean"},
    "ownerPowers": {"type": "boolean"},
    "limit": {"type": "integer", "minimum": 1, "maximum": 999_999_999},
}
_REQUIRED = {"address": "*", "chainID": "/v1/TopHolders"}
"""Parameter -> the paths where it is required ("*": everywhere it appears)."""
_PATH_PARAMETERS = {"address": "address", "chain": "chainID"}
"""Path parameter -> the query parameter whose rules it follows (``/v2/watch/{chain}/...``)."""
_BODIES = {"WatchRequest": ("address", "chainID")}
"""Request bodies the handlers parse like query parameters: model -> required fields."""


def truthful_openapi(
    app: FastAPI, keys: bool, chain_ids: Callable[[], list[int]], caps: dict[str, int]
) -> None:
    """Make the generated document say what the handlers enforce.

    The handlers parse parameters themselves (to answer our own 400 messages), so
    FastAPI sees optional strings; the document instead states the real contract:
    required parameters, the address pattern, integer chain ids (an enum of the
    configured chains: any other is a 400), booleans.  FastAPI's 422 is never sent
    (validation errors are 400), and 401 exists only with keys on.  Built on first
    request, once the service (and so its chains) exists.
    """
    make = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is not None:
            return app.openapi_schema
        schema = make()
        for path, operations in schema.get("paths", {}).items():
            for operation in operations.values():
                _fix_operation(path, operation, keys, chain_ids(), caps)
        _fix_bodies(schema.get("components", {}).get("schemas", {}), chain_ids())
        schema.get("components", {}).get("schemas", {}).pop("HTTPValidationError", None)
        schema.get("components", {}).get("schemas", {}).pop("ValidationError", None)
        return schema

    app.openapi = openapi  # type: ignore[method-assign]


def _fix_operation(
    path: str, operation: dict[str, Any], keys: bool, chains: list[int], caps: dict[str, int]
) -> None:
    """``caps``: the largest ``limit`` any tier allows, by endpoint name."""
    for param in operation.get("parameters", []):
        name = _PATH_PARAMETERS.get(param.get("name")) if param.get("in") == "path" else None
        if name is not None:  # a path parameter parsed like its query twin
            param["schema"] = dict(_PARAMETERS[name])
            if name == "chainID":
                param["schema"]["enum"] = chains
            continue
        name = param.get("name")
        if param.get("in") == "query" and name in _PARAMETERS:
            param["schema"] = dict(_PARAMETERS[name])
            if name == "chainID":
                param["schema"]["enum"] = chains
            if name == "limit":
                param["schema"]["maximum"] = caps[path.rsplit("/", 1)[-1]]
            where = _REQUIRED.get(name)
            param["required"] = where == "*" or where == path
    responses = operation.get("responses", {})
    responses.pop("422", None)
    if not keys:
        responses.pop("401", None)


def _fix_bodies(schemas: dict[str, Any], chains: list[int]) -> None:
    """Bodies whose fields the handlers parse like query parameters say the same rules
    (the models accept anything so that the handlers answer our own 400 messages)."""
    for model, required in _BODIES.items():
        body = schemas.get(model)
        if body is None:
            continue
        for name in required:
            field = dict(_PARAMETERS[name])
            if name == "chainID":
                field["enum"] = chains
            body.setdefault("properties", {})[name] = field
        body["required"] = list(required)
