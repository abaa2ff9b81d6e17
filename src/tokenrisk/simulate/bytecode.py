"""evmole's storage layout of a contract's runtime bytecode, worked out in a worker process.

evmole is a Rust extension that holds the GIL: one contract's layout takes 2-25 ms of CPU
for a devnet token, 1.7 s for the largest devnet contract (issue #27's machine), and worked
out on the event loop it froze every check the service ran meanwhile (replies waited,
requests left a round late).  One worker process works the layouts out instead and the
loop awaits them.  The worker imports this module, evmole and the standard library, no
other tokenrisk module (23 MB, 0.1 s of CPU to start): it is started with ``python -c``,
not through :mod:`multiprocessing`, whose spawned children import the parent's
``__main__`` (the whole service).

A layout is remembered per code as a future: concurrent checks of one contract share one
computation, :func:`start` begins it as soon as the facts' code arrives, and a check past
its deadline stops waiting without stopping it (the next check of that code finds it).  When no
worker can start, or evmole raises, the layout is worked out in the service (the same
answer, or the same error).  A worker that dies (bytecode crashing evmole) is replaced and
the code tried once more; a code that kills it again, or runs past :data:`LIMIT`, raises
:class:`~tokenrisk.errors.BytecodeUnanalysable` (worked out in the service it would crash or
freeze it): the owner-power scan then says it failed, never answers without the layout.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import queue
import subprocess
import sys
import threading
from collections import OrderedDict
from concurrent.futures import Future
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path

import evmole

from tokenrisk.errors import BytecodeUnanalysable

LIMIT = 20.0
"""Seconds one layout may take in the worker (a scan's deadline is a few)."""
CACHED = 256
"""Layouts remembered (codes, most recently asked)."""
WORKER = "from tokenrisk.simulate.bytecode import serve; serve()"
_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Slot:
    """One storage value evmole found: its slot, byte offset in the word, type, and the
    selectors (8 hex, no 0x) reading and writing it."""

    slot: str  # 0x + 64 hex
    offset: int
    type: str
    reads: frozenset[str]
    writes: frozenset[str]


Layout = tuple[Slot, ...]


def storage(code: str) -> Layout:
    """evmole's storage records of ``code`` (runtime bytecode, 0x-hex), worked out here."""
    info = evmole.contract_info(code, storage=True)
    return tuple(
        Slot("0x" + r.slot, int(r.offset), str(r.type), frozenset(r.reads), frozenset(r.writes))
        for r in info.storage or []
    )


def serve() -> None:
    """The worker: the layout of each code read from stdin, written to stdout (pickled,
    framed by :class:`~multiprocessing.connection.Connection`); evmole's error (a Rust
    panic too) as its ``repr``: the service works that code out itself, to raise it as it
    did.  A stray print goes to stderr."""
    replies = Connection(os.dup(1), readable=False)
    os.dup2(2, 1)
    requests = Connection(0, writable=False)
    while True:
        try:
            code = requests.recv()
        except EOFError:  # the service closed the pipe, or exited
            return
        try:
            reply: Layout | str = storage(code)
        except BaseException as exc:  # a Rust panic too: raised again in the service
            reply = repr(exc)
        replies.send(reply)


class Worker:
    """One worker process and the pipes to it; used by one thread at a time."""

    def __init__(self) -> None:
        self.stuck = False  # ran past LIMIT
        to_worker, requests = os.pipe()
        replies, from_worker = os.pipe()
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-c", WORKER], stdin=to_worker, stdout=from_worker, env=_env()
            )
        except BaseException:
            os.close(requests)
            os.close(replies)
            raise
        finally:
            os.close(to_worker)
            os.close(from_worker)
        self.requests = Connection(requests, readable=False)
        self.replies = Connection(replies, writable=False)

    def ask(self, code: str) -> Layout | str | None:
        """The layout, evmole's error (its ``repr``), or None: the worker exited, or ran
        past :data:`LIMIT` (``stuck``), and is stopped."""
        try:
            self.requests.send(code)
            self.stuck = not self.replies.poll(LIMIT)
            if not self.stuck:
                answer: Layout | str = self.replies.recv()
                return answer
        except (OSError, EOFError):
            pass
        self.stop()
        return None

    def stop(self, wait: float = 0.0) -> None:
        """Close the pipes (the worker exits at their end); killed unless it did within
        ``wait`` seconds."""
        self.requests.close()
        self.replies.close()
        try:
            self.process.wait(wait)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def _env() -> dict[str, str]:
    """The service's environment, with this package first on the worker's import path."""
    here = str(Path(__file__).resolve().parents[2])
    path = os.environ.get("PYTHONPATH")
    return {**os.environ, "PYTHONPATH": here + (os.pathsep + path if path else "")}


class Layouts:
    """The layouts asked (futures, per code) and the thread that asks the worker for them.

    A future is marked running when made, so a waiter cancelled (a check past its
    deadline) never cancels it for the others."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._known: OrderedDict[str, Future[Layout]] = OrderedDict()
        self._jobs: queue.SimpleQueue[tuple[str, Future[Layout]] | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self.worker: Worker | None = None

    def open(self) -> None:
        """Start the thread and its worker now (the app's start), not at the first code."""
        with self._lock:
            self._running()

    def start(self, code: str) -> Future[Layout]:
        """The layout of ``code``: remembered, or asked of the worker now."""
        with self._lock:
            known = self._known.get(code)
            if known is not None:
                self._known.move_to_end(code)
                return known
            future: Future[Layout] = Future()
            future.set_running_or_notify_cancel()
            self._known[code] = future
            if len(self._known) > CACHED:
                self._known.popitem(last=False)
            self._running()
            self._jobs.put((code, future))
        return future

    def close(self) -> None:
        """Stop the thread (once the layouts asked before are worked out) and its worker;
        a later code starts them again."""
        with self._lock:  # a code asked meanwhile waits: one thread at a time
            if self._thread is not None:
                self._jobs.put(None)
                self._thread.join()
                self._thread = None

    def _running(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._serve, name="evmole", daemon=True)
            self._thread.start()

    def _serve(self) -> None:
        """The thread: a worker started at once, each code's layout in turn, then the
        worker stopped."""
        try:
            with contextlib.suppress(Exception):  # none: the first code tries again
                self.worker = Worker()
            while (job := self._jobs.get()) is not None:
                code, future = job
                try:
                    future.set_result(self._layout(code))
                except BaseException as exc:  # evmole's error, raised as in the service
                    future.set_exception(exc)
        finally:
            if self.worker is not None:
                self.worker.stop(wait=1.0)
                self.worker = None

    def _layout(self, code: str) -> Layout:
        """From the worker (a dead one replaced once), else worked out here.

        Raises BytecodeUnanalysable for a code that killed two workers or ran past
        :data:`LIMIT`."""
        for _ in range(2):
            try:
                worker = self.worker = self.worker or Worker()
            except Exception:  # no worker could start
                return storage(code)
            answer = worker.ask(code)
            if answer is not None:
                return answer if isinstance(answer, tuple) else storage(code)
            self.worker = None
            if worker.stuck:
                break
        _log.warning("evmole gave no storage layout for a %d-byte code", len(code) // 2 - 1)
        raise BytecodeUnanalysable("the contract's storage layout could not be worked out")


LAYOUTS = Layouts()
"""The service's layouts (opened with the app, or at the first code)."""


def start(code: str) -> None:
    """Begin ``code``'s layout now (the facts' code arrived), to be ready when asked."""
    LAYOUTS.start(code)


async def storage_layout(code: str) -> Layout:
    """``code``'s storage layout (:func:`storage`), worked out off the event loop."""
    future = LAYOUTS.start(code)
    if future.done():
        return future.result()
    return await asyncio.wrap_future(future)
