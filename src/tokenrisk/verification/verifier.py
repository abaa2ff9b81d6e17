"""The verifier: providers asked in order, answers cached, many addresses at once.

"Open source" here means: at least one configured provider says the contract's source
is verified, with a full *or* a partial match.  A partial match (Sourcify "match")
differs from the deployed bytecode only in the metadata hash, so the published code is
the code that runs; Etherscan's "verified" is the same kind of match.

Providers are asked in the configured order and the first verified answer wins (later
providers are not asked, which spares their rate limits).  A provider that fails is
skipped; if no provider says verified and at least one failed, the verifier raises that
failure rather than reporting "closed source" it could not establish.

Three answers are kept apart (:meth:`Verifier.status`): ``verified``; ``unverified``,
when a provider definitely says the source is not published (Etherscan's "not
verified", a local ``{"verified": false}`` entry); and ``unknown``, when no provider
could answer (none covers the chain, the contract is not in its index, or the provider
failed).  Only ``unverified`` may count against a token; ``unknown`` is kept briefly.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Literal

from tokenrisk.caching import MemoryCache
from tokenrisk.chain.abi import parse_address
from tokenrisk.errors import InvalidAddress, TokenRiskError
from tokenrisk.verification.source import SourceInfo, SourceProvider

logger = logging.getLogger(__name__)

Key = tuple[int, str]
Status = Literal["verified", "unverified", "unknown"]
UNKNOWN_TTL = 60.0
"""Seconds an "unknown" answer is kept: a provider that was down may be back soon."""


class Verifier:
    """Combines source providers behind a per-(chain, address) TTL cache.

    ``ttl`` keeps a verified answer, ``negative_ttl`` a "not verified" one (seconds);
    failures are never cached.  ``concurrency`` bounds provider lookups in flight
    across all callers.  Concurrent lookups of the same key share one provider query.
    """

    def __init__(
        self,
        providers: Sequence[SourceProvider],
        *,
        ttl: float = 3600.0,
        negative_ttl: float = 300.0,
        concurrency: int = 8,
        max_entries: int = 10_000,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        self.providers = tuple(providers)
        self._ttl = ttl
        self._negative_ttl = negative_ttl
        self._limit = asyncio.Semaphore(concurrency)
        self._cache: MemoryCache[Key, SourceInfo | None] = MemoryCache(max_entries, clock=clock)
        self._failed: MemoryCache[Key, bool] = MemoryCache(max_entries, clock=clock)
        self._inflight: dict[Key, asyncio.Future[SourceInfo | None]] = {}

    async def aclose(self) -> None:
        """Close the HTTP clients the providers own."""
        for provider in self.providers:
            close = getattr(provider, "aclose", None)
            if close is not None:
                await close()

    def clear_cache(self) -> None:
        self._cache.clear()

    async def lookup(self, chain_id: int, address: str, fresh: bool = False) -> SourceInfo | None:
        """The first verified answer for ``address``; else a definite "not verified"
        answer (``verified`` False); None when no provider could say either.

        ``fresh=True`` skips the cached answer (GetContractVerification, when it computes)
        and stores the new one.  Raises InvalidAddress for a malformed address, and a
        provider's error when no provider said verified and one of them failed.
        """
        key = (chain_id, parse_address(address))
        if not fresh:
            hit, info = self._cache.get(key)
            if hit:
                return info
        return await asyncio.shield(self._shared(key))

    async def is_open_source(self, chain_id: int, address: str, fresh: bool = False) -> bool:
        """True if any provider says the source of ``address`` is verified.

        Raises as :meth:`lookup` does.
        """
        info = await self.lookup(chain_id, address, fresh)
        return info is not None and info.verified

    async def status(self, chain_id: int, address: str, fresh: bool = False) -> Status:
        """``verified``, ``unverified`` or ``unknown``; never raises for a provider failure.

        A failure becomes ``unknown`` and is remembered for ``UNKNOWN_TTL`` seconds so a
        provider that is down is not hammered (``fresh`` asks again anyway).  Raises
        InvalidAddress for a malformed address.
        """
        key = (chain_id, parse_address(address))
        known = None if fresh else self._known(key)
        return known if known is not None else await self._asked(key)

    def _known(self, key: Key) -> Status | None:
        """The status remembered for ``key`` (a failure, or a kept answer); None when
        the providers must be asked."""
        if self._failed.get(key)[0]:
            return "unknown"
        hit, info = self._cache.get(key)
        return _status_of(info) if hit else None

    async def _asked(self, key: Key) -> Status:
        """The providers' answer for ``key`` (stored as :meth:`lookup` stores it)."""
        try:
            info = await asyncio.shield(self._shared(key))
        except InvalidAddress:
            raise
        except TokenRiskError:
            self._failed.put(key, True, UNKNOWN_TTL)
            return "unknown"
        return _status_of(info)

    async def statuses(
        self, chain_id: int, addresses: Iterable[str], fresh: bool = False
    ) -> dict[str, Status]:
        """:meth:`status` of each address, concurrently; keys exactly as given.  What is
        remembered is answered at once; only the rest is asked, concurrently (a check's
        call tree is mostly contracts seen before, and a task each costs CPU)."""
        wanted = list(dict.fromkeys(addresses))
        keys = {a: (chain_id, parse_address(a)) for a in wanted}
        answers: dict[str, Status] = {}
        missing = []
        for address in wanted:
            known = None if fresh else self._known(keys[address])
            if known is None:
                missing.append(address)
            else:
                answers[address] = known
        if missing:
            asked = await asyncio.gather(*(self._asked(keys[a]) for a in missing))
            answers.update(zip(missing, asked, strict=True))
        return {address: answers[address] for address in wanted}

    async def many(
        self, chain_id: int, addresses: Iterable[str], fresh: bool = False
    ) -> dict[str, bool]:
        """:meth:`is_open_source` for each address, concurrently (bounded).

        Keys are the addresses exactly as given.  Raises the first failure (in input
        order) after every lookup has finished, so none is left running.
        """
        wanted = list(dict.fromkeys(addresses))
        answers = await asyncio.gather(
            *(self.is_open_source(chain_id, address, fresh) for address in wanted),
            return_exceptions=True,
        )
        for answer in answers:
            if isinstance(answer, BaseException):
                raise answer
        return {address: bool(answer) for address, answer in zip(wanted, answers, strict=True)}

    def _shared(self, key: Key) -> asyncio.Future[SourceInfo | None]:
        """The running query for ``key``, started if there is none."""
        running = self._inflight.get(key)
        if running is None:
            running = asyncio.ensure_future(self._resolve(key))
            self._inflight[key] = running
            running.add_done_callback(lambda done: self._finished(key, done))
        return running

    def _finished(self, key: Key, done: asyncio.Future[SourceInfo | None]) -> None:
        self._inflight.pop(key, None)
        if not done.cancelled():
            done.exception()  # retrieved here so an abandoned failure is not logged

    async def _resolve(self, key: Key) -> SourceInfo | None:
        async with self._limit:
            info, failure = await self._ask_providers(*key)
        if info is not None and info.verified:
            self._cache.put(key, info, self._ttl)
            return info
        if failure is not None:
            raise failure
        self._cache.put(key, info, self._negative_ttl if info is not None else UNKNOWN_TTL)
        return info

    async def _ask_providers(
        self, chain_id: int, address: str
    ) -> tuple[SourceInfo | None, TokenRiskError | None]:
        """(first verified answer, else the first definite "not verified"; first failure)."""
        failure: TokenRiskError | None = None
        unverified: SourceInfo | None = None
        for provider in self.providers:
            try:
                info = await provider.lookup(chain_id, address)
            except TokenRiskError as exc:
                logger.warning("source provider %s failed: %s", provider.name, exc.message)
                failure = failure or exc
                continue
            if info is not None and info.verified:
                return info, None
            unverified = unverified or info
        return unverified, failure


def _status_of(info: SourceInfo | None) -> Status:
    """A providers' answer as a status: none of them could say is ``unknown``."""
    if info is None:
        return "unknown"
    return "verified" if info.verified else "unverified"
