"""Every check route: IsHoneypot and GetContractVerification (:mod:`.token_routes`, and
their legacy v1 shapes in :mod:`.legacy_routes`), GetPairs and TopHolders
(:mod:`.list_routes`), the IsHoneypot batch (:mod:`.batch`), and GoPlus's
``token_security`` (:mod:`.goplus_routes`).

Request order: key and rate limit (the gate), then parameters (400), then what the
tier allows (the ``limit`` parameters), then the cached or fresh check under the
deadline (:mod:`.handlers`, :mod:`.runner`).
"""

from __future__ import annotations

from fastapi import FastAPI

from tokenrisk.api.batch import add_batch_route
from tokenrisk.api.failures import ERRORS
from tokenrisk.api.gate import Gate
from tokenrisk.api.goplus_routes import add_goplus_route
from tokenrisk.api.legacy_routes import add_legacy_routes
from tokenrisk.api.list_routes import add_holders_route, add_pairs_routes
from tokenrisk.api.runner import Runner
from tokenrisk.api.token_routes import add_honeypot_route, add_verification_route


def add_check_routes(app: FastAPI, runner: Runner, gate: Gate) -> None:
    add_honeypot_route(app, runner, gate)
    add_verification_route(app, runner, gate)
    add_legacy_routes(app, runner, gate)
    add_pairs_routes(app, runner, gate)
    add_holders_route(app, runner, gate)
    add_batch_route(app, runner, gate, ERRORS)
    add_goplus_route(app, runner, gate)
