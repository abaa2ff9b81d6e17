// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

import {ScenarioToken} from "../lib/ScenarioToken.sol";

/// @title GasPriceCapToken
/// @notice The common "anti-bot" gas price limit, armed as a trap: a sell whose
/// `tx.gasprice` is above `maxGasPrice` reverts. The owner sets the limit to 1 wei after the
/// launch, so every real seller (who pays at least the block's base fee) fails, while a
/// simulation run at gas price 0 sells fine. Buys and wallet transfers are never limited.
/// @dev `maxGasPrice == 0` means no limit. The owner and the contract are exempt, as in
/// every scenario token.
contract GasPriceCapToken is ScenarioToken {
    uint256 public maxGasPrice;

    event MaxGasPriceSet(uint256 maxGasPrice);

    constructor(string memory name_, string memory symbol_, uint8 decimals_, uint256 supply_)
        ScenarioToken(name_, symbol_, decimals_, supply_)
    {}

    /// @notice Set the highest gas price a sell may pay (0 lifts the limit).
    function setMaxGasPrice(uint256 maxGasPrice_) external onlyOwner {
        maxGasPrice = maxGasPrice_;
        emit MaxGasPriceSet(maxGasPrice_);
    }

    function _update(address from, address to, uint256 amount) internal override {
        if (_ruled(from, to) && _isSell(from, to) && maxGasPrice != 0) {
            require(tx.gasprice <= maxGasPrice, "Gas price above the anti-bot limit");
        }
        _move(from, to, amount);
    }
}
