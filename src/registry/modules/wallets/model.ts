import type { TSchema } from '@sinclair/typebox';
import { t, type Static } from 'elysia';

export const LABEL_MAX_LENGTH = 64;

const Address = t.String({
  pattern: '^0x[0-9a-fA-F]{40}$',
  description: '0x-prefixed Ethereum address (any case; a mixed-case one must carry a valid EIP-55 checksum)',
});
const Label = t.String({
  maxLength: LABEL_MAX_LENGTH,
  description: `plain text, 1–${LABEL_MAX_LENGTH} characters after trimming, no control characters`,
});
const Timestamp = t.String({ format: 'date-time' });
const Nullable = <T extends TSchema>(schema: T) => t.Union([schema, t.Null()]);

export const RegisterWallet = t.Object({
  address: Address,
  label: t.Optional(Nullable(Label)),
});
export type RegisterWallet = Static<typeof RegisterWallet>;

export const UpdateLabel = t.Object({ label: Nullable(Label) });
export const AddressParam = t.Object({
  address: t.String({ maxLength: 128, description: '0x address of one of your wallets (any case)' }),
});

/** A spending wallet as every wallet endpoint returns it. */
export const WalletView = t.Object({
  id: t.String({ format: 'uuid' }),
  address: t.String({ description: 'EIP-55 checksummed address' }),
  label: Nullable(t.String()),
  isActive: t.Boolean({ description: 'the wallet payments are made from; at most one per user' }),
  createdAt: Timestamp,
  lastUsedAt: Nullable(Timestamp),
  revokedAt: Nullable(Timestamp),
});
export type WalletView = Static<typeof WalletView>;

/** A wallet with its live balance (`GET /wallet`, `GET /wallet/:address`); a failed chain read gives nulls and `balanceError`. */
export const ActiveWallet = t.Composite([
  WalletView,
  t.Object({
    network: t.String({ description: 'CAIP-2 network the balance was read on, e.g. eip155:8453' }),
    asset: t.String({ description: 'USDC contract address' }),
    balance: Nullable(t.String({ description: 'USDC, exact, 6 decimals, e.g. "10.500000"' })),
    balanceAtomic: Nullable(t.String({ description: 'USDC in atomic units (10^-6), e.g. "10500000"' })),
    balanceCheckedAt: Nullable(Timestamp),
    balanceError: t.Optional(t.String({ description: 'why the balance could not be read' })),
  }),
]);
export type ActiveWallet = Static<typeof ActiveWallet>;

export const RevokedWallet = t.Object({ success: t.Literal(true), wallet: WalletView });
