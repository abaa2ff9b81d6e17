"""The steps of a devnet build on a running throwaway node: set up, mine the history,
measure the ground truth, prove the owner powers, dump and describe the result.

The same steps run on anvil (``dump=True``: its state is dumped and reused) and on
Hardhat's node, which has no state dump (``dump=False``: the state stays in that node).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tokenrisk.devnet.catalogue import Catalogue
from tokenrisk.devnet.chain import Chain
from tokenrisk.devnet.genesis import Say, set_up
from tokenrisk.devnet.groundtruth import measure_tokens
from tokenrisk.devnet.history import plan_history
from tokenrisk.devnet.outputs import dump_state, manifest_of, mark_proxies, sources_of
from tokenrisk.devnet.proof import prove_owner_powers
from tokenrisk.devnet.trading import run_history


async def build_on(
    url: str,
    root: Path,
    artifacts: dict[str, Any],
    catalogue: Catalogue,
    say: Say,
    *,
    dump: bool = True,
) -> tuple[dict[str, Any], dict[str, Any], bytes]:
    chain = Chain(url)
    try:
        devnet = await set_up(chain, root, artifacts, catalogue, say)
        say("mining history")
        plan = plan_history(catalogue.tokens)
        logs = await run_history(devnet, plan)
        say("measuring ground truth with mined trades (reverted afterwards)")
        truths = await measure_tokens(devnet)
        say("proving the latent owner powers (snapshot, arm, sell, revert)")
        proofs = await prove_owner_powers(devnet)
        state = b""
        if dump:
            say("dumping state")
            state = await dump_state(chain)
        head = await chain.block()
        manifest = manifest_of(devnet, catalogue, plan.roles, logs, head)
        for entry in manifest["tokens"]:
            entry["groundTruth"] = truths.get(entry["id"])
            if entry["id"] in proofs:
                entry["ownerProof"] = proofs[entry["id"]]
        sources = sources_of(root, devnet, catalogue, artifacts)
        await mark_proxies(chain, sources)
        return manifest, sources, state
    finally:
        await chain.aclose()
