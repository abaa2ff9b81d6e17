// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

import {ScenarioToken} from "../lib/ScenarioToken.sol";

/// @title V4FeeToken
/// @notice A plain ERC-20 whose owner sets the LP fee its Uniswap V4 pool's hook applies
/// (V4DynamicFeeHook reads `poolFee`): launched at 0.3%, raisable to anything below 100%.
contract V4FeeToken is ScenarioToken {
    uint24 public poolFee = 3000;

    constructor(string memory name_, string memory symbol_, uint8 decimals_, uint256 supply_)
        ScenarioToken(name_, symbol_, decimals_, supply_)
    {}

    function setPoolFee(uint24 fee) external onlyOwner {
        require(fee < 1_000_000, "fee too high");
        poolFee = fee;
    }
}
