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
/// @notice The common "marketing tax" template: buys and sells pay a fee in tokens to the
/// contract (a higher launch fee for the first `LAUNCH_BUYS` buys, then the final fees).
/// When a sell comes in and the contract holds more than `swapThreshold`, the contract
/// first sells up to the seller's own amount of its fee tokens into the same pair through
/// the mainnet Router02 and pays the ETH to two wallets (2/3 marketing, 1/3 dev). The seller
/// then sells right after the contract's dump.
/// @dev With `sellFeeBps` >= 9000 it is a honeypot whose sells still "succeed".
contract SwapBackToken is ScenarioToken {
    ISwapBackRouter public constant ROUTER = ISwapBackRouter(0x7a250d5630B4cF539739dF2C5dAcb4c659F2488D);
    uint256 public constant LAUNCH_BUYS = 15;

    uint256 public immutable buyFeeBps;
    uint256 public immutable sellFeeBps;
    uint256 public immutable launchFeeBps;
    uint256 public immutable swapThreshold;
    uint256 public immutable maxTaxSwap;
    address public immutable marketingWallet;
    address public immutable devWallet;
    uint256 public buyCount;
    bool private _swapping;

    constructor(
        string memory name_,
        string memory symbol_,
        uint8 decimals_,
        uint256 supply_,
        uint256 buyFeeBps_,
        uint256 sellFeeBps_,
        uint256 launchFeeBps_,
        address marketingWallet_,
        address devWallet_
    ) ScenarioToken(name_, symbol_, decimals_, supply_) {
        buyFeeBps = buyFeeBps_;
        sellFeeBps = sellFeeBps_;
        launchFeeBps = launchFeeBps_;
        marketingWallet = marketingWallet_;
        devWallet = devWallet_;
        swapThreshold = supply_ / 10_000; // 0.01% of the supply
        maxTaxSwap = supply_ / 100; // 1% of the supply
    }

    receive() external payable {}

    function _update(address from, address to, uint256 amount) internal override {
        if (_swapping || !_ruled(from, to)) {
            _move(from, to, amount);
            return;
        }
        uint256 feeBps = 0;
        if (_isBuy(from)) {
            feeBps = buyCount < LAUNCH_BUYS ? launchFeeBps : buyFeeBps;
            buyCount += 1;
        } else if (_isSell(from, to)) {
            feeBps = buyCount < LAUNCH_BUYS ? launchFeeBps : sellFeeBps;
            uint256 held = _balances[address(this)];
            if (held > swapThreshold) {
                _swapBack(_min(amount, _min(held, maxTaxSwap)));
            }
        }
        uint256 fee = (amount * feeBps) / 10_000;
        if (fee > 0) {
            _move(from, address(this), fee);
        }
        _move(from, to, amount - fee);
    }

    function _swapBack(uint256 amount) private {
        _swapping = true;
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

    function _min(uint256 a, uint256 b) private pure returns (uint256) {
        return a < b ? a : b;
    }
}
