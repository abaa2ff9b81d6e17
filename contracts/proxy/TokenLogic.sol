// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

import {ERC20Base, ERC20Named} from "../lib/ERC20Base.sol";
import {ScenarioCore} from "../lib/ScenarioCore.sol";
import {Taxed} from "../lib/Taxed.sol";

/// @title TokenLogicBase
/// @notice Implementation side of a proxied token: same storage and rules as a scenario
/// token, but set up by `initialize` (run once, by the proxy's constructor) instead of a
/// constructor. The implementation contract itself is locked at deployment.
abstract contract TokenLogicBase is ScenarioCore, ERC20Named {
    bool private _initialized;

    constructor() {
        _initialized = true;
    }

    function initialize(
        string memory name_,
        string memory symbol_,
        uint8 decimals_,
        uint256 supply_,
        address owner_
    ) external {
        require(!_initialized, "Already initialized");
        _initialized = true;
        _initScenario(name_, symbol_, decimals_, supply_, owner_);
    }
}

/// @title HonestTokenLogic
/// @notice Honest token logic: no taxes, limits or blocks.
contract HonestTokenLogic is TokenLogicBase {}

/// @title HiddenTaxTokenLogic
/// @notice Token logic with a 12% sell tax (no buy tax). The devnet does not register its
/// source, so behind a verified proxy the tax is only visible by simulation.
contract HiddenTaxTokenLogic is TokenLogicBase, Taxed {
    function buyTaxBps() public pure override returns (uint256) {
        return 0;
    }

    function sellTaxBps() public pure override returns (uint256) {
        return 1200;
    }

    function _update(address from, address to, uint256 amount) internal override(ERC20Base, Taxed) {
        Taxed._update(from, to, amount);
    }
}
