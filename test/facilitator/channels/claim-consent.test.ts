/**
 * A claim our receiver authorizer signs moves a channel's claimed total to what the row says, up to
 * the payer's voucher: only the receiver's server knows what it charged. A closed facilitator
 * (`market facilitator`'s default in production) signs one only for a key bound to every row's
 * receiver: a stranger's claim of a payer's latest voucher up to its maximum is refused and nothing
 * is sent. Open, it claims for anyone (as the reference facilitators), refunds still needing the
 * receiver's key. Either way, a claim that would claim nothing (a row not above the channel's
 * claimed total, a channel twice) is refused before anything is signed or sent, signed by the
 * server or by us.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import type { Hex } from 'viem';
import { BATCH_SETTLEMENT_ADDRESS, batchSettlementAbi } from '../../../src/chain/batch-settlement';
import { ConfigError, deriveAuthorizerKey, loadFacilitatorConfig } from '../../../src/config';
import { depositToChannel, type LocalChain, signClaimBatch, signRefund, startChain, type TestAccount } from '../../support/chain';
import { type FacilitatorFixture, startFacilitatorFixture } from '../../support/facilitator';
import { body, channelRequirements, claimRowOf, newChannel, PRICE } from './payloads';

const RECEIVER_KEY = 'receiver-key-0123456789abcdef';
const OTHER_KEY = 'another-receiver-key-0123456789';
const SHARED_KEY = 'a-key-bound-to-two-receivers-0123';
const CONSENT = 'invalid_batch_settlement_evm_claim_receiver_consent_required';
const NOT_ABOVE = 'invalid_batch_settlement_evm_claim_not_above_claimed';
const TWICE = 'invalid_batch_settlement_evm_claim_duplicate_channel';
const contract = { address: BATCH_SETTLEMENT_ADDRESS, abi: batchSettlementAbi } as const;

let chain: LocalChain;
let closed: FacilitatorFixture;
let open: FacilitatorFixture;
let receiver: `0x${string}`;
let other: `0x${string}`;
let third: `0x${string}`;
beforeAll(async () => {
  chain = await startChain({ relayers: 3 });
  const accounts = await Promise.all([chain.createAccount(), chain.createAccount(), chain.createAccount()]);
  [receiver, other, third] = [accounts[0]!.address, accounts[1]!.address, accounts[2]!.address];
  const receiverKeys = [
    { receiver, key: RECEIVER_KEY },
    { receiver: other, key: OTHER_KEY },
    { receiver, key: SHARED_KEY },
    { receiver: third, key: SHARED_KEY },
  ];
  // Both sign as the authorizer the payloads name (ours); each sends from its own relayer, the chain's own deposits from relayers[0].
  const authorizerPrivateKey = deriveAuthorizerKey(chain.accounts.relayer.privateKey);
  closed = await startFacilitatorFixture(chain, 'embedded', {
    relayers: [chain.accounts.relayers[1]!],
    config: { open: false, authorizerPrivateKey, receiverKeys },
  });
  open = await startFacilitatorFixture(chain, 'embedded', {
    relayers: [chain.accounts.relayers[2]!],
    config: { open: true, authorizerPrivateKey, receiverKeys },
  });
}, 60_000);
afterAll(async () => {
  await closed?.close();
  await open?.close();
  await chain?.stop();
});

type Answer = Record<string, any>;
const json = async (res: Response) => (await res.json()) as Answer;
const claimed = async (channelId: Hex) =>
  (await chain.publicClient.readContract({ ...contract, functionName: 'channels', args: [channelId] }))[1];
const sentBy = (f: FacilitatorFixture) => chain.publicClient.getTransactionCount({ address: f.facilitator.relayers[0]! });

/** A channel from a new payer to `to` naming `authorizer` (ours by default) with 10 × PRICE deposited. */
async function funded(to: `0x${string}` = receiver, authorizer?: `0x${string}`) {
  const payer = (await chain.createAccount({ usdc: 1_000_000n })) as TestAccount;
  const { config, channelId } = newChannel(chain, payer, to, authorizer);
  await depositToChannel(chain, payer, config, 10n * PRICE);
  const operation = { ...channelRequirements(chain, to, config.receiverAuthorizer), amount: '0', maxTimeoutSeconds: 0, extra: {} };
  return { payer, config, channelId, operation };
}

/** The answer of `f` to a claim of `claims` (rows as claimRowOf makes them), sent with `headers`. */
const claim = async (f: FacilitatorFixture, operation: object, claims: unknown[], headers: Record<string, string> = {}, signature?: Hex) =>
  json(
    await f.post(
      '/settle',
      body(operation as never, { type: 'claim', claims, ...(signature ? { claimAuthorizerSignature: signature } : {}) }),
      headers,
    ),
  );

const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

describe('a closed facilitator signs claims only for the receiver', () => {
  it('refuses a stranger’s claim of the payer’s latest voucher up to its maximum, with no key, another receiver’s or an unbound one, and sends nothing', async () => {
    const { payer, config, channelId, operation } = await funded();
    // The server charged 3 calls; the payer's latest voucher allows 4.
    const greedy = [await claimRowOf(chain, payer, config, 4n * PRICE, 4n * PRICE)];
    const sent = await sentBy(closed);
    for (const headers of [{}, bearer(OTHER_KEY), bearer('not-a-bound-key-at-all')]) {
      const answer = await claim(closed, operation, greedy, headers);
      expect(answer).toMatchObject({ success: false, errorReason: CONSENT, transaction: '' });
      expect(answer.errorMessage).toContain('FACILITATOR_RECEIVER_KEYS');
      expect(answer.errorMessage).not.toContain(OTHER_KEY);
    }
    expect(await sentBy(closed)).toBe(sent);
    expect(await claimed(channelId)).toBe(0n);
    expect(closed.logs.join('\n')).not.toContain(RECEIVER_KEY);
    expect(closed.logs.join('\n')).not.toContain(OTHER_KEY);
  });

  it('claims what the receiver’s server asks with the key bound to the receiver', async () => {
    const { payer, config, channelId, operation } = await funded();
    const answer = await claim(closed, operation, [await claimRowOf(chain, payer, config, 4n * PRICE, 3n * PRICE)], bearer(RECEIVER_KEY));
    expect(answer).toMatchObject({ success: true, amount: '' });
    expect(await claimed(channelId)).toBe(3n * PRICE);
  });

  it('claims rows of two receivers only with a key bound to both', async () => {
    const a = await funded(receiver);
    const b = await funded(third);
    const rows = [
      await claimRowOf(chain, a.payer, a.config, 2n * PRICE, 2n * PRICE),
      await claimRowOf(chain, b.payer, b.config, 2n * PRICE, 2n * PRICE),
    ];
    const sent = await sentBy(closed);
    expect(await claim(closed, a.operation, rows, bearer(RECEIVER_KEY))).toMatchObject({ success: false, errorReason: CONSENT });
    expect(await sentBy(closed)).toBe(sent);
    expect(await claim(closed, a.operation, rows, bearer(SHARED_KEY))).toMatchObject({ success: true });
    expect([await claimed(a.channelId), await claimed(b.channelId)]).toEqual([2n * PRICE, 2n * PRICE]);
  });

  it('refuses claims riding on a refund the server signed: rows of another receiver’s channel need its key', async () => {
    // A stranger runs a channel of its own (its own receiver authorizer) and completes its refund, adding a row of the victim's channel.
    const victim = await funded(receiver);
    const authorizer = (await chain.createAccount()) as TestAccount;
    const own = await funded(other, authorizer.address);
    const refund = {
      type: 'refund',
      channelConfig: own.config,
      voucher: {
        channelId: own.channelId,
        maxClaimableAmount: '0',
        signature: (await claimRowOf(chain, own.payer, own.config, 0n, 0n)).signature,
      },
      amount: `${10n * PRICE}`,
      refundNonce: '0',
      refundAuthorizerSignature: await signRefund(chain, authorizer, own.config, 0n, 10n * PRICE),
      claims: [await claimRowOf(chain, victim.payer, victim.config, 4n * PRICE, 4n * PRICE)],
    };
    const sent = await sentBy(closed);
    const answer = await json(await closed.post('/settle', body(own.operation as never, refund)));
    expect(answer).toMatchObject({ success: false, errorReason: CONSENT, transaction: '' });
    expect(await sentBy(closed)).toBe(sent);
    expect(await claimed(victim.channelId)).toBe(0n);
  });
});

describe('claims that would claim nothing', () => {
  it('refuses a row not above the claimed total, and a channel twice, when we sign; the very claim again answers its outcome; nothing is sent', async () => {
    for (const f of [closed, open]) {
      const { payer, config, channelId, operation } = await funded();
      const three = [await claimRowOf(chain, payer, config, 4n * PRICE, 3n * PRICE)];
      const first = await claim(f, operation, three, bearer(RECEIVER_KEY));
      expect(first).toMatchObject({ success: true });
      const sent = await sentBy(f);
      expect(await claim(f, operation, three, bearer(RECEIVER_KEY))).toMatchObject({ success: true, transaction: first.transaction });
      // The same total again on a later voucher, or a lower one: a no-op the contract would let through.
      const restated = await claim(f, operation, [await claimRowOf(chain, payer, config, 5n * PRICE, 3n * PRICE)], bearer(RECEIVER_KEY));
      expect(restated).toMatchObject({ success: false, errorReason: NOT_ABOVE, transaction: '' });
      expect(restated.errorMessage).toContain(channelId.toLowerCase());
      const below = [await claimRowOf(chain, payer, config, 4n * PRICE, 2n * PRICE)];
      expect(await claim(f, operation, below, bearer(RECEIVER_KEY))).toMatchObject({ success: false, errorReason: NOT_ABOVE });
      const four = await claimRowOf(chain, payer, config, 4n * PRICE, 4n * PRICE);
      expect(await claim(f, operation, [four, four], bearer(RECEIVER_KEY))).toMatchObject({ success: false, errorReason: TWICE });
      expect(await sentBy(f)).toBe(sent);
      expect(await claimed(channelId)).toBe(3n * PRICE);
    }
  });

  it('refuses them signed by the server’s own authorizer too; the very claim again answers its recorded outcome', async () => {
    const authorizer = (await chain.createAccount()) as TestAccount;
    const { payer, config, channelId, operation } = await funded(receiver, authorizer.address);
    const signed = async (rows: Awaited<ReturnType<typeof claimRowOf>>[]) =>
      signClaimBatch(
        chain,
        authorizer,
        rows.map((r) => ({
          ...r,
          voucher: { ...r.voucher, maxClaimableAmount: BigInt(r.voucher.maxClaimableAmount) },
          totalClaimed: BigInt(r.totalClaimed),
        })),
      );
    const three = [await claimRowOf(chain, payer, config, 4n * PRICE, 3n * PRICE)];
    const first = await claim(closed, operation, three, {}, await signed(three));
    expect(first).toMatchObject({ success: true });
    const sent = await sentBy(closed);
    expect(await claim(closed, operation, three, {}, await signed(three))).toMatchObject({ success: true, transaction: first.transaction });

    const restated = [await claimRowOf(chain, payer, config, 5n * PRICE, 3n * PRICE)];
    expect(await claim(closed, operation, restated, {}, await signed(restated))).toMatchObject({ success: false, errorReason: NOT_ABOVE });
    const four = await claimRowOf(chain, payer, config, 4n * PRICE, 4n * PRICE);
    expect(await claim(closed, operation, [four, four], {}, await signed([four, four]))).toMatchObject({
      success: false,
      errorReason: TWICE,
    });
    expect(await sentBy(closed)).toBe(sent);
    expect(await claimed(channelId)).toBe(3n * PRICE);
  });
});

describe('an open facilitator', () => {
  it('claims for anyone, up to the payer’s voucher (documented), and still refuses a refund without the receiver’s key', async () => {
    const { payer, config, channelId, operation } = await funded();
    expect(await claim(open, operation, [await claimRowOf(chain, payer, config, 4n * PRICE, 4n * PRICE)])).toMatchObject({ success: true });
    expect(await claimed(channelId)).toBe(4n * PRICE);

    const refund = {
      type: 'refund',
      channelConfig: config,
      voucher: {
        channelId,
        maxClaimableAmount: `${4n * PRICE}`,
        signature: (await claimRowOf(chain, payer, config, 4n * PRICE, 4n * PRICE)).signature,
      },
      amount: `${6n * PRICE}`,
      refundNonce: '0',
      claims: [],
    };
    const sent = await sentBy(open);
    expect(await json(await open.post('/settle', body(operation as never, refund)))).toMatchObject({
      success: false,
      errorReason: 'invalid_batch_settlement_evm_refund_receiver_consent_required',
    });
    expect(await sentBy(open)).toBe(sent);
  });
});

describe('FACILITATOR_OPEN', () => {
  const env = { FACILITATOR_PRIVATE_KEY: `0x${'11'.repeat(32)}`, FACILITATOR_NETWORK: 'eip155:8453' };
  const openIn = (extra: Record<string, string>) => loadFacilitatorConfig({ ...env, ...extra }, '/').open;

  it('is closed by default with NODE_ENV=production, open otherwise, and set either way explicitly', () => {
    expect(openIn({ NODE_ENV: 'production' })).toBe(false);
    expect(openIn({ NODE_ENV: 'development' })).toBe(true);
    expect(openIn({ NODE_ENV: 'test' })).toBe(true);
    expect(openIn({ NODE_ENV: 'production', FACILITATOR_OPEN: 'true' })).toBe(true);
    expect(openIn({ NODE_ENV: 'development', FACILITATOR_OPEN: 'false' })).toBe(false);
    expect(() => openIn({ FACILITATOR_OPEN: 'maybe' })).toThrow(ConfigError);
  });
});
