// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import "./IDepositCollector.sol";
import "./SafeTokenTransfer.sol";
import "./SignatureValidation.sol";

/// @notice Unidirectional payment channels of the x402 `batch-settlement` scheme (EVM), written from
/// the scheme's specification and the ABI the x402 EVM package ships, for local chains. A payer deposits
/// once; the receiver claims signed cumulative vouchers of many channels in one call and sweeps
/// what it claimed with one `settle`; unclaimed escrow returns by cooperative refund or by a timed
/// withdrawal. No constructor, no immutables: the code works wherever it is placed (anvil_setCode),
/// and its EIP-712 domain is computed from address(this) and block.chainid on every use.
contract x402BatchSettlement {
    using SafeTokenTransfer for address;

    struct ChannelConfig {
        address payer;
        address payerAuthorizer;
        address receiver;
        address receiverAuthorizer;
        address token;
        uint40 withdrawDelay;
        bytes32 salt;
    }

    struct Voucher {
        ChannelConfig channel;
        uint128 maxClaimableAmount;
    }

    struct VoucherClaim {
        Voucher voucher;
        bytes signature;
        uint128 totalClaimed;
    }

    struct ChannelState {
        uint128 balance;
        uint128 totalClaimed;
    }

    struct PendingWithdrawal {
        uint128 amount;
        uint40 initiatedAt;
    }

    struct ReceiverState {
        uint128 totalClaimed;
        uint128 totalSettled;
    }

    bytes32 public constant CHANNEL_CONFIG_TYPEHASH = keccak256(
        "ChannelConfig(address payer,address payerAuthorizer,address receiver,address receiverAuthorizer,address token,uint40 withdrawDelay,bytes32 salt)"
    );
    bytes32 private constant VOUCHER_TYPEHASH = keccak256("Voucher(bytes32 channelId,uint128 maxClaimableAmount)");
    bytes32 private constant REFUND_TYPEHASH = keccak256("Refund(bytes32 channelId,uint256 nonce,uint128 amount)");
    bytes32 private constant CLAIM_ENTRY_TYPEHASH =
        keccak256("ClaimEntry(bytes32 channelId,uint128 maxClaimableAmount,uint128 totalClaimed)");
    bytes32 private constant CLAIM_BATCH_TYPEHASH = keccak256(
        "ClaimBatch(ClaimEntry[] claims)ClaimEntry(bytes32 channelId,uint128 maxClaimableAmount,uint128 totalClaimed)"
    );
    bytes32 private constant DOMAIN_TYPEHASH =
        keccak256("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)");
    bytes32 private constant NAME_HASH = keccak256("x402 Batch Settlement");
    bytes32 private constant VERSION_HASH = keccak256("1");

    uint40 public constant MIN_WITHDRAW_DELAY = 15 minutes;
    uint40 public constant MAX_WITHDRAW_DELAY = 30 days;

    mapping(bytes32 => ChannelState) private _channels;
    mapping(bytes32 => PendingWithdrawal) private _pendingWithdrawals;
    mapping(bytes32 => uint256) private _refundNonces;
    mapping(address => mapping(address => ReceiverState)) private _receivers;
    bool private transient _entered;

    event ChannelCreated(bytes32 indexed channelId, ChannelConfig config);
    event ChannelClosed(bytes32 indexed channelId, ChannelConfig config);
    event Deposited(bytes32 indexed channelId, address indexed sender, uint128 amount, uint128 balance);
    event Claimed(bytes32 indexed channelId, address indexed sender, uint128 amount, uint128 totalClaimed);
    event Settled(address indexed receiver, address indexed token, address indexed sender, uint128 amount);
    event WithdrawInitiated(bytes32 indexed channelId, uint128 amount, uint40 finalizeAfter);
    event WithdrawFinalized(bytes32 indexed channelId, address indexed sender, uint128 amount);
    event Refunded(bytes32 indexed channelId, address indexed sender, uint128 amount);

    error Reentrancy();
    error ZeroAmount();
    error InvalidChannelConfig();
    error WithdrawDelayOutOfRange(uint40 withdrawDelay);
    error DepositAmountMismatch(uint128 expected, uint256 received);
    error Unauthorized(address caller);
    error EmptyClaims();
    error ReceiverAuthorizerMismatch();
    error InvalidAuthorizerSignature();
    error InvalidVoucherSignature(bytes32 channelId);
    error ClaimExceedsVoucher(bytes32 channelId, uint128 totalClaimed, uint128 maxClaimableAmount);
    error ClaimExceedsBalance(bytes32 channelId, uint128 totalClaimed, uint128 balance);
    error InvalidRefundNonce(bytes32 channelId, uint256 expected, uint256 provided);
    error AmountExceedsUnclaimed(uint128 amount, uint128 available);
    error WithdrawalAlreadyPending(bytes32 channelId);
    error NoPendingWithdrawal(bytes32 channelId);
    error WithdrawalNotReady(bytes32 channelId, uint256 readyAt);

    modifier nonReentrant() {
        if (_entered) revert Reentrancy();
        _entered = true;
        _;
        _entered = false;
    }

    // ---- batching ----

    /// @notice Runs several calls of this contract in one transaction (e.g. claim, then refund);
    /// any failure reverts them all with its own reason.
    function multicall(bytes[] calldata data) external returns (bytes[] memory results) {
        results = new bytes[](data.length);
        for (uint256 i; i < data.length; ++i) {
            (bool ok, bytes memory result) = address(this).delegatecall(data[i]);
            if (!ok) {
                assembly {
                    revert(add(result, 32), mload(result))
                }
            }
            results[i] = result;
        }
    }

    // ---- deposit ----

    /// @notice Funds the channel of `config` with `amount`, pulled from the payer by `collector`
    /// (which must deliver exactly `amount` of the token to this contract). Anyone may relay it.
    function deposit(ChannelConfig calldata config, uint128 amount, address collector, bytes calldata collectorData)
        external
        nonReentrant
    {
        if (amount == 0) revert ZeroAmount();
        if (
            config.payer == address(0) || config.receiver == address(0) || config.receiverAuthorizer == address(0)
                || config.token == address(0)
        ) revert InvalidChannelConfig();
        if (config.withdrawDelay < MIN_WITHDRAW_DELAY || config.withdrawDelay > MAX_WITHDRAW_DELAY) {
            revert WithdrawDelayOutOfRange(config.withdrawDelay);
        }
        bytes32 channelId = _channelId(_domainSeparator(), config);

        uint256 before = _tokenBalance(config.token);
        IDepositCollector(collector).collect(config.payer, config.token, amount, channelId, collectorData);
        uint256 afterwards = _tokenBalance(config.token);
        if (afterwards < before || afterwards - before != amount) {
            revert DepositAmountMismatch(amount, afterwards < before ? 0 : afterwards - before);
        }

        ChannelState storage channel = _channels[channelId];
        uint128 previous = channel.balance;
        uint128 balance = previous + amount;
        channel.balance = balance;
        if (previous == 0) emit ChannelCreated(channelId, config);
        emit Deposited(channelId, msg.sender, amount, balance);
    }

    // ---- claim and settle ----

    /// @notice Claims vouchers; the caller must be the receiver or the receiver authorizer of every row.
    function claim(VoucherClaim[] calldata voucherClaims) external nonReentrant {
        if (voucherClaims.length == 0) revert EmptyClaims();
        bytes32 separator = _domainSeparator();
        for (uint256 i; i < voucherClaims.length; ++i) {
            ChannelConfig calldata config = voucherClaims[i].voucher.channel;
            if (msg.sender != config.receiver && msg.sender != config.receiverAuthorizer) revert Unauthorized(msg.sender);
            _claim(separator, voucherClaims[i], _channelId(separator, config));
        }
    }

    /// @notice Claims vouchers of channels that share one receiver authorizer, whose EIP-712
    /// `ClaimBatch` signature covers every row. Anyone may relay it; a replay changes nothing.
    function claimWithSignature(VoucherClaim[] calldata voucherClaims, bytes calldata authorizerSignature)
        external
        nonReentrant
    {
        if (voucherClaims.length == 0) revert EmptyClaims();
        bytes32 separator = _domainSeparator();
        address authorizer = voucherClaims[0].voucher.channel.receiverAuthorizer;
        bytes32[] memory channelIds = new bytes32[](voucherClaims.length);
        bytes32[] memory entries = new bytes32[](voucherClaims.length);
        for (uint256 i; i < voucherClaims.length; ++i) {
            if (voucherClaims[i].voucher.channel.receiverAuthorizer != authorizer) revert ReceiverAuthorizerMismatch();
            channelIds[i] = _channelId(separator, voucherClaims[i].voucher.channel);
            entries[i] = _claimEntryHash(channelIds[i], voucherClaims[i]);
        }
        bytes32 digest = _typedDataHash(separator, keccak256(abi.encode(CLAIM_BATCH_TYPEHASH, keccak256(abi.encodePacked(entries)))));
        if (!SignatureValidation.isValidNow(authorizer, digest, authorizerSignature)) revert InvalidAuthorizerSignature();
        for (uint256 i; i < voucherClaims.length; ++i) {
            _claim(separator, voucherClaims[i], channelIds[i]);
        }
    }

    /// @notice Sends everything claimed for `receiver` in `token` and not yet settled to `receiver`,
    /// in one transfer. Anyone may call it; with nothing to send it does nothing.
    function settle(address receiver, address token) external nonReentrant {
        ReceiverState storage state = _receivers[receiver][token];
        uint128 claimed = state.totalClaimed;
        uint128 amount = claimed - state.totalSettled;
        if (amount == 0) return;
        state.totalSettled = claimed;
        token.safeTransfer(receiver, amount);
        emit Settled(receiver, token, msg.sender, amount);
    }

    // ---- timed withdrawal ----

    /// @notice Starts the payer's escape hatch: after `withdrawDelay`, `finalizeWithdraw` returns up
    /// to `amount` of unclaimed escrow. The receiver can still claim vouchers meanwhile.
    function initiateWithdraw(ChannelConfig calldata config, uint128 amount) external nonReentrant {
        _requirePayerSide(config);
        if (amount == 0) revert ZeroAmount();
        bytes32 channelId = _channelId(_domainSeparator(), config);
        PendingWithdrawal storage pending = _pendingWithdrawals[channelId];
        if (pending.initiatedAt != 0) revert WithdrawalAlreadyPending(channelId);
        ChannelState storage channel = _channels[channelId];
        uint128 available = channel.balance - channel.totalClaimed;
        if (amount > available) revert AmountExceedsUnclaimed(amount, available);
        pending.amount = amount;
        pending.initiatedAt = uint40(block.timestamp);
        emit WithdrawInitiated(channelId, amount, uint40(block.timestamp) + config.withdrawDelay);
    }

    /// @notice Completes a withdrawal once its delay has passed, capped to the unclaimed escrow left.
    function finalizeWithdraw(ChannelConfig calldata config) external nonReentrant {
        _requirePayerSide(config);
        bytes32 channelId = _channelId(_domainSeparator(), config);
        PendingWithdrawal memory pending = _pendingWithdrawals[channelId];
        if (pending.initiatedAt == 0) revert NoPendingWithdrawal(channelId);
        uint256 readyAt = uint256(pending.initiatedAt) + config.withdrawDelay;
        if (block.timestamp < readyAt) revert WithdrawalNotReady(channelId, readyAt);
        delete _pendingWithdrawals[channelId];
        (uint128 amount, bool closed) = _release(channelId, config, pending.amount);
        emit WithdrawFinalized(channelId, msg.sender, amount);
        if (closed) emit ChannelClosed(channelId, config);
    }

    // ---- cooperative refund ----

    /// @notice Returns up to `amount` of unclaimed escrow to the payer; called by the receiver or its authorizer.
    function refund(ChannelConfig calldata config, uint128 amount) external nonReentrant {
        if (msg.sender != config.receiver && msg.sender != config.receiverAuthorizer) revert Unauthorized(msg.sender);
        _refund(_channelId(_domainSeparator(), config), config, amount);
    }

    /// @notice `refund` authorized by the receiver authorizer's EIP-712 `Refund` signature for the
    /// channel's current refund nonce; anyone may relay it.
    function refundWithSignature(
        ChannelConfig calldata config,
        uint128 amount,
        uint256 nonce,
        bytes calldata receiverAuthorizerSignature
    ) external nonReentrant {
        bytes32 separator = _domainSeparator();
        bytes32 channelId = _channelId(separator, config);
        uint256 expected = _refundNonces[channelId];
        if (nonce != expected) revert InvalidRefundNonce(channelId, expected, nonce);
        bytes32 digest = _typedDataHash(separator, keccak256(abi.encode(REFUND_TYPEHASH, channelId, nonce, amount)));
        if (!SignatureValidation.isValidNow(config.receiverAuthorizer, digest, receiverAuthorizerSignature)) {
            revert InvalidAuthorizerSignature();
        }
        _refund(channelId, config, amount);
    }

    // ---- views ----

    function getChannelId(ChannelConfig calldata config) external view returns (bytes32) {
        return _channelId(_domainSeparator(), config);
    }

    function channels(bytes32 channelId) external view returns (uint128 balance, uint128 totalClaimed) {
        ChannelState storage channel = _channels[channelId];
        return (channel.balance, channel.totalClaimed);
    }

    function pendingWithdrawals(bytes32 channelId) external view returns (uint128 amount, uint40 initiatedAt) {
        PendingWithdrawal storage pending = _pendingWithdrawals[channelId];
        return (pending.amount, pending.initiatedAt);
    }

    function receivers(address receiver, address token) external view returns (uint128 totalClaimed, uint128 totalSettled) {
        ReceiverState storage state = _receivers[receiver][token];
        return (state.totalClaimed, state.totalSettled);
    }

    function refundNonce(bytes32 channelId) external view returns (uint256) {
        return _refundNonces[channelId];
    }

    function getVoucherDigest(bytes32 channelId, uint128 maxClaimableAmount) external view returns (bytes32) {
        return _voucherDigest(_domainSeparator(), channelId, maxClaimableAmount);
    }

    function getRefundDigest(bytes32 channelId, uint256 nonce, uint128 amount) external view returns (bytes32) {
        return _typedDataHash(_domainSeparator(), keccak256(abi.encode(REFUND_TYPEHASH, channelId, nonce, amount)));
    }

    function getClaimBatchDigest(VoucherClaim[] calldata voucherClaims) external view returns (bytes32) {
        bytes32 separator = _domainSeparator();
        bytes32[] memory entries = new bytes32[](voucherClaims.length);
        for (uint256 i; i < voucherClaims.length; ++i) {
            entries[i] = _claimEntryHash(_channelId(separator, voucherClaims[i].voucher.channel), voucherClaims[i]);
        }
        return _typedDataHash(separator, keccak256(abi.encode(CLAIM_BATCH_TYPEHASH, keccak256(abi.encodePacked(entries)))));
    }

    // ---- internals ----

    /// @dev Raises the channel's claimed total to the row's `totalClaimed` after checking the payer's
    /// voucher; a row at or below what is already claimed changes nothing (stale or replayed claims).
    function _claim(bytes32 separator, VoucherClaim calldata row, bytes32 channelId) private {
        uint128 maxClaimable = row.voucher.maxClaimableAmount;
        uint128 total = row.totalClaimed;
        if (total > maxClaimable) revert ClaimExceedsVoucher(channelId, total, maxClaimable);
        ChannelState storage channel = _channels[channelId];
        uint128 balance = channel.balance;
        if (total > balance) revert ClaimExceedsBalance(channelId, total, balance);

        ChannelConfig calldata config = row.voucher.channel;
        bytes32 digest = _voucherDigest(separator, channelId, maxClaimable);
        bool signed = config.payerAuthorizer != address(0)
            ? SignatureValidation.recover(digest, row.signature) == config.payerAuthorizer
            : SignatureValidation.isValidNow(config.payer, digest, row.signature);
        if (!signed) revert InvalidVoucherSignature(channelId);

        uint128 claimed = channel.totalClaimed;
        if (total <= claimed) return;
        uint128 amount = total - claimed;
        channel.totalClaimed = total;
        _receivers[config.receiver][config.token].totalClaimed += amount;
        emit Claimed(channelId, msg.sender, amount, total);
    }

    /// @dev The refund nonce advances first, so even a refund that finds nothing to return
    /// invalidates signatures over the previous nonce. A pending withdrawal shrinks by the refunded
    /// amount and is cancelled when the refund covers it.
    function _refund(bytes32 channelId, ChannelConfig calldata config, uint128 amount) private {
        if (amount == 0) revert ZeroAmount();
        unchecked {
            ++_refundNonces[channelId];
        }
        (uint128 refunded, bool closed) = _release(channelId, config, amount);
        if (refunded == 0) return;
        PendingWithdrawal storage pending = _pendingWithdrawals[channelId];
        if (pending.initiatedAt != 0) {
            if (refunded >= pending.amount) delete _pendingWithdrawals[channelId];
            else pending.amount -= refunded;
        }
        emit Refunded(channelId, msg.sender, refunded);
        if (closed) emit ChannelClosed(channelId, config);
    }

    /// @dev Pays up to `wanted` of the channel's unclaimed escrow back to the payer. Returns what was
    /// paid and whether that emptied the channel (balance 0, which also means nothing was claimed).
    function _release(bytes32 channelId, ChannelConfig calldata config, uint128 wanted)
        private
        returns (uint128 amount, bool closed)
    {
        ChannelState storage channel = _channels[channelId];
        uint128 balance = channel.balance;
        uint128 available = balance - channel.totalClaimed;
        amount = wanted < available ? wanted : available;
        if (amount == 0) return (0, false);
        balance -= amount;
        channel.balance = balance;
        config.token.safeTransfer(config.payer, amount);
        closed = balance == 0;
    }

    function _requirePayerSide(ChannelConfig calldata config) private view {
        if (msg.sender != config.payer && (config.payerAuthorizer == address(0) || msg.sender != config.payerAuthorizer)) {
            revert Unauthorized(msg.sender);
        }
    }

    function _domainSeparator() private view returns (bytes32) {
        return keccak256(abi.encode(DOMAIN_TYPEHASH, NAME_HASH, VERSION_HASH, block.chainid, address(this)));
    }

    function _typedDataHash(bytes32 separator, bytes32 structHash) private pure returns (bytes32) {
        return keccak256(abi.encodePacked(hex"1901", separator, structHash));
    }

    function _channelId(bytes32 separator, ChannelConfig calldata config) private pure returns (bytes32) {
        return _typedDataHash(separator, keccak256(abi.encode(CHANNEL_CONFIG_TYPEHASH, config)));
    }

    function _voucherDigest(bytes32 separator, bytes32 channelId, uint128 maxClaimableAmount) private pure returns (bytes32) {
        return _typedDataHash(separator, keccak256(abi.encode(VOUCHER_TYPEHASH, channelId, maxClaimableAmount)));
    }

    function _claimEntryHash(bytes32 channelId, VoucherClaim calldata row) private pure returns (bytes32) {
        return keccak256(abi.encode(CLAIM_ENTRY_TYPEHASH, channelId, row.voucher.maxClaimableAmount, row.totalClaimed));
    }

    function _tokenBalance(address token) private view returns (uint256) {
        (bool ok, bytes memory result) = token.staticcall(abi.encodeWithSelector(0x70a08231, address(this)));
        if (!ok || result.length < 32) revert InvalidChannelConfig();
        return abi.decode(result, (uint256));
    }
}
