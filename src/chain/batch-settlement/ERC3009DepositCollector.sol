// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import "./IDepositCollector.sol";
import "./SafeTokenTransfer.sol";

interface IERC3009Receive {
    function receiveWithAuthorization(
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        bytes memory signature
    ) external;
}

/// @notice Deposit collector of the `eip3009` transfer method: redeems the payer's EIP-3009
/// `ReceiveWithAuthorization` (to this collector, nonce = keccak256(abi.encode(channelId, salt)),
/// so an authorization funds exactly one channel) and forwards the tokens to x402BatchSettlement.
/// Only the settlement contract at its canonical address may call it: anyone else could otherwise
/// redeem a payer's authorization and take the tokens.
contract ERC3009DepositCollector is IDepositCollector {
    using SafeTokenTransfer for address;

    address public constant BATCH_SETTLEMENT = 0x4020074e9dF2ce1deE5A9C1b5c3f541D02a10003;

    error OnlyBatchSettlement(address caller);

    /// @param collectorData abi.encode(uint256 validAfter, uint256 validBefore, uint256 salt, bytes signature)
    function collect(address payer, address token, uint256 amount, bytes32 channelId, bytes calldata collectorData) external {
        if (msg.sender != BATCH_SETTLEMENT) revert OnlyBatchSettlement(msg.sender);
        (uint256 validAfter, uint256 validBefore, uint256 salt, bytes memory signature) =
            abi.decode(collectorData, (uint256, uint256, uint256, bytes));
        IERC3009Receive(token).receiveWithAuthorization(
            payer, address(this), amount, validAfter, validBefore, keccak256(abi.encode(channelId, salt)), signature
        );
        token.safeTransfer(msg.sender, amount);
    }
}
