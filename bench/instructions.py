"""Instructions per recomputed check, counted: ``python -m bench.instructions [--tokens N]``.

The CPU figures of ``bench.servicecpu`` and the remote bench read ``/proc``, and on a
shared machine they move by 10-30 % between two runs of the same code (the machine's
other load, its caches): a change worth 2 % cannot be seen in them without many
alternating runs.  This tool counts instead.  It runs the app in a process under
valgrind's callgrind (``httpx.ASGITransport``, results cache off, the devnet's node on
loopback: :func:`bench.hotpath.in_process`), asks IsHoneypot of the first ``--tokens``
catalogue tokens once uninstrumented (first sight: pool, scan, holder index), then
switches counting on (``callgrind_control --instr=on``) for ``--passes`` recomputed
passes over the same tokens and prints::

    instructions kind=recomputed tokens=N passes=P per_check=I

Two runs of the same tree agree within ~0.1 %; run it in each tree to compare them
(``PYTHONPATH=<tree>/src:<tree>``).  Instructions are not time: a tight C loop (a byte
scan) runs several per cycle, Python's interpreter far fewer, so a cut in C code saves
less time than its share of instructions.  The count includes the in-process HTTP
client's work, the same for both trees.  It takes about a minute for 40 tokens (the
uninstrumented part runs ~5x slower under valgrind, the counted part ~50x).

Needs valgrind (Debian's ``valgrind`` package); without it, it says so and exits 2.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

CHILD = "TOKENRISK_BENCH_INSTRUCTIONS_CHILD"
TOTAL = re.compile(rb"^==\d+== Collected : (\d+)$", re.MULTILINE)
CHECKS = re.compile(rb"^checks=(\d+)$", re.MULTILINE)


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.instructions", description=__doc__)
    parser.add_argument("--tokens", type=int, default=40, help="catalogue tokens asked")
    parser.add_argument("--passes", type=int, default=1, help="recomputed passes counted")
    return parser.parse_args(argv)


def _control(on: bool) -> None:
    """Switch callgrind's counting in this process (the tool polls for the command)."""
    subprocess.run(
        ["callgrind_control", f"--instr={'on' if on else 'off'}", str(os.getpid())],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=True,
    )


async def _checks(tokens: int, passes: int) -> int:
    """In the child, under valgrind: the passes, counted; how many checks were."""
    from bench.hotpath import in_process
    from tokenrisk.devnet.instance import start_devnet

    with tempfile.TemporaryDirectory() as tmp, start_devnet() as devnet:
        chosen = [t["address"] for t in devnet.manifest["tokens"][:tokens]]
        async with in_process(devnet.url, devnet.manifest, devnet.build_dir, Path(tmp)) as (
            http,
            _,
            chain,
        ):
            for token in chosen:  # first sight, not counted
                await http.get("/v2/IsHoneypot", params={"address": token, "chainID": chain})
            await asyncio.to_thread(_control, True)
            for _ in range(passes):
                for token in chosen:
                    await http.get("/v2/IsHoneypot", params={"address": token, "chainID": chain})
            await asyncio.to_thread(_control, False)
    return len(chosen) * passes


def main(argv: list[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if os.environ.get(CHILD):
        print(f"checks={asyncio.run(_checks(args.tokens, args.passes))}")
        return 0
    if shutil.which("valgrind") is None or shutil.which("callgrind_control") is None:
        print("bench.instructions: valgrind is not installed (Debian: apt-get install valgrind)")
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        command = [
            "valgrind",
            "--tool=callgrind",
            "--instr-atstart=no",
            f"--callgrind-out-file={tmp}/callgrind.out",
            sys.executable,
            "-m",
            "bench.instructions",
            *(argv if argv is not None else sys.argv[1:]),
        ]
        done = subprocess.run(
            command, env={**os.environ, CHILD: "1"}, capture_output=True, check=False
        )
    found, counted = TOTAL.search(done.stderr), CHECKS.search(done.stdout)
    if done.returncode != 0 or found is None or counted is None:
        sys.stderr.write(done.stderr.decode(errors="replace")[-2000:])
        print("bench.instructions: the counted run failed")
        return 1
    checks = int(counted.group(1))
    per_check = int(found.group(1)) // max(1, checks)
    print(
        f"instructions kind=recomputed tokens={checks // args.passes} passes={args.passes} "
        f"per_check={per_check}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
