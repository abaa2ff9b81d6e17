// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

import {IPoolManagerV4, PoolKey, SwapParams} from "./V4Types.sol";

/// @title V4HookBase
/// @notice What the devnet's Uniswap V4 hooks share: the manager that may call them, the
/// token whose sells they single out (a sell pays the token in: `zeroForOne` spends
/// currency0), and the owner who receives what a hook takes. A hook's permissions are the
/// low 14 bits of the address it is placed at (the build places it there).
abstract contract V4HookBase {
    IPoolManagerV4 public immutable manager;
    address public immutable token;
    address public immutable owner;

    constructor(address manager_, address token_, address owner_) {
        manager = IPoolManagerV4(manager_);
        token = token_;
        owner = owner_;
    }

    modifier onlyManager() {
        require(msg.sender == address(manager), "only the manager");
        _;
    }

    function _isSell(PoolKey calldata key, SwapParams calldata params) internal view returns (bool) {
        return (params.zeroForOne ? key.currency0 : key.currency1) == token;
    }
}

/// @title V4SellBlockHook
/// @notice beforeSwap: every sell of the token reverts; buys go through (a honeypot).
contract V4SellBlockHook is V4HookBase {
    constructor(address manager_, address token_, address owner_) V4HookBase(manager_, token_, owner_) {}

    function beforeSwap(address, PoolKey calldata key, SwapParams calldata params, bytes calldata)
        external
        view
        onlyManager
        returns (bytes4, int256, uint24)
    {
        require(!_isSell(key, params), "V4SellBlockHook: sells are closed");
        return (this.beforeSwap.selector, 0, 0);
    }
}

/// @title V4SwapFeeHook
/// @notice afterSwap with a returned delta: takes `buyBps` / `sellBps` of each swap's
/// output (the unspecified currency of an exact-input swap) for the owner. Fixed at
/// deployment: 100/100 is an honest 1% hook fee, 0/9900 takes 99% of every sell.
contract V4SwapFeeHook is V4HookBase {
    uint256 public immutable buyBps;
    uint256 public immutable sellBps;

    constructor(address manager_, address token_, address owner_, uint256 buyBps_, uint256 sellBps_)
        V4HookBase(manager_, token_, owner_)
    {
        buyBps = buyBps_;
        sellBps = sellBps_;
    }

    function afterSwap(address, PoolKey calldata key, SwapParams calldata params, int256 delta, bytes calldata)
        external
        onlyManager
        returns (bytes4, int128)
    {
        bool outIsOne = params.zeroForOne;
        int128 out = outIsOne ? int128(delta) : int128(delta >> 128);
        uint256 bps = _isSell(key, params) ? sellBps : buyBps;
        if (out <= 0 || bps == 0 || params.amountSpecified > 0) return (this.afterSwap.selector, 0);
        uint256 fee = uint256(uint128(out)) * bps / 10_000;
        manager.take(outIsOne ? key.currency1 : key.currency0, owner, fee);
        return (this.afterSwap.selector, int128(int256(fee)));
    }
}

/// @title V4SwallowHook
/// @notice beforeSwap with a returned delta: on a sell the hook claims the whole input,
/// so nothing is swapped and the seller receives nothing (the transaction succeeds).
contract V4SwallowHook is V4HookBase {
    constructor(address manager_, address token_, address owner_) V4HookBase(manager_, token_, owner_) {}

    function beforeSwap(address, PoolKey calldata key, SwapParams calldata params, bytes calldata)
        external
        onlyManager
        returns (bytes4, int256, uint24)
    {
        if (!_isSell(key, params) || params.amountSpecified >= 0) return (this.beforeSwap.selector, 0, 0);
        uint256 input = uint256(-params.amountSpecified);
        manager.take(token, owner, input);
        return (this.beforeSwap.selector, int256(input) << 128, 0);
    }
}

interface IPoolFeeSource {
    function poolFee() external view returns (uint24);
}

/// @title V4DynamicFeeHook
/// @notice For a dynamic-fee pool: beforeSwap overrides the LP fee with the token's
/// `poolFee()`, which the token's owner sets at any time (hundredths of a bip).
contract V4DynamicFeeHook is V4HookBase {
    uint24 private constant OVERRIDE_FEE_FLAG = 0x400000;

    constructor(address manager_, address token_, address owner_) V4HookBase(manager_, token_, owner_) {}

    function beforeSwap(address, PoolKey calldata, SwapParams calldata, bytes calldata)
        external
        view
        onlyManager
        returns (bytes4, int256, uint24)
    {
        return (this.beforeSwap.selector, 0, IPoolFeeSource(token).poolFee() | OVERRIDE_FEE_FLAG);
    }
}

/// @title V4OwnedFeeHook
/// @notice A latent hook trap: afterSwap with a returned delta takes `sellBps` of each
/// sell's output for the owner, but the share starts at 0 (the hook is honest at launch)
/// and the hook's owner may set it to anything up to 100% at any time.
contract V4OwnedFeeHook is V4HookBase {
    uint256 public sellBps;

    constructor(address manager_, address token_, address owner_) V4HookBase(manager_, token_, owner_) {}

    function setSellFeeBps(uint256 bps) external {
        require(msg.sender == owner, "only the owner");
        require(bps <= 10_000, "above 100%");
        sellBps = bps;
    }

    function afterSwap(address, PoolKey calldata key, SwapParams calldata params, int256 delta, bytes calldata)
        external
        onlyManager
        returns (bytes4, int128)
    {
        bool outIsOne = params.zeroForOne;
        int128 out = outIsOne ? int128(delta) : int128(delta >> 128);
        if (out <= 0 || sellBps == 0 || params.amountSpecified > 0 || !_isSell(key, params)) {
            return (this.afterSwap.selector, 0);
        }
        uint256 fee = uint256(uint128(out)) * sellBps / 10_000;
        manager.take(outIsOne ? key.currency1 : key.currency0, owner, fee);
        return (this.afterSwap.selector, int128(int256(fee)));
    }
}
