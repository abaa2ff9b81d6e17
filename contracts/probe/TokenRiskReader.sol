// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

// tokenrisk's reader: many read-only calls answered by ONE eth_call.
// Never deployed: the service places its runtime code at a fresh address with a state
// override and calls `read` with eth_call.  The service's node client folds the plain
// eth_calls and eth_getCodes that a check makes at the same moment into one `read`, and
// the pool discovery asks every factory and every pool's balances in one `read` (a
// balance read is linked to the lookup that found the pool).
//
// Call i goes to targets[i] with datas[i] and exactly gases[i] gas.  links[i] = k + 1
// links it to call k: the 32 bytes of datas[i] after the selector are replaced by the
// address in the first return word of call k (its low 20 bytes), and call i is skipped
// when call k returned no such word or the zero address (a lookup that found no pool).
//
// Output: one packed byte string, per call in order:
//   status (1 byte) | length (3 bytes, big endian) | return data (length bytes)
// status 0: the call reverted (no data kept), 1: it returned, 2: its return data was
// longer than `maxReturn` (not kept: the caller reads it directly), 3: not run because
// too little gas was left to give it its full allowance (the caller reads it directly),
// 4: skipped (its link found nothing).
// Then, per account in `accounts`: code size (4 bytes) | the code; then per account in
// `heads`: code size (4 bytes) | the first 3 bytes of its code (zero-padded).
//
// The output is written straight into memory (no copying per call), so its gas cost
// grows linearly with the number of calls.
contract TokenRiskReader {
    uint256 private constant RESERVE_GAS = 60_000;

    struct Batch {
        address[] targets;
        uint256[] gases;
        bytes[] datas;
        uint256[] links;
    }

    function read(
        Batch calldata batch,
        address[] calldata accounts,
        address[] calldata heads,
        uint256 maxReturn
    ) external returns (bytes memory out) {
        uint256 n = batch.targets.length;
        require(
            batch.gases.length == n && batch.datas.length == n && batch.links.length == n,
            "lengths"
        );
        bytes32[] memory firsts = new bytes32[](n);
        uint256 start;
        assembly {
            start := mload(0x40)
        }
        uint256 end = _calls(batch, firsts, start + 32, maxReturn); // first word: the length
        end = _codes(accounts, end, false);
        end = _codes(heads, end, true);
        assembly {
            out := start
            mstore(start, sub(end, add(start, 32)))
            mstore(0x40, and(add(end, 31), not(31)))
        }
    }

    function _calls(Batch calldata batch, bytes32[] memory firsts, uint256 end, uint256 maxReturn)
        private
        returns (uint256)
    {
        for (uint256 i = 0; i < firsts.length; i++) {
            uint256 link = batch.links[i];
            bytes32 arg;
            if (link != 0) {
                require(link <= i, "link");
                arg = bytes32(uint256(uint160(uint256(firsts[link - 1])))); // the address
                if (arg == 0) {
                    assembly {
                        mstore(end, shl(248, 4))
                    }
                    end += 4;
                    continue;
                }
            }
            (end, firsts[i]) =
                _one(end, batch.targets[i], batch.gases[i], batch.datas[i], arg, maxReturn);
        }
        return end;
    }

    function _codes(address[] calldata accounts, uint256 end, bool headOnly)
        private
        view
        returns (uint256)
    {
        for (uint256 i = 0; i < accounts.length; i++) {
            address account = accounts[i];
            uint256 size = account.code.length;
            uint256 copied = headOnly ? 3 : size;
            assembly {
                mstore(end, shl(224, size))
                extcodecopy(account, add(end, 4), 0, copied)
            }
            end += 4 + copied;
        }
        return end;
    }

    function _one(
        uint256 pos,
        address target,
        uint256 allowance,
        bytes calldata data,
        bytes32 arg,
        uint256 maxReturn
    ) private returns (uint256, bytes32 first) {
        // 63/64 of what is left is the most a call can get: give the full allowance or
        // report "not run", never a smaller one (an out-of-gas would read as a revert)
        if (gasleft() < allowance + allowance / 63 + RESERVE_GAS) {
            assembly {
                mstore(pos, shl(248, 3))
            }
            return (pos + 4, 0);
        }
        uint256 input = pos + 4 + maxReturn; // past the longest output this call may write
        bool ok;
        uint256 size;
        assembly {
            calldatacopy(input, data.offset, data.length)
            if arg {
                mstore(add(input, 4), arg)
            }
            ok := call(allowance, target, 0, input, data.length, 0, 0)
            size := returndatasize()
        }
        if (!ok) {
            assembly {
                mstore(pos, 0)
            }
            return (pos + 4, 0);
        }
        if (size > maxReturn) {
            assembly {
                mstore(pos, shl(248, 2))
            }
            return (pos + 4, 0);
        }
        assembly {
            mstore(pos, or(shl(248, 1), shl(224, size)))
            returndatacopy(add(pos, 4), 0, size)
            if gt(size, 31) {
                first := mload(add(pos, 4))
            }
        }
        return (pos + 4 + size, first);
    }
}
