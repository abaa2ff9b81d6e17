"""Benchmarks of tokenrisk on the embedded devnet: ``make bench`` (``python -m bench``).

Modules: ``server`` (the service in a uvicorn subprocess), ``latency`` (timed requests
and percentiles), ``floor`` (the node's own eth_simulateV1 time), ``load`` (throughput
with concurrent clients), ``holders`` (holder-analysis scaling on a throwaway node),
``hotpath`` (one profiled IsHoneypot), ``table`` (the printed report), ``runner`` (the
whole run).  ``bench_index`` measures the Transfer-log indexer on its own.
"""
