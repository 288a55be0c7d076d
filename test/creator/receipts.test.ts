/**
 * The skill server's receipts as the registry sees them: registration lists the server's receipt
 * signer (the key's address, never the key), call tracking sends each call's signed receipt with
 * its record, and the registry checks it against the listing (signer, price, the record's payment)
 * and against the chain (the amount the payment moved): a mismatch is refused when the chain's
 * amount is known, flagged once it is (counted in the skill's analytics, listed among its payments,
 * and told by a `receipt.mismatch` webhook), and revenue is what the chain shows. A generated receipt
 * key is kept in the data folder: the same address after a restart, and in no log.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { x402Client } from '@x402/core/client';
import { UptoEvmScheme } from '@x402/evm/upto/client';
import { extractReceiptFromResponse, isEIP712SignedReceipt, verifyReceiptSignatureEIP712 } from '@x402/extensions/offer-receipt';
import { wrapFetchWithPayment } from '@x402/fetch';
import { Value } from '@sinclair/typebox/value';
import { and, eq } from 'drizzle-orm';
import type { Address } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { serve, skill, type SkillServer } from 'skill-market/creator';
import { bodyDigest, readReceiptHeader, signSkillReceipt, type SignedSkillReceipt } from 'skill-market/x402';
import { webhookDelivery } from 'skill-market/registry';
import { skillCalls, webhookDeliveries } from '../../src/db/schema';
import type { PaymentVerifier } from '../../src/registry/modules/payment-verification';
import { bearer, jsonPost } from '../support/auth';
import { json, type Creator } from '../support/catalogue';
import { approvePermit2 } from '../support/chain/upto';
import { registryFixture } from '../support/registry';
import { type CreatorStack, startCreatorStack } from '../support/creator-stack';
import { loopbackServeOptions, recordingLogger, type PaymentStack } from '../support/skill-server';

const fx = registryFixture('embedded', { catalogue: { allowHttpEndpoints: true, viewWindowSeconds: 3600, newSkillsPerHour: 30 } });
const receiptKey = generatePrivateKey();
let stack: PaymentStack;
let creator: Creator;
let payee: Address;
let verifier: PaymentVerifier;
let server: SkillServer;
/** The same skill served again with the same key, reporting nothing: its answers' records are posted by the tests. */
let quiet: SkillServer;
let skillId: string;
let world: CreatorStack;
let apiUrl: string;
/** The creator's webhook endpoint for `receipt.mismatch`. */
let endpointId: string;
/** Every request body the registry got. */
const sent: string[] = [];

const skills = {
  metered: skill({ price: '$0.01', upto: true, groups: ['tools'] }, (input: { units: number }, { charge }) => {
    charge(BigInt(input.units) * 100n);
    return { units: input.units };
  }),
};

beforeAll(async () => {
  world = await startCreatorStack(fx, async (request, registry) => {
    const body = request.method === 'GET' ? '' : await request.text();
    sent.push(body);
    return registry(new Request(request.url, { method: request.method, headers: request.headers, body: body || undefined }));
  });
  ({ stack, creator, payee, verifier, apiUrl } = world);
  server = await serve(
    skills,
    loopbackServeOptions(stack.chain, stack.facilitatorUrl, payee, {
      apiKey: creator.key,
      apiUrl,
      receiptKey,
      trackCalls: { baseDelayMs: 50, maxDelayMs: 200 },
      register: { endpoint: 'http://skills.test' },
    }),
  );
  if (!server.registration[0]?.skillId) throw new Error(`register: ${JSON.stringify(server.registration)}`);
  skillId = server.registration[0]!.skillId!;
  quiet = await serve(skills, loopbackServeOptions(stack.chain, stack.facilitatorUrl, payee, { receiptKey }));
  const hook = await fx.request(
    '/webhooks',
    jsonPost({ url: 'https://hooks.example.com/market', events: ['receipt.mismatch'] }, bearer(creator.token)),
  );
  if (hook.status !== 201) throw new Error(`webhook: ${hook.status} ${await hook.text()}`);
  endpointId = (await json<{ id: string }>(hook)).id;
}, 60_000);

afterAll(async () => {
  await server?.stop();
  await quiet?.stop();
  await world?.close();
});

/** Pays `units` of the metered skill at `url` with @x402/evm's upto client; the answer's receipt. */
async function payMetered(url: string, units: number): Promise<{ receipt: SignedSkillReceipt; payer: Address; response: Response }> {
  const payer = await stack.chain.createAccount({ usdc: 100_000n });
  await approvePermit2(stack.chain, payer);
  const client = new x402Client().register(stack.chain.network, new UptoEvmScheme(payer));
  client.setSpendControls({ allowedAssets: [{ network: stack.chain.network, asset: stack.chain.token.address }] });
  const res = await wrapFetchWithPayment(fetch, client)(`${url}/metered`, jsonPost({ units }));
  expect(res.status).toBe(200);
  const read = readReceiptHeader(res.headers);
  if (read?.type !== 'receipt') throw new Error('the answer carries no receipt');
  return { receipt: read.receipt, payer: payer.address, response: res };
}

const revenue = async () => {
  const res = await fx.request(`/analytics/${skillId}`, { headers: bearer(creator.key) });
  return BigInt((await json<{ totalRevenueAtomic: string }>(res)).totalRevenueAtomic);
};

const record = async (receipt: SignedSkillReceipt, amountAtomic = receipt.payload.amount, paymentRef = receipt.payload.transaction) => {
  const res = await fx.request(
    '/analytics/calls',
    jsonPost({ calls: [{ skillId, paymentRef, amountAtomic, receipt }] }, bearer(creator.key)),
  );
  expect(res.status).toBe(200);
  return (await json<{ results: { status: string; reason?: string; message?: string }[] }>(res)).results[0]!;
};

const resigned = (receipt: SignedSkillReceipt, change: Partial<SignedSkillReceipt['payload']>, key = receiptKey) =>
  signSkillReceipt(privateKeyToAccount(key), { ...receipt.payload, ...change });

const callsOf = (transaction: string) =>
  fx.database.db
    .select({ amount: skillCalls.amount, receiptAmount: skillCalls.receiptAmount, receiptCheck: skillCalls.receiptCheck })
    .from(skillCalls)
    .where(eq(skillCalls.paymentRef, transaction));

/** The `receipt.mismatch` events stored for the creator's webhook endpoint. */
const mismatchEvents = async () =>
  (
    await fx.database.db
      .select({ payload: webhookDeliveries.payload })
      .from(webhookDeliveries)
      .where(and(eq(webhookDeliveries.endpointId, endpointId), eq(webhookDeliveries.type, 'receipt.mismatch')))
  ).map((row) => row.payload as Record<string, unknown>);

describe('receipts in the registry', () => {
  it('lists the server’s receipt signer with the skill; the key itself never reaches the registry', async () => {
    const res = await fx.request(`/skills/${server.registration[0]!.slug}`);
    expect((await json<{ receiptSigner: string }>(res)).receiptSigner).toBe(privateKeyToAccount(receiptKey).address);
    expect(server.receiptSigner).toBe(privateKeyToAccount(receiptKey).address);
    expect(sent.some((body) => body.toLowerCase().includes(receiptKey.slice(2).toLowerCase()))).toBe(false);
  });

  it('refuses a registration whose receiptSigner is not an address, naming the field', async () => {
    const res = await creator.register({ name: 'unsigned', paymentAddress: payee, receiptSigner: '0x1234' });
    expect(res.status).toBe(400);
    expect((await json<{ error: string }>(res)).error).toBe('Invalid request: field "receiptSigner": must be a 42-character 0x address');
  });

  it('puts the offer-receipt extension’s own receipt of the payment in PAYMENT-RESPONSE, which its verifier accepts', async () => {
    const { receipt, payer, response } = await payMetered(quiet.url, 5);
    const offered = extractReceiptFromResponse(response);
    if (!offered || !isEIP712SignedReceipt(offered)) throw new Error('no EIP-712 offer-receipt in PAYMENT-RESPONSE');
    const { signer, payload } = await verifyReceiptSignatureEIP712(offered);
    expect(signer).toBe(privateKeyToAccount(receiptKey).address);
    expect(payload).toEqual({
      version: 1,
      network: stack.chain.network,
      resourceUrl: receipt.payload.resourceUrl,
      payer,
      issuedAt: receipt.payload.issuedAt,
      transaction: receipt.payload.transaction,
    });
  });

  it('counts a call whose receipt matches the chain: the charge, and the receipt marked as matching', async () => {
    const before = await revenue();
    const { receipt } = await payMetered(server.url, 37);
    expect(receipt.payload.amount).toBe('3700');
    expect(await server.flushCalls()).toBe(true);
    expect(await callsOf(receipt.payload.transaction)).toEqual([{ amount: 3_700n, receiptAmount: 3_700n, receiptCheck: 'pending' }]);
    await verifier.verifyNow();
    expect(await callsOf(receipt.payload.transaction)).toEqual([{ amount: 3_700n, receiptAmount: 3_700n, receiptCheck: 'matches' }]);
    expect((await revenue()) - before).toBe(3_700n);
  });

  it('flags a receipt naming more than the chain moved, counting only what the chain shows; refuses it once the chain is known', async () => {
    const before = await revenue();
    const { receipt } = await payMetered(quiet.url, 25);
    // The server's own key, a lie about the amount: within the price, above what moved.
    const inflated = await resigned(receipt, { amount: '5000' });
    expect(await record(inflated)).toEqual({ status: 'recorded' });
    await verifier.verifyNow();
    expect(await callsOf(receipt.payload.transaction)).toEqual([{ amount: 5_000n, receiptAmount: 5_000n, receiptCheck: 'mismatch' }]);
    expect((await revenue()) - before).toBe(2_500n);
    // Its creator sees it: counted in the skill's analytics, listed among its payments with the receipt's amount.
    const analytics = await json<{ receiptMismatchCount: number }>(
      await fx.request(`/analytics/${skillId}`, { headers: bearer(creator.key) }),
    );
    expect(analytics.receiptMismatchCount).toBe(1);
    const listed = await json<{ txHash: string; receiptCheck: string; receiptAmountAtomic: string; amountAtomic: string }[]>(
      await fx.request(`/analytics/${skillId}/payments?receipt=mismatch`, { headers: bearer(creator.key) }),
    );
    expect(listed).toEqual([
      expect.objectContaining({
        txHash: receipt.payload.transaction.toLowerCase(),
        receiptCheck: 'mismatch',
        receiptAmountAtomic: '5000',
        paidAtomic: '2500',
      }),
    ]);
    const matching = await json<{ receiptCheck: string }[]>(
      await fx.request(`/analytics/${skillId}/payments?receipt=matches`, { headers: bearer(creator.key) }),
    );
    expect(matching.map((p) => p.receiptCheck)).toEqual(['matches']);
    // And hears of it by webhook, once, in the event's documented shape.
    const [event] = await mismatchEvents();
    expect(event).toMatchObject({
      type: 'receipt.mismatch',
      data: {
        version: 1,
        skill: server.registration[0]!.slug,
        transaction: receipt.payload.transaction.toLowerCase(),
        network: stack.chain.network,
        receiptAmount: '5000',
        chainAmount: '2500',
      },
    });
    expect([...Value.Errors(webhookDelivery('receipt.mismatch'), event)]).toEqual([]);
    expect(await mismatchEvents()).toHaveLength(1);
    // Sent again now that the chain is known: refused with the reason.
    expect(await record(inflated)).toEqual({
      status: 'refused',
      reason: 'invalid-receipt',
      message: 'Receipt refused: the receipt amount 5000 differs from what the chain shows paid, 2500',
    });
    expect(await record(receipt)).toEqual({ status: 'duplicate' });
  });

  it('refuses a receipt by another key, above the price, or for another amount or payment than the record', async () => {
    const { receipt } = await payMetered(quiet.url, 10);
    const forged = await resigned(receipt, {}, generatePrivateKey());
    expect(await record(forged)).toMatchObject({ status: 'refused', reason: 'invalid-receipt' });
    expect((await record(forged)).message).toContain(`not the listed receipt signer ${privateKeyToAccount(receiptKey).address}`);
    expect((await record(await resigned(receipt, { amount: '10001' }))).message).toBe(
      'Receipt refused: the receipt amount 10001 is above the listed price 10000',
    );
    expect((await record(receipt, '999')).message).toBe('Receipt refused: the receipt amount 1000 differs from the amount charged, 999');
    const other = `0x${'ab'.repeat(32)}`;
    expect((await record(await resigned(receipt, { transaction: other }), '1000', receipt.payload.transaction)).message).toBe(
      `Receipt refused: the receipt names transaction ${other}, not the record's ${receipt.payload.transaction}`,
    );
    expect(await callsOf(receipt.payload.transaction)).toEqual([]);
    expect(await record(receipt)).toEqual({ status: 'recorded' });
  });
});

describe('receipts of channel calls in the registry', () => {
  it('takes a receipt naming the record’s channel, charge and cumulative charge; refuses one naming another', async () => {
    const channelId = `0x${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('hex')}` as const;
    const payer = (await stack.chain.createAccount()).address;
    const receipt = await signSkillReceipt(privateKeyToAccount(receiptKey), {
      version: 1,
      resourceUrl: 'http://skills.test/metered',
      skill: 'metered',
      network: stack.chain.network,
      scheme: 'batch-settlement',
      payer,
      amount: '10000',
      transaction: channelId,
      cumulativeAmount: '20000',
      issuedAt: Math.floor(Date.now() / 1000),
      bodyDigest: bodyDigest('{"success":true}'),
    });
    const post = async (chargedCumulativeAmount: string) => {
      const res = await fx.request(
        '/analytics/calls',
        jsonPost({ calls: [{ skillId, amountAtomic: '10000', channelId, chargedCumulativeAmount, receipt }] }, bearer(creator.key)),
      );
      return (await json<{ results: { status: string; reason?: string; message?: string }[] }>(res)).results[0]!;
    };
    expect(await post('30000')).toEqual({
      status: 'refused',
      reason: 'invalid-receipt',
      message: "Receipt refused: the receipt cumulative charge 20000 differs from the record's, 30000",
    });
    expect(await post('20000')).toEqual({ status: 'recorded' });
  });
});

describe('the receipt key', () => {
  it('is made once in the data folder and kept across a restart (same address), readable by its owner only, and never logged', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'receipt-key-'));
    try {
      const logger = recordingLogger();
      const options = loopbackServeOptions(stack.chain, stack.facilitatorUrl, payee, {
        logger,
        receiptKey: undefined,
        channels: { store: join(dir, 'channels') },
      });
      const first = await serve(skills, options);
      await payMetered(first.url, 3);
      await first.stop();
      const second = await serve(skills, options);
      await second.stop();
      expect(second.receiptSigner).toBe(first.receiptSigner);
      const key = (await readFile(join(dir, 'receipt-key'), 'utf8')).trim();
      expect(privateKeyToAccount(key as `0x${string}`).address).toBe(first.receiptSigner);
      expect((await stat(join(dir, 'receipt-key'))).mode & 0o777).toBe(0o600);
      expect(logger.lines.length).toBeGreaterThan(0);
      expect(logger.lines.some((line) => line.toLowerCase().includes(key.slice(2).toLowerCase()))).toBe(false);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('refuses a receipt key that is not a private key, given or kept, before listening', async () => {
    await expect(serve(skills, loopbackServeOptions(stack.chain, stack.facilitatorUrl, payee, { receiptKey: '0x1234' }))).rejects.toThrow(
      'receiptKey must be a private key (0x + 64 hex)',
    );
    const dir = await mkdtemp(join(tmpdir(), 'receipt-key-'));
    try {
      await writeFile(join(dir, 'receipt-key'), 'not a key\n');
      const options = loopbackServeOptions(stack.chain, stack.facilitatorUrl, payee, {
        receiptKey: undefined,
        channels: { store: join(dir, 'channels') },
      });
      await expect(serve(skills, options)).rejects.toThrow(`${join(dir, 'receipt-key')} does not hold a private key`);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
