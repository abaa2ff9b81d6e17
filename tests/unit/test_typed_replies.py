"""Simulations decoded typed (RpcClient.call_typed for a large one, a batch's
rpc.TypedCall for the small ones; simulator.SIMULATION): the same outcome as the plain
JSON path for the same reply, the plain path for a reply that does not fit the type, and
the same errors.

The node is :class:`tests.fakenode.FakeNode` behind the real :class:`RpcClient`, so the
bytes are decoded as they are from anvil.
"""

from __future__ import annotations

from typing import Any

import httpx
import orjson
import pytest
from fakenode import INTERNAL, REVERTED, FakeNode, deeply_nested

from tokenrisk.chain import rpc
from tokenrisk.chain.head import ChainHead
from tokenrisk.chain.registry import load_registry
from tokenrisk.chain.signatures import TRANSFER_TOPIC
from tokenrisk.errors import CallReverted, MalformedResponse, ReplyTooDeep, RpcError
from tokenrisk.holders import selling as holder_sells
from tokenrisk.model import Pool
from tokenrisk.simulate import simulator as sim_module
from tokenrisk.simulate.calls import Route
from tokenrisk.simulate.simulator import Funding, Plan, SimSettings, Simulator

CHAIN = load_registry()[1]
DEX = next(d for d in CHAIN.dexes if d.version == "V2")
WETH = CHAIN.wrapped_native.address
TOKEN = "0x9fE46736679d2D9a65F0992F2272dE9f3c7fa6e0"
PAIR = "0x000000000000000000000000000000000000bEEF"
HASH = "0x" + "ab" * 32
SWAP = "0x5c11d795"
REASON = "0x08c379a0" + f"{32:064x}" + f"{6:064x}" + b"no way".hex().ljust(64, "0")


def word(value: int) -> str:
    return "0x" + f"{value:064x}"


def holder(i: int) -> str:
    return "0x" + f"{i + 1:040x}"


def _log(address: str, topics: list[Any], data: str | None) -> dict[str, Any]:
    """A log as anvil returns it, metadata and all (upper-case hex to check lowering)."""
    return {
        "address": address.upper().replace("0X", "0x"),
        "topics": topics,
        "data": data,
        "blockHash": HASH,
        "blockNumber": "0x65",
        "blockTimestamp": "0x6556",
        "transactionHash": HASH,
        "transactionIndex": "0x4",
        "logIndex": "0x1",
        "removed": False,
    }


def _call(call: dict[str, Any], k: int) -> dict[str, Any]:
    """Seller ``k``'s call: every third seller's swap fails with a reason, the others'
    swaps log a Transfer to the pair (and one without data)."""
    if not call["data"].startswith(SWAP):
        return {"returnData": word(10**18 + k), "logs": [], "gasUsed": "0x5db5", "status": "0x1"}
    if k % 3 == 0:
        error = {"code": 3, "message": "execution reverted", "data": REASON}
        return {
            "returnData": REASON,
            "logs": [],
            "gasUsed": "0x10",
            "status": "0x0",
            "error": error,
        }
    seller = "0x" + call["from"][2:].rjust(64, "0")
    logs = [
        _log(TOKEN, [TRANSFER_TOPIC, seller, "0x" + PAIR[2:].rjust(64, "0")], word(900 + k)),
        _log(WETH, [TRANSFER_TOPIC.upper().replace("0X", "0x")], None),
    ]
    return {"returnData": "0x", "logs": logs, "gasUsed": hex(140_000 + k), "status": "0x1"}


def reply(params: list[Any]) -> list[dict[str, Any]]:
    """Blocks as anvil returns them: a header with every member, then the calls."""
    blocks = []
    for k, block in enumerate(params[0]["blockStateCalls"]):
        header = {"hash": HASH, "number": block["blockOverrides"]["number"], "logsBloom": "0x00"}
        header |= {"transactions": [HASH] * len(block["calls"]), "uncles": []}
        blocks.append(header | {"calls": [_call(c, k) for c in block["calls"]]})
    return blocks


def simulator(node: FakeNode) -> Simulator:
    pool = Pool(PAIR, "Uniswap", "V2", TOKEN, WETH, WETH, DEX.router, 10**24, 10**24, 1e6)
    route = Route(pool, DEX, TOKEN, WETH)
    return Simulator(
        node.client(), route, ChainHead(100, 1_700_000_000), Funding(WETH, None), SimSettings()
    )


def group(sim: Simulator, size: int = 12) -> Plan:
    return holder_sells._group_plan(sim, [(holder(i), 10**18) for i in range(size)])


@pytest.fixture
def fits(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Whether each reply was decoded typed (True) or went the plain way (False)."""
    seen: list[bool] = []
    fit = rpc._fit

    def counting(decoder: Any, body: bytes) -> Any:
        fitted = fit(decoder, body)
        seen.append(fitted is not None)
        return fitted

    monkeypatch.setattr(rpc, "_fit", counting)
    return seen


async def test_a_large_plan_is_decoded_typed_into_the_plain_outcome(fits: list[bool]) -> None:
    node = FakeNode({"eth_simulateV1": reply})
    sim = simulator(node)
    plan = group(sim)
    assert len(plan.blocks) >= sim_module.LARGE_SIMULATION
    (outcome,) = await sim.run([plan])
    assert fits == [True]
    plain = sim_module._outcome(plan, reply(plan.params()))  # the plain JSON path
    assert outcome == plain
    assert outcome["h0.sell"].reason == "execution reverted: no way"
    assert outcome["h1.sell"].logs[0].address == TOKEN.lower()
    assert outcome["h1.sell"].logs[1].data == "0x" and outcome["h1.sell"].gas == 140_001


async def test_small_and_large_plans_together_keep_their_places(fits: list[bool]) -> None:
    node = FakeNode({"eth_simulateV1": reply})
    sim = simulator(node)
    plans = [sim.buy_only(10**18), group(sim), sim.buy_only(10**18), group(sim, 10)]
    outcomes = await sim.run(plans)
    assert fits == [True, True]  # the two large ones; the small ones share a batch
    for plan, outcome in zip(plans, outcomes, strict=True):
        assert outcome == sim_module._outcome(plan, reply(plan.params()))


async def test_a_reply_that_does_not_fit_the_type_takes_the_plain_path(fits: list[bool]) -> None:
    def odd(params: list[Any]) -> list[dict[str, Any]]:
        blocks = reply(params)
        blocks[1]["calls"][4]["status"] = 1  # not a quantity: the type does not fit
        return blocks

    sim = simulator(FakeNode({"eth_simulateV1": odd}))
    plan = group(sim)
    (outcome,) = await sim.run([plan])
    assert fits == [False]
    assert outcome == sim_module._outcome(plan, odd(plan.params()))
    assert not outcome["h1.sell"].ok and outcome["h2.sell"].ok


async def test_malformed_logs_are_read_as_the_plain_path_reads_them(fits: list[bool]) -> None:
    def odd(params: list[Any]) -> list[dict[str, Any]]:
        blocks = reply(params)
        blocks[1]["calls"][4]["logs"].append(_log(TOKEN, [7], "0x"))  # parse_logs skips it
        blocks[2]["calls"][4]["logs"] = None  # none at all
        return blocks

    sim = simulator(FakeNode({"eth_simulateV1": odd}))
    plan = group(sim)
    (outcome,) = await sim.run([plan])
    assert fits == [True]  # the logs are JSON text until the call is read
    assert outcome == sim_module._outcome(plan, odd(plan.params()))
    assert len(outcome["h1.sell"].logs) == 2 and outcome["h2.sell"].logs == ()


async def test_errors_of_a_large_plan_are_those_of_the_plain_path() -> None:
    sim = simulator(FakeNode({"eth_simulateV1": REVERTED}))
    (outcome,) = await sim.run([group(sim)])
    assert isinstance(outcome, CallReverted)
    sim = simulator(FakeNode({"eth_simulateV1": INTERNAL}))
    with pytest.raises(RpcError) as caught:
        await sim.run([group(sim)])
    assert not isinstance(caught.value, CallReverted)


@pytest.mark.parametrize("typed", [True, False])
async def test_fewer_calls_than_sent_is_malformed(typed: bool) -> None:
    def short(params: list[Any]) -> list[dict[str, Any]]:
        blocks = reply(params)
        blocks[2]["calls"] = blocks[2]["calls"][:2]
        return blocks

    sim = simulator(FakeNode({"eth_simulateV1": short}))
    plan = group(sim, 12 if typed else 3)  # 3 blocks: a small plan, plain JSON
    with pytest.raises(MalformedResponse):
        await sim.run([plan]) if typed else sim_module._outcome(plan, short(plan.params()))


async def test_call_typed_keeps_every_guard_of_call() -> None:
    deep = FakeNode(whole=deeply_nested(200_000)).client()
    with pytest.raises(ReplyTooDeep):
        await deep.call_typed("eth_simulateV1", [], sim_module.SIMULATION)
    await deep.aclose()
    other = FakeNode({"eth_simulateV1": "0x12", "eth_call": INTERNAL}).client()
    assert await other.call_typed("eth_simulateV1", [], sim_module.SIMULATION) == "0x12"  # plain
    with pytest.raises(RpcError):
        await other.call_typed("eth_call", [], sim_module.SIMULATION)
    await other.aclose()


@pytest.fixture
def batch_fits(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Whether each batch with typed calls was decoded typed (True) or plainly (False)."""
    seen: list[bool] = []
    fit = rpc._BatchFit.fit

    def counting(self: rpc._BatchFit, body: bytes) -> Any:
        fitted = fit(self, body)
        seen.append(fitted is not None)
        return fitted

    monkeypatch.setattr(rpc._BatchFit, "fit", counting)
    return seen


async def test_small_plans_in_one_batch_are_decoded_typed(batch_fits: list[bool]) -> None:
    node = FakeNode({"eth_simulateV1": reply})
    sim = simulator(node)
    plans = [sim.buy_only(10**18), sim.buy_then_sell(10**18, 10**17), group(sim, 3)]
    outcomes = await sim.run(plans)
    assert batch_fits == [True] and node.requests == 1
    for plan, outcome in zip(plans, outcomes, strict=True):
        assert not isinstance(outcome, CallReverted)
        assert outcome == sim_module._outcome(plan, reply(plan.params()))
    assert outcomes[2]["h0.sell"].reason == "execution reverted: no way"
    assert outcomes[2]["h1.sell"].logs[0].address == TOKEN.lower()


async def test_a_batch_result_that_does_not_fit_is_plain_json(batch_fits: list[bool]) -> None:
    def odd(params: list[Any]) -> Any:
        if len(params[0]["blockStateCalls"]) == 3:
            blocks = reply(params)
            blocks[1]["calls"][4]["logs"].append(_log(TOKEN, [7], "0x"))
            return blocks
        return reply(params)

    sim = simulator(FakeNode({"eth_simulateV1": odd}))
    plans = [sim.buy_only(10**18), group(sim, 3)]
    outcomes = await sim.run(plans)
    assert batch_fits == [True]  # the other result typed, this one plain
    for plan, outcome in zip(plans, outcomes, strict=True):
        assert outcome == sim_module._outcome(plan, odd(plan.params()))
    assert len(outcomes[1]["h1.sell"].logs) == 2


async def test_typed_and_plain_calls_share_a_batch() -> None:
    client = FakeNode({"eth_simulateV1": reply, "eth_call": "0x12", "eth_chainId": "0x1"}).client()
    params = [{"blockStateCalls": [{"blockOverrides": {"number": "0x65"}, "calls": []}]}, "0x64"]
    typed = rpc.TypedCall("eth_simulateV1", params, sim_module.SIMULATION)
    assert typed == ("eth_simulateV1", params)  # the plain pair to whoever does not look
    result, plain, chain = await client.batch(
        [typed, ("eth_call", [{}, "latest"]), ("eth_chainId", [])]
    )
    assert isinstance(result[0], sim_module.SimBlock) and result[0].number == "0x65"
    assert plain == "0x12" and chain == "0x1"
    await client.aclose()


async def test_errors_in_a_typed_batch_are_those_of_the_plain_path() -> None:
    sim = simulator(FakeNode({"eth_simulateV1": REVERTED}))
    outcomes = await sim.run([sim.buy_only(10**18), sim.buy_only(10**18)])
    assert all(isinstance(o, CallReverted) for o in outcomes)
    sim = simulator(FakeNode({"eth_simulateV1": INTERNAL}))
    with pytest.raises(RpcError) as caught:
        await sim.run([sim.buy_only(10**18), sim.buy_only(10**18)])
    assert not isinstance(caught.value, CallReverted)
    deep = FakeNode(whole=deeply_nested(200_000)).client()
    with pytest.raises(ReplyTooDeep):
        await deep.batch([rpc.TypedCall("eth_simulateV1", [], sim_module.SIMULATION)] * 2)
    await deep.aclose()


# THE DEPTH GUARD OF A SHALLOW TYPE (rpc.Shallow)


def _clean(params: list[Any]) -> list[dict[str, Any]]:
    """:func:`reply` with every call a success: no member named ``error``."""
    blocks = reply(params)
    for block in blocks:
        block["calls"] = [
            c if "error" not in c else {**_call({"data": "0x"}, 1), "status": "0x1"}
            for c in block["calls"]
        ]
    return blocks


def _raw_reply(
    result: Any, extra: bytes = b"", at: bytes = b'"logsBloom":"0x00"', replace: bool = False
) -> Any:
    """A whole answer: ``result(params)`` as JSON with ``extra`` spliced in after the
    first ``at`` (``replace``: instead of it), a member nested deeper than any JSON
    encoder here would write."""

    def answer(body: Any) -> httpx.Response:
        text = orjson.dumps({"jsonrpc": "2.0", "id": body["id"], "result": result(body["params"])})
        if extra:
            assert at in text
            text = text.replace(at, extra if replace else at + b"," + extra, 1)
        return httpx.Response(200, content=text, headers={"content-type": "application/json"})

    return answer


def _nested(name: str, depth: int) -> bytes:
    return b'"%s":' % name.encode() + b"[" * depth + b"]" * depth


@pytest.fixture
def scans(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The size of each body the depth guard scanned."""
    seen: list[int] = []
    scan = rpc.too_deep

    def counting(body: bytes, limit: int) -> bool:
        seen.append(len(body))
        return scan(body, limit)

    monkeypatch.setattr(rpc, "too_deep", counting)
    return seen


async def test_a_shallow_type_is_decoded_without_the_depth_scan(
    fits: list[bool], scans: list[int]
) -> None:
    assert isinstance(sim_module.SIMULATION, rpc.Shallow)
    sim = simulator(FakeNode({"eth_simulateV1": _clean}))
    plan = group(sim)
    (outcome,) = await sim.run([plan])
    assert fits == [True] and scans == []  # the chain id's greeting is not a typed reply
    assert outcome == sim_module._outcome(plan, _clean(plan.params()))
    sim = simulator(FakeNode({"eth_simulateV1": reply}))  # reverted calls: error members
    plan = group(sim)
    (outcome,) = await sim.run([plan])
    assert scans == []  # the reply is not scanned; an error only when its call is read
    assert outcome["h0.sell"].reason == "execution reverted: no way"
    assert scans and max(scans) < 1_000  # that error's text alone, not the reply


async def test_a_member_skipped_too_deep_for_python_is_too_deep() -> None:
    """A member the type skips is stepped over, not parsed: nested past Python's
    recursion limit it still fails as too deep (msgspec's RecursionError), never a crash
    or an answer."""
    sim = simulator(FakeNode(whole=_raw_reply(_clean, _nested("withdrawals", 100_000))))
    with pytest.raises(ReplyTooDeep):
        await sim.run([group(sim)])


async def test_a_skipped_member_over_the_cap_is_not_parsed() -> None:
    """Deeper than ``max_depth`` (256) but within Python's limit, in a member the type
    skips: nothing reads it, so the outcome is the reply's without it."""
    sim = simulator(FakeNode(whole=_raw_reply(_clean, _nested("withdrawals", 300))))
    plan = group(sim)
    (outcome,) = await sim.run([plan])
    assert outcome == sim_module._outcome(plan, _clean(plan.params()))


async def test_an_error_member_keeps_the_depth_guard() -> None:
    """A call's error is kept as text and parsed with the depth guard when its failed
    call is read: nested past the cap it is too deep then, as the plain path says."""
    deep = b'"data":' + b"[" * 300 + b"]" * 300
    sim = simulator(FakeNode(whole=_raw_reply(reply, deep, b'"data":"' + REASON.encode() + b'"')))
    plan = group(sim)
    (outcome,) = await sim.run([plan])
    assert outcome["h1.sell"].ok  # the others read as before
    with pytest.raises(ReplyTooDeep):
        outcome["h0.sell"]  # block 0's sell reverted: its error, nested 300 deep


async def test_a_batch_error_nested_past_the_cap_is_too_deep() -> None:
    """A JSON-RPC error of a shallow batch is parsed with the depth guard."""

    def answer(body: Any) -> httpx.Response:
        deep = b"[" * 300 + b"]" * 300
        items = [
            b'{"jsonrpc":"2.0","id":%d,"error":{"code":-32000,"message":"x","data":%s}}'
            % (request["id"], deep)
            for request in body
        ]
        return httpx.Response(200, content=b"[" + b",".join(items) + b"]")

    sim = simulator(FakeNode(whole=answer))
    with pytest.raises(ReplyTooDeep):
        await sim.run([sim.buy_only(10**18), sim.buy_only(10**18)])


def _skip_first(params: list[Any]) -> list[dict[str, Any]]:
    """:func:`_clean` whose first call logs one event (so block 0's second call is the
    first with none)."""
    blocks = _clean(params)
    blocks[0]["calls"][0]["logs"] = [_log(TOKEN, [TRANSFER_TOPIC], "0x")]
    return blocks


async def test_logs_read_plain_keep_the_depth_guard() -> None:
    """Logs that do not fit the log type are parsed plain when their call is read:
    nested past the cap they are too deep then."""
    deep = b'"logs":[{"address":' + b"[" * 300 + b"]" * 300 + b"}]"
    sim = simulator(FakeNode(whole=_raw_reply(_skip_first, deep, b'"logs":[]', replace=True)))
    plan = group(sim)
    (outcome,) = await sim.run([plan])  # the body decoded: the logs are text until read
    assert outcome["h1.sell"].ok  # the others read as before
    with pytest.raises(ReplyTooDeep):
        outcome["h0.seller_before"]  # block 0's second call: its first with no logs


async def test_a_plain_result_in_a_shallow_batch_keeps_the_depth_guard() -> None:
    """A batch with typed and untyped calls is not scanned first; the untyped call's
    result, parsed plain, is scanned on its own."""

    def answer(body: Any) -> httpx.Response:
        items = []
        for request in body:
            if request["method"] == "eth_simulateV1":
                items.append(
                    orjson.dumps(
                        {"jsonrpc": "2.0", "id": request["id"], "result": _clean(request["params"])}
                    )
                )
            else:
                items.append(
                    b'{"jsonrpc":"2.0","id":%d,"result":' % request["id"]
                    + b"[" * 300
                    + b"]" * 300
                    + b"}"
                )
        return httpx.Response(
            200,
            content=b"[" + b",".join(items) + b"]",
            headers={"content-type": "application/json"},
        )

    sim = simulator(FakeNode(whole=answer))
    client = sim.rpc
    typed = rpc.TypedCall("eth_simulateV1", sim.buy_only(10**18).params(), sim_module.SIMULATION)
    with pytest.raises(ReplyTooDeep):
        await client.batch([typed, ("eth_blockNumber", [])])
