// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

/// @notice The signature-transfer interface of the canonical Permit2 contract, as far as the x402
/// `upto` proxy calls it: one-time signed transfers bound to a spender, an unordered nonce and a deadline.
interface ISignatureTransfer {
    struct TokenPermissions {
        address token;
        uint256 amount;
    }

    struct PermitTransferFrom {
        TokenPermissions permitted;
        uint256 nonce;
        uint256 deadline;
    }

    struct SignatureTransferDetails {
        address to;
        uint256 requestedAmount;
    }

    function permitWitnessTransferFrom(
        PermitTransferFrom calldata permit,
        SignatureTransferDetails calldata transferDetails,
        address owner,
        bytes32 witness,
        string calldata witnessTypeString,
        bytes calldata signature
    ) external;
}
