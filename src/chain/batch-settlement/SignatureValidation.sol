// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

/// @notice Signature checks of x402BatchSettlement: strict ECDSA (65 bytes, low s, v in {27, 28})
/// and, for accounts with code, ERC-1271 `isValidSignature` when ECDSA does not match (the rules of
/// OpenZeppelin's SignatureChecker, so EIP-7702 accounts that sign with their key also pass).
library SignatureValidation {
    uint256 private constant HALF_ORDER = 0x7FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF5D576E7357A4501DDFE92F46681B20A0;
    bytes4 private constant ERC1271_MAGIC = 0x1626ba7e;

    /// @return signer the ECDSA signer of `digest`, or address(0) for a malformed or malleable signature.
    function recover(bytes32 digest, bytes calldata signature) internal pure returns (address signer) {
        if (signature.length != 65) return address(0);
        bytes32 r = bytes32(signature[0:32]);
        bytes32 s = bytes32(signature[32:64]);
        uint8 v = uint8(signature[64]);
        if (uint256(s) > HALF_ORDER || (v != 27 && v != 28)) return address(0);
        return ecrecover(digest, v, r, s);
    }

    /// @return whether `signer` signed `digest`: by ECDSA, or by ERC-1271 when `signer` has code.
    function isValidNow(address signer, bytes32 digest, bytes calldata signature) internal view returns (bool) {
        if (signer == address(0)) return false;
        if (recover(digest, signature) == signer) return true;
        if (signer.code.length == 0) return false;
        (bool ok, bytes memory result) = signer.staticcall(abi.encodeWithSelector(ERC1271_MAGIC, digest, signature));
        return ok && result.length >= 32 && abi.decode(result, (bytes32)) == bytes32(ERC1271_MAGIC);
    }
}
