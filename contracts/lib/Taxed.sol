// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

import {ERC20Base} from "./ERC20Base.sol";
import {ScenarioCore} from "./ScenarioCore.sol";
import {ScenarioToken} from "./ScenarioToken.sol";

/// @title Taxed
/// @notice Buy / sell / wallet-transfer taxes in basis points, taken in token units and sent
/// to the owner. A buy tax reduces what the buyer receives from the pair; a sell tax reduces
/// what the pair receives from the seller, which is what Router02's
/// `...SupportingFeeOnTransferTokens` functions expect.
abstract contract Taxed is ScenarioCore {
    uint256 internal constant BPS = 10_000;

    function buyTaxBps() public view virtual returns (uint256);

    function sellTaxBps() public view virtual returns (uint256);

    function transferTaxBps() public view virtual returns (uint256) {
        return 0;
    }

    function _update(address from, address to, uint256 amount) internal virtual override {
        uint256 fee = (amount * _taxBps(from, to)) / BPS;
        if (fee > 0) {
            _move(from, owner, fee);
        }
        _move(from, to, amount - fee);
    }

    function _taxBps(address from, address to) internal view returns (uint256) {
        if (!_ruled(from, to)) {
            return 0;
        }
        if (_isBuy(from)) {
            return buyTaxBps();
        }
        if (_isSell(from, to)) {
            return sellTaxBps();
        }
        return transferTaxBps();
    }
}

/// @title TaxedToken
/// @notice Base of the directly deployed taxed scenario tokens (constructor convention of
/// `ScenarioToken`, rules of `Taxed`).
abstract contract TaxedToken is ScenarioToken, Taxed {
    constructor(string memory name_, string memory symbol_, uint8 decimals_, uint256 supply_)
        ScenarioToken(name_, symbol_, decimals_, supply_)
    {}

    function _update(address from, address to, uint256 amount) internal virtual override(ERC20Base, Taxed) {
        Taxed._update(from, to, amount);
    }
}
