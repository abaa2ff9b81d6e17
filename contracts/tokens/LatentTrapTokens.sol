// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

import {ERC20Base} from "../lib/ERC20Base.sol";
import {ScenarioCore} from "../lib/ScenarioCore.sol";
import {ScenarioToken} from "../lib/ScenarioToken.sol";
import {Taxed, TaxedToken} from "../lib/Taxed.sol";

/// @title Renounceable
/// @notice Ownable-style `transferOwnership` / `renounceOwnership` for scenario tokens whose
/// story needs the owner to change after launch (renounced, handed to a timelock).
abstract contract Renounceable is ScenarioCore {
    function transferOwnership(address newOwner) external onlyOwner {
        require(newOwner != address(0), "New owner is the zero address");
        emit OwnershipTransferred(owner, newOwner);
        owner = newOwner;
    }

    function renounceOwnership() external onlyOwner {
        emit OwnershipTransferred(owner, address(0));
        owner = address(0);
    }
}

/// @title AdjustableFeeToken
/// @notice Latent trap: trades honestly at 3% buy / 3% sell, but the owner may set either
/// fee to any percentage with `updateFees` (no cap), e.g. 99% on sells.
contract AdjustableFeeToken is TaxedToken {
    uint256 public buyFeePercent = 3;
    uint256 public sellFeePercent = 3;

    constructor(string memory name_, string memory symbol_, uint8 decimals_, uint256 supply_)
        TaxedToken(name_, symbol_, decimals_, supply_)
    {}

    function updateFees(uint256 buyFee, uint256 sellFee) external onlyOwner {
        buyFeePercent = buyFee;
        sellFeePercent = sellFee;
    }

    function buyTaxBps() public view override returns (uint256) {
        return buyFeePercent * 100;
    }

    function sellTaxBps() public view override returns (uint256) {
        return sellFeePercent * 100;
    }
}

/// @title BotListToken
/// @notice Latent trap: the owner may put any list of wallets on a "bot" list; a listed
/// wallet can neither sell nor transfer. Nobody is listed at launch.
contract BotListToken is ScenarioToken {
    mapping(address => bool) public isBot;

    constructor(string memory name_, string memory symbol_, uint8 decimals_, uint256 supply_)
        ScenarioToken(name_, symbol_, decimals_, supply_)
    {}

    function setBots(address[] calldata accounts, bool flag) external onlyOwner {
        for (uint256 i = 0; i < accounts.length; i++) {
            isBot[accounts[i]] = flag;
        }
    }

    function _update(address from, address to, uint256 amount) internal override {
        if (_ruled(from, to)) {
            require(!isBot[from], "Bot detected");
        }
        _move(from, to, amount);
    }
}

/// @title TradingSwitchToken
/// @notice Latent trap: trading is open at launch, but the owner may close it at any time
/// with `setTradingOpen(false)`; then no buy, sell or transfer by a wallet goes through.
contract TradingSwitchToken is ScenarioToken {
    bool public tradingOpen = true;

    constructor(string memory name_, string memory symbol_, uint8 decimals_, uint256 supply_)
        ScenarioToken(name_, symbol_, decimals_, supply_)
    {}

    function setTradingOpen(bool open) external onlyOwner {
        tradingOpen = open;
    }

    function _update(address from, address to, uint256 amount) internal override {
        if (_ruled(from, to)) {
            require(tradingOpen, "Trading is closed");
        }
        _move(from, to, amount);
    }
}

/// @title CompoundingToken
/// @notice Latent trap: `compound(amount)` sounds like yield bookkeeping but mints `amount`
/// new tokens to the owner, who can then sell them into the pool.
contract CompoundingToken is ScenarioToken {
    constructor(string memory name_, string memory symbol_, uint8 decimals_, uint256 supply_)
        ScenarioToken(name_, symbol_, decimals_, supply_)
    {}

    function compound(uint256 amount) external onlyOwner {
        _mint(owner, amount);
    }
}

/// @title HolderSyncToken
/// @notice Latent trap: `refreshHolder(account, value)` sounds like a cache refresh but
/// overwrites any holder's balance (no Transfer event), e.g. to zero.
contract HolderSyncToken is ScenarioToken {
    constructor(string memory name_, string memory symbol_, uint8 decimals_, uint256 supply_)
        ScenarioToken(name_, symbol_, decimals_, supply_)
    {}

    function refreshHolder(address account, uint256 value) external onlyOwner {
        _balances[account] = value;
    }
}

/// @title HiddenKeeperToken
/// @notice Latent trap behind a renounced owner: `owner()` is renounced after launch, but a
/// "keeper" kept in a private variable (no getter, not named owner) may still set the sell
/// and buy fees to anything with `setTaxRates`.
contract HiddenKeeperToken is TaxedToken, Renounceable {
    address private _keeper;
    uint256 private _buyBps = 100;
    uint256 private _sellBps = 100;

    constructor(string memory name_, string memory symbol_, uint8 decimals_, uint256 supply_, address keeper_)
        TaxedToken(name_, symbol_, decimals_, supply_)
    {
        _keeper = keeper_;
    }

    function setTaxRates(uint256 buyBps, uint256 sellBps) external {
        require(msg.sender == _keeper, "Not allowed");
        _buyBps = buyBps;
        _sellBps = sellBps;
    }

    function buyTaxBps() public view override returns (uint256) {
        return _buyBps;
    }

    function sellTaxBps() public view override returns (uint256) {
        return _sellBps;
    }

    function _update(address from, address to, uint256 amount) internal override(ERC20Base, TaxedToken) {
        Taxed._update(from, to, amount);
    }
}

/// @title SlowFuseToken
/// @notice Time bomb nobody has to arm: sells work for 20 days after launch, then revert
/// forever. A sell simulated 7 days ahead still works; 30 days ahead it fails.
contract SlowFuseToken is ScenarioToken {
    uint256 private constant SELL_WINDOW = 20 days;

    constructor(string memory name_, string memory symbol_, uint8 decimals_, uint256 supply_)
        ScenarioToken(name_, symbol_, decimals_, supply_)
    {}

    function _update(address from, address to, uint256 amount) internal override {
        if (_ruled(from, to) && _isSell(from, to) && launchTime != 0) {
            require(block.timestamp < launchTime + SELL_WINDOW, "Sell window over");
        }
        _move(from, to, amount);
    }
}

/// @title CappedFeeToken
/// @notice Honest owner function: the owner may change the sell fee, but never above 5%.
contract CappedFeeToken is TaxedToken {
    uint256 public constant MAX_SELL_BPS = 500;
    uint256 public sellBps = 200;

    constructor(string memory name_, string memory symbol_, uint8 decimals_, uint256 supply_)
        TaxedToken(name_, symbol_, decimals_, supply_)
    {}

    function setSellFee(uint256 bps) external onlyOwner {
        require(bps <= MAX_SELL_BPS, "Fee above cap");
        sellBps = bps;
    }

    function buyTaxBps() public pure override returns (uint256) {
        return 0;
    }

    function sellTaxBps() public view override returns (uint256) {
        return sellBps;
    }
}

/// @title RenouncedPowersToken
/// @notice Honest in practice: it has a blacklist and an uncapped fee setter, but ownership
/// is renounced after launch, so nobody can call them any more.
contract RenouncedPowersToken is TaxedToken, Renounceable {
    mapping(address => bool) public blocked;
    uint256 public sellBps = 100;

    constructor(string memory name_, string memory symbol_, uint8 decimals_, uint256 supply_)
        TaxedToken(name_, symbol_, decimals_, supply_)
    {}

    function setBlocked(address account, bool value) external onlyOwner {
        blocked[account] = value;
    }

    function setSellBps(uint256 bps) external onlyOwner {
        sellBps = bps;
    }

    function buyTaxBps() public pure override returns (uint256) {
        return 0;
    }

    function sellTaxBps() public view override returns (uint256) {
        return sellBps;
    }

    function _update(address from, address to, uint256 amount) internal override(ERC20Base, TaxedToken) {
        if (_ruled(from, to)) {
            require(!blocked[from], "Blocked");
        }
        Taxed._update(from, to, amount);
    }
}

/// @title TimelockedPausableToken
/// @notice Honest owner function: the token can be paused, but after launch the deployer
/// hands ownership to a two-day timelock (created with the token), so a pause is
/// announced days before it can happen.
contract TimelockedPausableToken is ScenarioToken {
    uint256 public constant TIMELOCK_DELAY = 2 days;
    address public immutable timelock;
    bool public paused;

    constructor(string memory name_, string memory symbol_, uint8 decimals_, uint256 supply_)
        ScenarioToken(name_, symbol_, decimals_, supply_)
    {
        timelock = address(new DelayTimelock(msg.sender, TIMELOCK_DELAY));
    }

    /// @notice Hand ownership to the timelock for good.
    function lockOwnership() external onlyOwner {
        emit OwnershipTransferred(owner, timelock);
        owner = timelock;
    }

    function pause() external onlyOwner {
        paused = true;
    }

    function unpause() external onlyOwner {
        paused = false;
    }

    function _update(address from, address to, uint256 amount) internal override {
        if (_ruled(from, to)) {
            require(!paused, "Token is paused");
        }
        _move(from, to, amount);
    }
}

/// @title DelayTimelock
/// @notice A minimal timelock: its admin queues a call, which may run only `delay` seconds
/// later. Owning a token through it means every owner action is public days in advance.
contract DelayTimelock {
    address public immutable admin;
    uint256 public immutable delay;
    mapping(bytes32 => uint256) public eta;

    constructor(address admin_, uint256 delay_) {
        admin = admin_;
        delay = delay_;
    }

    function queue(address target, bytes calldata data) external returns (bytes32 id) {
        require(msg.sender == admin, "Not admin");
        id = keccak256(abi.encode(target, data));
        eta[id] = block.timestamp + delay;
    }

    function execute(address target, bytes calldata data) external returns (bytes memory) {
        bytes32 id = keccak256(abi.encode(target, data));
        require(eta[id] != 0 && block.timestamp >= eta[id], "Not ready");
        delete eta[id];
        (bool ok, bytes memory result) = target.call(data);
        require(ok, "Call failed");
        return result;
    }
}

/// @title HandoverToken
/// @notice Honest token whose only owner function is handing ownership over
/// (`transferOwnership`): the scan reports that informational power and nothing else.
contract HandoverToken is ScenarioToken, Renounceable {
    constructor(string memory name_, string memory symbol_, uint8 decimals_, uint256 supply_)
        ScenarioToken(name_, symbol_, decimals_, supply_)
    {}
}
