// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import "./ISignatureTransfer.sol";
import "./SignatureValidation.sol";

/// @notice The signature-transfer half of Permit2 for local chains, written from its EIP-712 types
/// and interface: an owner approves this contract once on the token, then signs transfers that name
/// the spender allowed to redeem them, a maximum, a deadline and an unordered nonce (a bit in a
/// 256-bit word per owner, spent on first use). A witness lets the spender bind further terms into
/// the signed message. No constructor, no immutables: the code works wherever it is placed
/// (anvil_setCode), and its EIP-712 domain is computed from address(this) and block.chainid.
contract Permit2 is ISignatureTransfer {
    bytes32 private constant DOMAIN_TYPEHASH = keccak256("EIP712Domain(string name,uint256 chainId,address verifyingContract)");
    bytes32 private constant NAME_HASH = keccak256("Permit2");
    bytes32 private constant TOKEN_PERMISSIONS_TYPEHASH = keccak256("TokenPermissions(address token,uint256 amount)");
    bytes32 private constant PERMIT_TRANSFER_FROM_TYPEHASH = keccak256(
        "PermitTransferFrom(TokenPermissions permitted,address spender,uint256 nonce,uint256 deadline)TokenPermissions(address token,uint256 amount)"
    );
    string private constant WITNESS_TYPE_PREFIX =
        "PermitWitnessTransferFrom(TokenPermissions permitted,address spender,uint256 nonce,uint256 deadline,";

    /// @notice Spent nonces: owner => word position => bitmap.
    mapping(address => mapping(uint256 => uint256)) public nonceBitmap;

    event UnorderedNonceInvalidation(address indexed owner, uint256 word, uint256 mask);

    error SignatureExpired(uint256 signatureDeadline);
    error InvalidAmount(uint256 maxAmount);
    error InvalidNonce();
    error InvalidSignature();
    error TokenTransferFailed(address token);

    function DOMAIN_SEPARATOR() public view returns (bytes32) {
        return keccak256(abi.encode(DOMAIN_TYPEHASH, NAME_HASH, block.chainid, address(this)));
    }

    /// @notice Moves `transferDetails.requestedAmount` (at most the signed amount) of the owner's
    /// tokens to `transferDetails.to`, for the spender (msg.sender) the owner signed for.
    function permitTransferFrom(
        PermitTransferFrom calldata permit,
        SignatureTransferDetails calldata transferDetails,
        address owner,
        bytes calldata signature
    ) external {
        bytes32 structHash = keccak256(
            abi.encode(PERMIT_TRANSFER_FROM_TYPEHASH, _permissionsHash(permit.permitted), msg.sender, permit.nonce, permit.deadline)
        );
        _transfer(permit, transferDetails, owner, structHash, signature);
    }

    /// @notice As permitTransferFrom, with `witness` (the hash of the spender's own struct, typed by
    /// `witnessTypeString`) part of what the owner signed.
    function permitWitnessTransferFrom(
        PermitTransferFrom calldata permit,
        SignatureTransferDetails calldata transferDetails,
        address owner,
        bytes32 witness,
        string calldata witnessTypeString,
        bytes calldata signature
    ) external {
        bytes32 typeHash = keccak256(abi.encodePacked(WITNESS_TYPE_PREFIX, witnessTypeString));
        bytes32 structHash = keccak256(
            abi.encode(typeHash, _permissionsHash(permit.permitted), msg.sender, permit.nonce, permit.deadline, witness)
        );
        _transfer(permit, transferDetails, owner, structHash, signature);
    }

    /// @notice Spends the caller's nonces set in `mask` of word `wordPos`, so signatures over them can no longer be used.
    function invalidateUnorderedNonces(uint256 wordPos, uint256 mask) external {
        nonceBitmap[msg.sender][wordPos] |= mask;
        emit UnorderedNonceInvalidation(msg.sender, wordPos, mask);
    }

    function _permissionsHash(TokenPermissions calldata permitted) private pure returns (bytes32) {
        return keccak256(abi.encode(TOKEN_PERMISSIONS_TYPEHASH, permitted.token, permitted.amount));
    }

    function _transfer(
        PermitTransferFrom calldata permit,
        SignatureTransferDetails calldata transferDetails,
        address owner,
        bytes32 structHash,
        bytes calldata signature
    ) private {
        if (block.timestamp > permit.deadline) revert SignatureExpired(permit.deadline);
        if (transferDetails.requestedAmount > permit.permitted.amount) revert InvalidAmount(permit.permitted.amount);
        _spendNonce(owner, permit.nonce);
        bytes32 digest = keccak256(abi.encodePacked("\x19\x01", DOMAIN_SEPARATOR(), structHash));
        if (!SignatureValidation.isValidNow(owner, digest, signature)) revert InvalidSignature();
        _transferFrom(permit.permitted.token, owner, transferDetails.to, transferDetails.requestedAmount);
    }

    function _spendNonce(address owner, uint256 nonce) private {
        uint256 bit = 1 << (nonce & 0xff);
        uint256 before = nonceBitmap[owner][nonce >> 8];
        if (before & bit != 0) revert InvalidNonce();
        nonceBitmap[owner][nonce >> 8] = before | bit;
    }

    /// @dev ERC-20 `transferFrom` that accepts tokens returning nothing, fails on `false`, and
    /// passes the token's own revert reason through.
    function _transferFrom(address token, address from, address to, uint256 amount) private {
        (bool ok, bytes memory result) = token.call(abi.encodeWithSelector(0x23b872dd, from, to, amount));
        if (!ok) {
            if (result.length > 0) {
                assembly {
                    revert(add(result, 32), mload(result))
                }
            }
            revert TokenTransferFailed(token);
        }
        if (result.length == 0 ? token.code.length == 0 : !abi.decode(result, (bool))) revert TokenTransferFailed(token);
    }
}
