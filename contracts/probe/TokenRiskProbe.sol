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

contract TokenRiskProbe {
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
        r[2] = IERC20Like(t.token).balanceOf(address(this));
        r[0] = 1;
        r[4] = r[2] / 10;
        try IERC20Like(t.token).transfer(t.receiver, r[4]) {
            r[5] = IERC20Like(t.token).balanceOf(t.receiver);
            r[0] |= 2;
        } catch (bytes memory e) {
            transferErr = e;
        }
        r[6] = IERC20Like(t.token).balanceOf(address(this));
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
