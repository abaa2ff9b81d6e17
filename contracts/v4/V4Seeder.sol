// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

import {IV4SeedToken, IPoolManagerV4, ModifyLiquidityParams, PoolKey} from "./V4Types.sol";

/// @title V4Seeder
/// @notice Creates a Uniswap V4 pool and puts its first liquidity in, the way a token
/// deployer's script would (PoolManager `initialize`, then `modifyLiquidity` inside
/// `unlock`, paying what the manager asks: ETH as value, ERC-20s by transferFrom the
/// caller, who approved this contract). The position belongs to this contract (as
/// liquidity locked in a contract that cannot remove it); ETH left over is returned.
contract V4Seeder {
    IPoolManagerV4 public immutable manager;

    constructor(address manager_) {
        manager = IPoolManagerV4(manager_);
    }

    function seed(PoolKey calldata key, uint160 sqrtPriceX96, int24 tickLower, int24 tickUpper, int256 liquidity)
        external
        payable
    {
        manager.initialize(key, sqrtPriceX96);
        manager.unlock(abi.encode(msg.sender, key, tickLower, tickUpper, liquidity));
        uint256 left = address(this).balance;
        if (left > 0) {
            (bool ok,) = msg.sender.call{value: left}("");
            require(ok, "refund failed");
        }
    }

    function unlockCallback(bytes calldata data) external returns (bytes memory) {
        require(msg.sender == address(manager), "only the manager");
        (address payer, PoolKey memory key, int24 lower, int24 upper, int256 liquidity) =
            abi.decode(data, (address, PoolKey, int24, int24, int256));
        ModifyLiquidityParams memory params = ModifyLiquidityParams(lower, upper, liquidity, bytes32(0));
        (int256 delta,) = manager.modifyLiquidity(key, params, "");
        _pay(key.currency0, payer, int128(delta >> 128));
        _pay(key.currency1, payer, int128(delta));
        return "";
    }

    function _pay(address currency, address payer, int128 owed) private {
        if (owed >= 0) return;
        uint256 amount = uint256(uint128(-owed));
        if (currency == address(0)) {
            manager.settle{value: amount}();
            return;
        }
        manager.sync(currency);
        require(IV4SeedToken(currency).transferFrom(payer, address(manager), amount), "pay failed");
        manager.settle();
    }

    receive() external payable {}
}
