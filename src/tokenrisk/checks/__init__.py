"""One orchestration per endpoint, from a validated request to a result."""
