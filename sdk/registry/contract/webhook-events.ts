/**
 * What each webhook event says: the body every delivery carries is `{ type, timestamp, data }`,
 * `data` versioned by `data.version` (a field's meaning never changes within a version; new fields
 * may appear). Amounts are integers of the token's smallest unit as decimal strings.
 */
import { type Static, type TSchema, Type as T } from '@sinclair/typebox';
import { BYTES32_PATTERN } from '../../x402/patterns';
import { AddressString, Timestamp } from './common';
import type { WebhookEvent } from './webhooks';

const Hash = (description: string) => T.String({ pattern: BYTES32_PATTERN.source, description });
const Atomic = (description: string) => T.String({ pattern: '^[0-9]+$', description });
const Slug = T.String({ description: 'the skill’s slug' });
const Version = T.Literal(1);

/**
 * The `data` of each event type (version 1), as TypeBox schemas.
 *
 * @example const ok = Value.Check(WEBHOOK_EVENT_DATA['call.paid'], event.data);
 */
export const WEBHOOK_EVENT_DATA = {
  'call.paid': T.Union([
    T.Object(
      {
        version: Version,
        skill: Slug,
        amount: Atomic('what the call paid, in the token’s smallest unit'),
        payer: AddressString('who paid'),
        scheme: T.String({ description: 'the x402 scheme it was paid with, e.g. `exact`' }),
        transaction: Hash('the transaction that moved the money'),
        network: T.String({ description: 'CAIP-2 network, e.g. `eip155:8453`' }),
        blockNumber: Atomic('the block the transaction was mined in'),
        reportedAt: Timestamp('when the skill server reported the call'),
      },
      { description: 'a transfer, sent once verified on chain' },
    ),
    T.Object(
      {
        version: Version,
        skill: Slug,
        scheme: T.Literal('batch-settlement'),
        amount: Atomic('the call’s charge'),
        channelId: Hash('the payment channel'),
        chargedCumulativeAmount: Atomic('the channel’s cumulative charge after the call'),
        network: T.String(),
        payer: T.Union([AddressString(), T.Null()], { description: 'null until the registry read the channel' }),
        state: T.Literal('earned', { description: 'charged, not yet claimed (no revenue yet)' }),
        reportedAt: Timestamp('when the skill server reported the call'),
      },
      { description: 'a call paid over a payment channel, sent when reported' },
    ),
  ]),
  'payment.reverted': T.Object({
    version: Version,
    skill: Slug,
    transaction: Hash('the reported transaction, which reverted'),
    network: T.String(),
    reason: T.String(),
  }),
  'receipt.mismatch': T.Object({
    version: Version,
    skill: Slug,
    transaction: Hash('the payment'),
    network: T.String(),
    receiptAmount: Atomic('what the signed receipt names'),
    chainAmount: Atomic('what the chain shows moved'),
    reportedAt: Timestamp(),
  }),
  'channel.claimed': T.Object({
    version: Version,
    skill: Slug,
    channelId: Hash('the payment channel (x402 batch-settlement) the calls were paid over'),
    network: T.String({ description: 'CAIP-2 network, e.g. `eip155:8453`' }),
    payer: AddressString('who deposited into the channel'),
    receiver: AddressString('the skill’s payment address, the channel’s receiver'),
    calls: T.Integer({ minimum: 1, description: 'calls of the skill newly counted as paid' }),
    amount: Atomic('what those calls charged, now counted as revenue'),
    totalClaimed: Atomic('the channel’s totalClaimed on chain'),
    settledClaimed: Atomic('the part of totalClaimed its receiver has settled'),
  }),
  'channel.settled': T.Object({
    version: Version,
    skill: Slug,
    channelId: Hash('the payment channel'),
    network: T.String(),
    payer: AddressString('who deposited into the channel'),
    receiver: AddressString('the payment address the sweep paid'),
    calls: T.Integer({ minimum: 1, description: 'counted calls of the skill newly settled' }),
    amount: Atomic('what those calls charged, now paid out to the receiver'),
    totalClaimed: Atomic('the channel’s totalClaimed on chain'),
    settledClaimed: Atomic('the part of totalClaimed its receiver has settled'),
  }),
  'review.created': T.Object({
    version: Version,
    skill: Slug,
    reviewId: T.String(),
    score: T.Integer({ minimum: 1, maximum: 5, description: 'stars, 1–5' }),
    comment: T.Union([T.String(), T.Null()]),
    reviewer: T.Union([AddressString('the reviewer’s wallet'), T.Null()]),
  }),
  'key.revoked': T.Object({
    version: Version,
    keyId: T.String(),
    name: T.String(),
    type: T.String({ description: '`creator` (sk_) or `consumer` (ck_)' }),
    prefix: T.String({ description: 'the first characters of the key, as the dashboard shows them' }),
  }),
  'skill.down': T.Object({
    version: Version,
    server: T.String({ description: 'the skill server that stopped answering' }),
    skills: T.Array(Slug, { description: 'the creator’s active skills on it' }),
    reason: T.Optional(T.String()),
  }),
  'skill.up': T.Object({
    version: Version,
    server: T.String({ description: 'the skill server that answers again' }),
    skills: T.Array(Slug),
    reason: T.Optional(T.String()),
  }),
  'skill.hidden': T.Object({
    version: Version,
    skill: Slug,
    reason: T.String({ description: 'why the operators hid it' }),
  }),
  'skill.restored': T.Object({
    version: Version,
    skill: Slug,
    reason: T.String({ description: 'why the operators listed it again' }),
  }),
  'creator.suspended': T.Object({
    version: Version,
    reason: T.String({ description: 'why the operators suspended the account: its skills are hidden, its writes refused' }),
    skills: T.Array(Slug, { description: 'the account’s skills, hidden while it is suspended' }),
  }),
  'creator.restored': T.Object({
    version: Version,
    reason: T.String({ description: 'why the operators lifted the suspension' }),
    skills: T.Array(Slug),
  }),
  'webhook.test': T.Object({ version: Version, message: T.String() }),
} satisfies Record<WebhookEvent, TSchema>;

/** Distributes Omit over a union (each form of `call.paid` keeps its own fields). */
type OmitEach<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
/** The `data` of event type `E`, without its `version` (the registry adds it). */
export type WebhookEventData<E extends WebhookEvent> = OmitEach<Static<(typeof WEBHOOK_EVENT_DATA)[E]>, 'version'>;

/**
 * The body of a delivery of event type `E`, as a creator's receiver reads it after verifying its
 * signature.
 *
 * @example
 * const event = new Webhook(secret).verify(body, headers) as WebhookDelivery<'call.paid'>;
 * if (event.type === 'call.paid') book(event.data.skill, BigInt(event.data.amount));
 */
export const webhookDelivery = <E extends WebhookEvent>(type: E) =>
  T.Object({
    type: T.Literal(type),
    timestamp: Timestamp('when the event happened'),
    data: WEBHOOK_EVENT_DATA[type],
  });
/** The {@link webhookDelivery} body's type for event type `E`. */
export type WebhookDelivery<E extends WebhookEvent> = { type: E; timestamp: string; data: Static<(typeof WEBHOOK_EVENT_DATA)[E]> };
