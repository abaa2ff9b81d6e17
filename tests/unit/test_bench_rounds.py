"""The remote bench's per-round listing (bench/rounds.py): depth is the longest chain
of requests that ended before the next began."""

from bench.rounds import depths, named, rounds_text


def test_depths_follow_the_longest_chain_not_the_start_order() -> None:
    # a (0-1), b (0-3) overlap; c starts after a only; d after b and c
    spans = [(0.0, 1.0), (0.0, 3.0), (1.5, 2.0), (3.5, 4.0)]
    assert depths(spans) == [1, 1, 2, 3]


def test_overlapping_requests_share_a_round() -> None:
    assert depths([(0.0, 2.0), (1.0, 3.0), (1.9, 2.5)]) == [1, 1, 1]


def test_names_show_selectors_and_simulation_sizes() -> None:
    batch = (
        b'[{"method":"eth_call","params":[{"to":"0x1","data":"0x70a08231000"},"latest"]},'
        b'{"method":"eth_simulateV1","params":[{"blockStateCalls":[{"calls":[{},{}]}]},"0x1"]},'
        b'{"method":"eth_blockNumber","params":[]}]'
    )
    assert named(batch) == "eth_call(0x70a08231) eth_simulateV1(n2) eth_blockNumber"
    assert named(b"not json") == "?"


def test_rounds_text_lists_each_round() -> None:
    body = b'{"method":"eth_blockNumber"}'
    text = rounds_text("first-sight 0xabc", [(0.0, 1.0), (2.0, 3.0)], [body, body])
    assert text.splitlines() == [
        "first-sight 0xabc rounds=2",
        "  R1: eth_blockNumber",
        "  R2: eth_blockNumber",
    ]


def test_gaps_split_the_service_time_around_the_requests() -> None:
    from bench.proxy import gaps

    # the check 0-10; requests 1-3 and 2-4 overlap (one round), then 6-8
    found = gaps((0.0, 10.0), [(2.0, 4.0), (1.0, 3.0), (6.0, 8.0)])
    assert (found.lead, found.between, found.tail, found.total) == (1.0, 2.0, 2.0, 5.0)
    assert gaps((0.0, 1.0), []).total == 1.0
