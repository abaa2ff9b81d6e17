"""The build's owner-power proof stops on a claim its mined transactions do not show
(``devnet/proof.py``'s ``expect`` conditions), here the wallet-transfer one."""

from __future__ import annotations

import pytest

from tokenrisk.devnet.proof import Measured, _check
from tokenrisk.errors import DevnetBuildError


def measured(transfer_ok: bool | None, sell_ok: bool = True) -> Measured:
    reason = None if transfer_ok is not False else "execution reverted: Wallet hopping disabled"
    return Measured(
        True, None, sell_ok, None, 0.0, 10, 10, 100, 100,
        transfer_ok=transfer_ok, transfer_reason=reason,
    )  # fmt: skip


def test_a_transfer_that_fails_as_claimed_passes() -> None:
    _check("t", {"transferFails": True, "sellFails": False}, measured(False))
    _check("t", {"transferFails": False}, measured(True))


@pytest.mark.parametrize(
    ("expect", "m"),
    [
        ({"transferFails": True}, measured(True)),  # it went through
        ({"transferFails": True}, measured(None)),  # nothing was sent: proves nothing
        ({"transferFails": False}, measured(False)),
        ({"transferFails": False}, measured(None)),
        ({"transferFails": True, "sellFails": False}, measured(False, sell_ok=False)),
    ],
)
def test_a_transfer_claim_the_mined_proof_contradicts_stops_the_build(
    expect: dict[str, bool], m: Measured
) -> None:
    with pytest.raises(DevnetBuildError, match="ownerProof failed"):
        _check("t", expect, m)
