"""Every check route: IsHoneypot and GetContractVerification (:mod:`.token_routes`),
GetPairs and TopHolders (:mod:`.list_routes`), the IsHoneypot batch (:mod:`.batch`), and
the drop-ins for other ecosystems (:mod:`.compat`: the legacy v1 shapes, GoPlus's
``token_security``, the MCP tools at ``/mcp``).

Request order: key and rate limit (the gate), then parameters (400), then what the
tier allows (the ``limit`` parameters), then the cached or fresh check under the
deadline (:mod:`.handlers`, :mod:`.runner`).
"""

from __future__ import annotations

from fastapi import FastAPI

from tokenrisk.api.access import Gate
from tokenrisk.api.batch import add_batch_route
from tokenrisk.api.compat import add_compat_routes
from tokenrisk.api.failures import ERRORS
from tokenrisk.api.list_routes import add_holders_route, add_pairs_routes
from tokenrisk.api.runner import Runner
from tokenrisk.api.token_routes import add_honeypot_route, add_verification_route
from tokenrisk.api.watch_routes import add_watch_routes


def add_check_routes(app: FastAPI, runner: Runner, gate: Gate, mcp_http: bool = True) -> None:
    add_honeypot_route(app, runner, gate)
    add_verification_route(app, runner, gate)
    add_pairs_routes(app, runner, gate)
    add_holders_route(app, runner, gate)
    add_batch_route(app, runner, gate, ERRORS)
    add_compat_routes(app, runner, gate, mcp_http)
    add_watch_routes(app, runner, gate)
