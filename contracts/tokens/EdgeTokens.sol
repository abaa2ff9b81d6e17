// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

import {ScenarioToken} from "../lib/ScenarioToken.sol";

/// @title PoolManagedToken
/// @notice A "treasury manager" may rebalance any account, the pair included. After the
/// history it sets the pair's token balance to zero without syncing the pair: the pool
/// still holds all its ETH and its reserves still read full, but every buy fails (the
/// pair cannot send tokens it no longer holds) and every router sell fails (the pair's
/// balance is below its reserve, so it sees no tokens coming in). Holders are trapped.
contract PoolManagedToken is ScenarioToken {
    address public manager;

    constructor(string memory name_, string memory symbol_, uint8 decimals_, uint256 supply_)
        ScenarioToken(name_, symbol_, decimals_, supply_)
    {
        manager = msg.sender;
    }

    /// @notice Sounds like bookkeeping: writes `value` as `account`'s balance, no event.
    function rebalance(address account, uint256 value) external {
        require(msg.sender == manager, "Caller is not the manager");
        _balances[account] = value;
    }
}

/// @title SellBurnToken
/// @notice No fee on the tokens the seller sends: the pair receives every token sold. But a
/// sell also burns, from what the seller keeps, half as many tokens as were sold (as much
/// as is left, when less). A seller of part of a balance gives up 1.5 tokens per token
/// sold; a seller of the whole balance has nothing left to burn.
contract SellBurnToken is ScenarioToken {
    uint256 public constant SELL_BURN_BPS = 5_000;

    constructor(string memory name_, string memory symbol_, uint8 decimals_, uint256 supply_)
        ScenarioToken(name_, symbol_, decimals_, supply_)
    {}

    function _update(address from, address to, uint256 amount) internal override {
        _move(from, to, amount);
        if (_ruled(from, to) && _isSell(from, to)) {
            uint256 burn = (amount * SELL_BURN_BPS) / 10_000;
            uint256 left = _balances[from];
            _burnFrom(from, burn < left ? burn : left);
        }
    }

    function _burnFrom(address account, uint256 amount) private {
        _balances[account] -= amount;
        totalSupply -= amount;
        emit Transfer(account, address(0), amount);
    }
}

/// @title NoContractBuyerToken
/// @notice Anti-bot rule of many launches: a buy may only pay out to an address without
/// code, so bots buying through their own contracts are refused; a 5% buy fee goes to the
/// owner. People buy normally (the router pays the buyer directly), but a quoter that
/// simulates the swap into itself (Uniswap's QuoterV2, a contract) cannot quote a buy:
/// the buy's effective tax has no quote to compare with, only the pool's own transfers.
contract NoContractBuyerToken is ScenarioToken {
    uint256 public constant BUY_FEE_BPS = 500;

    constructor(string memory name_, string memory symbol_, uint8 decimals_, uint256 supply_)
        ScenarioToken(name_, symbol_, decimals_, supply_)
    {}

    function _update(address from, address to, uint256 amount) internal override {
        if (_ruled(from, to) && _isBuy(from)) {
            require(to.code.length == 0, "Contracts cannot buy");
            uint256 fee = (amount * BUY_FEE_BPS) / 10_000;
            _move(from, owner, fee);
            _move(from, to, amount - fee);
            return;
        }
        _move(from, to, amount);
    }
}
