// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

/// @notice The Uniswap V4 types the devnet's own V4 contracts need, written from the ABI
/// of @uniswap/v4-core 1.0.2 (PoolManager): currencies are plain addresses (address(0)
/// is native ETH), a BalanceDelta is int256 (amount0 in the upper 128 bits), a
/// BeforeSwapDelta is int256 (specified currency in the upper 128 bits).
struct PoolKey {
    address currency0;
    address currency1;
    uint24 fee;
    int24 tickSpacing;
    address hooks;
}

struct SwapParams {
    bool zeroForOne;
    int256 amountSpecified;
    uint160 sqrtPriceLimitX96;
}

struct ModifyLiquidityParams {
    int24 tickLower;
    int24 tickUpper;
    int256 liquidityDelta;
    bytes32 salt;
}

interface IPoolManagerV4 {
    function initialize(PoolKey memory key, uint160 sqrtPriceX96) external returns (int24 tick);
    function unlock(bytes calldata data) external returns (bytes memory);
    function modifyLiquidity(PoolKey memory key, ModifyLiquidityParams memory params, bytes calldata hookData)
        external
        returns (int256 callerDelta, int256 feesAccrued);
    function sync(address currency) external;
    function settle() external payable returns (uint256 paid);
    function take(address currency, address to, uint256 amount) external;
}

interface IV4SeedToken {
    function transferFrom(address from, address to, uint256 amount) external returns (bool);
}
