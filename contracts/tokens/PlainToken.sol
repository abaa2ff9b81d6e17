// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

import {ScenarioToken} from "../lib/ScenarioToken.sol";

/// @title PlainToken
/// @notice Honest ERC-20: no taxes, limits or blocks. Also used for the odd-decimals,
/// V3-only, multi-pair and no-pair scenarios.
contract PlainToken is ScenarioToken {
    constructor(string memory name_, string memory symbol_, uint8 decimals_, uint256 supply_)
        ScenarioToken(name_, symbol_, decimals_, supply_)
    {}
}
