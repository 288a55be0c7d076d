// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

/// @notice ERC-20 `transfer` that accepts tokens returning nothing, fails on `false`, and passes a
/// token's own revert reason through unchanged.
library SafeTokenTransfer {
    error TokenTransferFailed(address token);

    function safeTransfer(address token, address to, uint256 amount) internal {
        (bool ok, bytes memory result) = token.call(abi.encodeWithSelector(0xa9059cbb, to, amount));
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
