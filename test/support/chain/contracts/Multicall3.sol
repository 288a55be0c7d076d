// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// @notice The read-only part of Multicall3's interface (`aggregate3`, `tryAggregate`), written for
/// local chains, where it is installed at Multicall3's canonical address with anvil_setCode. Real
/// chains have Multicall3 there; viem's `multicall` and the x402 reference facilitator's failure
/// diagnosis (nonce used, insufficient balance) call it. No constructor: runtime code stands alone.
contract Multicall3 {
    struct Call {
        address target;
        bytes callData;
    }

    struct Call3 {
        address target;
        bool allowFailure;
        bytes callData;
    }

    struct Result {
        bool success;
        bytes returnData;
    }

    function aggregate3(Call3[] calldata calls) external payable returns (Result[] memory returnData) {
        returnData = new Result[](calls.length);
        for (uint256 i = 0; i < calls.length; i++) {
            (bool success, bytes memory data) = calls[i].target.call(calls[i].callData);
            require(success || calls[i].allowFailure, "Multicall3: call failed");
            returnData[i] = Result(success, data);
        }
    }

    function tryAggregate(bool requireSuccess, Call[] calldata calls) external payable returns (Result[] memory returnData) {
        returnData = new Result[](calls.length);
        for (uint256 i = 0; i < calls.length; i++) {
            (bool success, bytes memory data) = calls[i].target.call(calls[i].callData);
            require(success || !requireSuccess, "Multicall3: call failed");
            returnData[i] = Result(success, data);
        }
    }

    function getBlockNumber() external view returns (uint256) {
        return block.number;
    }

    function getCurrentBlockTimestamp() external view returns (uint256) {
        return block.timestamp;
    }
}
