// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

import {ERC20Base} from "./ERC20Base.sol";

/// @title ScenarioCore
/// @notice What every devnet scenario token shares: an owner, the set of AMM addresses
/// (pairs/pools) that defines buys and sells, and the launch moment.
/// @dev "Buy" = transfer FROM an AMM address, "sell" = transfer TO an AMM address (and not
/// from one), anything else is a wallet transfer. The owner and the token itself are exempt
/// from every rule so the devnet build can add liquidity. No constructor: proxies initialise
/// through `_initScenario` too.
abstract contract ScenarioCore is ERC20Base {
    address public owner;
    mapping(address => bool) public isAmm;
    uint256 public launchBlock;
    uint256 public launchTime;

    event OwnershipTransferred(address indexed previousOwner, address indexed newOwner);
    event AmmUpdated(address indexed pool, bool isAmm);
    event Launched(uint256 blockNumber, uint256 timestamp);

    modifier onlyOwner() {
        require(msg.sender == owner, "Caller is not the owner");
        _;
    }

    /// @notice Mark (or unmark) a V2 pair / V3 pool of this token.
    function setAmm(address pool, bool isAmm_) external onlyOwner {
        require(pool != address(0), "Pool is the zero address");
        isAmm[pool] = isAmm_;
        _afterAmmSet(pool, isAmm_);
        emit AmmUpdated(pool, isAmm_);
    }

    /// @notice Open trading; records the launch block and time. Callable once.
    function launch() external onlyOwner {
        require(launchBlock == 0, "Already launched");
        launchBlock = block.number;
        launchTime = block.timestamp;
        emit Launched(block.number, block.timestamp);
    }

    function _initScenario(
        string memory name_,
        string memory symbol_,
        uint8 decimals_,
        uint256 supply_,
        address owner_
    ) internal {
        _setMetadata(name_, symbol_, decimals_);
        owner = owner_;
        emit OwnershipTransferred(address(0), owner_);
        _mint(owner_, supply_);
    }

    /// @dev Hook for tokens that keep AMM balances differently (reflection).
    function _afterAmmSet(address pool, bool isAmm_) internal virtual {}

    function _isExempt(address account) internal view returns (bool) {
        return account == owner || account == address(this);
    }

    /// @dev True when neither side is exempt, i.e. the scenario's rules apply.
    function _ruled(address from, address to) internal view returns (bool) {
        return !_isExempt(from) && !_isExempt(to);
    }

    function _isBuy(address from) internal view returns (bool) {
        return isAmm[from];
    }

    function _isSell(address from, address to) internal view returns (bool) {
        return isAmm[to] && !isAmm[from];
    }

    function _isWalletTransfer(address from, address to) internal view returns (bool) {
        return !isAmm[from] && !isAmm[to];
    }
}
