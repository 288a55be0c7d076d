import { t, type Static } from 'elysia';

/** The usage record other x402 SDKs post without a credential: believed only once verified on chain. */
export const ReportedPayment = t.Object({
  skillSlug: t.String({ minLength: 1, maxLength: 120 }),
  consumerAddress: t.String({ pattern: '^0x[0-9a-fA-F]{40}$', description: 'the payer' }),
  paymentTxHash: t.String({ pattern: '^0x[0-9a-fA-F]{64}$', description: 'the settlement transaction' }),
  amount: t.Union([t.String({ minLength: 1, maxLength: 32 }), t.Number()], {
    description: 'the listed price: "$0.001", "0.001", or integer micro-USDC (1000)',
  }),
});
export type ReportedPayment = Static<typeof ReportedPayment>;
