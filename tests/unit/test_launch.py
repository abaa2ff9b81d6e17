"""Launch analysis (holders.launch): who sniped, and what counts as an airdrop."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

from tokenrisk import metrics
from tokenrisk.chain.abi import ZERO_ADDRESS
from tokenrisk.holders import launch
from tokenrisk.model import AirdropSummary, Pool
from tokenrisk.store.engine import Cursor, TransferLog, create_store

POOL = "0x" + "aa" * 20
POOL2 = "0x" + "ab" * 20
DEPLOYER = "0x" + "de" * 20
TOKEN = "0x" + "70" * 20


def wallet(n: int) -> str:
    return "0x" + f"{n:040x}"


def log(
    block: int, sender: str, recipient: str, amount: int = 10, tx: str | None = None
) -> TransferLog:
    return TransferLog(block, 0, tx or f"0x{block:064x}", sender, recipient, amount)


def test_snipers_are_the_buyers_of_the_first_blocks_of_trading() -> None:
    buys = [
        log(100, POOL, wallet(1)),
        log(100, POOL, wallet(2)),
        log(102, POOL2, wallet(3)),  # the last block of the window, another pool
        log(103, POOL, wallet(4)),  # too late
        log(101, POOL, POOL2),  # routing between pools is not a buy
        log(101, POOL, "0x" + "00" * 20),  # the zero address is no wallet
    ]
    assert launch.SNIPER_BLOCKS == 3
    assert launch.launch_block(buys) == 100
    assert launch.snipers(buys, {POOL, POOL2}) == [wallet(1), wallet(2), wallet(3)]


def test_no_buy_no_sniper() -> None:
    assert launch.launch_block([]) is None
    assert launch.snipers([], {POOL}) == []


def _airdrop(recipients: int, block: int = 50, per_tx: int = 5) -> list[TransferLog]:
    return [
        log(block, DEPLOYER, wallet(n + 1), 7, tx=f"0x{n // per_tx:064x}")
        for n in range(recipients)
    ]


def test_an_airdrop_is_counted_by_transactions_transfers_and_amount() -> None:
    transfers = _airdrop(12) + [log(50, DEPLOYER, POOL, 999), log(40, TOKEN, wallet(99), 3)]
    summary = launch.airdrop(transfers, {DEPLOYER, TOKEN}, {POOL}, launch=60)
    assert summary == AirdropSummary(transactions=4, transfers=13, amount=12 * 7 + 3)


def test_a_few_allocations_are_not_an_airdrop() -> None:
    transfers = _airdrop(launch.AIRDROP_MIN_WALLETS - 1)
    assert launch.airdrop(transfers, {DEPLOYER}, set(), launch=60) == launch.NO_AIRDROP


def test_transfers_after_launch_do_not_count() -> None:
    transfers = _airdrop(20, block=61)
    assert launch.airdrop(transfers, {DEPLOYER}, set(), launch=60) == launch.NO_AIRDROP
    assert launch.airdrop(transfers, {DEPLOYER}, set(), launch=None).transfers == 20


def test_only_the_deployer_and_the_token_are_sources() -> None:
    transfers = [log(50, wallet(500), wallet(n)) for n in range(20)]
    assert launch.airdrop(transfers, {DEPLOYER, TOKEN}, set(), launch=60) == launch.NO_AIRDROP


def test_the_launch_and_the_first_mint_are_read_in_one_go() -> None:
    store = create_store("sqlite://")
    mint = TransferLog(1, 0, "0x" + "01" * 32, ZERO_ADDRESS, DEPLOYER, 1_000)
    logs = [mint, log(2, DEPLOYER, POOL, 500), log(5, POOL, wallet(1)), log(6, POOL, wallet(2))]
    store.apply_window(1, TOKEN, expected=None, new=Cursor(1, 9, "0xhead"), logs=logs)
    pool = Pool(POOL, "Uniswap", "V2", TOKEN, DEPLOYER, DEPLOYER, DEPLOYER, 1, 1, None)
    assert launch._first_mint(store, 1, TOKEN, [pool]) == (5, [mint])
    assert launch._first_mint(store, 1, TOKEN, []) == (None, [mint])
    store.close()


def sent_ahead(result: str) -> float:
    labels = {"planned": "deployer_read", "result": result}
    return metrics.REGISTRY.get_sample_value("tokenrisk_sent_ahead_total", labels) or 0.0


class Rpc:
    """Answers ``eth_getTransactionByHash`` for the deployer's mint; counts the reads."""

    def __init__(self) -> None:
        self.reads: list[str] = []

    async def call(self, method: str, params: list[Any]) -> Any:
        assert method == "eth_getTransactionByHash", method
        self.reads.append(params[0])
        return {"hash": params[0], "from": DEPLOYER, "to": None}


async def test_the_deployers_transaction_is_read_from_the_first_logs(tmp_path: Path) -> None:
    """On a first index the deployer's transaction is read from the logs in memory and
    the summary from the store takes that read (one read, the same summary); a read of
    another transaction is not taken.  Fails when the summary reads it again, or takes
    a read without comparing the hash."""
    store = create_store(f"sqlite:///{tmp_path / 'index.db'}")  # read from worker threads
    mint = TransferLog(1, 0, "0x" + "01" * 32, ZERO_ADDRESS, DEPLOYER, 1_000)
    dropped = [t._replace(log_index=n) for n, t in enumerate(_airdrop(12, block=3))]
    logs = [mint, log(2, DEPLOYER, POOL, 500), *dropped, log(5, POOL, wallet(99))]
    store.apply_window(1, TOKEN, expected=None, new=Cursor(1, 9, "0xhead"), logs=logs)
    pool = Pool(POOL, "Uniswap", "V2", TOKEN, DEPLOYER, DEPLOYER, DEPLOYER, 1, 1, None)
    summaries, reads, counted = [], [], []
    for ahead in (None, logs, [mint._replace(tx_hash="0x" + "02" * 32), *logs[1:]]):
        counted.append([sent_ahead(r) for r in ("used", "dropped")])
        rpc = Rpc()
        node: Any = SimpleNamespace(id=1, rpc=rpc)
        store.memo.clear()
        if ahead is not None:
            launch.read_deployer_ahead(node, store, (TOKEN, ahead), [pool])
        summaries.append(await launch.airdrop_summary(node, store, TOKEN, [pool]))
        reads.append(rpc.reads)
    assert summaries[0] == summaries[1] == summaries[2] == AirdropSummary(3, 12, 12 * 7)
    assert reads == [[mint.tx_hash], [mint.tx_hash], ["0x" + "02" * 32, mint.tx_hash]]
    counted.append([sent_ahead(r) for r in ("used", "dropped")])
    pairs = zip(counted, counted[1:], strict=False)
    steps = [[b - a for a, b in zip(x, y, strict=True)] for x, y in pairs]
    assert steps == [[0, 0], [1, 0], [0, 1]]  # none; taken; another transaction's, dropped
    store.close()
