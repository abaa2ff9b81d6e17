"""What happened around a token's launch: its snipers and its pre-launch airdrops.

Pure: the caller reads Transfer logs from the holder index (``store``) and passes them in;
this module only decides who is a sniper and what counts as an airdrop.

**Launch** is the block of the first transfer *out of* one of the token's pools, i.e. the
first buy.  A pool is often created long before trading is enabled (the devnet's
anti-sniper token creates its pair 150 blocks before it opens trading), so the pool's
creation block would call nobody a sniper; the first buy is when sniping happens.

**Snipers** are the wallets that received the token from a pool in the first
``SNIPER_BLOCKS`` blocks from launch (launch block included): the first buyers.

**Airdrop** transfers are transfers out of the token's deployer or the token contract to
wallets (not a pool, not the zero/dead address, not the token or the deployer) mined at
or before the launch block.  They are summarised only when they reach at least
``AIRDROP_MIN_WALLETS`` distinct wallets: a handful of team or exchange allocations is not
an airdrop, and then the summary counts zero.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence, Set

from tokenrisk.model import AirdropSummary
from tokenrisk.store.engine import TransferLog

SNIPER_BLOCKS = 3
"""Blocks from the first buy (that block included) whose buyers count as snipers."""

AIRDROP_MIN_WALLETS = 10
"""Distinct receiving wallets below which pre-launch transfers are not an airdrop."""

NOT_WALLETS = frozenset(
    {"0x0000000000000000000000000000000000000000", "0x000000000000000000000000000000000000dead"}
)


NO_AIRDROP = AirdropSummary(0, 0, 0)


def launch_block(pool_transfers: Iterable[TransferLog]) -> int | None:
    """Block of the first transfer out of a pool; None when nobody has bought yet."""
    return min((t.block for t in pool_transfers), default=None)


def snipers(pool_transfers: Sequence[TransferLog], pools: Set[str]) -> list[str]:
    """Wallets that bought from a pool within ``SNIPER_BLOCKS`` blocks of launch, sorted.

    ``pool_transfers`` are transfers whose sender is one of ``pools`` (lowercase);
    transfers between pools (routing through two pools) are not buys.
    """
    start = launch_block(pool_transfers)
    if start is None:
        return []
    last = start + SNIPER_BLOCKS - 1
    bought = {
        t.recipient.lower()
        for t in pool_transfers
        if start <= t.block <= last and t.sender.lower() in pools
    }
    return sorted(bought - pools - NOT_WALLETS)


def airdrop(
    transfers: Sequence[TransferLog],
    sources: Set[str],
    not_wallets: Set[str],
    launch: int | None,
) -> AirdropSummary:
    """Summary of transfers from ``sources`` to wallets at or before ``launch``.

    ``sources`` are the deployer and the token (lowercase); ``not_wallets`` are
    addresses that are not recipients of an airdrop (pools, the token, the deployer).
    ``launch`` None means no buy yet: every transfer so far is before launch.
    """
    excluded = NOT_WALLETS | not_wallets | sources
    dropped = [
        t
        for t in transfers
        if t.sender.lower() in sources
        and t.recipient.lower() not in excluded
        and (launch is None or t.block <= launch)
    ]
    if len({t.recipient.lower() for t in dropped}) < AIRDROP_MIN_WALLETS:
        return NO_AIRDROP
    return AirdropSummary(
        transactions=len({t.tx_hash for t in dropped}),
        transfers=len(dropped),
        amount=sum(t.amount for t in dropped),
    )
