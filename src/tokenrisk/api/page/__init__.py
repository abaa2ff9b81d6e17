"""The page for people at ``/`` and ``/token/<chainID>/<address>``, and offline API docs.

The page is one server-rendered HTML shell (the configured chains and the owner-power
findings table filled in) and a little vanilla JavaScript that asks the service's own API,
so what a person sees is exactly what the API answers; each finding's meaning and advice
come from the one table in :mod:`tokenrisk.findings`, as the docs and the rubric do
(docs/page.md).  Every asset is served from the package: the page's own files from
``static/``, Swagger UI and ReDoc from the pinned ``fastapi-offline`` package, so
``/docs`` and ``/redoc`` work without internet.  A Content-Security-Policy keeps the
page from loading anything from elsewhere.
"""

from __future__ import annotations

import asyncio
import html
import json
from collections.abc import Callable, Iterable
from importlib.resources import files
from pathlib import Path
from string import Template

from fastapi import FastAPI
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

from tokenrisk.findings import FINDINGS
from tokenrisk.store.engine import Store
from tokenrisk.store.watch import WatchStore

PAGE_DIR = Path(__file__).resolve().parent
DOCS_ASSETS = Path(str(files("fastapi_offline") / "static"))
_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)

# Swagger UI's page has an inline script and ReDoc inline styles and a blob: worker; the
# policy still keeps both from fetching anything from elsewhere (ReDoc's footer logo).
_DOCS_CSP = (
    "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; font-src 'self' data:; worker-src 'self' blob:; "
    "connect-src 'self'; base-uri 'none'; frame-ancestors 'none'"
)

ChainNames = Callable[[], Iterable[tuple[int, str]]]
"""(chain id, name) of every configured chain, read per request (the service starts late)."""

Watching = Callable[[], bool]
"""Whether a watcher follows this server's chains (the page then shows the live feed and
the watch button), read per request."""


def add_page(app: FastAPI, chains: ChainNames, watching: Watching = lambda: False) -> None:
    """Routes ``/``, ``/token/{chain}/{address}`` and the page's static files."""
    shell = Template((PAGE_DIR / "index.html").read_text(encoding="utf-8"))
    app.mount("/static/page", StaticFiles(directory=PAGE_DIR / "static"), name="page")
    kinds = finding_kinds_json()

    async def render(address: str = "") -> HTMLResponse:
        watch = "on" if await asyncio.to_thread(watching) else "off"
        options = "\n".join(
            f'      <option value="{chain_id}">{html.escape(name)} ({chain_id})</option>'
            for chain_id, name in chains()
        )
        body = shell.substitute(
            address=html.escape(address), chain_options=options, finding_kinds=kinds, watch=watch
        )
        return HTMLResponse(body, headers={"Content-Security-Policy": _CSP})

    @app.get("/", include_in_schema=False)
    async def page() -> HTMLResponse:
        return await render()

    @app.get("/token/{chain_id}/{address}", include_in_schema=False)
    async def token_page(chain_id: str, address: str) -> HTMLResponse:
        """The shareable URL of one check; the page itself runs it and reports bad input."""
        return await render(address)


def watcher_follows(embedded: bool, store: Store, chains: Iterable[int]) -> bool:
    """The watch feature is on when this server runs the watcher (``serve --watch``) or a
    ``tokenrisk watch`` process has followed one of its chains (a cursor in the shared
    store): the watch routes exist either way, but without a watcher nothing would come."""
    if embedded:
        return True
    watch = WatchStore(store)
    return any(watch.cursor(chain_id) is not None for chain_id in chains)


def finding_kinds_json() -> str:
    """What each owner-power finding means for a buyer and what to do, by id, as JSON safe
    inside the shell's ``<script type="application/json">`` (a data block, never run)."""
    kinds = {
        k.id: {"title": k.title, "severity": k.severity, "meaning": k.meaning, "advice": k.advice}
        for k in FINDINGS.values()
    }
    text = json.dumps(kinds, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def add_docs(app: FastAPI) -> None:
    """``/docs`` (Swagger UI) and ``/redoc`` from bundled assets; create the app with
    ``docs_url=None, redoc_url=None`` so FastAPI's CDN-based pages are not registered."""
    app.mount("/static/docs", StaticFiles(directory=DOCS_ASSETS), name="docs-assets")
    title = f"{app.title} API"

    @app.get("/docs", include_in_schema=False)
    async def swagger() -> HTMLResponse:
        return _with_docs_policy(
            get_swagger_ui_html(
                openapi_url=app.openapi_url or "/openapi.json",
                title=title,
                swagger_js_url="/static/docs/swagger-ui-bundle.js",
                swagger_css_url="/static/docs/swagger-ui.css",
                swagger_favicon_url="/static/docs/favicon.png",
                swagger_ui_parameters={"validatorUrl": None},
            )
        )

    @app.get("/redoc", include_in_schema=False)
    async def redoc() -> HTMLResponse:
        return _with_docs_policy(
            get_redoc_html(
                openapi_url=app.openapi_url or "/openapi.json",
                title=title,
                redoc_js_url="/static/docs/redoc.standalone.js",
                redoc_favicon_url="/static/docs/favicon.png",
                with_google_fonts=False,
            )
        )


def _with_docs_policy(response: HTMLResponse) -> HTMLResponse:
    response.headers["Content-Security-Policy"] = _DOCS_CSP
    return response
