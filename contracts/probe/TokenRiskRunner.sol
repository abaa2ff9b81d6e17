// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

// tokenrisk's runner: several calls from several senders inside ONE eth_call.
// The fallback for nodes without eth_simulateV1 (Hardhat's node, many providers). It is
// never deployed: a state override puts this runtime code AT each sender's own (fresh,
// code-less) address, and the eth_call is sent from the first sender to itself. So for
// the token every call comes from the sender's address (msg.sender), and the first
// sender is also tx.origin, as for a person. What differs from a real transaction, and
// is said in the response: the senders have code while the call runs, every step runs
// in one block (the node's latest), gas is measured from inside, and no logs are seen.

contract TokenRiskRunner {
    struct Step {
        address sender;
        address to;
        uint256 value;
        uint256 gas;
        bytes data;
    }

    struct Result {
        bool ok;
        uint256 gasUsed;
        bytes data;
    }

    // Gas kept back so a step that burns all it is given cannot starve the runner.
    uint256 private constant RESERVE = 100_000;

    function run(Step[] calldata steps) external payable returns (Result[] memory out) {
        out = new Result[](steps.length);
        for (uint256 i = 0; i < steps.length; i++) {
            Step calldata s = steps[i];
            if (s.sender == address(this)) {
                out[i] = _exec(s.to, s.value, s.gas, s.data);
                continue;
            }
            try TokenRiskRunner(payable(s.sender)).exec(s.to, s.value, s.gas, s.data) returns (
                Result memory r
            ) {
                out[i] = r;
            } catch (bytes memory reason) {
                out[i] = Result(false, 0, reason);
            }
        }
    }

    // A step of another sender: this code runs at that sender's address.
    function exec(address to, uint256 value, uint256 gas, bytes calldata data)
        external
        returns (Result memory)
    {
        return _exec(to, value, gas, data);
    }

    function _exec(address to, uint256 value, uint256 gas, bytes calldata data)
        private
        returns (Result memory r)
    {
        uint256 left = gasleft();
        uint256 budget = left > RESERVE ? left - RESERVE : 0;
        if (gas < budget) budget = gas;
        uint256 before = gasleft();
        (r.ok, r.data) = to.call{value: value, gas: budget}(data);
        r.gasUsed = before - gasleft();
    }

    receive() external payable {}
}
