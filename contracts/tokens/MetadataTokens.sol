// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

import {ScenarioToken} from "../lib/ScenarioToken.sol";
import {ScenarioCore} from "../lib/ScenarioCore.sol";

/// @title RevertingNameToken
/// @notice Honest token whose `name()` and `symbol()` revert. Everything else is standard.
contract RevertingNameToken is ScenarioToken {
    constructor(string memory name_, string memory symbol_, uint8 decimals_, uint256 supply_)
        ScenarioToken(name_, symbol_, decimals_, supply_)
    {}

    function name() public pure override returns (string memory) {
        revert("name() is not available");
    }

    function symbol() public pure override returns (string memory) {
        revert("symbol() is not available");
    }
}

/// @title Bytes32NameToken
/// @notice Honest token with old-MKR-style metadata: `name()` and `symbol()` return bytes32
/// (the text left-aligned, zero padded). Strings longer than 32 bytes are rejected.
contract Bytes32NameToken is ScenarioCore {
    bytes32 private immutable _name32;
    bytes32 private immutable _symbol32;

    constructor(string memory name_, string memory symbol_, uint8 decimals_, uint256 supply_) {
        _name32 = _toBytes32(name_);
        _symbol32 = _toBytes32(symbol_);
        _initScenario(name_, symbol_, decimals_, supply_, msg.sender);
    }

    function name() external view returns (bytes32) {
        return _name32;
    }

    function symbol() external view returns (bytes32) {
        return _symbol32;
    }

    function _toBytes32(string memory text) private pure returns (bytes32 packed) {
        bytes memory raw = bytes(text);
        require(raw.length <= 32, "Metadata longer than 32 bytes");
        for (uint256 i = 0; i < raw.length; i++) {
            packed |= bytes32(raw[i]) >> (i * 8);
        }
    }
}
