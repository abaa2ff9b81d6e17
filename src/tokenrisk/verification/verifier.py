"""The verifier: providers asked in order, answers cached, many addresses at once.

"Open source" here means: at least one configured provider says the contract's source
is verified, with a full *or* a partial match.  A partial match (Sourcify "match")
differs from the deployed bytecode only in the metadata hash, so the published code is
the code that runs; Etherscan's "verified" is the same kind of match.

Providers are asked in the configured order and the first verified answer wins (later
providers are not asked, which spares their rate limits).  A provider that fails is
skipped; if no provider says verified and at least one failed, the verifier raises that
failure rather than reporting "closed source" it could not establish.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Iterable, Sequence

from tokenrisk.chain.abi import parse_address
from tokenrisk.errors import TokenRiskError
from tokenrisk.verification.cache import TtlCache
from tokenrisk.verification.source import SourceInfo, SourceProvider

logger = logging.getLogger(__name__)

Key = tuple[int, str]


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
        self._cache: TtlCache[SourceInfo | None] = TtlCache(max_entries, clock)
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
        """The first verified answer for ``address``, or None if no provider has one.

        ``fresh=True`` skips the cached answer (GetContractVerification is uncached)
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
        if info is not None:
            self._cache.put(key, info, self._ttl)
            return info
        if failure is not None:
            raise failure
        self._cache.put(key, None, self._negative_ttl)
        return None

    async def _ask_providers(
        self, chain_id: int, address: str
    ) -> tuple[SourceInfo | None, TokenRiskError | None]:
        """(first verified answer, first failure), asking providers in order."""
        failure: TokenRiskError | None = None
        for provider in self.providers:
            try:
                info = await provider.lookup(chain_id, address)
            except TokenRiskError as exc:
                logger.warning("source provider %s failed: %s", provider.name, exc.message)
                failure = failure or exc
                continue
            if info is not None and info.verified:
                return info, None
        return None, failure
