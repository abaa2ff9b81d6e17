// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

import {TaxedToken} from "../lib/Taxed.sol";

/// @title FeeRaiseToken
/// @notice Launches with a modest 3% buy / 3% sell fee (paid to the owner in tokens) and an
/// uncapped `setFees`: after the early holders bought, the owner raises the sell fee.
contract FeeRaiseToken is TaxedToken {
    uint256 private _buyFeeBps = 300;
    uint256 private _sellFeeBps = 300;

    event FeesUpdated(uint256 buyFeeBps, uint256 sellFeeBps);

    constructor(string memory name_, string memory symbol_, uint8 decimals_, uint256 supply_)
        TaxedToken(name_, symbol_, decimals_, supply_)
    {}

    function setFees(uint256 buyFeeBps_, uint256 sellFeeBps_) external onlyOwner {
        require(buyFeeBps_ <= 10_000 && sellFeeBps_ <= 10_000, "Fee above 100%");
        _buyFeeBps = buyFeeBps_;
        _sellFeeBps = sellFeeBps_;
        emit FeesUpdated(buyFeeBps_, sellFeeBps_);
    }

    function buyTaxBps() public view override returns (uint256) {
        return _buyFeeBps;
    }

    function sellTaxBps() public view override returns (uint256) {
        return _sellFeeBps;
    }
}
