// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

import {ScenarioToken} from "../lib/ScenarioToken.sol";

/// @title SniperBlacklistToken
/// @notice Trading opens at `launch()`. Whoever buys in the launch block or in the
/// `SNIPER_BLOCKS` blocks after it is blacklisted automatically: a blacklisted wallet cannot
/// sell or transfer. Later buyers trade normally. The owner can also blacklist by hand.
contract SniperBlacklistToken is ScenarioToken {
    uint256 public constant SNIPER_BLOCKS = 2;

    mapping(address => bool) public blacklisted;

    event BlacklistUpdated(address indexed account, bool blocked);

    constructor(string memory name_, string memory symbol_, uint8 decimals_, uint256 supply_)
        ScenarioToken(name_, symbol_, decimals_, supply_)
    {}

    function setBlacklisted(address account, bool blocked) external onlyOwner {
        _setBlacklisted(account, blocked);
    }

    function _update(address from, address to, uint256 amount) internal override {
        if (_ruled(from, to)) {
            require(launchBlock != 0, "Trading not enabled");
            require(!blacklisted[from], "Blacklisted");
        }
        _move(from, to, amount);
        if (_ruled(from, to) && _isBuy(from) && block.number <= launchBlock + SNIPER_BLOCKS) {
            _setBlacklisted(to, true);
        }
    }

    function _setBlacklisted(address account, bool blocked) private {
        blacklisted[account] = blocked;
        emit BlacklistUpdated(account, blocked);
    }
}
