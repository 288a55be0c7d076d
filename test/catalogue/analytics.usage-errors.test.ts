/**
 * A bad body of the credential-free usage report (`POST /analytics/usage`, another SDK's
 * `{skillSlug, consumerAddress, paymentTxHash, amount}`) or of our consumer's `{skillId, amount}`
 * (or a channel call's `{skillId, amountAtomic, channelId, chargedCumulativeAmount}`) is answered
 * 400 with the field named and the form it must have.
 */
import { beforeAll, describe, expect, it } from 'bun:test';
import { bearer, createKey, jsonPost, walletSignIn } from '../support/auth';
import { json, newCreator } from '../support/catalogue';
import { registryFixture } from '../support/registry';

const PAYER = `0x${'1'.repeat(40)}`;
const TX = `0x${'a'.repeat(64)}`;

describe('usage report errors', () => {
  const fx = registryFixture('embedded');
  let slug: string;
  let skillId: string;
  let key: string;
  beforeAll(async () => {
    const creator = await newCreator(fx.request);
    ({ slug, id: skillId } = await json(await creator.register({ price: '$0.001' })));
    key = (await createKey(fx.request, (await walletSignIn(fx.request)).token, 'consumer')).key;
  });
  const report = async (body: unknown, headers: Record<string, string> = {}) => {
    const res = await fx.request('/analytics/usage', jsonPost(body, headers));
    return { status: res.status, ...(await json<{ error: string; code: string; details: unknown }>(res)) };
  };

  it('names the payer’s address and its form', async () => {
    const answer = await report({ skillSlug: slug, consumerAddress: '0x1', paymentTxHash: TX, amount: '$0.001' });
    expect(answer).toMatchObject({
      status: 400,
      code: 'VALIDATION',
      error: 'Invalid request: field "consumerAddress" must be the payer’s address, "0x" and 40 hex digits',
      details: [{ field: 'consumerAddress', message: 'must be the payer’s address, "0x" and 40 hex digits' }],
    });
  });

  it('names the transaction hash, and a missing amount, each once', async () => {
    const answer = await report({ skillSlug: slug, consumerAddress: PAYER, paymentTxHash: 'nope' });
    expect(answer.error).toBe('Invalid request: field "paymentTxHash" must be the settlement transaction’s hash, "0x" and 64 hex digits');
    expect(answer.details).toEqual([
      { field: 'paymentTxHash', message: 'must be the settlement transaction’s hash, "0x" and 64 hex digits' },
      {
        field: 'amount',
        message: 'is required: the listed price: a USDC string such as "$0.001" or "0.001", or whole micro-USDC such as 1000',
      },
    ]);
  });

  it('calls an amount of the wrong type or form an amount, not a price', async () => {
    expect((await report({ skillSlug: slug, consumerAddress: PAYER, paymentTxHash: TX, amount: true })).error).toBe(
      'Invalid request: field "amount" must be the listed price: a USDC string such as "$0.001" or "0.001", or whole micro-USDC such as 1000',
    );
    const unreadable = await report({ skillSlug: slug, consumerAddress: PAYER, paymentTxHash: TX, amount: 'ten dollars' });
    expect(unreadable.status).toBe(400);
    expect(unreadable.error).toStartWith('Invalid request: field "amount": ');
  });

  it('tells a body that names no skill the two shapes it may have', async () => {
    expect((await report({ consumerAddress: PAYER, amount: 1 })).error).toBe(
      'Invalid request: field "skillSlug" or "skillId" is required: "skillSlug" (the skill’s slug, a string of 1 to 120 characters) without a credential, or "skillId" (the skill’s id, a UUID) with one',
    );
  });

  it('names our consumer’s skill id and amount in their own shape', async () => {
    expect((await report({ skillId: 'nope', amount: 1000 })).error).toBe('Invalid request: field "skillId" must be the skill’s id, a UUID');
    expect((await report({ skillId: crypto.randomUUID(), amount: 1.5 })).error).toBe(
      'Invalid request: field "amount" must be whole micro-USDC from 1 to 1000000000000, as a number or a string of digits',
    );
    expect((await report({ skillId: crypto.randomUUID(), amountAtomic: '0x10' })).error).toBe(
      'Invalid request: field "amountAtomic" must be the amount paid in the token’s atomic units, a string of digits',
    );
  });

  it('names a channel call’s fields, and refuses one half given, with a paymentRef, or charging more than its cumulative charge', async () => {
    const channelId = `0x${'cd'.repeat(32)}`;
    const call = { skillId, amountAtomic: '1000', channelId, chargedCumulativeAmount: '3000' };
    expect((await report({ ...call, channelId: '0x12' }, bearer(key))).error).toBe(
      'Invalid request: field "channelId" must be the payment channel the call was paid over, "0x" and 64 hex digits',
    );
    expect((await report({ ...call, depositTransaction: 'tx' }, bearer(key))).error).toBe(
      'Invalid request: field "depositTransaction" must be the transaction of the channel deposit the call made, "0x" and 64 hex digits',
    );
    const refusals = [
      [{ skillId, amountAtomic: '1000', channelId }, 'a channel call needs both "channelId" and "chargedCumulativeAmount"'],
      [{ ...call, paymentRef: TX }, 'a channel call has no "paymentRef"'],
      [{ ...call, chargedCumulativeAmount: '500' }, "more than the channel's cumulative charge 500"],
      [{ skillId, amountAtomic: '1000', paymentRef: TX, depositTransaction: TX }, 'a deposit is named only with its "channelId"'],
      [{ ...call, depositAmountAtomic: '10000' }, '"depositAmountAtomic": comes with its "depositTransaction"'],
    ] as const;
    for (const [body, reason] of refusals) {
      const answer = await report(body, bearer(key));
      expect(answer).toMatchObject({ status: 400, code: 'VALIDATION' });
      expect(answer.error).toContain(reason);
    }
    expect(await report(call, bearer(key))).toMatchObject({ status: 200 });
  });
});
