"""Pair discovery on V2- and V3-style DEXes, reserves and USD liquidity.

Discovery asks every DEX of the chain registry for the token against every base token
(wrapped native and stablecoins): ``getPair`` on V2 factories and ``getPool`` for each
fee tier on V3 factories, all in one JSON-RPC batch.  USD liquidity is twice the
base-side reserve valued in USD: stablecoins at 1 USD, the wrapped native token at the
price of its deepest stablecoin V2 pair (documented in docs/api.md).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any, Protocol

from tokenrisk.chain import reader
from tokenrisk.chain.abi import (
    ZERO_ADDRESS,
    address_word,
    checksum,
    decode_uint,
    encode_call,
    to_bytes,
    word_address,
)
from tokenrisk.chain.coalesce import CoalescingRpc
from tokenrisk.chain.registry import BaseToken, Chain, Dex, v4_dex
from tokenrisk.chain.rpc import RpcClient
from tokenrisk.chain.signatures import PAIR_CREATED, POOL_CREATED
from tokenrisk.chain.tokens import call_params
from tokenrisk.errors import CallReverted, MalformedResponse, MethodUnsupported, RpcError
from tokenrisk.model import Pool

log = logging.getLogger("tokenrisk")


@dataclass(frozen=True)
class _Candidate:
    dex: Dex
    base: BaseToken
    fee: int | None
    address: str


Lookup = tuple[Dex, BaseToken, int | None, str]
"""A factory lookup: the DEX, the base token, the fee tier (V3) and the calldata."""
_Template = tuple[Dex, BaseToken, int | None, str, str]
"""A lookup's calldata around the token's word: (dex, base, fee, before, after)."""


def _lookup_calls(
    chain: Chain, token: str, bases: Sequence[BaseToken] | None = None
) -> list[Lookup]:
    """``getPair`` / ``getPool`` calls of ``token`` against each base token on each DEX
    (a base token is not looked up against itself).  Each is the chain's template
    around the token's word (:func:`_templates`): string joins, no ABI encoding."""
    wanted = token.lower()
    templates = _templates(chain, None if bases is None else tuple(bases))
    if address_word(token) is None:  # not 0x-hex: encoded (and refused) as it always was
        return [
            (dex, base, fee, _lookup_data(token, base, fee))
            for dex, base, fee, _, _ in templates
            if base.address.lower() != wanted
        ]
    word = "0" * 24 + token[2:].lower()
    return [
        (dex, base, fee, before + word + after)
        for dex, base, fee, before, after in templates
        if base.address.lower() != wanted
    ]


def _lookup_data(token: str, base: BaseToken, fee: int | None) -> str:
    if fee is None:
        return encode_call("getPair(address,address)", [token, base.address])
    return encode_call("getPool(address,address,uint24)", [token, base.address, fee])


@lru_cache(maxsize=64)
def _templates(chain: Chain, bases: tuple[BaseToken, ...] | None) -> tuple[_Template, ...]:
    """Per chain (and base list): every lookup's calldata split around the token's word,
    encoded once (a first search built ~30 calls per token, issue #27)."""
    out: list[_Template] = []
    for dex in chain.dexes:
        for base in chain.base_tokens if bases is None else bases:
            for fee in (None,) if dex.version == "V2" else dex.fee_tiers:
                data = _lookup_data(ZERO_ADDRESS, base, fee)
                out.append((dex, base, fee, data[:10], data[74:]))
    return tuple(out)


async def _candidates(rpc: RpcClient, chain: Chain, token: str, block: str) -> list[_Candidate]:
    lookups = _lookup_calls(chain, token)
    results = await rpc.batch(
        [("eth_call", call_params(d.factory, data, block)) for d, _, _, data in lookups]
    )
    found: list[_Candidate] = []
    for (dex, base, fee, _), result in zip(lookups, results, strict=True):
        if (
            isinstance(result, CallReverted)
            or not isinstance(result, str)
            or len(to_bytes(result)) < 32
        ):
            continue
        address = word_address(to_bytes(result)[:32])
        if address != ZERO_ADDRESS:
            found.append(_Candidate(dex, base, fee, address))
    return found


async def _reserves(
    rpc: RpcClient, token: str, cands: list[_Candidate], block: str
) -> list[tuple[int, int] | None]:
    """(token reserve, base reserve) per candidate: V2 from balances too, robust to skims."""
    calls: list[tuple[str, list[Any]]] = []
    for cand in cands:
        calls.append(
            (
                "eth_call",
                call_params(token, encode_call("balanceOf(address)", [cand.address]), block),
            )
        )
        calls.append(
            (
                "eth_call",
                call_params(
                    cand.base.address, encode_call("balanceOf(address)", [cand.address]), block
                ),
            )
        )
    results = await rpc.batch(calls)
    out: list[tuple[int, int] | None] = []
    for i in range(len(cands)):
        tok, base = (
            decode_uint(r) if not isinstance(r, CallReverted) else None
            for r in results[2 * i : 2 * i + 2]
        )
        out.append((tok, base) if tok is not None and base is not None else None)
    return out


def _usd(amount: int, base: BaseToken, native_usd: float | None) -> float | None:
    units: float = amount / 10**base.decimals
    if base.stable:
        return units
    return units * native_usd if native_usd is not None else None


NATIVE_POOLS_TTL = 300.0
"""Seconds the wrapped native token's stablecoin pools are remembered (their reserves
are always read fresh; only a pool created meanwhile is missed until then)."""


class NativePools(Protocol):
    """Where a chain's wrapped native stablecoin pools are remembered: the
    :class:`~tokenrisk.caching.MemoryCache` its :class:`~tokenrisk.chain.node.Node` owns
    (``Node.native_pools``), keyed on the wrapped native token's address."""

    def value(self, key: str) -> list[Any] | None: ...

    def put(self, key: str, value: list[Any], ttl: float | None = None) -> None: ...


def _known_native(chain: Chain, block: str, memo: NativePools | None) -> list[_Candidate] | None:
    """The remembered native pools (only for "latest"), None when not known."""
    if block != "latest" or memo is None:
        return None
    return memo.value(chain.wrapped_native.address.lower())


def _remember_native(
    chain: Chain, block: str, found: list[_Candidate], memo: NativePools | None
) -> None:
    if block == "latest" and memo is not None:
        memo.put(chain.wrapped_native.address.lower(), found, NATIVE_POOLS_TTL)


async def _native_candidates(
    rpc: RpcClient, chain: Chain, block: str, memo: NativePools | None
) -> list[_Candidate]:
    """The wrapped native token's pools against the chain's stablecoins (remembered in
    ``memo`` at "latest")."""
    known = _known_native(chain, block, memo)
    if known is not None:
        return known
    found = await _candidates(rpc, chain, chain.wrapped_native.address, block)
    _remember_native(chain, block, found, memo)
    return found


def _pricing(found: list[_Candidate]) -> list[_Candidate]:
    """The wrapped native token's pools its price is read from: V2 when there are any
    (V2 reserves give the spot price; V3 balances only approximate it)."""
    v2 = [c for c in found if c.dex.version == "V2"]
    return v2 or found


async def native_usd_price(
    rpc: RpcClient, chain: Chain, block: str = "latest", memo: NativePools | None = None
) -> float | None:
    """USD price of the wrapped native token from its deepest stablecoin pair (V2
    preferred); its pools are remembered in ``memo`` (the Node's) when given."""
    cands = _pricing(await _native_candidates(rpc, chain, block, memo))
    if not cands:
        return None
    reserves = await _reserves(rpc, chain.wrapped_native.address, cands, block)
    return _price(chain, cands, reserves)


def _price(
    chain: Chain, cands: list[_Candidate], reserves: list[tuple[int, int] | None]
) -> float | None:
    """The price in the deepest of ``cands`` (by stablecoin reserve)."""
    weth = chain.wrapped_native
    best: tuple[float, float] | None = None
    for cand, res in zip(cands, reserves, strict=True):
        if res is None or res[0] == 0:
            continue
        stable_units = res[1] / 10**cand.base.decimals
        price = stable_units / (res[0] / 10**weth.decimals)
        if best is None or stable_units > best[0]:
            best = (stable_units, price)
    return best[1] if best else None


async def find_pools(
    rpc: RpcClient,
    chain: Chain,
    token: str,
    block: str = "latest",
    memo: NativePools | None = None,
) -> list[Pool]:
    """All pools of ``token`` against the chain's base tokens, deepest (USD) first;
    ``memo`` (the Node's) remembers the wrapped native token's pools for pricing.

    With the reader contract (:mod:`tokenrisk.chain.reader`) every lookup, every
    found pool's two balances and the native price's reserves are ONE ``eth_call``;
    otherwise (or when the reader cannot answer for sure) lookups, then balances.
    """
    linked = await linked_discovery(rpc, chain, token, block, memo)
    if linked is not None:
        cands, reserves, price = linked
    else:
        cands, price = await asyncio.gather(
            _candidates(rpc, chain, token, block), native_usd_price(rpc, chain, block, memo)
        )
        if not cands:
            return []
        reserves = await _reserves(rpc, token, cands, block)
    _check_init_code_hashes(chain, token, cands, memo)
    pools = [
        _pool(chain, token, cand, res, price)
        for cand, res in zip(cands, reserves, strict=True)
        if res is not None
    ]
    pools.sort(key=lambda p: (-p.depth, p.address))
    return pools


MISPLACED_WARNING_TTL = 3600.0
"""How long one warning about a DEX's misplaced pools stands for that DEX (an hour)."""


def _check_init_code_hashes(
    chain: Chain, token: str, cands: list[_Candidate], memo: NativePools | None
) -> None:
    """Warn (once an hour per DEX, remembered in the Node's ``memo``) when its factory
    names a pool where the registry's CREATE2 (init code hash, deployer) does not put it:
    the entry's hash is wrong, so pair addresses of that DEX named in requests will not
    resolve (:func:`resolve_pair`)."""
    for cand in cands:
        expected = cand.dex.pool_address(token, cand.base.address, cand.fee)
        key = f"misplaced:{chain.id}:{cand.dex.name}:{cand.dex.version}"
        if expected in (None, cand.address) or (memo is not None and memo.value(key) is not None):
            continue
        if memo is not None:
            memo.put(key, [], MISPLACED_WARNING_TTL)
        log.warning(
            "chain %s: %s's factory names pool %s where its init code hash puts %s; "
            "check the registry entry's init_code_hash and deployer",
            chain.id,
            cand.dex.label,
            cand.address,
            expected,
        )


LOOKUP_GAS = 5_000_000  # as call_params gives every direct lookup and balance read
_LINKED_BALANCE = encode_call("balanceOf(address)", [ZERO_ADDRESS])
"""A linked read's calldata: the reader puts the lookup's pool in place of the zero."""
Discovery = tuple[list[_Candidate], list[tuple[int, int] | None], float | None]


def _linked_reads(token: str, lookups: list[Lookup]) -> list[reader.Read]:
    """Per lookup: the factory call, then the token's and the base's ``balanceOf`` of
    the pool it returns (linked: skipped when it returns no pool)."""
    reads: list[reader.Read] = []
    for dex, base, _, data in lookups:
        k = len(reads) + 1  # the link to this lookup (numbered from 1 in this list)
        reads.append(reader.Read(dex.factory, data, LOOKUP_GAS))
        reads.append(reader.Read(token, _LINKED_BALANCE, LOOKUP_GAS, link=k))
        reads.append(reader.Read(base.address, _LINKED_BALANCE, LOOKUP_GAS, link=k))
    return reads


@lru_cache(maxsize=64)
def _native_reads(chain: Chain, offset: int) -> tuple[tuple[Lookup, ...], tuple[reader.Read, ...]]:
    """The wrapped native token's lookups against the stablecoins and their linked reads
    (:func:`_linked_reads`), numbered after ``offset`` reads of the token's own: they
    depend on the chain alone, so they are built once, not at each first search."""
    weth = chain.wrapped_native.address
    native = _lookup_calls(chain, weth, chain.stablecoins)
    reads = [r._replace(link=r.link + offset if r.link else 0) for r in _linked_reads(weth, native)]
    return tuple(native), tuple(reads)


def _linked_found(
    lookups: Sequence[Lookup], outcomes: list[reader.Outcome]
) -> tuple[list[_Candidate], list[tuple[int, int] | None]] | None:
    """Candidates and reserves from the reader's outcomes, as :func:`_candidates` and
    :func:`_reserves` would give them; None when some outcome is not conclusive."""
    if any(o.status in (reader.TOO_LONG, reader.NOT_RUN) for o in outcomes):
        return None
    cands: list[_Candidate] = []
    reserves: list[tuple[int, int] | None] = []
    for n, (dex, base, fee, _) in enumerate(lookups):
        lookup, tok, bal = outcomes[3 * n : 3 * n + 3]
        if lookup.word is None or lookup.word % 2**160 == 0:
            continue
        address = word_address(lookup.data[:32])
        cands.append(_Candidate(dex, base, fee, address))
        pair = (tok.word, bal.word)
        reserves.append((pair[0], pair[1]) if pair[0] is not None and pair[1] is not None else None)
    return cands, reserves


async def linked_discovery(
    rpc: RpcClient, chain: Chain, token: str, block: str, memo: NativePools | None = None
) -> Discovery | None:
    """Candidates, their reserves and the native price in ONE reader ``eth_call``.

    None when the node client does not use the reader (then, or when the reader fails
    or cannot answer every call for sure, the caller discovers call by call).
    """
    if not (isinstance(rpc, CoalescingRpc) and rpc.fold):
        return None
    own = _lookup_calls(chain, token)
    ours = 3 * len(own)  # reads: each lookup, then its pool's two balances
    known = _known_native(chain, block, memo)
    if known is None:
        native, theirs = _native_reads(chain, ours)
    else:  # the pools are remembered: only their balances
        native, theirs = (), tuple(_balance_reads(chain.wrapped_native.address, _pricing(known)))
    data = _linked_calldata(chain, token, own, theirs)
    try:
        reply = await rpc.call("eth_call", reader.run_params(reader.fresh_address(), data, block))
        outcomes, _ = reader.decode_output(reply, ours + len(theirs))
    except (RpcError, MalformedResponse):
        return None
    mine = _linked_found(own, outcomes[:ours])
    if known is None:
        pools = _linked_found(native, outcomes[ours:])
        if pools is not None:
            _remember_native(chain, block, pools[0], memo)
    else:
        pools = _balances_found(known, outcomes[ours:])
    if mine is None or pools is None:
        return None
    pricing = _pricing(pools[0])
    priced = [r for c, r in zip(*pools, strict=True) if c in pricing]
    return mine[0], mine[1], _price(chain, pricing, priced)


_STAND_IN = "0x7" + "e" * 39
"""The token in :func:`_linked_template`: no proper prefix of its hex is a suffix of it,
so two of its occurrences never overlap and counting them finds every one."""


def _linked_calldata(
    chain: Chain, token: str, own: list[Lookup], theirs: tuple[reader.Read, ...]
) -> str:
    """The reader's calldata of ``token``'s linked reads (:func:`_linked_reads` of its
    lookups ``own``), then ``theirs``: the chain's template with the token's hex in
    place of the stand-in's (the same bytes; a first search encoded ~130 reads, issue
    #27).  A token that is not plain hex, or is a base token (a lookup fewer), is
    encoded read by read."""
    template = _linked_template(chain, theirs)
    if template is None or address_word(token) is None or chain.base_token(token) is not None:
        return reader.read_calldata([*_linked_reads(token, own), *theirs])
    return template.replace(_STAND_IN[2:], token[2:].lower())


@lru_cache(maxsize=64)
def _linked_template(chain: Chain, theirs: tuple[reader.Read, ...]) -> str | None:
    """:func:`_linked_calldata` of the stand-in token; None when its hex is not found
    exactly where the token goes (each lookup's calldata and its token balance's
    target), which no registry's addresses make happen."""
    own = _lookup_calls(chain, _STAND_IN)
    data = reader.read_calldata([*_linked_reads(_STAND_IN, own), *theirs])
    return data if data.count(_STAND_IN[2:]) == 2 * len(own) else None


def _balance_reads(token: str, cands: list[_Candidate]) -> list[reader.Read]:
    """``token`` and base balances of each known pool (two reads per pool)."""
    return [
        reader.Read(side, encode_call("balanceOf(address)", [c.address]), LOOKUP_GAS)
        for c in cands
        for side in (token, c.base.address)
    ]


def _balances_found(
    known: list[_Candidate], outcomes: list[reader.Outcome]
) -> tuple[list[_Candidate], list[tuple[int, int] | None]] | None:
    """The pricing pools of ``known`` with their reserves from :func:`_balance_reads`."""
    if any(o.status in (reader.TOO_LONG, reader.NOT_RUN) for o in outcomes):
        return None
    cands = _pricing(known)
    reserves: list[tuple[int, int] | None] = []
    for n in range(len(cands)):
        tok, base = outcomes[2 * n].word, outcomes[2 * n + 1].word
        reserves.append((tok, base) if tok is not None and base is not None else None)
    return cands, reserves


def _pool(
    chain: Chain, token: str, cand: _Candidate, res: tuple[int, int], price: float | None
) -> Pool:
    token_first = int(token, 16) < int(cand.base.address, 16)
    token0, token1 = (token, cand.base.address) if token_first else (cand.base.address, token)
    r0, r1 = res if token_first else (res[1], res[0])
    return Pool(
        address=cand.address,
        dex=cand.dex.name,
        version=cand.dex.version,
        token0=checksum(token0),
        token1=checksum(token1),
        base_token=cand.base.address,
        router=cand.dex.router,
        reserves0=r0,
        reserves1=r1,
        liquidity_usd=liquidity_usd(res[1], cand.base, price),
        fee=cand.fee,
        chain_id=chain.id,
        label=cand.dex.label,
    )


def liquidity_usd(base_reserve: int, base: BaseToken, price: float | None) -> float | None:
    """A pool's liquidity in USD: twice its base side (None without a price)."""
    usd = _usd(base_reserve, base, price)
    return None if usd is None else round(2 * usd, 2)


def token_reserve(pool: Pool) -> int:
    return pool.reserves1 if pool.token0 == pool.base_token else pool.reserves0


def base_reserve(pool: Pool) -> int:
    return pool.reserves0 if pool.token0 == pool.base_token else pool.reserves1


def dex_of(chain: Chain, pool: Pool) -> Dex:
    if pool.version == "V4" and chain.uniswap_v4 is not None:
        return v4_dex(chain.uniswap_v4)
    return next(d for d in chain.dexes if d.router == pool.router and d.version == pool.version)


async def resolve_pair(
    rpc: RpcClient, chain: Chain, address: str, block: str = "latest"
) -> tuple[str, str] | None:
    """If ``address`` is a pair/pool of a registry DEX, return (token, pair address).

    A contract that merely answers ``factory()`` with a registry factory is not taken
    for its pool: where the registry knows the DEX's init code hash, the address must be
    the one that DEX's CREATE2 gives for the two tokens (and the fee, on V3).  The token
    is the side that is not a base token (token0 when both are bases).
    """
    calls = [
        ("eth_call", call_params(address, encode_call(sig), block))
        for sig in ("token0()", "token1()", "factory()", "fee()")
    ]
    results = await rpc.batch(calls)
    if any(not _word_reply(r) for r in results[:3]):
        return None
    token0, token1, factory = (word_address(to_bytes(r)[:32]) for r in results[:3])
    fee = decode_uint(results[3]) if _word_reply(results[3]) else None
    makers = [d for d in chain.dexes if d.factory == factory]
    if not any(_made_by(d, address, token0, token1, fee) for d in makers):
        return None
    token = token1 if chain.base_token(token0) and not chain.base_token(token1) else token0
    return token, checksum(address)


def _word_reply(result: object) -> bool:
    return isinstance(result, str) and len(to_bytes(result)) >= 32


def _made_by(dex: Dex, address: str, token0: str, token1: str, fee: int | None) -> bool:
    """Whether ``dex`` would have put the pool of these tokens at ``address`` (True when
    the registry does not know its init code hash: then its factory's word is taken; a
    V3 "pool" without a ``fee()`` is none)."""
    if dex.init_code_hash is None:
        return True
    expected = dex.pool_address(token0, token1, fee if dex.version == "V3" else None)
    return expected is not None and expected.lower() == address.lower()


@dataclass(frozen=True)
class Creation:
    """A factory's PairCreated / PoolCreated event for one pool of the token."""

    dex: Dex
    token0: str
    token1: str
    pool: str
    fee: int | None
    block: int
    tx_hash: str
    block_hash: str | None = None  # of ``block`` when the event was read (a reorg changes it)
    timestamp: int | None = None
    """``block``'s time as the event carried it (the log's ``blockTimestamp``,
    execution-apis' log object); None: read with the block (:func:`block_stamps`)."""


async def creations(
    rpc: RpcClient, chain: Chain, token: str, blocks: tuple[int, int] | None = None
) -> list[Creation]:
    """Every pool a registry factory created with ``token`` on either side, oldest first.

    Two topic-filtered ``eth_getLogs`` over every factory at once (token as token0, as
    token1; both events index the two tokens the same way), over ``blocks`` (first and
    last; None: from block 0 to the head), in one batch; each log is read by the DEX of
    the factory that emitted it.  A node without eth_getLogs leaves creation data
    unknown ("where known", never guessed); any other node failure (range refused, rate
    limit) raises: a node that caps log ranges is handled by
    :mod:`tokenrisk.chain.created`, which calls this only when it may.
    """
    if not chain.dexes:
        return []
    by_factory = {d.factory.lower(): d for d in chain.dexes}
    events = sorted({creation_event(d) for d in chain.dexes})
    calls: list[tuple[str, list[Any]]] = []
    for topics in ([events, topic(token)], [events, None, topic(token)]):
        query = {"address": [d.factory for d in chain.dexes], "topics": topics}
        span = (hex(blocks[0]), hex(blocks[1])) if blocks is not None else ("0x0", "latest")
        calls.append(("eth_getLogs", [query | {"fromBlock": span[0], "toBlock": span[1]}]))
    found: list[Creation] = []
    for logs in await rpc.batch(calls, tolerate=MethodUnsupported):
        for log in logs if isinstance(logs, list) else []:
            dex = (
                by_factory.get(str(log.get("address", "")).lower())
                if isinstance(log, dict)
                else None
            )
            created = read_creation(dex, log) if dex is not None else None
            if created is not None:
                found.append(created)
    unique = {c.pool: c for c in found}
    return sorted(unique.values(), key=lambda c: (c.block, c.pool))


def creation_event(dex: Dex) -> str:
    """Topic 0 of ``dex``'s factory event announcing a new pool."""
    return PAIR_CREATED if dex.version == "V2" else POOL_CREATED


def read_creation(dex: Dex, log: Any) -> Creation | None:
    """Decode one creation event; None for anything malformed."""
    try:
        topics, data = log["topics"], to_bytes(log["data"])
        if str(topics[0]).lower() != creation_event(dex):
            return None  # not this DEX's creation event
        token0, token1 = (word_address(to_bytes(t)) for t in topics[1:3])
        if dex.version == "V2":
            pool, fee = word_address(data[:32]), None
        else:
            pool, fee = word_address(data[32:64]), int(topics[3], 16)
        block_hash = log.get("blockHash")
        return Creation(
            dex,
            token0,
            token1,
            pool,
            fee,
            int(log["blockNumber"], 16),
            str(log["transactionHash"]),
            str(block_hash).lower() if isinstance(block_hash, str) else None,
            log_time(log.get("blockTimestamp")),
        )
    except (KeyError, IndexError, TypeError, ValueError):
        return None


def log_time(stamp: Any) -> int | None:
    """A log's ``blockTimestamp`` (a quantity, execution-apis' log object since 2025);
    None when absent, malformed or zero (a node that fills the field with 0 has not read
    it): the time is then read with the block."""
    try:
        when = int(stamp, 16) if isinstance(stamp, str) else None
    except ValueError:
        return None
    return when or None


def log_stamps(found: Iterable[Creation]) -> dict[int, tuple[int, str]]:
    """:func:`block_stamps`' (timestamp, hash) of the creations' blocks as their events
    carried them, so those blocks need not be read.  Only for events the caller knows to
    be on the chain now: read in this lookup, or kept and confirmed by it
    (:func:`tokenrisk.chain.created.creations` checks the block they were read through);
    a kept creation not confirmed so has its block read.  Events without a time are left
    out."""
    return {c.block: (c.timestamp, c.block_hash or "") for c in found if c.timestamp is not None}


async def stamps_of(
    rpc: RpcClient, events: Sequence[Creation], read: dict[int, tuple[int, str]]
) -> dict[int, tuple[int, str]]:
    """The stamps of ``events``' blocks: ``read`` (already read, which wins), then the
    times the events carried (:func:`log_stamps`), then one :func:`block_stamps` batch
    for the blocks still without one (none sent when nothing is missing)."""
    stamps = {**log_stamps(c for c in events if c.block not in read), **read}
    missing = sorted({c.block for c in events} - stamps.keys())
    return {**stamps, **await block_stamps(rpc, missing)} if missing else stamps


async def block_stamps(rpc: RpcClient, blocks: Sequence[int]) -> dict[int, tuple[int, str]]:
    """(unix timestamp, hash) of ``blocks`` (one batch); blocks the node does not return
    are left out."""
    wanted = sorted(set(blocks))
    replies = await rpc.batch([("eth_getBlockByNumber", [hex(b), False]) for b in wanted])
    return {
        b: (int(r["timestamp"], 16), str(r.get("hash", "")).lower())
        for b, r in zip(wanted, replies, strict=True)
        if isinstance(r, dict) and isinstance(r.get("timestamp"), str)
    }


def current(creation: Creation, stamps: dict[int, tuple[int, str]]) -> bool:
    """False when the chain no longer has ``creation``'s block as it was read (a reorg,
    a devnet revert); True when it does, or when that cannot be told."""
    stamp = stamps.get(creation.block)
    return creation.block_hash is None or stamp is None or stamp[1] == creation.block_hash


async def with_creation(
    rpc: RpcClient,
    pools: list[Pool],
    found: list[Creation],
    stamps: dict[int, tuple[int, str]] | None = None,
) -> list[Pool]:
    """``pools`` with ``created_at_timestamp`` / ``creation_tx_hash`` where an event matches
    (an event whose block the chain no longer has is no match); ``stamps``: the blocks'
    :func:`block_stamps` when already read."""
    by_pool = {c.pool.lower(): c for c in found}
    matched = [by_pool.get(p.address.lower()) for p in pools]
    if stamps is None:  # the events' own times where they carried them, else the blocks'
        stamps = await stamps_of(rpc, [c for c in matched if c is not None], {})
    return [
        replace(p, created_at_timestamp=_stamp(stamps, c.block), creation_tx_hash=c.tx_hash)
        if c is not None and current(c, stamps)
        else p
        for p, c in zip(pools, matched, strict=True)
    ]


def _stamp(stamps: dict[int, tuple[int, str]], block: int) -> int | None:
    stamp = stamps.get(block)
    return stamp[0] if stamp is not None else None


async def other_pools(
    rpc: RpcClient, chain: Chain, token: str, found: list[Creation], base_pools: list[Pool]
) -> list[Pool]:
    """Pools of ``token`` against tokens that are not registry base tokens, deepest first.

    Reserves are the two tokens' balances of the pool.  USD liquidity values the token's
    side at its price in its deepest base pool, twice (as for base pools); unknown (None)
    when the token has no priced base pool.
    """
    known = {p.address.lower() for p in base_pools}
    extra = [c for c in found if c.pool.lower() not in known]
    if not extra:
        return []
    calls = [
        ("eth_call", call_params(side, encode_call("balanceOf(address)", [c.pool])))
        for c in extra
        for side in (c.token0, c.token1)
    ]
    results = await rpc.batch(calls)
    price = _token_usd(token, base_pools[0]) if base_pools else None
    pools: list[Pool] = []
    for i, cand in enumerate(extra):
        r0, r1 = (decode_uint(r) for r in results[2 * i : 2 * i + 2])
        if r0 is None or r1 is None:
            continue
        own = r0 if cand.token0.lower() == token.lower() else r1
        other = cand.token1 if cand.token0.lower() == token.lower() else cand.token0
        liquidity = round(2 * own * price, 2) if price is not None else None
        pools.append(_other_pool(chain, cand, other, (r0, r1), liquidity))
    pools.sort(key=lambda p: (-p.depth, p.address))
    return pools


def _token_usd(token: str, pool: Pool) -> float | None:
    """USD per raw unit of ``token`` implied by one of its base pools (None: unknown)."""
    own = pool.reserves0 if pool.token0.lower() == token.lower() else pool.reserves1
    if not own or pool.liquidity_usd is None:
        return None
    return (pool.liquidity_usd / 2) / own


def _other_pool(
    chain: Chain, cand: Creation, other: str, reserves: tuple[int, int], liquidity: float | None
) -> Pool:
    return Pool(
        address=cand.pool,
        dex=cand.dex.name,
        version=cand.dex.version,
        token0=cand.token0,
        token1=cand.token1,
        base_token=other,
        router=cand.dex.router,
        reserves0=reserves[0],
        reserves1=reserves[1],
        liquidity_usd=liquidity,
        fee=cand.fee,
        chain_id=chain.id,
        against_base=False,
        label=cand.dex.label,
    )


def topic(address: str) -> str:
    """``address`` as an indexed event topic (one 32-byte word)."""
    return "0x" + address[2:].lower().rjust(64, "0")
