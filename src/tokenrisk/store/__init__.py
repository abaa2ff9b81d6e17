"""Persistent storage: the Transfer-log index, verification registry, cached results."""
