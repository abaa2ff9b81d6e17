"""The devnet builder's handle on its throwaway node: transactions, calls, cheat codes.

Everything the build does to the chain goes through :class:`Chain`.  Two ways to send:

- :meth:`Chain.send` for set-up work (automine on): one transaction, wait for its
  receipt, and raise :class:`DevnetBuildError` naming the step and the revert reason
  when it fails.
- :meth:`Chain.send_block` for history (automine off): many transactions from many
  senders, mined together into one block at a chosen timestamp, so the chain looks
  like a chain rather than one transaction per block.

Every transaction carries an explicit gas limit: a token that burns gas on purpose must
cost the build one failed transaction, never a hang in gas estimation.

Cheat codes use the ``hardhat_*``/``evm_*`` names, which anvil accepts too, so one
builder runs on anvil (whose state is then dumped) and on Hardhat's node (which has no
dump: a test session builds there by replaying).  Hardhat's node has no
auto-impersonation, so every sender is impersonated once before it first sends.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tokenrisk.chain.abi import checksum, decode_revert, to_bytes
from tokenrisk.chain.rpc import RpcClient, RpcSettings
from tokenrisk.errors import DevnetBuildError, RpcError
from tokenrisk.simulate.probe import describe_frame, innermost_failure

DEFAULT_GAS = 10_000_000
"""Gas limit of every build transaction (a gas burner fails at this cap, it never hangs)."""

_RECEIPT_POLL = 0.002
_RECEIPT_TIMEOUT = 30.0
_MAX_MINE_ATTEMPTS = 20


@dataclass(frozen=True)
class Tx:
    """One transaction to send from an (auto-impersonated) account.

    ``label`` names the step in errors (e.g. ``"plain: buy by holder 3"``).
    """

    sender: str
    to: str | None
    data: str = "0x"
    value: int = 0
    gas: int = DEFAULT_GAS
    label: str = ""

    def as_rpc(self, nonce: int | None = None) -> dict[str, Any]:
        """The ``eth_sendTransaction`` object for this transaction."""
        obj: dict[str, Any] = {
            "from": self.sender,
            "data": self.data,
            "value": hex(self.value),
            "gas": hex(self.gas),
        }
        if self.to is not None:
            obj["to"] = self.to
        if nonce is not None:
            obj["nonce"] = hex(nonce)
        return obj


@dataclass(frozen=True)
class Outcome:
    """A mined transaction: its receipt, and the revert reason when it failed."""

    tx: Tx
    receipt: dict[str, Any]
    reason: str | None = None

    @property
    def ok(self) -> bool:
        return int(self.receipt["status"], 16) == 1

    @property
    def block(self) -> int:
        return int(self.receipt["blockNumber"], 16)

    @property
    def contract_address(self) -> str:
        address = self.receipt.get("contractAddress")
        if not address:
            raise DevnetBuildError(f"{self.tx.label}: receipt has no contract address")
        return checksum(address)


class Chain:
    """Async helper around one build node (anvil or Hardhat's node)."""

    def __init__(self, url: str) -> None:
        self.rpc = RpcClient(url, RpcSettings(timeout=60.0, retries=0), label="devnet node")
        self._impersonated: set[str] = set()

    async def aclose(self) -> None:
        await self.rpc.aclose()

    # READS

    async def call(self, to: str, data: str, sender: str | None = None) -> bytes:
        """``eth_call`` at the latest block; raises DevnetBuildError on revert."""
        request: dict[str, Any] = {"to": to, "data": data, "gas": hex(DEFAULT_GAS)}
        if sender is not None:
            request["from"] = sender
        try:
            result = await self.rpc.call("eth_call", [request, "latest"])
        except RpcError as exc:
            raise DevnetBuildError(f"eth_call to {to} failed: {_reason_of(exc)}") from exc
        return to_bytes(str(result))

    async def block(self, tag: str = "latest") -> dict[str, Any]:
        block: dict[str, Any] = await self.rpc.call("eth_getBlockByNumber", [tag, False])
        return block

    async def code(self, address: str) -> str:
        return str(await self.rpc.call("eth_getCode", [address, "latest"]))

    async def accounts(self) -> list[str]:
        return [checksum(a) for a in await self.rpc.call("eth_accounts", [])]

    # CHEAT CODES

    async def cheat(self, method: str, *params: Any) -> Any:
        """Call a ``hardhat_*``/``evm_*`` method (thin, so call sites read as intent)."""
        return await self.rpc.call(method, list(params))

    async def set_balances(self, balances: dict[str, int]) -> None:
        """Give many accounts ETH in one batch."""
        calls = [("hardhat_setBalance", [a, hex(v)]) for a, v in balances.items()]
        _raise_first_error(await self.rpc.batch(calls, tolerate=RpcError), "hardhat_setBalance")

    async def impersonate(self, senders: set[str]) -> None:
        """Let the node sign for ``senders`` (one batch; each account once per build)."""
        new = sorted(senders - self._impersonated)
        if not new:
            return
        calls = [("hardhat_impersonateAccount", [a]) for a in new]
        results = await self.rpc.batch(calls, tolerate=RpcError)
        _raise_first_error(results, "hardhat_impersonateAccount")
        self._impersonated.update(new)

    # TRANSACTIONS (AUTOMINE)

    async def send(self, tx: Tx, *, allow_revert: bool = False) -> Outcome:
        """Send one transaction and wait for it to be mined (automine must be on).

        Raises DevnetBuildError when it reverts, unless ``allow_revert``.
        """
        tx_hash = await self._submit(tx)
        receipt = await self._wait_receipt(tx_hash, tx)
        outcome = await self._outcome(tx, receipt)
        if not outcome.ok and not allow_revert:
            raise DevnetBuildError(f"{tx.label}: transaction reverted: {outcome.reason}")
        return outcome

    async def deploy(self, sender: str, creation: str, args: bytes, label: str) -> str:
        """Deploy ``creation`` code with ABI-encoded constructor ``args``; returns the address."""
        data = "0x" + to_bytes(creation).hex() + args.hex()
        outcome = await self.send(Tx(sender=sender, to=None, data=data, label=label))
        return outcome.contract_address

    async def deploy_tx(self, sender: str, creation: str, args: bytes, label: str) -> Outcome:
        """Like :meth:`deploy` but returns the whole outcome (for tracing the deploy)."""
        data = "0x" + to_bytes(creation).hex() + args.hex()
        return await self.send(Tx(sender=sender, to=None, data=data, label=label))

    # TRANSACTIONS (ONE MINED BLOCK)

    async def send_block(self, txs: Sequence[Tx], timestamp: int) -> list[Outcome]:
        """Mine ``txs`` into the next block(s) at ``timestamp`` (automine must be off).

        Transactions of one sender are given consecutive nonces in list order.  If the
        block gas limit does not hold them all, further blocks are mined one second
        apart until every transaction has a receipt.
        """
        if not txs:
            return []
        hashes = await self._submit_all(txs)
        receipts: list[dict[str, Any] | None] = [None] * len(txs)
        next_timestamp = timestamp
        for _ in range(_MAX_MINE_ATTEMPTS):
            await self.cheat("evm_mine", next_timestamp)
            next_timestamp += 1
            await self._collect_receipts(hashes, receipts)
            if all(r is not None for r in receipts):
                return [await self._outcome(t, r) for t, r in zip(txs, receipts, strict=True) if r]
        missing = [t.label for t, r in zip(txs, receipts, strict=True) if r is None]
        raise DevnetBuildError(f"transactions never mined: {missing[:5]}")

    # INTERNALS

    async def _submit(self, tx: Tx, nonce: int | None = None) -> str:
        await self.impersonate({tx.sender})
        try:
            return str(await self.rpc.call("eth_sendTransaction", [tx.as_rpc(nonce)]))
        except RpcError as exc:
            raise DevnetBuildError(f"{tx.label}: rejected: {_reason_of(exc)}") from exc

    async def _submit_all(self, txs: Sequence[Tx]) -> list[str]:
        await self.impersonate({t.sender for t in txs})
        nonces = await self._next_nonces({t.sender for t in txs})
        calls: list[tuple[str, Sequence[Any]]] = []
        for tx in txs:
            calls.append(("eth_sendTransaction", [tx.as_rpc(nonces[tx.sender])]))
            nonces[tx.sender] += 1
        results = await self.rpc.batch(calls, tolerate=RpcError)
        for tx, result in zip(txs, results, strict=True):
            if isinstance(result, RpcError):
                raise DevnetBuildError(f"{tx.label}: rejected: {_reason_of(result)}")
        return [str(r) for r in results]

    async def _next_nonces(self, senders: set[str]) -> dict[str, int]:
        ordered = sorted(senders)
        calls = [("eth_getTransactionCount", [s, "latest"]) for s in ordered]
        results = await self.rpc.batch(calls, tolerate=RpcError)
        _raise_first_error(results, "eth_getTransactionCount")
        return {s: int(str(r), 16) for s, r in zip(ordered, results, strict=True)}

    async def _collect_receipts(
        self, hashes: list[str], receipts: list[dict[str, Any] | None]
    ) -> None:
        pending = [i for i, r in enumerate(receipts) if r is None]
        calls = [("eth_getTransactionReceipt", [hashes[i]]) for i in pending]
        results = await self.rpc.batch(calls, tolerate=RpcError)
        _raise_first_error(results, "eth_getTransactionReceipt")
        for i, result in zip(pending, results, strict=True):
            receipts[i] = result if isinstance(result, dict) else None

    async def _wait_receipt(self, tx_hash: str, tx: Tx) -> dict[str, Any]:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + _RECEIPT_TIMEOUT
        while loop.time() < deadline:
            receipt = await self.rpc.call("eth_getTransactionReceipt", [tx_hash])
            if isinstance(receipt, dict):
                return receipt
            await asyncio.sleep(_RECEIPT_POLL)
        raise DevnetBuildError(f"{tx.label}: not mined within {_RECEIPT_TIMEOUT:.0f}s")

    async def _outcome(self, tx: Tx, receipt: dict[str, Any]) -> Outcome:
        if int(receipt["status"], 16) == 1:
            return Outcome(tx=tx, receipt=receipt)
        return Outcome(tx=tx, receipt=receipt, reason=await self.revert_reason(receipt))

    async def revert_reason(self, receipt: dict[str, Any]) -> str:
        """Why a mined transaction failed, from the node's call tracer."""
        tracer = {"tracer": "callTracer"}
        frame = await self.rpc.call("debug_traceTransaction", [receipt["transactionHash"], tracer])
        if not isinstance(frame, dict):
            return "unknown (no trace)"
        root = describe_frame(frame)
        inner = innermost_failure(frame)
        gas = int(receipt.get("gasUsed", "0x0"), 16)
        if inner is not None and inner is not frame:
            where = checksum(str(inner["to"])) if inner.get("to") else "?"
            return f"{root}; inside {where}: {describe_frame(inner)} (gas used {gas})"
        return f"{root} (gas used {gas})"


def _reason_of(exc: RpcError) -> str:
    data = exc.data if isinstance(exc.data, str) else None
    decoded = decode_revert(data)
    return f"{exc.message} ({decoded})" if decoded else exc.message


def _raise_first_error(results: list[Any], what: str) -> None:
    for result in results:
        if isinstance(result, RpcError):
            raise DevnetBuildError(f"{what} failed: {result.message}")
