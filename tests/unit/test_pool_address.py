"""Pool addresses by CREATE2 from the registry's factories, deployers and init code hashes.

Each expected address is a real pool on its chain (read from the chains' explorers), so
a wrong init code hash, a wrong CREATE2 origin (PancakeSwap V3 deploys from its
PancakeV3PoolDeployer, not the factory) or a wrong salt fails here.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from fakenode import FakeNode, Fault

from tokenrisk.chain.abi import checksum
from tokenrisk.chain.dex import resolve_pair
from tokenrisk.chain.registry import Chain, Dex, load_registry
from tokenrisk.model import Pool

WETH = "0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2"
USDC = "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48"
WBNB = "0xbb4CdB9CBd36B01bD1cBaEBF2De08d9173bc095c"
BUSD = "0xe9e7CEA3DedcA5984780Bafc599bD69ADd087D56"
USDT_BSC = "0x55d398326f99059fF775485246999027B3197955"


@pytest.fixture(scope="module")
def registry() -> dict[int, Chain]:
    return load_registry()


def _dex(registry: dict[int, Chain], chain_id: int, name: str, version: str) -> Dex:
    return next(d for d in registry[chain_id].dexes if (d.name, d.version) == (name, version))


@pytest.mark.parametrize(
    ("chain_id", "name", "tokens", "pair"),
    [
        (1, "Uniswap", (WETH, USDC), "0xB4e16d0168e52d35CaCD2c6185b44281Ec28C9Dc"),
        (1, "SushiSwap", (WETH, USDC), "0x397FF1542f962076d0BFE58eA045FfA2d347ACa0"),
        (56, "PancakeSwap", (WBNB, BUSD), "0x58F876857a02D6762E0101bb5C46A8c1ED44Dc16"),
    ],
)
def test_v2_pair_addresses_follow_each_forks_init_code_hash(
    registry: dict[int, Chain], chain_id: int, name: str, tokens: tuple[str, str], pair: str
) -> None:
    dex = _dex(registry, chain_id, name, "V2")
    assert dex.pool_address(*tokens) == pair
    assert dex.pool_address(*reversed(tokens)) == pair  # token order does not matter


def test_a_wrong_init_code_hash_gives_another_address(registry: dict[int, Chain]) -> None:
    sushi = _dex(registry, 1, "SushiSwap", "V2")
    uniswap = _dex(registry, 1, "Uniswap", "V2")
    as_uniswap = replace(sushi, init_code_hash=uniswap.init_code_hash)
    assert as_uniswap.pool_address(WETH, USDC) != sushi.pool_address(WETH, USDC)


def test_uniswap_v3_pools_come_from_the_factory(registry: dict[int, Chain]) -> None:
    dex = _dex(registry, 1, "Uniswap", "V3")
    assert dex.deployer is None
    assert dex.pool_address(USDC, WETH, 500) == "0x88e6A0c2dDD26FEEb64F039a2c41296FcB3f5640"


@pytest.mark.parametrize(
    ("fee", "pool"),
    [
        (100, "0x172fcD41E0913e95784454622d1c3724f546f849"),
        (500, "0x36696169C63e42cd08ce11f5deeBbCeBae652050"),
    ],
)
def test_pancakeswap_v3_pools_come_from_its_deployer(
    registry: dict[int, Chain], fee: int, pool: str
) -> None:
    dex = _dex(registry, 56, "PancakeSwap", "V3")
    assert dex.pool_address(WBNB, USDT_BSC, fee) == pool
    from_factory = replace(dex, deployer=None)
    assert from_factory.pool_address(WBNB, USDT_BSC, fee) != pool


def test_no_address_without_the_hash_or_a_v3_fee(registry: dict[int, Chain]) -> None:
    dex = _dex(registry, 56, "PancakeSwap", "V3")
    assert dex.pool_address(WBNB, USDT_BSC) is None
    assert replace(dex, init_code_hash=None).pool_address(WBNB, USDT_BSC, 500) is None


def test_pools_are_named_by_the_dexs_display_name(registry: dict[int, Chain]) -> None:
    sushi = _dex(registry, 1, "SushiSwap", "V2")
    pancake = _dex(registry, 56, "PancakeSwap", "V2")
    assert (sushi.label, pancake.label) == ("SushiSwap", "PancakeSwap V2")
    pool = Pool(WETH, "SushiSwap", "V2", WETH, USDC, WETH, sushi.router, 1, 1, None)
    assert pool.dex_name == "SushiSwap V2"  # no registry label: name and version
    assert replace(pool, label=sushi.label).dex_name == "SushiSwap"


# A PAIR NAMED BY ITS ADDRESS: resolve_pair believes factory() only where CREATE2 agrees

SELECTORS = {
    "0x0dfe1681": "token0",
    "0xd21220a7": "token1",
    "0xc45a0155": "factory",
    "0xddca3f43": "fee",
}


def _node(answers: dict[str, dict[str, str | int]]) -> FakeNode:
    """A node whose contracts answer ``token0()``, ``token1()``, ``factory()``, ``fee()``
    from ``answers`` (address -> getter -> value); anything else reverts."""

    def call(params: list[Any]) -> Any:
        getter = SELECTORS.get(params[0]["data"][:10])
        value = answers.get(params[0]["to"].lower(), {}).get(getter or "")
        if value is None:
            return Fault(3, "execution reverted", "0x")
        word = int(value, 16) if isinstance(value, str) else value
        return "0x" + word.to_bytes(32, "big").hex()

    return FakeNode({"eth_call": call})


async def _resolve(registry: dict[int, Chain], chain_id: int, node: FakeNode, address: str) -> Any:
    rpc = node.client()
    try:
        return await resolve_pair(rpc, registry[chain_id], address)
    finally:
        await rpc.aclose()


async def test_a_real_pair_of_a_fork_resolves_to_its_token(registry: dict[int, Chain]) -> None:
    sushi = _dex(registry, 1, "SushiSwap", "V2")
    pepe = "0x6982508145454Ce325dDbE47a25d4ec3d2311933"
    pair = sushi.pool_address(pepe, WETH)
    assert pair is not None
    token0, token1 = sorted((pepe, WETH), key=lambda a: int(a, 16))
    node = _node({pair.lower(): {"token0": token0, "token1": token1, "factory": sushi.factory}})
    assert await _resolve(registry, 1, node, pair) == (checksum(pepe), pair)


async def test_a_contract_claiming_a_registry_factory_is_no_pair(
    registry: dict[int, Chain],
) -> None:
    sushi = _dex(registry, 1, "SushiSwap", "V2")
    impostor = "0x00000000000000000000000000000000000000aa"
    token0, token1 = sorted((USDC, WETH), key=lambda a: int(a, 16))
    node = _node({impostor: {"token0": token0, "token1": token1, "factory": sushi.factory}})
    assert await _resolve(registry, 1, node, impostor) is None


async def test_a_pancakeswap_v3_pool_resolves_by_its_deployer_and_fee(
    registry: dict[int, Chain],
) -> None:
    pancake = _dex(registry, 56, "PancakeSwap", "V3")
    pool = "0x36696169C63e42cd08ce11f5deeBbCeBae652050"  # WBNB/USDT, 0.05%
    token0, token1 = sorted((WBNB, USDT_BSC), key=lambda a: int(a, 16))
    getters: dict[str, str | int] = {"token0": token0, "token1": token1, "factory": pancake.factory}
    right = _node({pool.lower(): getters | {"fee": 500}})
    assert await _resolve(registry, 56, right, pool) == (token0, pool)
    wrong_fee = _node({pool.lower(): getters | {"fee": 2500}})  # not where 2500 would be
    assert await _resolve(registry, 56, wrong_fee, pool) is None
    no_fee = _node({pool.lower(): getters})  # fee() reverts: no V3 pool
    assert await _resolve(registry, 56, no_fee, pool) is None


def test_a_wrong_init_code_hash_is_reported_once(
    registry: dict[int, Chain], caplog: pytest.LogCaptureFixture
) -> None:
    from tokenrisk.caching import MemoryCache
    from tokenrisk.chain import dex as discovery

    memo: MemoryCache[str, list[object]] = MemoryCache(16)  # the Node's, in the service
    chain = registry[1]
    sushi = _dex(registry, 1, "SushiSwap", "V2")
    weth = chain.wrapped_native
    real = discovery._Candidate(sushi, weth, None, "0x397FF1542f962076d0BFE58eA045FfA2d347ACa0")
    discovery._check_init_code_hashes(chain, USDC, [real], memo)
    assert not caplog.records  # the factory's pair is where the registry's hash puts it
    wrong = replace(sushi, init_code_hash="0x" + "11" * 32)
    misplaced = replace(real, dex=wrong)
    discovery._check_init_code_hashes(chain, USDC, [misplaced, misplaced], memo)
    discovery._check_init_code_hashes(chain, USDC, [misplaced], memo)
    assert [r.getMessage() for r in caplog.records] == [
        "chain 1: SushiSwap's factory names pool 0x397FF1542f962076d0BFE58eA045FfA2d347ACa0 "
        f"where its init code hash puts {wrong.pool_address(USDC, WETH)}; "
        "check the registry entry's init_code_hash and deployer"
    ]
