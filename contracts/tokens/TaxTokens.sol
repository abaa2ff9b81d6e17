// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

import {TaxedToken} from "../lib/Taxed.sol";

/// @title FeeOnTransferToken
/// @notice Honest fee-on-transfer token: 3% buy tax, 3% sell tax, no wallet-transfer tax.
contract FeeOnTransferToken is TaxedToken {
    constructor(string memory name_, string memory symbol_, uint8 decimals_, uint256 supply_)
        TaxedToken(name_, symbol_, decimals_, supply_)
    {}

    function buyTaxBps() public pure override returns (uint256) {
        return 300;
    }

    function sellTaxBps() public pure override returns (uint256) {
        return 300;
    }
}

/// @title HighTaxToken
/// @notice Sellable but expensive: 25% buy tax, 35% sell tax.
contract HighTaxToken is TaxedToken {
    constructor(string memory name_, string memory symbol_, uint8 decimals_, uint256 supply_)
        TaxedToken(name_, symbol_, decimals_, supply_)
    {}

    function buyTaxBps() public pure override returns (uint256) {
        return 2500;
    }

    function sellTaxBps() public pure override returns (uint256) {
        return 3500;
    }
}

/// @title SellTax99Token
/// @notice No buy tax, 99% sell tax: the sell succeeds but the seller gets almost nothing.
contract SellTax99Token is TaxedToken {
    constructor(string memory name_, string memory symbol_, uint8 decimals_, uint256 supply_)
        TaxedToken(name_, symbol_, decimals_, supply_)
    {}

    function buyTaxBps() public pure override returns (uint256) {
        return 0;
    }

    function sellTaxBps() public pure override returns (uint256) {
        return 9900;
    }
}

/// @title ClosedSourceToken
/// @notice Mildly taxed (2% buy, 2% sell) and otherwise honest; the devnet does not register
/// its source, so it is "closed source".
contract ClosedSourceToken is TaxedToken {
    constructor(string memory name_, string memory symbol_, uint8 decimals_, uint256 supply_)
        TaxedToken(name_, symbol_, decimals_, supply_)
    {}

    function buyTaxBps() public pure override returns (uint256) {
        return 200;
    }

    function sellTaxBps() public pure override returns (uint256) {
        return 200;
    }
}
