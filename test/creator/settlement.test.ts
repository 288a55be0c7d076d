/**
 * The settlement watcher on its own, over the real proof ledger: what each answer of the
 * facilitator (and of the chain) makes of a held call. The facilitator and the chain here are
 * scripted answers; the HTTP and on-chain paths are covered by server.unknown-outcome.test.ts
 * and test/e2e/payment-faults.system.test.ts.
 */
import { describe, expect, it } from 'bun:test';
import type { FacilitatorClient, SettlementOutcome } from '../../sdk/creator/facilitator-client';
import { createProofLedger } from '../../sdk/creator/schemes/exact/ledger';
import type { SettledCall, SkillRoute } from '../../sdk/creator/scheme';
import { createSettlementWatcher, type HeldCall } from '../../sdk/creator/schemes/exact/settlement';
import { skill } from '../../sdk/creator/skill';
import { buildPaymentTerms, type AuthorizationUse, type DecodedPayment, type SettleResponse } from '../../sdk/x402/index';
import { eventually } from '../support/eventually';
import { recordingLogger } from '../support/skill-server';

const PAYER = '0x1111111111111111111111111111111111111111';
const PAY_TO = '0x2222222222222222222222222222222222222222';
const ASSET = { address: '0x3333333333333333333333333333333333333333', name: 'USD Coin', version: '2', decimals: 6 } as const;
const TX = `0x${'ab'.repeat(32)}`;

const route: SkillRoute = {
  name: 'echo',
  skill: skill({ price: '$0.01' }, () => ({})),
  amount: 10_000n,
  terms: buildPaymentTerms({ amount: 10_000n, payTo: PAY_TO, network: 'eip155:84532', asset: ASSET, resourceUrl: 'http://localhost/echo' }),
  offers: new Map(),
};

/** A facilitator answering `/settlements` (and `/settle`) from a script, last answer repeated. */
function scripted(
  outcomes: (SettlementOutcome | Error)[],
  settle?: () => SettleResponse,
): FacilitatorClient & { asked: number; settled: number; modes: (string | undefined)[] } {
  const next = () => {
    const outcome = outcomes[Math.min(client.asked++, outcomes.length - 1)]!;
    if (outcome instanceof Error) throw outcome;
    return outcome;
  };
  const client = {
    asked: 0,
    settled: 0,
    modes: [] as (string | undefined)[],
    verify: () => Promise.reject(new Error('not used')),
    supported: () => Promise.resolve([]),
    async settle(_payment: unknown, _requirements: unknown, _resource: unknown, mode?: string) {
      client.settled++;
      client.modes.push(mode);
      if (!settle) throw new Error('no settle scripted');
      return settle();
    },
    settlement: async () => next(),
    settlements: async (items: readonly unknown[]) => items.map(() => next()),
    forward: async () => {
      throw new Error('no channels here');
    },
  };
  return client;
}

const settledReceipt = (): SettleResponse => ({ success: true, transaction: TX, network: 'eip155:84532', payer: PAYER });

function held(validBefore = Math.floor(Date.now() / 1000) + 60) {
  const ledger = createProofLedger();
  const key = `k-${crypto.randomUUID()}`;
  ledger.claim(key, 'call', BigInt(validBefore));
  ledger.hold(key, { status: 200, headers: { 'Content-Type': 'application/json' }, body: '{"success":true,"result":42}' });
  const payment = {
    authorization: {
      from: PAYER,
      to: PAY_TO,
      value: '10000',
      validAfter: '0',
      validBefore: String(validBefore),
      nonce: `0x${'01'.repeat(32)}`,
    },
  } as unknown as DecodedPayment;
  const call: HeldCall = { key, route, payment, resource: { url: 'http://localhost/echo', description: '' }, transaction: '' };
  return { ledger, key, call };
}

/** Waits until the ledger no longer holds `key` (the watcher finished it). */
async function finished(ledger: ReturnType<typeof createProofLedger>, key: string) {
  await eventually(
    () => ledger.held(key),
    (held) => !held,
    'the watcher finishes the held proof',
    5_000,
  );
  return ledger.claim(key, 'call', 0n);
}

const fast = { firstDelayMs: 1, maxDelayMs: 2 };

describe('the settlement watcher', () => {
  it('waits while pending or unreachable, then releases the result with the receipt and reports the call once', async () => {
    const { ledger, key, call } = held();
    const facilitator = scripted([
      new Error('connection refused'),
      { status: 'pending', transaction: TX },
      { status: 'pending', transaction: TX },
      { status: 'settled', transaction: TX },
    ]);
    const settled: SettledCall[] = [];
    const watcher = createSettlementWatcher({ facilitator, ledger, logger: recordingLogger(), onSettled: (c) => settled.push(c), ...fast });
    watcher.watch(call);
    expect(ledger.claim(key, 'call', 0n)).toEqual({ type: 'pending' });

    const outcome = await finished(ledger, key);
    expect(outcome.type).toBe('replay');
    const response = (outcome as { response: { status: number; headers: Record<string, string>; body: string } }).response;
    expect(response.status).toBe(200);
    expect(response.body).toBe('{"success":true,"result":42}');
    expect(response.headers['PAYMENT-RESPONSE']).toBeDefined();
    expect(settled).toEqual([
      {
        skill: 'echo',
        scheme: 'exact',
        amount: '0.01',
        amountAtomic: '10000',
        payer: PAYER,
        transaction: TX,
        nonce: `0x${'01'.repeat(32)}`,
        network: 'eip155:84532',
      },
    ]);
    expect(watcher.watching).toBe(0);
  });

  it('asks again for a settlement the facilitator verified but never got', async () => {
    const { ledger, key, call } = held();
    const facilitator = scripted([{ status: 'unsettled', transaction: '' }], settledReceipt);
    createSettlementWatcher({ facilitator, ledger, logger: recordingLogger(), ...fast }).watch(call);
    expect((await finished(ledger, key)).type).toBe('replay');
    expect(facilitator.settled).toBe(1);
  });

  for (const status of ['none', 'unknown'] as const) {
    it(`sends the settle again, confirmed, while the authorization is valid and the facilitator has no record of it (${status})`, async () => {
      const { ledger, key, call } = held();
      const facilitator = scripted([new Error('connection refused'), { status, transaction: '' }], settledReceipt);
      const settled: SettledCall[] = [];
      createSettlementWatcher({ facilitator, ledger, logger: recordingLogger(), onSettled: (c) => settled.push(c), ...fast }).watch(call);
      const outcome = (await finished(ledger, key)) as { type: string; response: { status: number; headers: Record<string, string> } };
      expect(outcome.type).toBe('replay');
      expect(outcome.response.status).toBe(200);
      expect(outcome.response.headers['PAYMENT-RESPONSE']).toBeDefined();
      expect(facilitator.modes).toEqual(['confirmed']);
      expect(settled.map((c) => c.transaction)).toEqual([TX]);
    });
  }

  it('keeps asking, without sending it again, once a re-sent settle found the authorization taken (the first settle arrived late)', async () => {
    const { ledger, key, call } = held();
    const facilitator = scripted(
      [
        { status: 'none', transaction: '' },
        { status: 'unknown', transaction: '' },
        { status: 'pending', transaction: TX },
        { status: 'settled', transaction: TX },
      ],
      () => ({ success: false, errorReason: 'invalid_exact_evm_nonce_already_used', transaction: '', network: 'eip155:84532' }),
    );
    createSettlementWatcher({ facilitator, ledger, logger: recordingLogger(), ...fast }).watch(call);
    const outcome = (await finished(ledger, key)) as { response: { status: number } };
    expect(outcome.response.status).toBe(200);
    expect(facilitator.settled).toBe(1);
  });

  it('settles nothing again once the authorization has expired; a facilitator that never accepted it then means not charged (402)', async () => {
    const { ledger, key, call } = held(Math.floor(Date.now() / 1000) - 61);
    const facilitator = scripted([{ status: 'none', transaction: '' }], settledReceipt);
    createSettlementWatcher({ facilitator, ledger, logger: recordingLogger(), ...fast }).watch(call);
    const outcome = (await finished(ledger, key)) as { response: { status: number; body: string } };
    expect(outcome.response.status).toBe(402);
    expect(JSON.parse(outcome.response.body)).toMatchObject({ error: 'invalid_exact_evm_payload_authorization_valid_before' });
    expect(facilitator.settled).toBe(0);
  });

  it('stops asking a facilitator that cannot tell soon after the authorization expired (502 payment_unresolved, no 10-minute poll)', async () => {
    const { ledger, key, call } = held(Math.floor(Date.now() / 1000) - 61);
    const facilitator = scripted([{ status: 'unknown', transaction: '' }]);
    createSettlementWatcher({ facilitator, ledger, logger: recordingLogger(), ...fast }).watch(call);
    const outcome = (await finished(ledger, key)) as { response: { status: number; body: string } };
    expect(outcome.response.status).toBe(502);
    expect(JSON.parse(outcome.response.body)).toMatchObject({ code: 'payment_unresolved' });
    expect(facilitator.asked).toBe(1);
  });

  it('gives up on a payment still pending 3 minutes past its validBefore by default', async () => {
    const validBefore = Math.floor(Date.now() / 1000) + 60;
    const { ledger, key, call } = held(validBefore);
    let clock = Date.now();
    const facilitator = scripted([{ status: 'pending', transaction: TX }]);
    createSettlementWatcher({ facilitator, ledger, logger: recordingLogger(), now: () => clock, ...fast }).watch(call);
    await eventually(
      async () => facilitator.asked,
      (n) => n >= 2,
      'the watcher asks',
    );
    clock = validBefore * 1000 + 170_000;
    const asked = facilitator.asked;
    await eventually(
      async () => facilitator.asked,
      (n) => n >= asked + 2,
      'the watcher asks on',
    );
    expect(ledger.held(key)).toBeDefined(); // still within the bound
    clock = validBefore * 1000 + 181_000;
    const outcome = (await finished(ledger, key)) as { response: { status: number; body: string } };
    expect(outcome.response.status).toBe(502);
    expect(JSON.parse(outcome.response.body)).toMatchObject({ code: 'payment_unresolved' });
  });

  it('leaves the proof dead with the reason when the transfer finally failed, and reports nothing', async () => {
    const { ledger, key, call } = held();
    const facilitator = scripted([
      { status: 'pending', transaction: TX },
      { status: 'failed', transaction: TX, reason: 'invalid_exact_evm_transaction_dropped' },
    ]);
    const settled: SettledCall[] = [];
    createSettlementWatcher({ facilitator, ledger, logger: recordingLogger(), onSettled: (c) => settled.push(c), ...fast }).watch(call);
    const outcome = (await finished(ledger, key)) as { type: string; response: { status: number; body: string } };
    expect(outcome.type).toBe('replay');
    expect(outcome.response.status).toBe(402);
    expect(JSON.parse(outcome.response.body)).toMatchObject({ error: 'invalid_exact_evm_transaction_dropped' });
    expect(outcome.response.body).not.toContain('42');
    expect(settled).toHaveLength(0);
  });

  it('believes the chain over a failed settlement: a used authorization moved the money', async () => {
    const { ledger, key, call } = held();
    const facilitator = scripted([{ status: 'failed', transaction: TX, reason: 'invalid_exact_evm_transaction_failed' }]);
    const chain = { read: async (): Promise<AuthorizationUse> => 'used' };
    createSettlementWatcher({ facilitator, ledger, chain, logger: recordingLogger(), ...fast }).watch(call);
    expect(((await finished(ledger, key)) as { response: { status: number } }).response.status).toBe(200);
  });

  it('gives up past validBefore + giveUpAfterMs when nobody can tell: the result stays withheld (502 payment_unresolved)', async () => {
    const { ledger, key, call } = held(Math.floor(Date.now() / 1000) - 1);
    const facilitator = scripted([{ status: 'unknown', transaction: '' }]);
    const logger = recordingLogger();
    createSettlementWatcher({ facilitator, ledger, logger, giveUpAfterMs: 0, ...fast }).watch(call);
    const outcome = (await finished(ledger, key)) as { response: { status: number; body: string } };
    expect(outcome.response.status).toBe(502);
    expect(JSON.parse(outcome.response.body)).toMatchObject({ code: 'payment_unresolved' });
    expect(logger.has('error', 'payment outcome unknown; result withheld')).toBe(true);
  });
});
