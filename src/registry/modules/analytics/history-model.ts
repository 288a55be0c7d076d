import { t, type Static } from 'elysia';

/** Schemas of the caller's own records: paid-call history and favourites. */
export const UsageQuery = t.Object({
  limit: t.Optional(t.Numeric({ minimum: 1, maximum: 100, multipleOf: 1, description: 'records per page, 1–100, default 20' })),
  cursor: t.Optional(t.String({ maxLength: 512, description: 'the X-Next-Cursor of the previous page' })),
});
export type UsageQuery = Static<typeof UsageQuery>;

export const UsageRecordView = t.Object({
  id: t.String({ format: 'uuid' }),
  skillId: t.String({ format: 'uuid' }),
  skillSlug: t.String(),
  skillName: t.String(),
  amount: t.String({ description: 'USDC, exact decimal, e.g. "0.001"' }),
  amountAtomic: t.String({ description: 'micro-USDC, e.g. "1000"' }),
  paymentRef: t.Union([t.String(), t.Null()], { description: 'transaction hash or authorization nonce, when one was recorded' }),
  network: t.String({ description: 'CAIP-2 network of the skill, e.g. eip155:8453' }),
  createdAt: t.String({ format: 'date-time' }),
});
export type UsageRecordView = Static<typeof UsageRecordView>;
