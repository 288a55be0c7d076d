/** Spending wallets: self-custody addresses whose keys stay on the client. */
import { type Static, Type as T } from '@sinclair/typebox';
import { AddressString, Nullable, Timestamp, Uuid } from './common';

export const LABEL_MAX_LENGTH = 64;

const Address = AddressString('0x-prefixed Ethereum address (any case; a mixed-case one must carry a valid EIP-55 checksum)');
const Label = T.String({
  maxLength: LABEL_MAX_LENGTH,
  description: `plain text, 1–${LABEL_MAX_LENGTH} characters after trimming, no control characters`,
});

/** `POST /wallet/generate`: an address, never a key. */
export const RegisterWallet = T.Object({ address: Address, label: T.Optional(Nullable(Label)) });
export type RegisterWallet = Static<typeof RegisterWallet>;

/** `PATCH /wallet/:address`: null removes the label. */
export const UpdateLabel = T.Object({ label: Nullable(Label) });
export type UpdateLabel = Static<typeof UpdateLabel>;
export const WalletAddressParam = T.Object({
  address: T.String({ maxLength: 128, description: '0x address of one of your wallets (any case)' }),
});

/** A spending wallet as every wallet endpoint returns it. */
export const WalletView = T.Object({
  id: Uuid(),
  address: T.String({ description: 'EIP-55 checksummed address' }),
  label: Nullable(T.String()),
  isActive: T.Boolean({ description: 'the wallet payments are made from; at most one per user' }),
  createdAt: Timestamp(),
  lastUsedAt: Nullable(Timestamp()),
  revokedAt: Nullable(Timestamp()),
});
export type WalletView = Static<typeof WalletView>;
export const WalletList = T.Array(WalletView);

/** A wallet with its live balance (`GET /wallet`, `GET /wallet/:address`); a failed chain read gives nulls and `balanceError`. */
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
export type ActiveWallet = Static<typeof ActiveWallet>;
/** `GET /wallet`: the active wallet, or null. */
export const ActiveWalletOrNull = T.Union([ActiveWallet, T.Null()]);

export const RevokedWallet = T.Object({ success: T.Literal(true), wallet: WalletView });
export type RevokedWallet = Static<typeof RevokedWallet>;
