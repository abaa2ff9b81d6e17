// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

/// @title ERC20Base
/// @notice A minimal ERC-20 written for the tokenrisk devnet. Every balance change goes
/// through `_update` (the scenario hook) and then `_move` (the bookkeeping), so scenario
/// tokens can add rules without touching the accounting.
/// @dev Holds no `name()`/`symbol()` getters: `ERC20Named` adds the string ones, and the
/// bytes32-metadata scenario declares its own.
abstract contract ERC20Base {
    string internal _name;
    string internal _symbol;
    uint8 internal _decimals;

    uint256 public totalSupply;
    mapping(address => uint256) internal _balances;
    mapping(address => mapping(address => uint256)) public allowance;

    event Transfer(address indexed from, address indexed to, uint256 value);
    event Approval(address indexed owner, address indexed spender, uint256 value);

    function decimals() public view virtual returns (uint8) {
        return _decimals;
    }

    function balanceOf(address account) public view virtual returns (uint256) {
        return _balances[account];
    }

    function transfer(address to, uint256 amount) public virtual returns (bool) {
        _transfer(msg.sender, to, amount);
        return true;
    }

    function approve(address spender, uint256 amount) public virtual returns (bool) {
        _approve(msg.sender, spender, amount);
        return true;
    }

    function transferFrom(address from, address to, uint256 amount) public virtual returns (bool) {
        _spendAllowance(from, msg.sender, amount);
        _transfer(from, to, amount);
        return true;
    }

    function _setMetadata(string memory name_, string memory symbol_, uint8 decimals_) internal {
        _name = name_;
        _symbol = symbol_;
        _decimals = decimals_;
    }

    function _mint(address to, uint256 amount) internal virtual {
        require(to != address(0), "Mint to the zero address");
        totalSupply += amount;
        _balances[to] += amount;
        emit Transfer(address(0), to, amount);
    }

    function _transfer(address from, address to, uint256 amount) internal {
        require(from != address(0), "Transfer from the zero address");
        require(to != address(0), "Transfer to the zero address");
        _update(from, to, amount);
    }

    /// @dev Scenario hook: apply the token's rules, then move the tokens with `_move`.
    function _update(address from, address to, uint256 amount) internal virtual {
        _move(from, to, amount);
    }

    /// @dev Plain bookkeeping plus the Transfer event; no rules.
    function _move(address from, address to, uint256 amount) internal virtual {
        uint256 balance = _balances[from];
        require(balance >= amount, "Transfer amount exceeds balance");
        unchecked {
            _balances[from] = balance - amount;
        }
        _balances[to] += amount;
        emit Transfer(from, to, amount);
    }

    function _approve(address holder, address spender, uint256 amount) internal {
        require(spender != address(0), "Approve to the zero address");
        allowance[holder][spender] = amount;
        emit Approval(holder, spender, amount);
    }

    function _spendAllowance(address holder, address spender, uint256 amount) internal {
        uint256 current = allowance[holder][spender];
        if (current == type(uint256).max) {
            return;
        }
        require(current >= amount, "Transfer amount exceeds allowance");
        unchecked {
            allowance[holder][spender] = current - amount;
        }
    }
}

/// @title ERC20Named
/// @notice Adds the usual string `name()` and `symbol()` getters.
abstract contract ERC20Named is ERC20Base {
    function name() public view virtual returns (string memory) {
        return _name;
    }

    function symbol() public view virtual returns (string memory) {
        return _symbol;
    }
}
