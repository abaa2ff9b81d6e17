// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

import {ScenarioToken} from "../lib/ScenarioToken.sol";

interface ISwapBackRouter {
    function WETH() external pure returns (address);

    function swapExactTokensForETHSupportingFeeOnTransferTokens(
        uint256 amountIn,
        uint256 amountOutMin,
        address[] calldata path,
        address to,
        uint256 deadline
    ) external;
}

/// @title SwapBackToken
/// @notice The common "marketing tax" token: buys and sells pay a fee in tokens to the
/// contract; once the contract holds `swapTokensAtAmount`, the next transfer that does not
/// come from a pair (a sell or a wallet transfer) first sells up to 20x that amount into the
/// pair through the mainnet Router02 and pays the ETH to two wallets (2/3 marketing, 1/3
/// dev). The seller who triggers it sells right after the contract's own dump.
/// @dev With `sellFeeBps` >= 9000 it is a honeypot that still "sells".
contract SwapBackToken is ScenarioToken {
    ISwapBackRouter public constant ROUTER = ISwapBackRouter(0x7a250d5630B4cF539739dF2C5dAcb4c659F2488D);

    uint256 public buyFeeBps;
    uint256 public sellFeeBps;
    uint256 public immutable swapTokensAtAmount;
    address public marketingWallet;
    address public devWallet;
    bool private _swapping;

    constructor(
        string memory name_,
        string memory symbol_,
        uint8 decimals_,
        uint256 supply_,
        uint256 buyFeeBps_,
        uint256 sellFeeBps_,
        address marketingWallet_,
        address devWallet_
    ) ScenarioToken(name_, symbol_, decimals_, supply_) {
        buyFeeBps = buyFeeBps_;
        sellFeeBps = sellFeeBps_;
        marketingWallet = marketingWallet_;
        devWallet = devWallet_;
        swapTokensAtAmount = supply_ / 5000; // 0.02% of the supply
    }

    receive() external payable {}

    function _update(address from, address to, uint256 amount) internal override {
        if (_swapping || !_ruled(from, to)) {
            _move(from, to, amount);
            return;
        }
        if (!isAmm[from] && _balances[address(this)] >= swapTokensAtAmount) {
            _swapBack();
        }
        uint256 feeBps = _isBuy(from) ? buyFeeBps : (_isSell(from, to) ? sellFeeBps : 0);
        uint256 fee = (amount * feeBps) / 10_000;
        if (fee > 0) {
            _move(from, address(this), fee);
        }
        _move(from, to, amount - fee);
    }

    function _swapBack() private {
        _swapping = true;
        uint256 amount = _balances[address(this)];
        if (amount > swapTokensAtAmount * 20) {
            amount = swapTokensAtAmount * 20;
        }
        address[] memory path = new address[](2);
        path[0] = address(this);
        path[1] = ROUTER.WETH();
        _approve(address(this), address(ROUTER), amount);
        ROUTER.swapExactTokensForETHSupportingFeeOnTransferTokens(amount, 0, path, address(this), block.timestamp);
        uint256 eth = address(this).balance;
        (bool paidMarketing,) = marketingWallet.call{value: (eth * 2) / 3}("");
        (bool paidDev,) = devWallet.call{value: address(this).balance}("");
        require(paidMarketing && paidDev, "Wallet payment failed");
        _swapping = false;
    }
}
