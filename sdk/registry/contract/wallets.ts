/** Spending wallets: self-custody addresses whose keys stay on the client. */
import { type Static, Type as T } from '@sinclair/typebox';
import { AddressString, Nullable, Timestamp, Uuid } from './common';

/**
 * Longest wallet `label` ({@link RegisterWallet}, {@link UpdateLabel}), in characters after
 * trimming; a label that is empty after trimming counts as none.
 *
 * @example
 * await registry.setWalletLabel(address, label.trim().slice(0, LABEL_MAX_LENGTH));
 */
export const LABEL_MAX_LENGTH = 64;

const Address = AddressString('0x-prefixed Ethereum address (any case; a mixed-case one must carry a valid EIP-55 checksum)');
const Label = T.String({
  maxLength: LABEL_MAX_LENGTH,
  description: `plain text, 1–${LABEL_MAX_LENGTH} characters after trimming, no control characters`,
});

/**
 * `POST /wallet/generate` body (consumer credentials): registers a spending wallet by its 0x
 * `address` only; the key is made and kept on the client and never sent (a body carrying one is
 * refused). The wallet becomes the active one. Registering one of your own addresses again is
 * idempotent (it is made active again, un-revoked, and keeps its label unless one is given):
 * answered 201 new or 200 known, with the {@link WalletView}. An address of another user gives 400
 * `Address already registered`. With a `proof` (the wallet's signature of a {@link WalletChallenge}
 * message) the wallet is proven yours: only a proven wallet's payments let you review a skill. A
 * proof that does not hold gives 400 naming `proof`.
 */
export const RegisterWallet = T.Object({
  address: Address,
  label: T.Optional(Nullable(Label)),
  proof: T.Optional(
    T.Object(
      {
        message: T.String({ maxLength: 1000, description: 'the message of `POST /wallet/challenge`, as issued' }),
        signature: T.String({ pattern: '^0x[0-9a-fA-F]{130}$', description: 'EIP-191 personal_sign of `message` by the wallet’s key' }),
      },
      { description: 'proof of owning the key: makes the wallet’s payments yours for reviews' },
    ),
  ),
});
/** The {@link RegisterWallet} schema's type. */
export type RegisterWallet = Static<typeof RegisterWallet>;

/**
 * `PATCH /wallet/:address` body: the new `label` (plain text, at most {@link LABEL_MAX_LENGTH}
 * characters), or `null` to remove it. Answered with the {@link WalletView}.
 */
export const UpdateLabel = T.Object({ label: Nullable(Label) });
/** The {@link UpdateLabel} schema's type. */
export type UpdateLabel = Static<typeof UpdateLabel>;
/**
 * Path parameters of `GET`, `PATCH` and `DELETE /wallet/:address`: the 0x address of one of the
 * caller's wallets, any case; another address gives 404 `Wallet not found`.
 */
export const WalletAddressParam = T.Object({
  address: T.String({ maxLength: 128, description: '0x address of one of your wallets (any case)' }),
});

/**
 * A spending wallet as every wallet route answers it (`POST /wallet/generate`,
 * `GET /wallet/all`, `PATCH /wallet/:address`, and within {@link ActiveWallet} and
 * {@link RevokedWallet}). `isActive` marks the one wallet payments are made from; `label`,
 * `lastUsedAt` and `revokedAt` are null when unset, never used or not revoked.
 */
export const WalletView = T.Object({
  id: Uuid(),
  address: T.String({ description: 'EIP-55 checksummed address' }),
  label: Nullable(T.String()),
  isActive: T.Boolean({ description: 'the wallet payments are made from; at most one per user' }),
  createdAt: Timestamp(),
  lastUsedAt: Nullable(Timestamp()),
  revokedAt: Nullable(Timestamp()),
});
/** The {@link WalletView} schema's type. */
export type WalletView = Static<typeof WalletView>;
/**
 * Answer of `GET /wallet/all`: every wallet of the caller as {@link WalletView}, revoked ones
 * included, newest first.
 */
export const WalletList = T.Array(WalletView);

/**
 * A wallet with its live USDC balance read from the chain: the answer of `GET /wallet` (the active
 * wallet) and `GET /wallet/:address`. `balance` is USDC as an exact 6-decimal string, `balanceAtomic`
 * the same in micro-USDC; when the chain read fails, both and `balanceCheckedAt` are null and
 * `balanceError` says why (the rest of the wallet is still answered).
 */
export const ActiveWallet = T.Composite([
  WalletView,
  T.Object({
    network: T.String({ description: 'CAIP-2 network the balance was read on, e.g. eip155:8453' }),
    asset: T.String({ description: 'USDC contract address' }),
    balance: Nullable(T.String({ description: 'USDC, exact, 6 decimals, e.g. "10.500000"' })),
    balanceAtomic: Nullable(T.String({ description: 'USDC in atomic units (10^-6), e.g. "10500000"' })),
    balanceCheckedAt: Nullable(Timestamp()),
    balanceError: T.Optional(T.String({ description: 'why the balance could not be read' })),
  }),
]);
/** The {@link ActiveWallet} schema's type. */
export type ActiveWallet = Static<typeof ActiveWallet>;
/**
 * Answer of `GET /wallet`: the caller's active wallet with its balance, or the JSON literal `null`
 * when they have none (never registered, or revoked).
 */
export const ActiveWalletOrNull = T.Union([ActiveWallet, T.Null()]);

/**
 * Answer of `DELETE /wallet/:address`: the revoked wallet, no longer active but still listed by
 * `GET /wallet/all`, with `revokedAt` set. Idempotent; funds on chain are untouched.
 */
export const RevokedWallet = T.Object({ success: T.Literal(true), wallet: WalletView });
/** The {@link RevokedWallet} schema's type. */
export type RevokedWallet = Static<typeof RevokedWallet>;

/** `POST /wallet/challenge` body (consumer credentials): the address whose key will sign. */
export const WalletChallengeBody = T.Object({ address: Address });
/** The {@link WalletChallengeBody} schema's type. */
export type WalletChallengeBody = Static<typeof WalletChallengeBody>;
/**
 * Answer of `POST /wallet/challenge`: a message naming the wallet, your account, a nonce and an
 * expiry (minutes away). Sign it with the wallet's key (EIP-191 personal_sign) and send both as
 * the `proof` of a {@link RegisterWallet} before `expiresAt`.
 *
 * @example
 * const { message } = await registry.walletChallenge(account.address);
 * await registry.registerWallet({ address: account.address, proof: { message, signature: await account.signMessage({ message }) } });
 */
export const WalletChallenge = T.Object({ message: T.String(), expiresAt: Timestamp() });
/** The {@link WalletChallenge} schema's type. */
export type WalletChallenge = Static<typeof WalletChallenge>;

/**
 * Answer of `GET /balances/:address` (public): any address's balance of the registry's payment
 * token, read through the registry's RPC (briefly cached); `balanceAtomic` null with
 * `balanceError` when the chain cannot be read now. Pages show a payer's balance before and after
 * paying with it.
 */
export const AddressBalance = T.Object({
  address: T.String(),
  network: T.String({ description: 'CAIP-2 network the balance was read on' }),
  asset: T.String({ description: 'the token contract' }),
  balanceAtomic: Nullable(T.String({ description: 'atomic units (micro-USDC), a decimal-digit string' }), 'null when unreadable now'),
  balanceError: T.Optional(T.String({ description: 'why the balance could not be read' })),
});
/** The {@link AddressBalance} schema's type. */
export type AddressBalance = Static<typeof AddressBalance>;
