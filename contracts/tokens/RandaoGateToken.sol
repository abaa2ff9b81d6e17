// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

import {ScenarioToken} from "../lib/ScenarioToken.sol";

/// @title RandaoGateToken
/// @notice A trap aimed at simulators: once armed, a sell goes through only in a block
/// whose `block.prevrandao` is zero. No block after the merge has a zero RANDAO mix, so
/// every real seller fails; a node's `eth_simulateV1` builds each simulated header afresh
/// with a zero mix digest unless the request sets `prevRandao`, so a simulation that
/// leaves it out sees a sellable token. Buys and wallet transfers are never limited.
/// @dev The owner and the contract are exempt, as in every scenario token.
contract RandaoGateToken is ScenarioToken {
    bool public gated;

    event GateSet(bool gated);

    constructor(string memory name_, string memory symbol_, uint8 decimals_, uint256 supply_)
        ScenarioToken(name_, symbol_, decimals_, supply_)
    {}

    /// @notice Arm (or lift) the gate on sells.
    function setGate(bool gated_) external onlyOwner {
        gated = gated_;
        emit GateSet(gated_);
    }

    function _update(address from, address to, uint256 amount) internal override {
        if (gated && _ruled(from, to) && _isSell(from, to)) {
            require(block.prevrandao == 0, "Sells are paused");
        }
        _move(from, to, amount);
    }
}
