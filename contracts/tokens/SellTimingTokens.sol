// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

import {ScenarioToken} from "../lib/ScenarioToken.sol";

/// @title SellCooldownToken
/// @notice A wallet may sell only `SELL_COOLDOWN` seconds after its last buy. Selling
/// immediately after buying reverts; waiting a minute works.
contract SellCooldownToken is ScenarioToken {
    uint256 public constant SELL_COOLDOWN = 60;

    mapping(address => uint256) public lastBuyTime;

    constructor(string memory name_, string memory symbol_, uint8 decimals_, uint256 supply_)
        ScenarioToken(name_, symbol_, decimals_, supply_)
    {}

    function _update(address from, address to, uint256 amount) internal override {
        if (_ruled(from, to)) {
            if (_isBuy(from)) {
                lastBuyTime[to] = block.timestamp;
            } else if (_isSell(from, to)) {
                require(block.timestamp >= lastBuyTime[from] + SELL_COOLDOWN, "Sell cooldown active");
            }
        }
        _move(from, to, amount);
    }
}

/// @title OneSellPerBlockToken
/// @notice At most one sell per block, globally: the second sell mined in the same block
/// reverts whoever sends it.
contract OneSellPerBlockToken is ScenarioToken {
    uint256 public lastSellBlock;

    constructor(string memory name_, string memory symbol_, uint8 decimals_, uint256 supply_)
        ScenarioToken(name_, symbol_, decimals_, supply_)
    {}

    function _update(address from, address to, uint256 amount) internal override {
        if (_ruled(from, to) && _isSell(from, to)) {
            require(block.number > lastSellBlock, "Only one sell per block");
            lastSellBlock = block.number;
        }
        _move(from, to, amount);
    }
}

/// @title TimeBombToken
/// @notice Sells work until `SELL_WINDOW_BLOCKS` blocks after launch, then revert forever.
/// Buys and wallet transfers keep working. Uses block numbers only (never time), so a state
/// dump loaded much later does not set it off.
contract TimeBombToken is ScenarioToken {
    uint256 private constant SELL_WINDOW_BLOCKS = 5000;

    constructor(string memory name_, string memory symbol_, uint8 decimals_, uint256 supply_)
        ScenarioToken(name_, symbol_, decimals_, supply_)
    {}

    function _update(address from, address to, uint256 amount) internal override {
        if (_ruled(from, to) && _isSell(from, to) && launchBlock != 0) {
            require(block.number < launchBlock + SELL_WINDOW_BLOCKS, "Sells are closed");
        }
        _move(from, to, amount);
    }
}

/// @title NoFullSellToken
/// @notice A sell of exactly the seller's whole balance (or more) reverts; selling part of
/// it (e.g. 99.9%) works. Wallet transfers of the whole balance work.
contract NoFullSellToken is ScenarioToken {
    constructor(string memory name_, string memory symbol_, uint8 decimals_, uint256 supply_)
        ScenarioToken(name_, symbol_, decimals_, supply_)
    {}

    function _update(address from, address to, uint256 amount) internal override {
        if (_ruled(from, to) && _isSell(from, to)) {
            require(amount < _balances[from], "Cannot sell entire balance");
        }
        _move(from, to, amount);
    }
}
