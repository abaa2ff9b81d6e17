// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

import {ScenarioToken} from "../lib/ScenarioToken.sol";

/// @title ReflectionToken
/// @notice Honest reflection token: buys and sells pay a 2% fee that is shared out to every
/// wallet holding the token (wallet transfers pay nothing). AMM addresses are excluded from
/// reflection and keep exact balances, so pair reserves stay consistent.
/// @dev Wallets hold shares of the pool of reflected tokens; a fee enlarges the pool without
/// minting shares, so every wallet balance grows with NO Transfer event. A balance rebuilt
/// from Transfer logs is therefore lower than `balanceOf`. The fee itself emits no event
/// either: Transfer(from, to, amount - fee) is the only log of a taxed trade.
contract ReflectionToken is ScenarioToken {
    uint256 public constant REFLECTION_BPS = 200;
    uint256 private constant SHARES_PER_UNIT = 1e9;

    mapping(address => uint256) private _shares;
    uint256 private _totalShares;
    uint256 private _reflectedSupply;

    constructor(string memory name_, string memory symbol_, uint8 decimals_, uint256 supply_)
        ScenarioToken(name_, symbol_, decimals_, supply_)
    {}

    function balanceOf(address account) public view override returns (uint256) {
        if (isAmm[account]) {
            return _balances[account];
        }
        return _sharesToTokens(_shares[account]);
    }

    function _mint(address to, uint256 amount) internal override {
        require(to != address(0), "Mint to the zero address");
        totalSupply += amount;
        _credit(to, amount);
        emit Transfer(address(0), to, amount);
    }

    function _update(address from, address to, uint256 amount) internal override {
        uint256 fee = 0;
        if (_ruled(from, to) && !_isWalletTransfer(from, to)) {
            fee = (amount * REFLECTION_BPS) / 10_000;
        }
        if (fee > 0) {
            _debit(from, fee);
            _reflect(fee);
        }
        _move(from, to, amount - fee);
    }

    function _move(address from, address to, uint256 amount) internal override {
        _debit(from, amount);
        _credit(to, amount);
        emit Transfer(from, to, amount);
    }

    /// @dev Switch an address between share accounting and exact accounting.
    function _afterAmmSet(address pool, bool isAmm_) internal override {
        if (isAmm_) {
            uint256 held = _sharesToTokens(_shares[pool]);
            _totalShares -= _shares[pool];
            _shares[pool] = 0;
            _reflectedSupply -= held;
            _balances[pool] += held;
        } else {
            uint256 held = _balances[pool];
            _balances[pool] = 0;
            _credit(pool, held);
        }
    }

    function _reflect(uint256 fee) private {
        if (_totalShares == 0) {
            _credit(owner, fee);
        } else {
            _reflectedSupply += fee;
        }
    }

    function _credit(address account, uint256 amount) private {
        if (isAmm[account]) {
            _balances[account] += amount;
            return;
        }
        uint256 shares = (_totalShares == 0 || _reflectedSupply == 0)
            ? amount * SHARES_PER_UNIT
            : (amount * _totalShares) / _reflectedSupply;
        _shares[account] += shares;
        _totalShares += shares;
        _reflectedSupply += amount;
    }

    function _debit(address account, uint256 amount) private {
        require(balanceOf(account) >= amount, "Transfer amount exceeds balance");
        if (isAmm[account]) {
            _balances[account] -= amount;
            return;
        }
        uint256 shares = _ceilDiv(amount * _totalShares, _reflectedSupply);
        if (shares > _shares[account]) {
            shares = _shares[account];
        }
        _shares[account] -= shares;
        _totalShares -= shares;
        _reflectedSupply -= amount;
    }

    function _sharesToTokens(uint256 shares) private view returns (uint256) {
        if (_totalShares == 0) {
            return 0;
        }
        return (shares * _reflectedSupply) / _totalShares;
    }

    function _ceilDiv(uint256 a, uint256 b) private pure returns (uint256) {
        return a == 0 ? 0 : (a - 1) / b + 1;
    }
}
