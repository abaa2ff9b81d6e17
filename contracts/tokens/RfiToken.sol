// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

import {ScenarioToken} from "../lib/ScenarioToken.sol";

/// @title RfiToken
/// @notice Classic RFI reflection ("reflect.finance" style): every transfer that is not the
/// owner's pays a 4% fee that is reflected to ALL holders by shrinking the reflected supply,
/// the pair included (it is not excluded from rewards, as in most RFI forks).
/// @dev Balances are `_rOwned / rate`. The only log of a trade is
/// Transfer(from, to, amount - fee); the fee emits nothing and every balance, the pair's
/// too, grows without a Transfer event. A seller therefore loses 4% in token units, but
/// the pair also receives its own share of the fee, which a fee-on-transfer router swap
/// credits to the seller.
contract RfiToken is ScenarioToken {
    uint256 public constant FEE_BPS = 400;

    mapping(address => uint256) private _rOwned;
    uint256 private _rTotal;
    uint256 public totalFees;

    constructor(string memory name_, string memory symbol_, uint8 decimals_, uint256 supply_)
        ScenarioToken(name_, symbol_, decimals_, supply_)
    {}

    function balanceOf(address account) public view override returns (uint256) {
        return _rOwned[account] / _rate();
    }

    function _mint(address to, uint256 amount) internal override {
        require(to != address(0) && totalSupply == 0, "Mint once");
        totalSupply = amount;
        _rTotal = type(uint256).max - (type(uint256).max % amount);
        _rOwned[to] = _rTotal;
        emit Transfer(address(0), to, amount);
    }

    function _update(address from, address to, uint256 amount) internal override {
        uint256 rate = _rate();
        uint256 fee = _ruled(from, to) ? (amount * FEE_BPS) / 10_000 : 0;
        uint256 rAmount = amount * rate;
        uint256 rFee = fee * rate;
        require(_rOwned[from] >= rAmount, "Transfer amount exceeds balance");
        _rOwned[from] -= rAmount;
        _rOwned[to] += rAmount - rFee;
        _rTotal -= rFee;
        totalFees += fee;
        emit Transfer(from, to, amount - fee);
    }

    function _rate() private view returns (uint256) {
        return _rTotal / totalSupply;
    }
}
