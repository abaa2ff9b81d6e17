// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

import {ScenarioToken} from "../lib/ScenarioToken.sol";

/// @title SilentTransferToken
/// @notice Buys and sells work, but a wallet-to-wallet transfer returns true and emits a
/// Transfer event while moving nothing: the tokens never reach the other wallet.
contract SilentTransferToken is ScenarioToken {
    constructor(string memory name_, string memory symbol_, uint8 decimals_, uint256 supply_)
        ScenarioToken(name_, symbol_, decimals_, supply_)
    {}

    function _update(address from, address to, uint256 amount) internal override {
        if (_ruled(from, to) && _isWalletTransfer(from, to)) {
            require(_balances[from] >= amount, "Transfer amount exceeds balance");
            emit Transfer(from, to, amount);
            return;
        }
        _move(from, to, amount);
    }
}
