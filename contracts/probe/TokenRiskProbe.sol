// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

// tokenrisk's probe: buy, wallet transfer and sell inside ONE call.
// It is never deployed: the service places its runtime code at a fresh address with a
// state override and calls it with eth_call (fallback for nodes without eth_simulateV1)
// or debug_traceCall (the whole call tree of a buy and a sell in one trace).
// Being a contract, it sees the world as a contract caller, in a single block; the
// report says so when its numbers are used.

interface IERC20Like {
    function balanceOf(address) external view returns (uint256);
    function approve(address, uint256) external returns (bool);
    function transfer(address, uint256) external returns (bool);
}

interface IV2Router {
    function getAmountsOut(uint256, address[] calldata) external view returns (uint256[] memory);
    function swapExactTokensForTokensSupportingFeeOnTransferTokens(
        uint256, uint256, address[] calldata, address, uint256
    ) external;
}

interface IV3Router {
    struct ExactInputSingleParams {
        address tokenIn;
        address tokenOut;
        uint24 fee;
        address recipient;
        uint256 deadline;
        uint256 amountIn;
        uint256 amountOutMinimum;
        uint160 sqrtPriceLimitX96;
    }
    function exactInputSingle(ExactInputSingleParams calldata) external payable returns (uint256);
}

interface IV3Quoter {
    struct QuoteExactInputSingleParams {
        address tokenIn;
        address tokenOut;
        uint256 amountIn;
        uint24 fee;
        uint160 sqrtPriceLimitX96;
    }
    function quoteExactInputSingle(QuoteExactInputSingleParams memory)
        external returns (uint256, uint160, uint32, uint256);
}

interface IWrappedNative {
    function deposit() external payable;
}

interface IPermit2Like {
    function approve(address token, address spender, uint160 amount, uint48 expiration) external;
}

interface IUniversalRouterLike {
    function execute(bytes calldata commands, bytes[] calldata inputs, uint256 deadline) external payable;
}

contract TokenRiskProbe {
    // Uniswap V4 through the Universal Router: the V4_SWAP command and its actions.
    bytes1 private constant V4_SWAP = 0x10;
    uint8 private constant SWAP_EXACT_IN_SINGLE = 0x06;
    uint8 private constant SETTLE_ALL = 0x0c;
    uint8 private constant TAKE_ALL = 0x0f;

    struct PoolKey {
        address currency0;
        address currency1;
        uint24 fee;
        int24 tickSpacing;
        address hooks;
    }

    struct ExactInputSingle {
        PoolKey key;
        bool zeroForOne;
        uint128 amountIn;
        uint128 amountOutMinimum;
        bytes hookData;
    }

    // A V4 pool's trade: the base is native ETH (currency 0, paid as value) or an ERC-20
    // the probe holds (wrapped from the value when wrapNative); quoted: the buy's expected
    // output on the pool's own curve, computed by the caller.  manager: the PoolManager,
    // which holds the pool's tokens (read as the pool).
    struct V4Trade {
        address router;
        address permit2;
        address base;
        address token;
        address manager;
        address receiver;
        PoolKey key;
        bool wrapNative;
        uint256 quoted;
        uint256 amountIn;
    }

    receive() external payable {}

    struct Trade {
        address router;
        address quoter;
        address base;
        address token;
        address pool;
        address receiver;
        uint24 fee;
        bool v3;
        bool wrapNative;
        uint256 amountIn;
    }

    // r: [0] bit flags (1 bought, 2 transferred, 4 sold), [1] quoted, [2] bought,
    // [3] buyGas, [4] sent, [5] received, [6] sold, [7] poolReceived, [8] sellGas.
    // err: the buy's or the sell's revert data; transferErr: the transfer's.
    function run(Trade calldata t)
        external
        payable
        returns (uint256[9] memory r, bytes memory err, bytes memory transferErr)
    {
        if (t.wrapNative) IWrappedNative(t.base).deposit{value: t.amountIn}();
        r[1] = _quote(t);
        uint256 gasBefore = gasleft();
        (bool ok, bytes memory reason) = _swap(t, t.base, t.token, t.amountIn);
        r[3] = gasBefore - gasleft();
        if (!ok) return (r, reason, transferErr);
        transferErr = _transferTenth(IERC20Like(t.token), t.receiver, r);
        uint256 poolBefore = IERC20Like(t.token).balanceOf(t.pool);
        try IERC20Like(t.token).approve(t.router, type(uint256).max) {} catch {}
        gasBefore = gasleft();
        (ok, reason) = _swap(t, t.token, t.base, r[6]);
        r[8] = gasBefore - gasleft();
        if (!ok) return (r, reason, transferErr);
        r[7] = IERC20Like(t.token).balanceOf(t.pool) - poolBefore;
        r[6] = r[6] - IERC20Like(t.token).balanceOf(address(this));
        r[0] |= 4;
        return (r, err, transferErr);
    }

    // The same report as run() for a Uniswap V4 pool, traded as a wallet does: Permit2
    // approvals, then the Universal Router's V4 swap (SETTLE_ALL pays, TAKE_ALL collects).
    function runV4(V4Trade calldata t)
        external
        payable
        returns (uint256[9] memory r, bytes memory err, bytes memory transferErr)
    {
        if (t.wrapNative) IWrappedNative(t.base).deposit{value: t.amountIn}();
        r[1] = t.quoted;
        uint256 gasBefore = gasleft();
        (bool ok, bytes memory reason) = _swapV4(t, false, t.amountIn);
        r[3] = gasBefore - gasleft();
        if (!ok) return (r, reason, transferErr);
        transferErr = _transferTenth(IERC20Like(t.token), t.receiver, r);
        uint256 poolBefore = IERC20Like(t.token).balanceOf(t.manager);
        gasBefore = gasleft();
        (ok, reason) = _swapV4(t, true, r[6]);
        r[8] = gasBefore - gasleft();
        if (!ok) return (r, reason, transferErr);
        r[7] = IERC20Like(t.token).balanceOf(t.manager) - poolBefore;
        r[6] = r[6] - IERC20Like(t.token).balanceOf(address(this));
        r[0] |= 4;
        return (r, err, transferErr);
    }

    // The wallet-transfer step shared by run() and runV4(), once the buy succeeded: a
    // tenth of what was bought goes to a fresh receiver, as a wallet would send it.
    // Fills r[0] (1 bought, |2 transferred), r[2] bought, r[4] sent, r[5] received and
    // r[6] what the probe holds for the sell; the transfer's revert data is returned.
    function _transferTenth(IERC20Like token, address receiver, uint256[9] memory r)
        private
        returns (bytes memory transferErr)
    {
        r[2] = token.balanceOf(address(this));
        r[0] = 1;
        r[4] = r[2] / 10;
        try token.transfer(receiver, r[4]) {
            r[5] = token.balanceOf(receiver);
            r[0] |= 2;
        } catch (bytes memory e) {
            transferErr = e;
        }
        r[6] = token.balanceOf(address(this));
    }

    function _swapV4(V4Trade calldata t, bool selling, uint256 amount)
        private
        returns (bool ok, bytes memory reason)
    {
        address payIn = selling ? t.token : (t.key.currency0 == t.token ? t.key.currency1 : t.key.currency0);
        address payOut = selling ? (t.key.currency0 == t.token ? t.key.currency1 : t.key.currency0) : t.token;
        if (payIn != address(0)) {
            try IERC20Like(payIn).approve(t.permit2, type(uint256).max) {} catch {}
            try IPermit2Like(t.permit2).approve(payIn, t.router, type(uint160).max, type(uint48).max) {} catch {}
        }
        bytes[] memory params = new bytes[](3);
        params[0] = abi.encode(ExactInputSingle(t.key, payIn == t.key.currency0, uint128(amount), 0, ""));
        params[1] = abi.encode(payIn, amount);
        params[2] = abi.encode(payOut, uint256(0));
        bytes memory actions = abi.encodePacked(SWAP_EXACT_IN_SINGLE, SETTLE_ALL, TAKE_ALL);
        bytes[] memory inputs = new bytes[](1);
        inputs[0] = abi.encode(actions, params);
        bytes memory data = abi.encodeCall(
            IUniversalRouterLike.execute, (abi.encodePacked(V4_SWAP), inputs, type(uint40).max)
        );
        (ok, reason) = t.router.call{value: payIn == address(0) ? amount : 0}(data);
    }

    function _quote(Trade calldata t) private returns (uint256) {
        if (!t.v3) {
            address[] memory path = new address[](2);
            (path[0], path[1]) = (t.base, t.token);
            try IV2Router(t.router).getAmountsOut(t.amountIn, path) returns (uint256[] memory out) {
                return out[1];
            } catch {
                return 0;
            }
        }
        if (t.quoter == address(0)) return 0;
        IV3Quoter.QuoteExactInputSingleParams memory q =
            IV3Quoter.QuoteExactInputSingleParams(t.base, t.token, t.amountIn, t.fee, 0);
        try IV3Quoter(t.quoter).quoteExactInputSingle(q) returns (uint256 out, uint160, uint32, uint256) {
            return out;
        } catch {
            return 0;
        }
    }

    function _swap(Trade calldata t, address tokenIn, address tokenOut, uint256 amount)
        private
        returns (bool ok, bytes memory reason)
    {
        if (tokenIn == t.base) {
            try IERC20Like(tokenIn).approve(t.router, type(uint256).max) {} catch {}
        }
        bytes memory data;
        if (t.v3) {
            IV3Router.ExactInputSingleParams memory p = IV3Router.ExactInputSingleParams(
                tokenIn, tokenOut, t.fee, address(this), type(uint40).max, amount, 0, 0
            );
            data = abi.encodeCall(IV3Router.exactInputSingle, (p));
        } else {
            address[] memory path = new address[](2);
            (path[0], path[1]) = (tokenIn, tokenOut);
            data = abi.encodeCall(
                IV2Router.swapExactTokensForTokensSupportingFeeOnTransferTokens,
                (amount, 0, path, address(this), type(uint40).max)
            );
        }
        (ok, reason) = t.router.call(data);
    }
}
