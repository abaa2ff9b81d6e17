"""The reader contract answers exactly what the calls it replaces answer, on real code.

For every catalogue token (honest, hostile metadata, gas burners, proxies), the base
tokens, a pool and an account without code: pool discovery in one linked reader call
equals discovery call by call; metadata, ERC-20 probes, pair resolution, code and code
heads read through folded calls equal the same reads sent directly.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tokenrisk.chain import dex
from tokenrisk.chain.coalesce import CoalescingRpc
from tokenrisk.chain.tokens import code_heads, is_contract, is_erc20, read_token
from tokenrisk.devnet.instance import RunningDevnet
from tokenrisk.service import devnet_chain

pytestmark = pytest.mark.integration

NOBODY = "0x000000000000000000000000000000000000bEEF"


def _addresses(devnet: RunningDevnet) -> list[str]:
    tokens = [str(t["address"]) for t in devnet.manifest["tokens"]]
    chain = devnet_chain(devnet.manifest)
    return tokens + [b.address for b in chain.base_tokens] + [NOBODY]


async def _reads(rpc: CoalescingRpc, devnet: RunningDevnet, address: str) -> tuple[Any, ...]:
    chain = devnet_chain(devnet.manifest)
    return tuple(
        await asyncio.gather(
            dex.find_pools(rpc, chain, address),
            read_token(rpc, address),
            is_erc20(rpc, address),
            dex.resolve_pair(rpc, chain, address),
            is_contract(rpc, [address, NOBODY]),
            code_heads(rpc, [address, NOBODY]),
            rpc.call("eth_getCode", [address, "latest"]),
        )
    )


async def test_folded_and_linked_reads_equal_direct_reads(devnet: RunningDevnet) -> None:
    folded = CoalescingRpc(devnet.url)
    direct = CoalescingRpc(devnet.url, fold=False)
    sent: list[list[str]] = []
    post = folded._post_batch

    async def recording(calls: Any) -> list[Any]:
        sent.append([m for m, _ in calls])
        return await post(calls)

    folded._post_batch = recording  # type: ignore[method-assign]
    try:
        pools = await dex.find_pools(folded, devnet_chain(devnet.manifest), _addresses(devnet)[0])
        assert pools and pools[0].liquidity_usd is not None
        assert sent == [["eth_call"]]  # one call: lookups, balances and the native price
        for address in _addresses(devnet):
            assert await _reads(folded, devnet, address) == await _reads(direct, devnet, address)
            assert folded.fold  # the reader answered every time
    finally:
        await folded.aclose()
        await direct.aclose()


async def test_a_pair_address_resolves_alike(devnet: RunningDevnet) -> None:
    chain = devnet_chain(devnet.manifest)
    folded = CoalescingRpc(devnet.url)
    direct = CoalescingRpc(devnet.url, fold=False)
    try:
        token = _addresses(devnet)[0]
        pool = (await dex.find_pools(direct, chain, token))[0].address
        assert await _reads(folded, devnet, pool) == await _reads(direct, devnet, pool)
        assert (await dex.resolve_pair(folded, chain, pool)) is not None
    finally:
        await folded.aclose()
        await direct.aclose()


async def test_a_delegated_eoa_is_a_wallet_on_a_real_node(devnet: RunningDevnet) -> None:
    """EIP-7702: an account holding ``0xef0100 || delegate`` is a wallet for holder
    analysis and owner callers, through the reader and through ``eth_getCode`` alike;
    the same account with contract code is a contract."""
    wallet = str(devnet.manifest["addresses"]["OWNER"])
    delegate = str(devnet.manifest["tokens"][0]["address"])
    folded, direct = CoalescingRpc(devnet.url), CoalescingRpc(devnet.url, fold=False)
    snapshot = await direct.call("evm_snapshot")
    try:
        await direct.call("anvil_setCode", [wallet, "0xef0100" + delegate[2:].lower()])
        for rpc in (folded, direct):
            heads = await code_heads(rpc, [wallet])
            assert heads[0].lower().startswith("0xef0100"), heads
            assert await is_contract(rpc, [wallet, delegate]) == [False, True]
        await direct.call("anvil_setCode", [wallet, "0x6080604052"])
        for rpc in (folded, direct):
            assert await is_contract(rpc, [wallet]) == [True]
    finally:
        assert await direct.call("evm_revert", [snapshot])
        await folded.aclose()
        await direct.aclose()
