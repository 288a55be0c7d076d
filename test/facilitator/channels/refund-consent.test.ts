/**
 * A refund our receiver authorizer signs needs the receiver's consent (a key bound to it in
 * FACILITATOR_RECEIVER_KEYS): a payer who posts one to /settle with an old voucher, to get back what
 * the server answered but has not claimed yet, is refused and nothing is sent; a key bound to
 * another receiver does not help; the receiver's own key refunds.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { BATCH_SETTLEMENT_ADDRESS, batchSettlementAbi } from '../../../src/chain/batch-settlement';
import { loadFacilitatorConfig } from '../../../src/config';
import { type LocalChain, startChain, type TestAccount } from '../../support/chain';
import { type FacilitatorFixture, startFacilitatorFixture } from '../../support/facilitator';
import { body, channelRequirements, claimRowOf, depositPayload, newChannel, PRICE } from './payloads';

const RECEIVER_KEY = 'receiver-key-0123456789abcdef';
const OTHER_KEY = 'another-receiver-key-0123456789';
const CONSENT = 'invalid_batch_settlement_evm_refund_receiver_consent_required';
const contract = { address: BATCH_SETTLEMENT_ADDRESS, abi: batchSettlementAbi } as const;

let chain: LocalChain;
let f: FacilitatorFixture;
let receiver: `0x${string}`;
beforeAll(async () => {
  chain = await startChain({});
  receiver = (await chain.createAccount()).address;
  const other = (await chain.createAccount()).address;
  f = await startFacilitatorFixture(chain, 'embedded', {
    config: {
      receiverKeys: [
        { receiver, key: RECEIVER_KEY },
        { receiver: other, key: OTHER_KEY },
      ],
    },
  });
}, 60_000);
afterAll(async () => {
  await f?.close();
  await chain?.stop();
});

const json = async (res: Response) => (await res.json()) as Record<string, any>;

/** A channel naming our authorizer with 10 × PRICE deposited; the server answered 3 calls, claimed none. */
async function answeredThree() {
  const payer = (await chain.createAccount({ usdc: 1_000_000n })) as TestAccount;
  const { config, channelId } = newChannel(chain, payer, receiver);
  const requirements = channelRequirements(chain, receiver);
  const deposit = await depositPayload(chain, payer, config, 10n * PRICE, PRICE);
  expect((await json(await f.post('/settle', body(requirements, deposit)))).success).toBe(true);
  return { payer, config, channelId, requirements };
}

/** The refund settle payload of a payer holding only their first voucher: claim 1 × PRICE, refund the other 9. */
async function refundOnOldVoucher(payer: TestAccount, config: ReturnType<typeof newChannel>['config'], channelId: `0x${string}`) {
  const claim = await claimRowOf(chain, payer, config, PRICE, PRICE);
  return {
    type: 'refund',
    channelConfig: config,
    voucher: { channelId, maxClaimableAmount: `${PRICE}`, signature: claim.signature },
    amount: `${9n * PRICE}`,
    refundNonce: '0',
    claims: [claim],
  };
}

const channelBalance = async (channelId: `0x${string}`) =>
  (await chain.publicClient.readContract({ ...contract, functionName: 'channels', args: [channelId] }))[0];

describe('refunds signed by our receiver authorizer', () => {
  it('refuses a payer’s refund without the receiver’s key, or with another receiver’s, and sends nothing', async () => {
    const { payer, config, channelId, requirements } = await answeredThree();
    const request = body(requirements, await refundOnOldVoucher(payer, config, channelId));
    const relayer = chain.accounts.relayer.address;
    const sent = await chain.publicClient.getTransactionCount({ address: relayer });
    const held = await chain.balanceOf(payer.address);

    const attempts: Record<string, string>[] = [
      {},
      { authorization: `Bearer ${OTHER_KEY}` },
      { authorization: 'Bearer not-a-bound-key-at-all' },
    ];
    for (const headers of attempts) {
      const answer = await json(await f.post('/settle', request, headers));
      expect(answer).toMatchObject({ success: false, errorReason: CONSENT, transaction: '' });
      expect(answer.errorMessage).toContain('MARKET_RECEIVER_AUTHORIZER_KEY');
      expect(answer.errorMessage).toContain('FACILITATOR_RECEIVER_KEYS');
      expect(answer.errorMessage).not.toContain(OTHER_KEY);
    }
    expect(await chain.publicClient.getTransactionCount({ address: relayer })).toBe(sent);
    expect(await channelBalance(channelId)).toBe(10n * PRICE);
    expect(await chain.balanceOf(payer.address)).toBe(held);
    expect(f.logs.join('\n')).not.toContain(RECEIVER_KEY);
    expect(f.logs.join('\n')).not.toContain(OTHER_KEY);
  });

  it('refunds with the key bound to the channel’s receiver', async () => {
    const { payer, config, channelId, requirements } = await answeredThree();
    const held = await chain.balanceOf(payer.address);
    const request = body(requirements, await refundOnOldVoucher(payer, config, channelId));
    const answer = await json(await f.post('/settle', request, { authorization: `Bearer ${RECEIVER_KEY}` }));
    expect(answer).toMatchObject({ success: true, amount: `${9n * PRICE}` });
    expect(await chain.balanceOf(payer.address)).toBe(held + 9n * PRICE);
    expect(await channelBalance(channelId)).toBe(PRICE);
  });
});

describe('a bound key beside FACILITATOR_API_KEYS', () => {
  it('passes the API key check, so one Authorization header carries both', async () => {
    const keyed = await startFacilitatorFixture(chain, 'embedded', {
      config: { apiKeys: ['operator-api-key-0123456789'], receiverKeys: [{ receiver, key: RECEIVER_KEY }] },
    });
    try {
      const payer = (await chain.createAccount({ usdc: 1_000_000n })) as TestAccount;
      const { config, channelId } = newChannel(chain, payer, receiver);
      const request = body(channelRequirements(chain, receiver), await refundOnOldVoucher(payer, config, channelId));
      expect((await keyed.post('/verify', request)).status).toBe(401);
      expect((await keyed.post('/verify', request, { authorization: 'Bearer unknown-key-0123456789' })).status).toBe(401);
      expect((await keyed.post('/verify', request, { authorization: `Bearer ${RECEIVER_KEY}` })).status).toBe(200);
    } finally {
      await keyed.close();
    }
  });
});

describe('FACILITATOR_RECEIVER_KEYS', () => {
  const env = { FACILITATOR_PRIVATE_KEY: `0x${'11'.repeat(32)}`, FACILITATOR_NETWORK: 'eip155:8453' };
  const receiverAddress = '0x1111111111111111111111111111111111111111';

  it('reads <receiver>=<key> pairs, and refuses a short key or a bad address without echoing the key', () => {
    expect(loadFacilitatorConfig({ ...env, FACILITATOR_RECEIVER_KEYS: ` ${receiverAddress}=${RECEIVER_KEY} ` }, '/').receiverKeys).toEqual([
      { receiver: receiverAddress, key: RECEIVER_KEY },
    ]);
    expect(loadFacilitatorConfig(env, '/').receiverKeys).toEqual([]);
    for (const bad of [`${receiverAddress}=short`, `0x12=${RECEIVER_KEY}`, RECEIVER_KEY]) {
      let message = '';
      try {
        loadFacilitatorConfig({ ...env, FACILITATOR_RECEIVER_KEYS: bad }, '/');
      } catch (error) {
        message = (error as Error).message;
      }
      expect(message).toContain('FACILITATOR_RECEIVER_KEYS');
      expect(message).not.toContain(RECEIVER_KEY);
    }
  });
});
