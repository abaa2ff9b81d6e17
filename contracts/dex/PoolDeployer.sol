// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

/// @title PoolDeployer
/// @notice The devnet's PancakeSwap V3 pool deployer. PancakeSwap's npm packages ship the
/// factory and the pool but no artifact of their PancakeV3PoolDeployer, so this contract
/// plays its part (IPancakeV3PoolDeployer): the factory calls `deploy`, which creates the
/// pool by CREATE2 with salt keccak256(abi.encode(token0, token1, fee)) from the published
/// PancakeV3Pool creation code, and the pool's constructor reads `parameters`. Pool
/// addresses and the init code hash are therefore those the PancakeSwap periphery has
/// baked in. The creation code is too large for an argument kept in storage, so it is
/// copied from `poolCode`, a contract whose code is a STOP byte followed by it.
contract PoolDeployer {
    struct Parameters {
        address factory;
        address token0;
        address token1;
        uint24 fee;
        int24 tickSpacing;
    }

    /// @notice Set only while a pool is being created (its constructor reads it).
    Parameters public parameters;
    address public immutable factoryAddress;
    address public immutable poolCode;

    constructor(address factory_, address poolCode_) {
        factoryAddress = factory_;
        poolCode = poolCode_;
    }

    function deploy(address factory, address token0, address token1, uint24 fee, int24 tickSpacing)
        external
        returns (address pool)
    {
        require(msg.sender == factoryAddress, "only factory can call deploy");
        parameters = Parameters(factory, token0, token1, fee, tickSpacing);
        bytes memory code = poolCode.code;
        bytes32 salt = keccak256(abi.encode(token0, token1, fee));
        assembly {
            // skip the length word and the leading STOP byte
            pool := create2(0, add(code, 0x21), sub(mload(code), 1), salt)
        }
        require(pool != address(0), "pool creation failed");
        delete parameters;
    }
}
