// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

import {ScenarioToken} from "../lib/ScenarioToken.sol";

interface IRebaseSyncedPair {
    function sync() external;
}

/// @title RebasingToken
/// @notice Ampleforth-style elastic supply: balances are fixed shares ("gons") of a supply
/// the owner's monetary policy expands or contracts; every pool is `sync()`ed in the same
/// call so its reserves follow the rebase. No fee, no limit: an honest token whose balances
/// change without a single Transfer event.
contract RebasingToken is ScenarioToken {
    mapping(address => uint256) private _gons;
    uint256 private _totalGons;
    uint256 private _gonsPerFragment;
    address[] public pools;

    event LogRebase(uint256 epoch, uint256 totalSupply);

    constructor(string memory name_, string memory symbol_, uint8 decimals_, uint256 supply_)
        ScenarioToken(name_, symbol_, decimals_, supply_)
    {}

    function balanceOf(address account) public view override returns (uint256) {
        return _gons[account] / _gonsPerFragment;
    }

    /// @notice Expand (or contract) the supply by `deltaBps` / 10000 and sync every pool.
    function rebase(int256 deltaBps) external onlyOwner {
        require(deltaBps > -10_000, "Rebase too large");
        totalSupply = (totalSupply * uint256(10_000 + deltaBps)) / 10_000;
        _gonsPerFragment = _totalGons / totalSupply;
        for (uint256 i = 0; i < pools.length; i++) {
            IRebaseSyncedPair(pools[i]).sync();
        }
        emit LogRebase(block.number, totalSupply);
    }

    function _mint(address to, uint256 amount) internal override {
        require(to != address(0) && totalSupply == 0, "Mint once");
        totalSupply = amount;
        _totalGons = type(uint256).max - (type(uint256).max % amount);
        _gonsPerFragment = _totalGons / amount;
        _gons[to] = _totalGons;
        emit Transfer(address(0), to, amount);
    }

    function _update(address from, address to, uint256 amount) internal override {
        uint256 gonValue = amount * _gonsPerFragment;
        require(_gons[from] >= gonValue, "Transfer amount exceeds balance");
        _gons[from] -= gonValue;
        _gons[to] += gonValue;
        emit Transfer(from, to, amount);
    }

    function _afterAmmSet(address pool, bool isAmm_) internal override {
        if (isAmm_) {
            pools.push(pool);
        }
    }
}
