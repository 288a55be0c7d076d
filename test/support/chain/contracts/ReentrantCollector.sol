// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// @notice A hostile deposit collector for tests: when x402BatchSettlement asks it to collect, it
/// calls back into the settlement contract with the calldata it was given (e.g. a second deposit,
/// a claim or a settle) and passes any revert through, so a test sees what the reentrancy guard says.
contract ReentrantCollector {
    bytes private reentry;

    function setReentry(bytes calldata data) external {
        reentry = data;
    }

    function collect(address, address, uint256, bytes32, bytes calldata) external {
        (bool ok, bytes memory result) = msg.sender.call(reentry);
        if (!ok) {
            assembly {
                revert(add(result, 32), mload(result))
            }
        }
    }
}
