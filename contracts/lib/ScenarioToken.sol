// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

import {ERC20Named} from "./ERC20Base.sol";
import {ScenarioCore} from "./ScenarioCore.sol";

/// @title ScenarioToken
/// @notice Base of the directly deployed scenario tokens: the constructor convention
/// `(name, symbol, decimals, supply)` mints `supply` raw units to the deployer, who becomes
/// the owner.
abstract contract ScenarioToken is ScenarioCore, ERC20Named {
    constructor(string memory name_, string memory symbol_, uint8 decimals_, uint256 supply_) {
        _initScenario(name_, symbol_, decimals_, supply_, msg.sender);
    }
}
