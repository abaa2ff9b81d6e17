"""Who may hold owner powers over a token, read from the chain (phase 2 of the scan).

The owner-power scan (:mod:`tokenrisk.simulate.powers`) tries privileged functions as
the accounts that could call them: addresses returned by owner-style getters, held in
the first storage slots or the EIP-1967 admin slot, a role admin, and the deployer.
This module reads those :class:`Facts` in one batch (the getters go through the node
client's reader contract) and tells EOAs from contracts by the first bytes of their
code.  The scan reads them once per head block (its cache keeps them).
"""

from __future__ import annotations

import asyncio
import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from eth_utils.crypto import keccak

from tokenrisk.caching import MemoryCache, SharedBytes
from tokenrisk.chain.abi import ZERO_ADDRESS, checksum, encode_call, topic_address
from tokenrisk.chain.history import creation_block
from tokenrisk.chain.rpc import RpcClient
from tokenrisk.chain.signatures import ADMIN_SLOT, IMPLEMENTATION_SLOT, TOTAL_SUPPLY
from tokenrisk.chain.tokens import code_heads, is_contract_code
from tokenrisk.errors import CallReverted, RpcError, retrieved
from tokenrisk.findings import Caller, OwnerPowers, powers_from_json, powers_json
from tokenrisk.simulate.simulator import ChainHead, Simulator

DEAD = "0x000000000000000000000000000000000000dead"
OWNER_GETTERS = ("owner()", "getOwner()", "admin()")
GETTER_GAS = 5_000_000
ROLE_ADMIN = "getRoleMember(bytes32,uint256)"


@dataclass(frozen=True)
class Facts:
    """What one batch of reads told about the token."""

    code: str
    impl: str | None
    impl_code: str | None
    admin: str | None
    owner: str | None  # the first owner getter that answered with an address
    getters: tuple[tuple[str, str], ...]  # (address, how found)
    packed: tuple[tuple[str, str], ...] = ()
    """Addresses that may sit inside a storage word beside other fields, or start with
    a zero byte: kept only when the account exists (:func:`callers` checks)."""
    words: tuple[object, ...] = field(default=(), compare=False)
    """The first storage words as read (slot ``i`` at index ``i``), at the same block:
    the guards a static finding names are looked up here before they are read
    (:func:`~.layout.guard_values`).  Not compared: equal facts name the same callers."""


async def read_facts(
    rpc: RpcClient, token: str, storage_slots: int, block: str = "latest", alone: bool = True
) -> Facts:
    """The token's code, proxy slots, owner getters and first ``storage_slots`` words, at
    ``block`` (the scan passes the head its simulations are pinned to).

    With the implementation's code read beside the slot that names it
    (:func:`implementation_read`); ``alone``: on a request of its own (:func:`own_request`),
    as a first scan sends them, whose screen and trials wait for these answers (at a new
    head of a token scanned before they go with the check's other reads)."""
    slots = [hex(i) for i in range(storage_slots)]
    calls: list[tuple[str, Sequence[Any]]] = [
        ("eth_getCode", [token, block]),
        ("eth_getStorageAt", [token, IMPLEMENTATION_SLOT, block]),
        ("eth_getStorageAt", [token, ADMIN_SLOT, block]),
        implementation_read(token, block),
    ]
    calls += [("eth_getStorageAt", [token, s, block]) for s in slots]
    getters = [*OWNER_GETTERS, ROLE_ADMIN]
    for g in getters:
        args = [b"\0" * 32, 0] if g == ROLE_ADMIN else []
        call = {"to": token, "data": encode_call(g, args), "gas": hex(GETTER_GAS)}
        calls.append(("eth_call", [call, block]))
    replies = await (own_request(rpc, calls) if alone else rpc.batch(calls, tolerate=RpcError))
    for i, reply in enumerate(replies):  # as rpc.batch: only a revert is an answer
        if i != 3 and isinstance(reply, RpcError) and not isinstance(reply, CallReverted):
            raise reply
    code, impl_word, admin_word, impl_read = replies[:4]
    if isinstance(code, RpcError):
        raise code
    words = replies[4 : 4 + len(slots)]
    answers = replies[4 + len(slots) :]
    found: list[tuple[str, str]] = []
    owner: str | None = None
    for name, answer in zip(getters, answers, strict=True):
        address = stored_address(answer, strict=False)
        if name == "owner()" and address is not None:
            owner = address
        if address is not None and address != ZERO_ADDRESS:
            found.append((address, "role admin" if name == ROLE_ADMIN else name))
    admin = stored_address(admin_word)
    if admin:
        found.append((admin, "EIP-1967 admin slot"))
    packed: list[tuple[str, str]] = []
    for i, word in enumerate(words):
        address = stored_address(word)
        if address:
            found.append((address, f"storage slot {i}"))
        else:
            packed += [(a, f"storage slot {i} (packed)") for a in packed_addresses(word)]
    impl = stored_address(impl_word)
    impl_code = implementation_code(impl_word, impl_read) if impl else None
    if impl and impl_code is None:  # the read beside the slot failed: read it now
        impl_code = str(await rpc.call("eth_getCode", [impl, block]))
    return Facts(
        str(code), impl, impl_code, admin, owner, tuple(found), tuple(packed), tuple(words)
    )


async def own_request(rpc: RpcClient, calls: Sequence[tuple[str, Sequence[Any]]]) -> list[Any]:
    """``calls`` as one JSON-RPC batch on a request of its own, per-call errors returned.

    A coalescing client (:class:`~tokenrisk.chain.coalesce.CoalescingRpc`) would put
    them in the request of whatever else the check sends at that moment, on a first check
    its amounts and journey simulations: a node works through a batch call after call, so
    the reads would come back only after those simulations ran (20-40 ms later on the
    remote bench), and the scan's screen and trials wait on them."""
    return await RpcClient.batch(rpc, calls, tolerate=RpcError)


IMPLEMENTATION_READER = (
    "0x7f" + IMPLEMENTATION_SLOT[2:] + "54" + "80" + "6000" + "52"  # mstore(0, sload(slot))
    "80" + "3b" + "80" + "6000" + "6020" + "84" + "3c"  # extcodecopy(word, 32, 0, size)
    "6020" + "01" + "6000" + "f3"  # return(0, 32 + size)
)
"""Runtime code placed at the token's own address for one ``eth_call`` (a state
override keeps the account's storage): it returns the EIP-1967 implementation slot's
word, then the code of the address in its low 20 bytes.  So a proxy's implementation
code comes with the read of the slot, not one round trip after it."""
IMPLEMENTATION_READ_GAS = 1_000_000


def implementation_read(subject: str, block: str) -> tuple[str, list[Any]]:
    """The ``eth_call`` running :data:`IMPLEMENTATION_READER` in ``subject``'s storage."""
    call = {"to": subject, "data": "0x", "gas": hex(IMPLEMENTATION_READ_GAS)}
    return ("eth_call", [call, block, {subject: {"code": IMPLEMENTATION_READER}}])


def implementation_code(slot_word: Any, read: Any) -> str | None:
    """The implementation's code from :func:`implementation_read`'s answer, used only when
    it starts with the very word ``eth_getStorageAt`` read from the slot at the same block
    (a node that refused or ignored the override answers otherwise: None, read it apart)."""
    if not isinstance(slot_word, str) or not isinstance(read, str) or len(read) < 66:
        return None
    try:
        same = int(read[2:66], 16) == int(slot_word, 16)
    except ValueError:
        return None
    return "0x" + read[66:] if same else None


def packed_addresses(word: Any) -> list[str]:
    """20-byte windows of a storage word, at every byte offset, that could be an
    address packed with other fields (``uint64 start; address manager; bool on``) or an
    address starting with a zero byte: windows with at most two zero bytes at either
    end (small numbers and shifted numbers have more).  Candidates only: most are
    noise until :func:`callers` finds an account there."""
    if not isinstance(word, str) or not word.startswith("0x"):
        return []
    raw = bytes.fromhex(word[2:].rjust(64, "0")[-64:])
    out: list[str] = []
    for start in range(13):
        window = raw[start : start + 20]
        if window[:3] != b"\0\0\0" and window[-3:] != b"\0\0\0":
            out.append(checksum("0x" + window.hex()))
    return out


def stored_address(word: Any, strict: bool = True) -> str | None:
    """An address a storage word or getter answer (0x-hex) seems to hold, or None.

    Unlike :func:`tokenrisk.chain.abi.word_address`, which decodes an ABI ``address``
    word it is told holds one, this one judges whether a word of unknown type does.
    ``strict`` (storage words): the top 12 bytes are zero and the address part has a
    non-zero leading byte, so small numbers (decimals, supplies) are not mistaken for
    addresses.  Getter results need only the zero padding.
    """
    if not isinstance(word, str) or not word.startswith("0x"):
        return None
    raw = word[2:].rjust(64, "0")
    if len(raw) != 64 or int(raw[:24] or "0", 16) != 0:
        return None
    value = int(raw[24:], 16)
    if strict and value < 2**152:
        return None
    return checksum("0x" + raw[24:])


ROLE_GRANTED = "0x" + keccak(text="RoleGranted(bytes32,address,address)").hex()
HAS_ROLE = "hasRole(bytes32,address)"
PACKED_KEPT = 64
"""Packed-word address candidates checked (each costs three reads in one batch)."""
ROLES_KEPT = 8
"""Distinct roles read from RoleGranted logs (most recent first)."""


async def role_holders(rpc: RpcClient, token: str, block: str) -> list[tuple[str, str]]:
    """Accounts that hold an AccessControl role at ``block``: every RoleGranted log of
    the token, kept when ``hasRole`` still says so, and the first members of each role
    an enumerable token lists (``getRoleMember``).  A node that refuses the log range
    (providers cap it) leaves only the members of the default admin role."""
    return await roles_held(rpc, token, block, await role_grants(rpc, token, block))


async def role_grants(rpc: RpcClient, token: str, block: str) -> list[tuple[str, str]]:
    """(role, account) of every RoleGranted log of the token up to ``block``, latest
    first; none when the node refuses the log range."""
    try:
        logs = await rpc.call(
            "eth_getLogs",
            [{"address": token, "topics": [ROLE_GRANTED], "fromBlock": "0x0", "toBlock": block}],
        )
    except RpcError:
        logs = []
    return [
        (str(log["topics"][1]), topic_address(str(log["topics"][2])))
        for log in reversed(logs or [])
        if len(log.get("topics") or []) >= 3
    ]


async def roles_held(
    rpc: RpcClient, token: str, block: str, granted: list[tuple[str, str]]
) -> list[tuple[str, str]]:
    """:func:`role_holders` from the ``granted`` pairs (:func:`role_grants`)."""
    roles = list(dict.fromkeys(["0x" + "00" * 32, *(r for r, _ in granted)]))[:ROLES_KEPT]
    pairs = list(dict.fromkeys(granted))
    calls = [
        _read(token, "hasRole(bytes32,address)", [bytes.fromhex(r[2:]), a], block) for r, a in pairs
    ]
    members = [(r, i) for r in roles for i in range(2) if (int(r, 16), i) != (0, 0)]
    calls += [_read(token, ROLE_ADMIN, [bytes.fromhex(r[2:]), i], block) for r, i in members]
    replies = await rpc.batch(calls) if calls else []
    found: list[tuple[str, str]] = []
    for (role, account), reply in zip(pairs, replies, strict=False):
        if stored_address(reply, strict=False) is not None and int(str(reply), 16) == 1:
            found.append((checksum(account), f"role {_short(role)} (RoleGranted)"))
    for (role, _), reply in zip(members, replies[len(pairs) :], strict=True):
        member = stored_address(reply, strict=False)
        if member is not None and member != ZERO_ADDRESS:
            found.append((member, f"role {_short(role)} (getRoleMember)"))
    return found


def _read(token: str, signature: str, args: list[Any], block: str) -> tuple[str, list[Any]]:
    call = {"to": token, "data": encode_call(signature, args), "gas": hex(GETTER_GAS)}
    return ("eth_call", [call, block])


def _short(role: str) -> str:
    return "0x00 (admin)" if int(role, 16) == 0 else role[:10] + "…"


async def deployer(
    rpc: RpcClient,
    chain_id: int,
    token: str,
    known: MemoryCache[tuple[int, str], str | None],
    *,
    otterscan: bool = True,
    state_floor: int = 0,
) -> str | None:
    """The account that created the token, or None when the node cannot tell.

    Asks ``ots_getContractCreator`` (Otterscan API: anvil, erigon, reth) when the node
    serves it (``otterscan``, as probed: a node without it is never asked); otherwise
    searches ``eth_getCode`` over the history the node keeps (from block
    ``state_floor``: :meth:`~tokenrisk.chain.capabilities.Capabilities.state_floor`) for
    the creation block and reads that block's receipts.  Contracts made by a factory
    have no EOA creator in a receipt, and a token older than a full node's kept states
    has no creation block found: both give None (unknown, never an error).
    """
    key = (chain_id, token.lower())  # one entry however the address is written
    found, creator = known.get(key)
    if not found:
        creator = await _creator(rpc, token, otterscan, state_floor)
        known.put(key, creator)
    return creator


async def _creator(rpc: RpcClient, token: str, otterscan: bool, floor: int) -> str | None:
    if otterscan:
        try:
            # on a request of its own, as the facts (:func:`own_request`): the node takes
            # milliseconds to answer it, and the scan waits for it with them
            found = await RpcClient.call(rpc, "ots_getContractCreator", [token])
            creator = found.get("creator") if isinstance(found, dict) else None
            return checksum(str(creator)) if creator else None
        except RpcError:
            pass  # the history search below may still tell
    try:
        return await _find_deployer(rpc, token, floor)
    except RpcError:
        return None


async def _find_deployer(rpc: RpcClient, token: str, floor: int) -> str | None:
    head = int(await rpc.call("eth_blockNumber", []), 16)
    block = await creation_block(rpc, token, head, floor=floor)
    if block is None:
        return None
    receipts = await rpc.call("eth_getBlockReceipts", [hex(block)])
    for receipt in receipts or []:
        created = str(receipt.get("contractAddress") or "").lower()
        if created == token.lower():
            return checksum(str(receipt["from"]))
    return None


async def callers(
    rpc: RpcClient,
    facts: Facts,
    creator: str | None,
    sim: Simulator,
    roles: Sequence[tuple[str, str]] = (),
    read: tuple[list[tuple[str, str]], dict[str, str]] | None = None,
    controls: Controls | None = None,
) -> tuple[Caller, ...]:
    """Distinct candidate callers in priority order, each with how it was found.

    ``read``: what :func:`caller_reads` already read (the packed candidates that are
    accounts, code heads by lowercase address); only addresses missing there are read.
    ``controls``: control getters already read (:func:`control_reads`).
    """
    existing, heads = read or (await _existing(rpc, facts.packed[:PACKED_KEPT], sim.base.tag), {})
    found = list(facts.getters) + ([(creator, "deployer")] if creator else [])
    found += [*roles, *existing]
    skip = {a.lower() for a in (ZERO_ADDRESS, DEAD, sim.route.token, sim.route.pool.address)}
    skip |= {a.lower() for a in (sim.route.base, sim.route.dex.router, facts.impl or ZERO_ADDRESS)}
    merged: dict[str, list[str]] = {}
    for address, how in found:
        if address.lower() not in skip:
            merged.setdefault(address, [])
            if how not in merged[address]:
                merged[address].append(how)
    addresses = list(merged)
    missing = [a for a in addresses if a.lower() not in heads]
    if missing:
        fetched = await code_heads(rpc, missing, sim.base.tag)
        heads = {**heads, **{a.lower(): c for a, c in zip(missing, fetched, strict=True)}}
    codes = [heads[a.lower()] for a in addresses]
    plain = [
        Caller(a, tuple(merged[a]), is_contract=is_contract_code(code))
        for a, code in zip(addresses, codes, strict=True)
    ]
    return tuple(await contract_kinds(rpc, plain, sim.base.tag, controls))


async def caller_reads(
    rpc: RpcClient,
    facts: Facts,
    creator: str | None,
    sim: Simulator,
    granted: Sequence[tuple[str, str]],
) -> tuple[list[tuple[str, str]], dict[str, str]]:
    """For :func:`callers`, read at once with the ``hasRole`` checks: which packed
    candidates are accounts, and the code heads of every address that can become a
    caller (getters, deployer, every account a RoleGranted log named, packed ones)."""
    packed = facts.packed[:PACKED_KEPT]
    every = [a for a, _ in facts.getters] + ([creator] if creator else [])
    every += [a for _, a in granted] + [a for a, _ in packed]
    addresses = list(dict.fromkeys(a.lower() for a in every))
    if not addresses:
        return await _existing(rpc, packed, sim.base.tag), {}
    existing, codes = await asyncio.gather(
        _existing(rpc, packed, sim.base.tag), code_heads(rpc, addresses, sim.base.tag)
    )
    return existing, dict(zip(addresses, codes, strict=True))


async def deployer_reads(
    rpc: RpcClient, deployer: str | None, block: str, covered: tuple[set[str], bool]
) -> tuple[dict[str, str], Controls]:
    """The deployer's own part of :func:`caller_reads` and :func:`control_reads`, for
    reads made before its reply (``covered``: the lowercase addresses whose code heads
    they read, and whether its control getters are wanted): its code head unless read
    already, and its control getters (each an empty batch sends nothing)."""
    heads, wanted = covered
    if deployer is None:
        return {}, {}
    head = [] if deployer.lower() in heads else [deployer]
    codes, controls = await asyncio.gather(
        code_heads(rpc, head, block), control_reads(rpc, [deployer] if wanted else [], block)
    )
    return {a.lower(): c for a, c in zip(head, codes, strict=True)}, controls


CONTROL_GETTERS = ("getThreshold()", "getOwners()", "getMinDelay()", "delay()")
"""A Safe-style multisig answers the first two; an OpenZeppelin TimelockController the
third, a Compound-style timelock the fourth."""


Controls = dict[str, list[Any]]
"""Per address (lowercase): the replies of its :data:`CONTROL_GETTERS`, in order."""


async def control_reads(rpc: RpcClient, addresses: Sequence[str], block: str) -> Controls:
    """The control getters of ``addresses`` at ``block``, in one batch: read beside the
    reads that tell which callers are contracts (:func:`contract_kinds` uses them)."""
    if not addresses:
        return {}
    calls = [_read(a, g, [], block) for a in addresses for g in CONTROL_GETTERS]
    replies = await rpc.batch(calls)
    n = len(CONTROL_GETTERS)
    return {a.lower(): list(replies[n * i : n * i + n]) for i, a in enumerate(addresses)}


async def contract_kinds(
    rpc: RpcClient, found: list[Caller], block: str, known: Controls | None = None
) -> list[Caller]:
    """Each contract caller with what it is: a multisig (threshold, signers), a timelock
    (delay in seconds) or a plain contract, from its getters in one batch (``known``:
    those read already; only the others are read)."""
    contracts = [c for c in found if c.is_contract]
    if not contracts:
        return found
    controls = dict(known or {})
    missing = [c.address for c in contracts if c.address.lower() not in controls]
    controls |= await control_reads(rpc, missing, block)
    kinds: dict[str, Caller] = {}
    for c in contracts:
        threshold, owners_, min_delay, delay = controls[c.address.lower()]
        kinds[c.address] = _kind_of(c, threshold, owners_, min_delay, delay)
    return [kinds.get(c.address, c) for c in found]


def _kind_of(c: Caller, threshold: Any, owners_: Any, min_delay: Any, delay: Any) -> Caller:
    signers = _array_length(owners_)
    needed = _small_uint(threshold)
    if needed is not None and signers is not None and 0 < needed <= signers:
        return replace(c, kind="multisig", threshold=needed, signers=signers)
    wait = _small_uint(min_delay)
    wait = wait if wait is not None else _small_uint(delay)
    if wait is not None:
        return replace(c, kind="timelock", delay=wait)
    return replace(c, kind="contract")


def _small_uint(reply: Any) -> int | None:
    """A uint answer below 2^64 (a count, seconds), else None (no such getter)."""
    if not isinstance(reply, str) or len(reply) != 66:
        return None
    value = int(reply, 16)
    return value if value < 2**64 else None


def _array_length(reply: Any) -> int | None:
    """The length of an ABI-encoded dynamic array answer, or None."""
    if not isinstance(reply, str) or len(reply) < 130:
        return None
    offset = int(reply[2:66], 16)
    if offset != 32:
        return None
    length = int(reply[66:130], 16)
    return length if length < 2**16 else None


async def _existing(
    rpc: RpcClient, candidates: Sequence[tuple[str, str]], block: str
) -> list[tuple[str, str]]:
    """The candidates that are accounts: code, a nonce or a balance at ``block`` (20
    random bytes never have any)."""
    if not candidates:
        return []
    calls: list[tuple[str, Sequence[Any]]] = []
    for address, _ in candidates:
        calls += [
            ("eth_getCode", [address, block]),
            ("eth_getTransactionCount", [address, block]),
            ("eth_getBalance", [address, block]),
        ]
    replies = await rpc.batch(calls)
    out: list[tuple[str, str]] = []
    for i, candidate in enumerate(candidates):
        code, count, balance = replies[3 * i : 3 * i + 3]
        used = any(isinstance(v, str) and int(v, 16) > 0 for v in (count, balance))
        if used or (isinstance(code, str) and len(code) > 2):
            out.append(candidate)
    return out


FACTS_KEPT = 256
"""Tokens whose facts and callers at the latest head they were checked are kept."""
DEPLOYERS_KEPT = 4096
"""Tokens whose deployer is kept (a contract's creator never changes)."""

FactsAndCallers = tuple[Facts, tuple[Caller, ...]]
Inputs = tuple[Facts, str | None, tuple[tuple[str, str], ...]]
"""A scan's facts, the subject's deployer and its role grants (what its callers'
reads are planned from)."""


def _shared_key(key: tuple[Any, ...]) -> str:
    """A scan key's name in the shared store (the key holds only text, numbers, None and
    frozen dataclasses of them, whose repr is the same in every process)."""
    return "powers:" + hashlib.sha256(repr(key).encode()).hexdigest()


@dataclass(frozen=True)
class ReadsAhead:
    """A first scan's facts, role grants and token supply, asked at ``head`` before its
    check confirmed the token and read its own head (:func:`reads_ahead`)."""

    head: ChainHead
    facts: asyncio.Future[Facts]
    grants: asyncio.Future[list[tuple[str, str]]]
    supply: asyncio.Future[Any]
    """``totalSupply()``'s reply (None when the node refused it)."""

    def drop(self, supply: bool = True) -> None:
        """Stop what is still in flight (``supply`` False: all but the supply read)."""
        for read in (self.facts, self.grants, *((self.supply,) if supply else ())):
            if not read.done():
                read.cancel()


def reads_ahead(
    rpc: RpcClient,
    cache: PowerCache,
    chain_id: int,
    token: str,
    head: ChainHead,
    slots: int,
    history: tuple[bool, int],
) -> None:
    """A first scan's reads that need only the token and a block, asked now at ``head``
    (a head read a moment ago, likely still the chain's), beside the check's own head
    read and the search that confirms the token (issue #27: they were a round trip
    after it, and the screen and trials that wait for them a third).  Only for a token
    this process never scanned (a scanned one's reads are planned from its last
    inputs); :func:`taken_ahead` gives them to the scan pinned to this very head, else
    they are dropped.  The token's deployer is looked up too (``history``: the node's
    ``otterscan`` and ``state_floor``, as :func:`deployer` takes them): it is the same
    at every head, and a scan whose guess of its senders lacked it paid a round trip
    for the senders it added (:func:`deployer_known`)."""
    key = (chain_id, token.lower())
    if not head.hash or cache.inputs.value(key) is not None or cache.ahead.value(key):
        return
    tag = head.tag
    facts = asyncio.ensure_future(read_facts(rpc, token, slots, tag, True))
    grants = asyncio.ensure_future(role_grants(rpc, token, tag))
    supply = asyncio.ensure_future(supply_alone(rpc, token, tag))
    for read in (facts, grants, supply):
        read.add_done_callback(retrieved)
    cache.ahead.put(key, ReadsAhead(head, facts, grants, supply))
    if not cache.deployers.get(key)[0] and cache.creators.value(key) is None:
        looking = asyncio.ensure_future(_deployer(rpc, chain_id, token, cache, history))
        looking.add_done_callback(retrieved)
        cache.creators.put(key, looking)


async def deployer_once(
    rpc: RpcClient,
    chain_id: int,
    token: str,
    cache: PowerCache,
    history: tuple[bool, int],
) -> str | None:
    """:func:`deployer`, or the lookup :func:`reads_ahead` started, awaited (shielded:
    a scan that stops leaves it to the cache); ``history`` as there."""
    looking = cache.creators.value((chain_id, token.lower()))
    if looking is not None and not looking.cancelled():
        return await asyncio.shield(looking)
    return await _deployer(rpc, chain_id, token, cache, history)


async def _deployer(
    rpc: RpcClient, chain_id: int, token: str, cache: PowerCache, history: tuple[bool, int]
) -> str | None:
    otterscan, floor = history
    return await deployer(
        rpc, chain_id, token, cache.deployers, otterscan=otterscan, state_floor=floor
    )


def deployer_known(cache: PowerCache, chain_id: int, token: str) -> tuple[bool, str | None]:
    """(True, the deployer) when a lookup of ``token``'s is done (None: unknown), else
    (False, None): nothing waits for one (:func:`deployer` keeps what it found)."""
    return cache.deployers.get((chain_id, token.lower()))


def supply_call(token: str, block: str) -> tuple[str, list[Any]]:
    """The ``eth_call`` of ``token``'s ``totalSupply()`` at ``block``."""
    return ("eth_call", [{"to": token, "data": TOTAL_SUPPLY}, block])


async def supply_alone(rpc: RpcClient, token: str, block: str) -> Any:
    """:func:`supply_call`'s reply, on a request of its own (:func:`own_request`), as a
    first scan reads it; None when the node refused it."""
    try:
        (reply,) = await own_request(rpc, [supply_call(token, block)])
    except RpcError:
        return None
    return reply


def taken_ahead(cache: PowerCache, chain_id: int, token: str, head: ChainHead) -> ReadsAhead | None:
    """:func:`reads_ahead`'s reads of ``token``, taken once: when they were asked at
    ``head`` (the same number and hash), else dropped (None)."""
    key = (chain_id, token.lower())
    ahead = cache.ahead.value(key)
    if ahead is None:
        return None
    cache.ahead.forget(key)
    if ahead.head.number == head.number and ahead.head.hash == head.hash:
        return ahead
    ahead.drop()
    return None


@dataclass
class PowerCache:
    """The owner-power scan's memory, each part a :class:`~tokenrisk.caching.MemoryCache`:
    results per (chain, code hashes, callers, pool) for ``ttl`` seconds (at most
    ``size``), deployers per token, and the facts and callers read at a head block (a
    cached scan at an unchanged head reads nothing from the node).  ``ttl <= 0`` turns
    off the results and the facts.

    ``shared`` (Redis, with several workers): results are also kept there, so a scan
    one worker made serves every other worker for the rest of its ``ttl``."""

    ttl: float = 600.0
    size: int = 1024
    shared: SharedBytes | None = None
    results: MemoryCache[tuple[Any, ...], OwnerPowers] = field(init=False)
    deployers: MemoryCache[tuple[int, str], str | None] = field(init=False)
    facts: MemoryCache[tuple[Any, ...], FactsAndCallers] = field(init=False)
    seen: MemoryCache[tuple[int, str, str], bool] = field(init=False)
    inputs: MemoryCache[tuple[int, str], Inputs] = field(init=False)
    """Per (chain, subject): the facts, deployer and role grants the last scan read, at
    whatever head (``simulate.powers`` sends the callers' reads planned from them)."""
    ahead: MemoryCache[tuple[int, str], ReadsAhead] = field(init=False)
    """Per (chain, token): a first scan's reads asked before its check confirmed the
    token and read its head (:func:`reads_ahead`), taken by that scan
    (:func:`taken_ahead`)."""
    creators: MemoryCache[tuple[int, str], asyncio.Future[str | None]] = field(init=False)
    """Per (chain, token, lower case): the deployer lookup :func:`reads_ahead` started
    (:func:`deployer_once` awaits it rather than asking again)."""

    def __post_init__(self) -> None:
        self.results = MemoryCache(self.size, self.ttl)
        self.deployers = MemoryCache(DEPLOYERS_KEPT)
        # keyed by the head block, so never stale; kept only while scans are cached
        self.facts = MemoryCache(FACTS_KEPT, math.inf if self.ttl > 0 else 0)
        self.seen = MemoryCache(self.size, self.ttl)
        self.inputs = MemoryCache(FACTS_KEPT)
        self.ahead = MemoryCache(FACTS_KEPT)
        self.creators = MemoryCache(FACTS_KEPT)

    def get(self, key: tuple[Any, ...]) -> OwnerPowers | None:
        cached = self.results.value(key)
        return replace(cached, cached=True) if cached is not None else None

    def put(self, key: tuple[Any, ...], value: OwnerPowers) -> None:
        self.results.put(key, value)

    async def lookup(self, key: tuple[Any, ...]) -> OwnerPowers | None:
        """:meth:`get`, then the shared results (kept here once found)."""
        found = self.get(key)
        if found is not None or self.shared is None or self.ttl <= 0:
            return found
        raw = await self.shared.get_bytes(_shared_key(key))
        shared = powers_from_json(raw) if raw is not None else None
        if shared is None:
            return None
        self.put(key, shared)
        return replace(shared, cached=True)

    async def store(self, key: tuple[Any, ...], value: OwnerPowers) -> None:
        """:meth:`put`, and into the shared results."""
        self.put(key, value)
        if self.shared is not None and self.ttl > 0:
            await self.shared.put_bytes(_shared_key(key), powers_json(value), self.ttl)

    def scanned(self, chain_id: int, token: str, pool: str) -> bool:
        """Whether this process scanned ``token`` on ``pool`` within ``ttl``: a scan at a
        new head then likely finds its result remembered, so nothing is sent ahead."""
        return self.seen.value((chain_id, token.lower(), pool.lower())) is not None

    def mark_scanned(self, chain_id: int, token: str, pool: str) -> None:
        self.seen.put((chain_id, token.lower(), pool.lower()), True)

    def facts_at(self, key: tuple[Any, ...]) -> FactsAndCallers | None:
        """Facts and callers read at one head block (key ends with the head's number and
        timestamp)."""
        return self.facts.value(key)

    def put_facts(self, key: tuple[Any, ...], value: FactsAndCallers) -> None:
        self.facts.put(key, value)
