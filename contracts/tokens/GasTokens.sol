// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

import {ScenarioToken} from "../lib/ScenarioToken.sol";

/// @title GasHeavySellToken
/// @notice Every sell burns about `SELL_GAS_BURN` gas in a hashing loop before it goes
/// through. Succeeds when the transaction has roughly 4.3M gas or more.
contract GasHeavySellToken is ScenarioToken {
    uint256 public constant SELL_GAS_BURN = 4_000_000;

    bytes32 public lastSellDigest;

    constructor(string memory name_, string memory symbol_, uint8 decimals_, uint256 supply_)
        ScenarioToken(name_, symbol_, decimals_, supply_)
    {}

    function _update(address from, address to, uint256 amount) internal override {
        if (_ruled(from, to) && _isSell(from, to)) {
            _burnGas(SELL_GAS_BURN);
        }
        _move(from, to, amount);
    }

    function _burnGas(uint256 budget) private {
        uint256 start = gasleft();
        bytes32 digest = bytes32(start);
        while (start - gasleft() < budget) {
            digest = keccak256(abi.encodePacked(digest));
        }
        lastSellDigest = digest;
    }
}

/// @title GasBlackHoleToken
/// @notice Honeypot: every sell spins until it runs out of gas, whatever the gas limit.
/// Buys and wallet transfers are normal.
contract GasBlackHoleToken is ScenarioToken {
    uint256 public sellSpin;

    constructor(string memory name_, string memory symbol_, uint8 decimals_, uint256 supply_)
        ScenarioToken(name_, symbol_, decimals_, supply_)
    {}

    function _update(address from, address to, uint256 amount) internal override {
        if (_ruled(from, to) && _isSell(from, to)) {
            while (gasleft() > 0) {
                sellSpin += 1;
            }
        }
        _move(from, to, amount);
    }
}
