// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

/// @title TokenProxy
/// @notice Minimal EIP-1967 proxy for a token. The implementation address lives in the
/// standard implementation slot and every call is delegated to it. The constructor runs the
/// implementation's `initialize(name, symbol, decimals, supply, owner)` with the deployer as
/// owner, so the deployer gets the supply exactly as with a directly deployed token.
/// @dev The deployer is also the proxy admin (standard admin slot) and may `upgradeTo`.
contract TokenProxy {
    /// @dev bytes32(uint256(keccak256("eip1967.proxy.implementation")) - 1)
    bytes32 private constant IMPLEMENTATION_SLOT =
        0x360894a13ba1a3210667c828492db98dca3e2076cc3735a920a3ca505d382bbc;
    /// @dev bytes32(uint256(keccak256("eip1967.proxy.admin")) - 1)
    bytes32 private constant ADMIN_SLOT = 0xb53127684a568b3173ae13b9f8a6016e243e63b6e8ee1178d6a717850b5d6103;

    event Upgraded(address indexed implementation);
    event AdminChanged(address previousAdmin, address newAdmin);

    constructor(
        address implementation_,
        string memory name_,
        string memory symbol_,
        uint8 decimals_,
        uint256 supply_
    ) {
        _setImplementation(implementation_);
        _setAdmin(msg.sender);
        bytes memory init = abi.encodeWithSignature(
            "initialize(string,string,uint8,uint256,address)", name_, symbol_, decimals_, supply_, msg.sender
        );
        (bool ok, bytes memory reason) = implementation_.delegatecall(init);
        if (!ok) {
            assembly {
                revert(add(reason, 32), mload(reason))
            }
        }
    }

    /// @notice Point the proxy at a new implementation (admin only).
    function upgradeTo(address newImplementation) external {
        require(msg.sender == _admin(), "Caller is not the proxy admin");
        _setImplementation(newImplementation);
    }

    fallback() external payable {
        _delegate(_implementation());
    }

    receive() external payable {
        _delegate(_implementation());
    }

    function _delegate(address implementation) private {
        assembly {
            calldatacopy(0, 0, calldatasize())
            let ok := delegatecall(gas(), implementation, 0, calldatasize(), 0, 0)
            returndatacopy(0, 0, returndatasize())
            switch ok
            case 0 {
                revert(0, returndatasize())
            }
            default {
                return(0, returndatasize())
            }
        }
    }

    function _implementation() private view returns (address implementation) {
        assembly {
            implementation := sload(IMPLEMENTATION_SLOT)
        }
    }

    function _admin() private view returns (address admin) {
        assembly {
            admin := sload(ADMIN_SLOT)
        }
    }

    function _setImplementation(address implementation) private {
        require(implementation.code.length > 0, "Implementation has no code");
        assembly {
            sstore(IMPLEMENTATION_SLOT, implementation)
        }
        emit Upgraded(implementation);
    }

    function _setAdmin(address admin) private {
        assembly {
            sstore(ADMIN_SLOT, admin)
        }
        emit AdminChanged(address(0), admin);
    }
}
