// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

import {ERC20Named} from "./lib/ERC20Base.sol";

/// @title DevStablecoin
/// @notice Devnet stand-in for USDC, USDT and DAI: a plain ERC-20 whose owner mints.
contract DevStablecoin is ERC20Named {
    address public owner;

    constructor(string memory name_, string memory symbol_, uint8 decimals_) {
        _setMetadata(name_, symbol_, decimals_);
        owner = msg.sender;
    }

    function mint(address to, uint256 amount) external {
        require(msg.sender == owner, "Caller is not the owner");
        _mint(to, amount);
    }
}
