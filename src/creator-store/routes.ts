/**
 * `/hosted-channels/*` on a facilitator: the channels it keeps for the skill servers of receivers
 * that bound a key to their address (FACILITATOR_RECEIVER_KEYS). A server presents the key as
 * `Authorization: Bearer <key>` and reaches only its receiver's channels. The SDK's
 * `hostedChannelStore` speaks these routes.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { Elysia, t } from 'elysia';
import { ADDRESS_PATTERN, BYTES32_PATTERN, type ChannelConfig } from 'skill-market/x402';
import type { ChannelState } from 'skill-market/creator';
import type { ReceiverKey } from '../config';
import { AppError } from '../http';
import { type HostedChannels, MAX_HOLD_MS } from './hosted';

const digest = (key: string) => createHash('sha256').update(key).digest();
const source = (pattern: RegExp) => pattern.source;

const Address = t.String({ pattern: source(ADDRESS_PATTERN) });
const Bytes32 = t.String({ pattern: source(BYTES32_PATTERN) });
const Uint = t.String({ pattern: '^(?:0|[1-9][0-9]{0,77})$' });
const Config = t.Object({
  payer: Address,
  payerAuthorizer: Address,
  receiver: Address,
  receiverAuthorizer: Address,
  token: Address,
  withdrawDelay: t.Integer({ minimum: 0, maximum: 2 ** 40 - 1 }),
  salt: Bytes32,
});
const Millis = t.Number({ minimum: 0 });
/** A ChannelState as the SDK writes it; fields added by later versions pass through. */
const State = t.Object(
  {
    channelId: Bytes32,
    config: Config,
    chargedCumulativeAmount: Uint,
    signedMaxClaimable: Uint,
    signature: t.String({ pattern: '^0x([0-9a-fA-F]{2})*$', maxLength: 4096 }),
    balance: Uint,
    totalClaimed: Uint,
    withdrawRequestedAt: Millis,
    refundNonce: Uint,
    onchainSyncedAt: Millis,
    lastRequestTimestamp: Millis,
    unclaimedSince: Millis,
  },
  { additionalProperties: true },
);
const Lease = t.String({ minLength: 1, maxLength: 64 });
const Hold = t.Optional(t.Integer({ minimum: 1, maximum: MAX_HOLD_MS }));

/** The routes; `keys` bind keys to receivers. */
export function hostedChannelRoutes(hosted: HostedChannels, keys: readonly ReceiverKey[], prefix = '') {
  const bound = keys.map(({ receiver, key }) => ({ receiver: receiver.toLowerCase(), hash: digest(key) }));
  /** The receiver whose key the request presents. */
  const receiverOf = (authorization: string | undefined): string => {
    const presented = /^Bearer\s+(\S+)$/i.exec(authorization ?? '')?.[1];
    if (!presented) throw new AppError('UNAUTHORIZED', 'Authentication required: a key bound to the channels’ receiver');
    const hash = digest(presented);
    // Every key is compared, so the time taken says nothing about which (if any) matched.
    let found: string | undefined;
    for (const entry of bound) if (timingSafeEqual(entry.hash, hash)) found = entry.receiver;
    if (!found) throw new AppError('UNAUTHORIZED', 'Invalid token');
    return found;
  };
  const tags = ['Hosted channels'];
  return new Elysia({ prefix: `${prefix}/hosted-channels` })
    .post(
      '/lease',
      async ({ body, headers }) => {
        const answer = await hosted.lease(
          receiverOf(headers.authorization),
          body.channelId,
          body.holdMs ?? 60_000,
          body.config as ChannelConfig | undefined,
        );
        if (answer.type === 'busy') throw new AppError('CONFLICT', 'The channel is busy with another call; retry shortly');
        if (answer.type === 'forbidden') throw new AppError('FORBIDDEN', `Not your channel: ${answer.why}`);
        return { lease: answer.lease, state: answer.state };
      },
      {
        body: t.Object({ channelId: Bytes32, holdMs: Hold, config: t.Optional(Config) }),
        detail: { tags, summary: 'Takes a channel for one call: its state, and a lease to write the next one under' },
      },
    )
    .post(
      '/commit',
      async ({ body, headers }) => {
        const next = body.next === undefined ? {} : { next: body.next as ChannelState | null };
        const answer = await hosted.commit(receiverOf(headers.authorization), body.channelId, body.lease, next);
        if (answer.type === 'lost')
          throw new AppError('CONFLICT', 'The lease lapsed and another call took the channel: nothing was written');
        if (answer.type === 'invalid') throw new AppError('VALIDATION', `Invalid request: ${answer.why}`);
        return { written: body.next !== undefined };
      },
      {
        body: t.Object({ channelId: Bytes32, lease: Lease, next: t.Optional(t.Union([State, t.Null()])) }),
        detail: { tags, summary: 'Writes the next state of a leased channel (or deletes it, or leaves it) and ends the lease' },
      },
    )
    .get('/', async ({ headers }) => ({ channels: await hosted.list(receiverOf(headers.authorization)) }), {
      detail: { tags, summary: "Every channel of the key's receiver" },
    })
    .get(
      '/:channelId',
      async ({ params, headers }) => {
        const receiver = receiverOf(headers.authorization);
        if (!BYTES32_PATTERN.test(params.channelId)) throw new AppError('VALIDATION', 'Invalid request: a channel id is 0x + 64 hex');
        return { state: await hosted.get(receiver, params.channelId) };
      },
      { detail: { tags, summary: 'One channel of the key’s receiver (null when unknown)' } },
    )
    .post(
      '/claims/lease',
      async ({ body, headers }) => {
        const lease = await hosted.claimLease(receiverOf(headers.authorization), body.holdMs ?? 60_000);
        if (!lease) throw new AppError('CONFLICT', 'Another server is claiming these channels');
        return { lease };
      },
      {
        body: t.Object({ holdMs: Hold }),
        detail: { tags, summary: "Takes the receiver's claim round: one server claims at a time" },
      },
    )
    .post(
      '/claims/release',
      async ({ body, headers }) => {
        await hosted.releaseClaim(receiverOf(headers.authorization), body.lease);
        return { released: true };
      },
      { body: t.Object({ lease: Lease }), detail: { tags, summary: 'Ends a claim round' } },
    );
}
