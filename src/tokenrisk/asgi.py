"""ASGI entry point for uvicorn (``tokenrisk.asgi:app``), configured from the environment."""

from tokenrisk.api.app import create_app
from tokenrisk.config import load_settings

app = create_app(load_settings())
