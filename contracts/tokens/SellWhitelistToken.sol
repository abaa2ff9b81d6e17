// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

import {ScenarioToken} from "../lib/ScenarioToken.sol";

/// @title SellWhitelistToken
/// @notice Honeypot: anyone can buy, only the owner and owner-whitelisted wallets can sell.
/// Wallet transfers are allowed.
contract SellWhitelistToken is ScenarioToken {
    mapping(address => bool) public whitelisted;

    event WhitelistUpdated(address indexed account, bool allowed);

    constructor(string memory name_, string memory symbol_, uint8 decimals_, uint256 supply_)
        ScenarioToken(name_, symbol_, decimals_, supply_)
    {}

    function setWhitelisted(address account, bool allowed) external onlyOwner {
        whitelisted[account] = allowed;
        emit WhitelistUpdated(account, allowed);
    }

    function _update(address from, address to, uint256 amount) internal override {
        if (_ruled(from, to) && _isSell(from, to)) {
            require(whitelisted[from], "Seller not whitelisted");
        }
        _move(from, to, amount);
    }
}
