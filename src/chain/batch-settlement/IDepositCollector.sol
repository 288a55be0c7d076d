// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

/// @notice A deposit collector pulls `amount` of `token` from `payer` with whatever authorization
/// `collectorData` carries and hands it to the calling x402BatchSettlement contract. The settlement
/// contract credits the channel only with what its own token balance actually gained.
interface IDepositCollector {
    function collect(address payer, address token, uint256 amount, bytes32 channelId, bytes calldata collectorData) external;
}
