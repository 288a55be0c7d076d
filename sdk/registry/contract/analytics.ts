/** Analytics: views, calls, usage, favourites, a skill's counters, and the caller's own history. */
import { type Static, Type as T } from '@sinclair/typebox';
import { BYTES32_PATTERN, UINT_PATTERN } from '../../x402/patterns';

const HASH_PATTERN = BYTES32_PATTERN.source;
import { ADDRESS_PATTERN, Cursor, Nullable, PageLimit, QueryDay, QueryInteger, Timestamp, Uuid } from './common';

const SkillId = Uuid('the skill id (UUID)');
const PaymentRef = T.String({ minLength: 1, maxLength: 200, description: 'transaction hash or authorization nonce; counted once' });
const ChannelId = T.String({
  pattern: HASH_PATTERN,
  description: 'the batch-settlement payment channel the call was paid over (instead of a paymentRef)',
});
const ChargedCumulativeAmount = T.String({
  pattern: '^(0|[1-9][0-9]{0,38})$',
  description: 'the channel’s cumulative charge after this call, in atomic token units (with channelId)',
});

const Uint = T.String({ pattern: '^(0|[1-9][0-9]{0,77})$' });
/**
 * A skill server's signed receipt of the call (x402/receipt.ts, the `X-Receipt` header): the
 * registry checks it against the skill's `receiptSigner`, its price and the record, and its amount
 * against what the chain shows for the payment.
 */
export const SignedReceiptBody = T.Object({
  format: T.Literal('eip712'),
  signature: T.String({ pattern: '^0x[0-9a-fA-F]{130}$' }),
  payload: T.Object({
    version: T.Literal(1),
    resourceUrl: T.String({ maxLength: 2048 }),
    skill: T.String({ maxLength: 200 }),
    network: T.String({ pattern: '^eip155:[1-9][0-9]{0,15}$' }),
    scheme: T.String({ maxLength: 64 }),
    payer: T.String({ pattern: ADDRESS_PATTERN }),
    amount: Uint,
    transaction: T.String({ maxLength: 200 }),
    cumulativeAmount: Uint,
    issuedAt: T.Integer({ minimum: 0 }),
    bodyDigest: T.String({ pattern: HASH_PATTERN }),
  }),
});

/**
 * `POST /analytics/view` body: a page view of one skill. No credential; the registry counts it once
 * per client IP per skill within its window (an hour unless configured) and answers {@link Recorded}.
 */
export const ViewBody = T.Object({ skillId: SkillId });
/** The {@link ViewBody} schema's type. */
export type ViewBody = Static<typeof ViewBody>;

/**
 * `POST /analytics/call` body: the skill's creator (its skill server, with its `sk_` key) reports an
 * execution; answered with {@link Recorded}. `amountAtomic` is what was paid in the token's atomic
 * units (decimal digits, the token's own decimals); older senders give `amount` in whole tokens instead. With a
 * `paymentRef` the call counts as one paid call once that payment is verified on chain, however
 * often the reference is sent; without one it counts at once as an unpaid call. `paymentNonce`,
 * the payer's EIP-3009 authorization nonce, names one payment of a transaction that settled many
 * (a batch): each counts. One transfer counts for one skill only: the one whose call names it.
 * A call paid over a payment channel sends `channelId` and `chargedCumulativeAmount` instead of a
 * `paymentRef` (and its own charge in `amount`): it counts once the chain shows the channel claimed
 * at least that far for the skill's payment address. A free trial call sends `kind: 'trial'`, an
 * `amountAtomic` of 0 and its sign-in nonce as `paymentRef`: it counts once, as a trial call only.
 * A call of a skill with volume prices names its `tier` (its step's `after`, 0 the base price): kept
 * where the listing allows the amount at that tier, else dropped (never the call).
 */
export const CallBody = T.Object({
  skillId: SkillId,
  amountAtomic: T.Optional(
    T.String({
      pattern: UINT_PATTERN.source,
      description: 'the amount paid, in the token’s atomic units (decimal digits), as x402 states it',
    }),
  ),
  amount: T.Optional(T.Union([T.String({ maxLength: 32 }), T.Number()], { description: 'older form: a USDC amount, e.g. "0.001"' })),
  paymentRef: T.Optional(PaymentRef),
  paymentNonce: T.Optional(
    T.String({
      pattern: HASH_PATTERN,
      description: 'the EIP-3009 authorization nonce the call was paid with: names this payment among several in one transaction (a batch)',
    }),
  ),
  channelId: T.Optional(ChannelId),
  chargedCumulativeAmount: T.Optional(ChargedCumulativeAmount),
  receipt: T.Optional(SignedReceiptBody),
  tier: T.Optional(
    T.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: 'the volume price tier: its step’s `after`, 0 the base' }),
  ),
  kind: T.Optional(
    T.Literal('trial', {
      description:
        'a free trial call (amount 0, paymentRef the sign-in nonce): counted apart, as trialCallCount, never as revenue or a paid call',
    }),
  ),
});
/** The {@link CallBody} schema's type. */
export type CallBody = Static<typeof CallBody>;

/**
 * Most records a {@link CallsBody} (`POST /analytics/calls`) may carry: 100. A longer batch is
 * refused with 400; send it in parts.
 *
 * @example
 * for (let i = 0; i < records.length; i += MAX_CALL_BATCH) await registry.recordCalls(records.slice(i, i + MAX_CALL_BATCH));
 */
export const MAX_CALL_BATCH = 100;

/**
 * `POST /analytics/calls` body: up to {@link MAX_CALL_BATCH} executions of the caller's skills at
 * once (a creator's `sk_` key), each a {@link CallBody} counted exactly as `POST /analytics/call`
 * would count it: a `paymentRef` once, however often it is sent. All are recorded in one
 * transaction; a record the registry refuses (an unknown skill, another creator's skill, a bad
 * amount) is answered as refused in {@link CallsResult} without dropping the others.
 */
export const CallsBody = T.Object({
  calls: T.Array(CallBody, { minItems: 1, maxItems: MAX_CALL_BATCH, description: `1 to ${MAX_CALL_BATCH} call records` }),
});
/** The {@link CallsBody} schema's type. */
export type CallsBody = Static<typeof CallsBody>;

/**
 * The outcome of one record of a {@link CallsBody}: `recorded`, `duplicate` (its `paymentRef` was
 * already recorded: not an error), or `refused` with a `reason` (`unknown-skill`, `not-yours`,
 * `invalid-amount`, `counted-elsewhere`: its payment already counts as a call of another skill) and
 * a readable `message`; a refused record will not be accepted if re-sent. `invalid-receipt`: the
 * record's signed receipt is not the skill's (another signer than its `receiptSigner`), is for more
 * than its price, names another payment or amount than the record, or another amount than the
 * chain shows the payment moved.
 */
export const CallOutcome = T.Object({
  status: T.Union([T.Literal('recorded'), T.Literal('duplicate'), T.Literal('refused')]),
  reason: T.Optional(
    T.Union([
      T.Literal('unknown-skill'),
      T.Literal('not-yours'),
      T.Literal('invalid-amount'),
      T.Literal('counted-elsewhere'),
      T.Literal('invalid-receipt'),
    ]),
  ),
  message: T.Optional(T.String()),
});
/** The {@link CallOutcome} schema's type. */
export type CallOutcome = Static<typeof CallOutcome>;

/**
 * Answer of `POST /analytics/calls`: one {@link CallOutcome} per record, in the order sent, and
 * how many were `recorded`.
 */
export const CallsResult = T.Object({ success: T.Literal(true), recorded: T.Number(), results: T.Array(CallOutcome) });
/** The {@link CallsResult} schema's type. */
export type CallsResult = Static<typeof CallsResult>;

/**
 * Largest older-form `amount` of a {@link UsageBody} (`POST /analytics/usage`): 10^12 micro-USDC,
 * that is $1,000,000. A larger amount is refused with 400.
 *
 * @example
 * if (BigInt(amount) > BigInt(MAX_USAGE_AMOUNT)) throw new RangeError('above $1,000,000');
 */
export const MAX_USAGE_AMOUNT = 1_000_000_000_000;

/**
 * `POST /analytics/usage` body with consumer credentials (a `ck_` or `sk_` key, or a session):
 * one paid call for the caller's own history, answered with {@link Recorded}. `amountAtomic` is
 * what was paid in the token's atomic units (decimal digits, the token's own decimals, as x402
 * states it), at most 1,000,000 whole tokens. Older clients send `amount` in integer micro-USDC
 * instead (1 to {@link MAX_USAGE_AMOUNT}, a JSON number or a digit string), which the registry
 * converts to the token's units once; one of the two is required. A repeated `paymentRef` is
 * recorded once; usage never counts as revenue by itself, only its payment does once verified on
 * chain.
 *
 * A call paid over a payment channel (x402 `batch-settlement`) names no transfer: it sends
 * `channelId` and `chargedCumulativeAmount` (the channel's cumulative charge after the call)
 * instead of a `paymentRef`, and, when the call also deposited into the channel, the deposit's
 * `depositTransaction` (and `depositAmountAtomic`). It is recorded once per channel and cumulative
 * charge; its state comes from the skill server's record of the call and the chain (earned,
 * claimed, settled), never from a transfer check.
 *
 * @example
 * await registry.recordUsage({ skillId, amountAtomic: requirements.amount, paymentRef: receipt.transaction });
 * await registry.recordUsage({ skillId, amountAtomic: '1000', channelId: receipt.channelId, chargedCumulativeAmount: '3000' });
 */
export const UsageBody = T.Object({
  skillId: SkillId,
  amountAtomic: T.Optional(
    T.String({
      pattern: '^[1-9][0-9]{0,77}$',
      description: 'the amount paid, in the token’s atomic units (decimal digits), as x402 states it',
    }),
  ),
  // A JSON integer, or the same in decimal digits (how bigint amounts travel). A number with
  // multipleOf 1, not an integer schema, which Elysia coerces through Number() ("0x10" became 16).
  amount: T.Optional(
    T.Union([T.Number({ minimum: 1, maximum: MAX_USAGE_AMOUNT, multipleOf: 1 }), T.String({ pattern: '^[1-9][0-9]{0,12}$' })], {
      description: 'older form: micro-USDC (1 = $0.000001), a positive integer up to 10^12, as a number or a decimal-digit string',
    }),
  ),
  paymentRef: T.Optional(PaymentRef),
  channelId: T.Optional(ChannelId),
  chargedCumulativeAmount: T.Optional(ChargedCumulativeAmount),
  depositTransaction: T.Optional(T.String({ pattern: HASH_PATTERN, description: 'the channel deposit this call made' })),
  depositAmountAtomic: T.Optional(
    T.String({
      pattern: '^[1-9][0-9]{0,38}$',
      description: 'what that deposit put in, atomic units',
    }),
  ),
  receipt: T.Optional(SignedReceiptBody),
});
/** The {@link UsageBody} schema's type. */
export type UsageBody = Static<typeof UsageBody>;

/**
 * `POST /analytics/usage` body as other x402 SDKs post it, without a credential: the skill's slug,
 * the payer and the settlement transaction hash. Believed only once the transaction is verified on
 * chain (a forged one never counts). `amount` must be the skill's listed price: a whole number
 * (or digit string) is micro-USDC, anything else a USDC price such as `"$0.001"` or `"0.001"`;
 * another amount is refused with 400.
 */
export const ReportedPayment = T.Object({
  skillSlug: T.String({ minLength: 1, maxLength: 120 }),
  consumerAddress: T.String({ pattern: ADDRESS_PATTERN, description: 'the payer' }),
  paymentTxHash: T.String({ pattern: HASH_PATTERN, description: 'the settlement transaction' }),
  amount: T.Union([T.String({ minLength: 1, maxLength: 32 }), T.Number()], {
    description: 'the listed price: "$0.001", "0.001", or integer micro-USDC (1000)',
  }),
});
/** The {@link ReportedPayment} schema's type. */
export type ReportedPayment = Static<typeof ReportedPayment>;

/**
 * `POST /analytics/usage` body: either a {@link UsageBody} (with consumer credentials) or a
 * {@link ReportedPayment} (without); the registry tells them apart by `skillSlug`. Answered with
 * {@link Recorded}.
 */
export const UsageRequest = T.Union([UsageBody, ReportedPayment]);

/**
 * `POST /analytics/favorite` body (consumer credentials): add or remove the caller's favourite.
 * Idempotent; answered with {@link FavoriteResult}.
 */
export const FavoriteBody = T.Object({ skillId: SkillId, action: T.Union([T.Literal('add'), T.Literal('remove')]) });
/** The {@link FavoriteBody} schema's type. */
export type FavoriteBody = Static<typeof FavoriteBody>;
/** Path parameters of `GET /analytics/:skillId`: the skill's id (a UUID, not its slug). */
export const SkillIdParam = T.Object({ skillId: SkillId });
/**
 * Query of `GET /analytics/:skillId`: `days`, the length of the daily series (a whole number,
 * 1–90, default 30).
 */
export const AnalyticsQuery = T.Object({
  days: T.Optional(QueryInteger('days', 1, 90, 'length of the daily series, 1–90, default 30')),
});

/**
 * Answer of `POST /analytics/view`, `/analytics/call` and `/analytics/usage`: `recorded` is false
 * when the same view (IP and window) or the same payment reference was already counted, which is
 * not an error.
 */
export const Recorded = T.Object({ success: T.Literal(true), recorded: T.Boolean({ description: 'false when already counted' }) });
/** The {@link Recorded} schema's type. */
export type Recorded = Static<typeof Recorded>;
/**
 * Answer of `POST /analytics/favorite`: whether the skill is now the caller's favourite, and its
 * favourite count after the change.
 */
export const FavoriteResult = T.Object({ success: T.Literal(true), favorited: T.Boolean(), favoriteCount: T.Number() });
/** The {@link FavoriteResult} schema's type. */
export type FavoriteResult = Static<typeof FavoriteResult>;

/**
 * What a skill's calls paid over payment channels add up to, in `GET /analytics/:skillId`
 * (the token's atomic units, micro-USDC for USDC, as integer strings): `earned` calls are reported by the skill server but not yet
 * claimed on chain (not revenue yet); `claimed` ones are counted in the paid calls and revenue
 * above; `settled` is the part of the claimed a settle sweep has paid out to the payment address;
 * `refusedCalls` never count (another receiver, an overlapping charge, no such channel).
 */
export const ChannelRevenue = T.Object({
  earnedCalls: T.Number(),
  earnedAtomic: T.String({ description: 'atomic units reported but not yet claimed on chain' }),
  claimedCalls: T.Number(),
  claimedAtomic: T.String({ description: 'atomic units claimed on chain (part of totalRevenueAtomic)' }),
  settledAtomic: T.String({ description: 'atomic units of the claimed paid out to the payment address' }),
  refusedCalls: T.Number(),
});
/** The {@link ChannelRevenue} schema's type. */
export type ChannelRevenue = Static<typeof ChannelRevenue>;

/**
 * One volume price tier in `GET /analytics/:skillId`: its paid calls and revenue. `after`: the
 * step's `after` (0 the base price; null: tier not known); `priceAtomic`: its listed price now.
 */
const TierRevenue = T.Object({
  after: Nullable(T.Integer()),
  priceAtomic: Nullable(T.String()),
  calls: T.Number(),
  revenueAtomic: T.String(),
});
const SchemeRevenue = T.Object({ calls: T.Number(), revenueAtomic: T.String() });

/**
 * Answer of `GET /analytics/:skillId` (public): a skill's counters and a daily series of the last
 * `days` UTC days. Revenue is the sum of payments verified on chain, twice: `totalRevenue` in whole
 * tokens as an exact decimal string and `totalRevenueAtomic` in the token's atomic units (micro-USDC
 * for USDC) as an integer string (use the
 * latter for sums). `lastCalledAt` and `lastViewedAt` are null before the first call or view.
 * `rejectedPaymentCount` counts the skill's reported payments that the chain check rejected, such
 * as a `broadcast` settlement whose transfer later reverted; its creator lists them with
 * `GET /analytics/:skillId/payments?state=rejected` ({@link SkillPaymentView}). `channels` adds up
 * the calls paid over payment channels ({@link ChannelRevenue}): the claimed ones are already in
 * the paid calls and revenue; the earned ones are not, until claimed on chain. `schemes` and
 * `tiers` (null without volume prices) split the paid calls and revenue; `receiptMismatchCount`
 * counts the calls whose signed receipt names another amount than the chain shows moved.
 */
export const Analytics = T.Object({
  skillId: Uuid(),
  callCount: T.Number(),
  paidCallCount: T.Number({ description: 'calls whose payment is verified on chain' }),
  trialCallCount: T.Optional(T.Number({ description: 'free trial calls (no revenue; not in callCount or paidCallCount)' })),
  viewCount: T.Number(),
  favoriteCount: T.Number(),
  totalRevenue: T.String({ description: 'whole tokens (USDC), exact decimal' }),
  totalRevenueAtomic: T.String({ description: 'the token’s atomic units' }),
  lastCalledAt: Nullable(Timestamp()),
  lastViewedAt: Nullable(Timestamp()),
  rejectedPaymentCount: T.Number({
    description: 'reported payments the on-chain check rejected (a reverted transfer among them); they count in no other figure',
  }),
  channels: ChannelRevenue,
  schemes: T.Optional(T.Object({ exact: SchemeRevenue, upto: SchemeRevenue, batchSettlement: SchemeRevenue })),
  tiers: T.Optional(Nullable(T.Array(TierRevenue), 'the base first, then each step, unknown last')),
  receiptMismatchCount: T.Optional(T.Number()),
  daily: T.Array(
    T.Object({
      date: T.String({ description: 'UTC day, YYYY-MM-DD' }),
      views: T.Number(),
      calls: T.Number(),
      revenue: T.String({ description: 'whole tokens (USDC), exact decimal' }),
      revenueAtomic: T.String({ description: 'the token’s atomic units' }),
    }),
    { description: 'the last `days` days (today included), oldest first, empty days as zeros' },
  ),
});
/** The {@link Analytics} schema's type. */
export type Analytics = Static<typeof Analytics>;

/**
 * Query of `GET /analytics/usage` (consumer credentials): the caller's paid calls, newest first.
 * `limit` is 1–100 (default 20); `cursor` is the `X-Next-Cursor` header of the previous page
 * (see {@link NEXT_CURSOR_HEADER}), absent on the last page.
 */
export const UsageQuery = T.Object({ limit: T.Optional(PageLimit('records per page, 1–100, default 20')), cursor: T.Optional(Cursor) });
/** The {@link UsageQuery} schema's type. */
export type UsageQuery = Static<typeof UsageQuery>;

/**
 * The values of {@link UsageRecordView}'s `verification`, the on-chain check of a usage record's
 * payment: `none` (no payment reference), `pending`, `verified` (counts as revenue) or `rejected`.
 *
 * @example
 * const { items } = await registry.usage();
 * const counted = items.filter((record) => record.verification === 'verified'); // one of VERIFICATION_STATES
 */
export const VERIFICATION_STATES = ['none', 'pending', 'verified', 'rejected'] as const;
/**
 * The states of a call paid over a payment channel in the caller's history
 * ({@link UsageChannelView}): `charged` (charged to the channel; the skill's server has not
 * reported it yet), `earned` (reported by the skill's server, not yet claimed on chain), `claimed`
 * (the channel's receiver claimed it on chain), `settled` (the claim was paid out to the receiver)
 * or `refused` (the registry does not count the server's record: `reason` says why).
 *
 * @example
 * const { items } = await registry.usage();
 * const waiting = items.filter((record) => record.channel?.state === 'earned'); // one of CHANNEL_CALL_STATES
 */
export const CHANNEL_CALL_STATES = ['charged', 'earned', 'claimed', 'settled', 'refused'] as const;

/**
 * A call of the caller's history paid over a payment channel (x402 `batch-settlement`): the
 * channel, its cumulative charge after the call (null for an older client's record of a deposit,
 * whose charge it did not say), the state of the call (one of {@link CHANNEL_CALL_STATES}) and, when
 * the call also deposited into the channel, the deposit's transaction and amount. A deposit is
 * escrow in the channel, not a payment: what is not charged stays the payer's.
 */
export const UsageChannelView = T.Object({
  channelId: T.String(),
  chargedCumulativeAmount: Nullable(T.String()),
  state: T.Union([T.Literal('charged'), T.Literal('earned'), T.Literal('claimed'), T.Literal('settled'), T.Literal('refused')]),
  reason: Nullable(T.String(), 'why refused'),
  depositTransaction: Nullable(T.String()),
  depositAmountAtomic: Nullable(T.String()),
});
/** The {@link UsageChannelView} schema's type. */
export type UsageChannelView = Static<typeof UsageChannelView>;

/**
 * A signed receipt against the chain (`receiptCheck`): `pending` until its payment is checked, then
 * `matches` or `mismatch` (another amount than the chain shows moved; revenue is the chain's).
 *
 * @example
 * const { items } = await registry.skillPayments(skillId, { receipt: 'mismatch' }); // one of RECEIPT_CHECKS
 */
export const RECEIPT_CHECKS = ['pending', 'matches', 'mismatch'] as const;
const ReceiptCheck = T.Union([T.Literal('pending'), T.Literal('matches'), T.Literal('mismatch')]);

/**
 * One record of `GET /analytics/usage`: a paid call of the caller's, with the skill it was for.
 * `amount` is whole tokens (USDC) as an exact decimal string, `amountAtomic` the token's atomic units as an integer string;
 * `paymentRef` is null when none was sent; `verification` is one of {@link VERIFICATION_STATES};
 * `verificationReason` says why a payment was rejected ({@link PAYMENT_REVERTED_REASON} when its
 * transfer reverted: the payer was not charged) or why its check is still pending. `scheme` says
 * how the call was paid: `exact` (a transfer, checked on chain), `upto` (a usage-based settlement of
 * at most the price, once its check found it on chain; `exact` until then) or `batch-settlement`
 * (over a payment channel: `channel` holds its state, `verification` is `none`).
 */
export const UsageRecordView = T.Object({
  id: Uuid(),
  skillId: Uuid(),
  skillSlug: T.String(),
  skillName: T.String(),
  amount: T.String({ description: 'whole tokens (USDC), exact decimal, e.g. "0.001"' }),
  amountAtomic: T.String({ description: 'the token’s atomic units, e.g. "1000" for $0.001 of USDC' }),
  paymentRef: Nullable(T.String(), 'transaction hash or authorization nonce, when one was recorded'),
  network: T.String({ description: 'CAIP-2 network of the skill, e.g. eip155:8453' }),
  verification: T.Union([T.Literal('none'), T.Literal('pending'), T.Literal('verified'), T.Literal('rejected')], {
    description: 'the payment’s on-chain check: none (no reference), pending, verified (counts as revenue) or rejected',
  }),
  verificationReason: Nullable(T.String(), 'why the check rejected the payment (or why it is still pending); null otherwise'),
  scheme: T.Union([T.Literal('exact'), T.Literal('upto'), T.Literal('batch-settlement')]),
  channel: Nullable(UsageChannelView),
  receipt: T.Optional(SignedReceiptBody),
  receiptCheck: T.Optional(Nullable(ReceiptCheck)),
  createdAt: Timestamp(),
});
/** The {@link UsageRecordView} schema's type. */
export type UsageRecordView = Static<typeof UsageRecordView>;
/**
 * Answer of `GET /analytics/usage`: one page of {@link UsageRecordView}, newest first; the next
 * page's cursor is in the `X-Next-Cursor` header.
 */
export const UsageRecordList = T.Array(UsageRecordView);

/**
 * The reason the registry stores for a reported payment whose transaction reverted on chain, for
 * instance a `broadcast` settlement answered before its block while the payer drained their
 * balance: nothing moved, the payer was not charged, and the call counts as neither paid nor
 * revenue. It is the `verificationReason` of a {@link UsageRecordView} and the `reason` of a
 * {@link SkillPaymentView}.
 *
 * @example
 * const { items } = await registry.usage();
 * const reverted = items.filter((record) => record.verificationReason === PAYMENT_REVERTED_REASON);
 */
export const PAYMENT_REVERTED_REASON = 'payment reverted on chain: the payer was not charged';

/**
 * The states `GET /analytics/:skillId/payments` filters by (`state`), the on-chain check of each
 * payment reported for the skill: `pending`, `verified` (counted as revenue) or `rejected`.
 *
 * @example
 * const { items } = await registry.skillPayments(skillId, { state: 'rejected' }); // one of PAYMENT_STATES
 */
export const PAYMENT_STATES = ['pending', 'verified', 'rejected'] as const;

/**
 * Query of `GET /analytics/:skillId/payments` (the skill's creator only): `state` filters by one of
 * {@link PAYMENT_STATES} (default all), `receipt` by the receipt's check (one of
 * {@link RECEIPT_CHECKS}; default all, with a receipt or not), `limit` is 1–100 (default 20) and
 * `cursor` the `X-Next-Cursor` header of the previous page.
 */
export const SkillPaymentsQuery = T.Object({
  state: T.Optional(T.Union([T.Literal('pending'), T.Literal('verified'), T.Literal('rejected')], { description: 'default: every state' })),
  receipt: T.Optional(ReceiptCheck),
  limit: T.Optional(PageLimit('payments per page, 1–100, default 20')),
  cursor: T.Optional(Cursor),
});
/** The {@link SkillPaymentsQuery} schema's type. */
export type SkillPaymentsQuery = Static<typeof SkillPaymentsQuery>;

/**
 * One payment reported for a skill, as its creator sees it in `GET /analytics/:skillId/payments`:
 * the transaction, the amount the listing asked for (whole tokens as an exact decimal, and the token's atomic units), the
 * check's `state` and `reason` ({@link PAYMENT_REVERTED_REASON} for a reverted transfer), the payer
 * once verified, when it was first reported and when the check decided, and, when the call came
 * with the skill server's signed receipt, what it names and how it stands against the chain.
 */
export const SkillPaymentView = T.Object({
  id: Uuid(),
  txHash: T.String({ description: 'the reported transaction hash (lower case) or reference' }),
  network: T.String({ description: 'CAIP-2 network of the payment, e.g. eip155:8453' }),
  amount: T.String({ description: 'USDC the listing asked for, exact decimal' }),
  amountAtomic: T.String({ description: 'the token’s atomic units the listing asked for' }),
  state: T.Union([T.Literal('pending'), T.Literal('verified'), T.Literal('rejected')]),
  reason: Nullable(T.String(), 'why the check rejected it, or why it is still pending'),
  payer: Nullable(T.String(), 'who paid, from the chain, once verified'),
  reportedAt: Timestamp('when the payment was first reported'),
  decidedAt: Nullable(Timestamp(), 'when the check verified or rejected it'),
  receiptCheck: T.Optional(Nullable(ReceiptCheck)),
  receiptAmountAtomic: T.Optional(Nullable(T.String())),
  paidAtomic: T.Optional(Nullable(T.String())),
});
/** The {@link SkillPaymentView} schema's type. */
export type SkillPaymentView = Static<typeof SkillPaymentView>;
/**
 * Answer of `GET /analytics/:skillId/payments`: one page of {@link SkillPaymentView}, newest report
 * first; the next page's cursor is in the `X-Next-Cursor` header.
 */
export const SkillPaymentList = T.Array(SkillPaymentView);

/** `GET /analytics/revenue.csv` query: `from` and `to`, inclusive days; either may be left out. */
export const RevenueQuery = T.Object({ from: T.Optional(QueryDay('from')), to: T.Optional(QueryDay('to')) });
/** The {@link RevenueQuery} schema's type. */
export type RevenueQuery = Static<typeof RevenueQuery>;

/**
 * One payment channel in `GET /analytics/channels`: its on-chain state as the registry last read
 * it (payer, receiver, balance, claimed and settled totals, a pending timed withdrawal; null before
 * the channel was found on chain) and what the calls recorded for it add up to. `state`: `unknown`
 * (not found on chain yet), `unclaimed` (calls earned, not claimed yet), `claimed` (claims not yet
 * settled), `settled` or `open` (nothing charged yet). Amounts are the token's atomic units
 * (micro-USDC for USDC) as integer strings. A payer's list (`role=payer`) reads each channel on
 * chain again when its last read is older than a few seconds, so `checkedAt` is fresh.
 */
export const ChannelView = T.Object({
  channelId: T.String(),
  network: T.String(),
  skills: T.Array(T.String(), { description: 'slugs of the skills whose calls it paid' }),
  payer: Nullable(T.String()),
  receiver: Nullable(T.String()),
  state: T.Union([T.Literal('unknown'), T.Literal('open'), T.Literal('unclaimed'), T.Literal('claimed'), T.Literal('settled')]),
  balanceAtomic: Nullable(T.String(), 'the deposit left in the channel'),
  chargedAtomic: T.String({ description: 'charged for the recorded calls (earned + counted)' }),
  claimedAtomic: T.String({ description: 'the channel’s totalClaimed on chain' }),
  settledAtomic: T.String({ description: 'the part of totalClaimed a settle sweep paid out' }),
  earnedCalls: T.Number(),
  earnedAtomic: T.String(),
  countedCalls: T.Number(),
  countedAtomic: T.String(),
  refusedCalls: T.Number(),
  payerAtomic: Nullable(T.String(), 'deposit − charged (or claimed, if more)'),
  withdrawingAtomic: T.String({ description: 'a pending timed withdrawal; "0" when none' }),
  withdrawInitiatedAt: Nullable(Timestamp()),
  checkedAt: Nullable(Timestamp(), 'when the registry last read it on chain'),
});
/** The {@link ChannelView} schema's type. */
export type ChannelView = Static<typeof ChannelView>;

/**
 * Query of `GET /analytics/channels` (signed in): `role=receiver` (default) lists the channels of
 * the caller's skills, `role=payer` those the caller's wallet pays from.
 */
export const ChannelsQuery = T.Object({
  role: T.Optional(T.Union([T.Literal('receiver'), T.Literal('payer')], { description: 'default receiver' })),
});
/** The {@link ChannelsQuery} schema's type. */
export type ChannelsQuery = Static<typeof ChannelsQuery>;
/** Answer of `GET /analytics/channels`: up to 100 {@link ChannelView}, newest first. */
export const ChannelList = T.Array(ChannelView);
