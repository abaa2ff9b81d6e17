"""The HTTP edge: FastAPI app, wire models, health, result cache."""
