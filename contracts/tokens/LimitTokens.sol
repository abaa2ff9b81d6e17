// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

import {ScenarioToken} from "../lib/ScenarioToken.sol";

/// @title MaxTxToken
/// @notice Honest-but-limited: a single buy or sell may move at most 1% of the supply.
/// Wallet transfers are unlimited.
contract MaxTxToken is ScenarioToken {
    constructor(string memory name_, string memory symbol_, uint8 decimals_, uint256 supply_)
        ScenarioToken(name_, symbol_, decimals_, supply_)
    {}

    function maxTxAmount() public view returns (uint256) {
        return totalSupply / 100;
    }

    function _update(address from, address to, uint256 amount) internal override {
        if (_ruled(from, to)) {
            if (_isBuy(from)) {
                require(amount <= maxTxAmount(), "Buy exceeds max transaction amount");
            } else if (_isSell(from, to)) {
                require(amount <= maxTxAmount(), "Sell exceeds max transaction amount");
            }
        }
        _move(from, to, amount);
    }
}

/// @title MaxWalletToken
/// @notice Honest-but-limited: no wallet may hold more than 2% of the supply (AMM addresses
/// and the owner excepted). Limits how much a fresh wallet can buy; sells are unlimited.
contract MaxWalletToken is ScenarioToken {
    constructor(string memory name_, string memory symbol_, uint8 decimals_, uint256 supply_)
        ScenarioToken(name_, symbol_, decimals_, supply_)
    {}

    function maxWalletAmount() public view returns (uint256) {
        return (totalSupply * 2) / 100;
    }

    function _update(address from, address to, uint256 amount) internal override {
        _move(from, to, amount);
        if (_ruled(from, to) && !isAmm[to]) {
            require(_balances[to] <= maxWalletAmount(), "Exceeds max wallet amount");
        }
    }
}

/// @title TinySellLimitToken
/// @notice Effective honeypot: buys are unlimited but one sell may move at most 0.0001% of
/// the supply (1,000 tokens of 1 billion), so a normal bag can only leave in thousands of
/// tiny sells.
contract TinySellLimitToken is ScenarioToken {
    constructor(string memory name_, string memory symbol_, uint8 decimals_, uint256 supply_)
        ScenarioToken(name_, symbol_, decimals_, supply_)
    {}

    function maxSellAmount() public view returns (uint256) {
        return totalSupply / 1_000_000;
    }

    function _update(address from, address to, uint256 amount) internal override {
        if (_ruled(from, to) && _isSell(from, to)) {
            require(amount <= maxSellAmount(), "Sell exceeds max sell amount");
        }
        _move(from, to, amount);
    }
}

/// @title LatentSellCapToken
/// @notice Latent trap: no limit at launch, but the owner may cap each sell at a share of
/// the seller's balance with `setMaxSellPercent` (0: no cap); a holder then has to leave
/// in many small sells. A percentage of 100 or more is no cap.
contract LatentSellCapToken is ScenarioToken {
    uint256 public maxSellPercent;

    constructor(string memory name_, string memory symbol_, uint8 decimals_, uint256 supply_)
        ScenarioToken(name_, symbol_, decimals_, supply_)
    {}

    function setMaxSellPercent(uint256 percent) external onlyOwner {
        maxSellPercent = percent;
    }

    function _update(address from, address to, uint256 amount) internal override {
        bool capped = maxSellPercent != 0 && maxSellPercent < 100;
        if (capped && _ruled(from, to) && _isSell(from, to)) {
            require(amount * 100 <= balanceOf(from) * maxSellPercent, "Sell exceeds max share");
        }
        _move(from, to, amount);
    }
}
