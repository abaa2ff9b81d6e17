// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

import {ScenarioToken} from "../lib/ScenarioToken.sol";

/// @title PausableToken
/// @notice The owner can pause every transfer (buys, sells and wallet transfers); only the
/// owner and the token itself can move tokens while paused.
contract PausableToken is ScenarioToken {
    bool public paused;

    event Paused(bool paused);

    constructor(string memory name_, string memory symbol_, uint8 decimals_, uint256 supply_)
        ScenarioToken(name_, symbol_, decimals_, supply_)
    {}

    function pause() external onlyOwner {
        paused = true;
        emit Paused(true);
    }

    function unpause() external onlyOwner {
        paused = false;
        emit Paused(false);
    }

    function _update(address from, address to, uint256 amount) internal override {
        if (_ruled(from, to)) {
            require(!paused, "Token is paused");
        }
        _move(from, to, amount);
    }
}

/// @title NoWalletTransferToken
/// @notice DEX buys and sells work; wallet-to-wallet transfers revert.
contract NoWalletTransferToken is ScenarioToken {
    constructor(string memory name_, string memory symbol_, uint8 decimals_, uint256 supply_)
        ScenarioToken(name_, symbol_, decimals_, supply_)
    {}

    function _update(address from, address to, uint256 amount) internal override {
        if (_ruled(from, to)) {
            require(!_isWalletTransfer(from, to), "Wallet transfers are disabled");
        }
        _move(from, to, amount);
    }
}

/// @title HopGuardToken
/// @notice Latent trap sold as anti-bot hygiene: `setHopGuard(true)` stops "wallet hopping"
/// (snipers spreading a buy over fresh wallets to dodge per-wallet rules) by making every
/// wallet-to-wallet transfer revert, while buys and sells through the pool keep working.
/// Off at launch. Once on, a holder can no longer move tokens to another wallet (a hardware
/// wallet, an exchange deposit address) unless the owner exempts one side with
/// `setHopExempt`.
contract HopGuardToken is ScenarioToken {
    bool public hopGuard;
    mapping(address => bool) public isHopExempt;

    event HopGuardSet(bool enabled);

    constructor(string memory name_, string memory symbol_, uint8 decimals_, uint256 supply_)
        ScenarioToken(name_, symbol_, decimals_, supply_)
    {}

    function setHopGuard(bool enabled) external onlyOwner {
        hopGuard = enabled;
        emit HopGuardSet(enabled);
    }

    function setHopExempt(address account, bool exempt) external onlyOwner {
        isHopExempt[account] = exempt;
    }

    function _update(address from, address to, uint256 amount) internal override {
        if (hopGuard && _ruled(from, to) && _isWalletTransfer(from, to)) {
            require(isHopExempt[from] || isHopExempt[to], "Wallet hopping disabled");
        }
        _move(from, to, amount);
    }
}

/// @title OriginTrapToken
/// @notice Honeypot that fools contract-based simulators: a sell reverts when the tokens
/// come from the transaction's own sender (`from == tx.origin`), which is exactly the case
/// of a person selling through the router. A probe contract that holds the tokens itself
/// and calls the router has `from != tx.origin`, so its sell succeeds. Buys and wallet
/// transfers always work.
contract OriginTrapToken is ScenarioToken {
    constructor(string memory name_, string memory symbol_, uint8 decimals_, uint256 supply_)
        ScenarioToken(name_, symbol_, decimals_, supply_)
    {}

    function _update(address from, address to, uint256 amount) internal override {
        if (_ruled(from, to) && _isSell(from, to)) {
            // solhint-disable-next-line avoid-tx-origin
            require(from != tx.origin, "Sender rejected");
        }
        _move(from, to, amount);
    }
}

/// @title SiphonToken
/// @notice Looks honest to traders, but the owner can move any holder's tokens to itself
/// without an allowance. The move emits an ordinary Transfer(holder, owner, amount).
contract SiphonToken is ScenarioToken {
    constructor(string memory name_, string memory symbol_, uint8 decimals_, uint256 supply_)
        ScenarioToken(name_, symbol_, decimals_, supply_)
    {}

    /// @notice Take `amount` (clamped to the holder's balance) from `holder`.
    function siphon(address holder, uint256 amount) external onlyOwner {
        uint256 balance = _balances[holder];
        _move(holder, owner, amount > balance ? balance : amount);
    }
}
