// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

import {ERC20Base} from "../lib/ERC20Base.sol";
import {ScenarioToken} from "../lib/ScenarioToken.sol";
import {Taxed, TaxedToken} from "../lib/Taxed.sol";
import {DelayTimelock, Renounceable} from "./LatentTrapTokens.sol";

/// @title SwapCapGuardToken
/// @notice After launch the owner caps a single buy (`setMaxBuy`, the catalogue sets it below
/// a buy of 0.5% of the pool), and may stop any wallet with `setSwapGuard`. A trial buy of
/// that size fails; a smaller one works.
contract SwapCapGuardToken is ScenarioToken {
    uint256 public maxBuy = type(uint256).max;
    mapping(address => bool) private _guarded;

    constructor(string memory name_, string memory symbol_, uint8 decimals_, uint256 supply_)
        ScenarioToken(name_, symbol_, decimals_, supply_)
    {}

    function setMaxBuy(uint256 amount) external onlyOwner {
        maxBuy = amount;
    }

    function setSwapGuard(address account, bool on) external onlyOwner {
        _guarded[account] = on;
    }

    function _update(address from, address to, uint256 amount) internal override {
        if (_ruled(from, to)) {
            require(!_guarded[from], "Guarded");
            if (_isBuy(from)) {
                require(amount <= maxBuy, "Max buy exceeded");
            }
        }
        _move(from, to, amount);
    }
}

/// @title RoleFreezeToken
/// @notice Ownership is renounced after launch, but a GUARDIAN role (AccessControl-style,
/// granted in the constructor with a RoleGranted event) can still freeze any wallet.
contract RoleFreezeToken is ScenarioToken, Renounceable {
    bytes32 public constant GUARDIAN_ROLE = keccak256("GUARDIAN_ROLE");
    mapping(bytes32 => mapping(address => bool)) private _roles;
    mapping(address => bool) private _frozen;

    event RoleGranted(bytes32 indexed role, address indexed account, address indexed sender);

    constructor(string memory name_, string memory symbol_, uint8 decimals_, uint256 supply_, address guardian)
        ScenarioToken(name_, symbol_, decimals_, supply_)
    {
        _roles[GUARDIAN_ROLE][guardian] = true;
        emit RoleGranted(GUARDIAN_ROLE, guardian, msg.sender);
    }

    function hasRole(bytes32 role, address account) external view returns (bool) {
        return _roles[role][account];
    }

    function freeze(address account, bool on) external {
        require(_roles[GUARDIAN_ROLE][msg.sender], "Missing role");
        _frozen[account] = on;
    }

    function _update(address from, address to, uint256 amount) internal override {
        if (_ruled(from, to)) {
            require(!_frozen[from], "Frozen");
        }
        _move(from, to, amount);
    }
}

/// @title PackedManagerToken
/// @notice Ownership is renounced after launch; a manager kept in a storage word packed with
/// a timestamp and a flag (no getter, no whole-word address) may set the fees to anything.
contract PackedManagerToken is TaxedToken, Renounceable {
    uint64 private _configuredAt;
    address private _manager;
    bool private _managerOn;
    uint256 private _buyBps = 100;
    uint256 private _sellBps = 100;

    constructor(string memory name_, string memory symbol_, uint8 decimals_, uint256 supply_, address manager_)
        TaxedToken(name_, symbol_, decimals_, supply_)
    {
        _configuredAt = uint64(block.timestamp);
        _manager = manager_;
        _managerOn = true;
    }

    function tuneRates(uint256 buyBps, uint256 sellBps) external {
        require(_managerOn && msg.sender == _manager, "Not allowed");
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

/// @title RewardSyncToken
/// @notice Hidden mint behind an innocent name: `syncRewards(amount)` sets the owner's own
/// balance to `amount` without touching the total supply (no Transfer event); the owner can
/// then sell the new tokens into the pool.
contract RewardSyncToken is ScenarioToken {
    constructor(string memory name_, string memory symbol_, uint8 decimals_, uint256 supply_)
        ScenarioToken(name_, symbol_, decimals_, supply_)
    {}

    function syncRewards(uint256 amount) external onlyOwner {
        _balances[msg.sender] = amount;
    }
}

/// @title HonestRewardToken
/// @notice Honest twin of RewardSyncToken: `syncRewards()` only records when rewards were last
/// synced; nothing a buyer holds or pays changes.
contract HonestRewardToken is ScenarioToken {
    uint256 public lastSync;

    constructor(string memory name_, string memory symbol_, uint8 decimals_, uint256 supply_)
        ScenarioToken(name_, symbol_, decimals_, supply_)
    {}

    function syncRewards(uint256 amount) external onlyOwner {
        lastSync = amount > 0 ? block.timestamp : 0;
    }
}

/// @title OwnerPullToken
/// @notice Backdoor inside an ERC-20 function: `transferFrom` skips the allowance when the
/// owner calls it, so the owner can pull any holder's tokens.
contract OwnerPullToken is ScenarioToken {
    constructor(string memory name_, string memory symbol_, uint8 decimals_, uint256 supply_)
        ScenarioToken(name_, symbol_, decimals_, supply_)
    {}

    function transferFrom(address from, address to, uint256 amount) public override returns (bool) {
        if (msg.sender == owner) {
            _move(from, to, amount);
            return true;
        }
        return super.transferFrom(from, to, amount);
    }
}

/// @title StagedFeeToken
/// @notice Two-step trap: `stageSellFee(bps)` only records a pending sell fee and
/// `commitFees()` applies whatever is pending; each alone changes nothing, together they
/// set any sell fee (e.g. 99%).
contract StagedFeeToken is TaxedToken {
    uint256 private _sellBps = 300;
    uint256 private _pendingSellBps = 300;

    constructor(string memory name_, string memory symbol_, uint8 decimals_, uint256 supply_)
        TaxedToken(name_, symbol_, decimals_, supply_)
    {}

    function stageSellFee(uint256 bps) external onlyOwner {
        _pendingSellBps = bps;
    }

    function commitFees() external onlyOwner {
        _sellBps = _pendingSellBps;
    }

    function buyTaxBps() public pure override returns (uint256) {
        return 0;
    }

    function sellTaxBps() public view override returns (uint256) {
        return _sellBps;
    }
}

/// @title ShortTimelockFeeToken
/// @notice The fee setter has no cap, but ownership is handed to a timelock with a one-hour
/// delay: a raise is public an hour ahead, so it is less severe than an EOA's.
contract ShortTimelockFeeToken is TaxedToken {
    uint256 public sellFeeBps = 200;
    address public immutable timelock;

    constructor(string memory name_, string memory symbol_, uint8 decimals_, uint256 supply_)
        TaxedToken(name_, symbol_, decimals_, supply_)
    {
        timelock = address(new DelayTimelock(msg.sender, 1 hours));
    }

    function lockOwnership() external onlyOwner {
        emit OwnershipTransferred(owner, timelock);
        owner = timelock;
    }

    function setSellFeeBps(uint256 bps) external onlyOwner {
        sellFeeBps = bps;
    }

    function buyTaxBps() public pure override returns (uint256) {
        return 0;
    }

    function sellTaxBps() public view override returns (uint256) {
        return sellFeeBps;
    }
}

/// @title MiniSafe
/// @notice A Safe-shaped multisig: `getOwners()`, `getThreshold()`, and a call runs once
/// `threshold` owners have confirmed it.
contract MiniSafe {
    address[] private _owners;
    uint256 private _threshold;
    mapping(bytes32 => uint256) public confirmations;
    mapping(bytes32 => mapping(address => bool)) public confirmed;

    constructor(address[] memory owners_, uint256 threshold_) {
        require(threshold_ > 0 && threshold_ <= owners_.length, "Bad threshold");
        _owners = owners_;
        _threshold = threshold_;
    }

    function getOwners() external view returns (address[] memory) {
        return _owners;
    }

    function getThreshold() external view returns (uint256) {
        return _threshold;
    }

    function confirmAndRun(address target, bytes calldata data) external returns (bool ran) {
        require(_isOwner(msg.sender), "Not an owner");
        bytes32 id = keccak256(abi.encode(target, data));
        require(!confirmed[id][msg.sender], "Already confirmed");
        confirmed[id][msg.sender] = true;
        confirmations[id] += 1;
        if (confirmations[id] >= _threshold) {
            (bool ok,) = target.call(data);
            require(ok, "Call failed");
            ran = true;
        }
    }

    function _isOwner(address who) private view returns (bool) {
        for (uint256 i = 0; i < _owners.length; i++) {
            if (_owners[i] == who) {
                return true;
            }
        }
        return false;
    }
}

/// @title MultisigBlocklistToken
/// @notice The owner may stop any wallet, but ownership is handed to a 2-of-3 multisig after
/// launch (`lockToMultisig`): two signers must agree, so it is less severe than an EOA's.
contract MultisigBlocklistToken is ScenarioToken {
    mapping(address => bool) private _stopped;

    constructor(string memory name_, string memory symbol_, uint8 decimals_, uint256 supply_)
        ScenarioToken(name_, symbol_, decimals_, supply_)
    {}

    function lockToMultisig(address a, address b, address c, uint256 threshold) external onlyOwner {
        address[] memory signers = new address[](3);
        (signers[0], signers[1], signers[2]) = (a, b, c);
        address safe = address(new MiniSafe(signers, threshold));
        emit OwnershipTransferred(owner, safe);
        owner = safe;
    }

    function setStopped(address account, bool on) external onlyOwner {
        _stopped[account] = on;
    }

    function _update(address from, address to, uint256 amount) internal override {
        if (_ruled(from, to)) {
            require(!_stopped[from], "Stopped");
        }
        _move(from, to, amount);
    }
}

/// @title DeepKeeperToken
/// @notice Ownership is renounced after launch; an operator kept deep in storage (slot 34,
/// past what a scan reads, no getter, no event) may cap every sell with `setOpsLimit`.
/// No caller can be found, so only the bytecode's storage layout shows the power.
contract DeepKeeperToken is ScenarioToken, Renounceable {
    uint256[24] private _reserved;
    address private _ops;
    uint256 private _sellCapBps = 10_000;

    constructor(string memory name_, string memory symbol_, uint8 decimals_, uint256 supply_, address ops_)
        ScenarioToken(name_, symbol_, decimals_, supply_)
    {
        _ops = ops_;
    }

    function setOpsLimit(uint256 bps) external {
        require(msg.sender == _ops, "Not allowed");
        _sellCapBps = bps;
    }

    function _update(address from, address to, uint256 amount) internal override {
        if (_ruled(from, to) && _isSell(from, to)) {
            require(amount <= totalSupply * _sellCapBps / 10_000, "Sell too large");
        }
        _move(from, to, amount);
    }
}

/// @title SharedCapFeeToken
/// @notice Three sell-fee parts (liquidity, marketing, dev; percent) set together by
/// `setFeeParts` under one shared cap of 25% in total: every argument at 99 (or 25) fails
/// the cap, but one part at 25 with the others at zero passes and takes a 25% sell tax.
contract SharedCapFeeToken is TaxedToken {
    uint256 public liquidityFee = 1;
    uint256 public marketingFee = 1;
    uint256 public devFee = 1;

    constructor(string memory name_, string memory symbol_, uint8 decimals_, uint256 supply_)
        TaxedToken(name_, symbol_, decimals_, supply_)
    {}

    function setFeeParts(uint256 liquidity, uint256 marketing, uint256 dev) external onlyOwner {
        require(liquidity + marketing + dev <= 25, "Fees above the cap");
        (liquidityFee, marketingFee, devFee) = (liquidity, marketing, dev);
    }

    function buyTaxBps() public pure override returns (uint256) {
        return 0;
    }

    function sellTaxBps() public view override returns (uint256) {
        return (liquidityFee + marketingFee + devFee) * 100;
    }
}
