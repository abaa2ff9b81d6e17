"""CPU time of the processes in a run: the node, the service (a process and its workers)
and the load generator, read from ``/proc`` (Linux).

On a machine where the node, the service and the load generator share the cores, the
CPU one answer costs in all three bounds the answers per second any number of workers
can give: ``cores / CPU per answer``.  The scale-out section prints that ceiling next
to what one and two workers reached, so a speed-up that the machine cannot give is
shown as such rather than asserted.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

_TICK = os.sysconf("SC_CLK_TCK")


def descendants(pid: int) -> list[int]:
    """``pid`` and every live process below it."""
    out, todo = [], [pid]
    while todo:
        current = todo.pop()
        out.append(current)
        for task in Path(f"/proc/{current}/task").glob("*/children"):
            try:
                todo += [int(child) for child in task.read_text().split()]
            except OSError:
                continue
    return out


def cpu_seconds(pids: Iterable[int]) -> float:
    """User plus system CPU seconds of ``pids`` so far (processes gone count 0)."""
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])  # utime, stime (fields 14, 15)
    return total / _TICK


@dataclass(frozen=True)
class CpuUse:
    """CPU seconds each party spent during a run that gave ``answers`` in ``seconds``."""

    node: float
    service: float
    client: float
    answers: int
    seconds: float

    @property
    def per_answer(self) -> float:
        return (self.node + self.service + self.client) / max(1, self.answers)

    @property
    def ceiling(self) -> float:
        """Answers per second this machine's cores allow at this CPU per answer."""
        return (os.cpu_count() or 1) / self.per_answer if self.per_answer > 0 else 0.0

    @property
    def reached(self) -> float:
        return self.answers / self.seconds if self.seconds > 0 else 0.0

    def text(self) -> str:
        n = max(1, self.answers)
        return (
            f"CPU per answer {self.per_answer * 1000:.1f} ms (node "
            f"{self.node / n * 1000:.1f}, service {self.service / n * 1000:.1f}, load "
            f"generator {self.client / n * 1000:.1f}); {os.cpu_count()} cores allow "
            f"{self.ceiling:.1f} answers/s at that cost, reached {self.reached:.1f} "
            f"({self.reached / self.ceiling:.0%})"
        )


class Meter:
    """``with Meter(node_pid, service_pid) as meter: ...`` then ``meter.use(answers)``."""

    def __init__(self, node_pid: int, service_pid: int) -> None:
        self.node_pid, self.service_pid = node_pid, service_pid
        self._start: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 0.0)
        self._end = self._start

    def _now(self) -> tuple[float, float, float, float]:
        service = cpu_seconds(descendants(self.service_pid))
        node = cpu_seconds([self.node_pid])
        return node, service, time.process_time(), time.perf_counter()

    def __enter__(self) -> Meter:
        self._start = self._now()
        return self

    def __exit__(self, *exc: object) -> None:
        self._end = self._now()

    def use(self, answers: int) -> CpuUse:
        node, service, client, wall = (b - a for a, b in zip(self._start, self._end, strict=True))
        return CpuUse(node, service, client, answers, wall)
