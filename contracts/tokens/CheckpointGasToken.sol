// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

import {ScenarioToken} from "../lib/ScenarioToken.sol";

/// @title CheckpointGasToken
/// @notice Latent gas trap: every sell records `checkpointDepth` "price checkpoints", each
/// a write to a fresh storage slot (about 22k gas apiece). Launched at depth 0, so sells
/// cost what a plain token's do; the owner may raise the depth to 100, after which each
/// sell still succeeds but burns about 2.2M more gas: a wallet that estimates its gas
/// limit from an earlier sell runs out of gas.
contract CheckpointGasToken is ScenarioToken {
    uint256 public constant MAX_CHECKPOINT_DEPTH = 100;

    uint256 public checkpointDepth;
    uint256 public checkpointCount;
    mapping(uint256 => uint256) public checkpoints;

    constructor(string memory name_, string memory symbol_, uint8 decimals_, uint256 supply_)
        ScenarioToken(name_, symbol_, decimals_, supply_)
    {}

    function setCheckpointDepth(uint256 depth) external onlyOwner {
        require(depth <= MAX_CHECKPOINT_DEPTH, "Depth above the maximum");
        checkpointDepth = depth;
    }

    function _update(address from, address to, uint256 amount) internal override {
        if (_ruled(from, to) && _isSell(from, to)) {
            uint256 next = checkpointCount;
            for (uint256 i = 0; i < checkpointDepth; i++) {
                checkpoints[next + i] = amount ^ (block.timestamp + i);
            }
            checkpointCount = next + checkpointDepth;
        }
        _move(from, to, amount);
    }
}
