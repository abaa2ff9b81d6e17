"""Benchmarks of tokenrisk on the embedded devnet: ``make bench`` (``python -m bench``).

Modules: ``server`` (the service in a uvicorn subprocess), ``latency`` (timed requests
and percentiles), ``floor`` (the node's own eth_simulateV1 time), ``load`` (throughput
with concurrent clients), ``holders`` (holder-analysis scaling on a throwaway node),
``hotpath`` (one profiled IsHoneypot), ``table`` (the printed report), ``runner`` (the
whole run), ``proxy`` (a JSON-RPC proxy that delays every message: a node far away) and
``remote`` (IsHoneypot through it; ``python -m bench --only remote``).  ``bench_index``
measures the Transfer-log indexer on its own; ``peer`` compares a recomputed IsHoneypot
with a single-call checker's one ``eth_call`` (bench/PEER.md).
"""
