/**
 * Call tracking: each settled call reaches the registry (POST /analytics/calls) in the background,
 * a registry outage never holds up or fails a paid call (its answer comes with the record still
 * queued), and the records arrive once it is back.
 * Each test stands alone: it awaits the server's delivery (`flushCalls`) and then one round of
 * payment checks (`verifyNow`), never a guessed time.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'bun:test';
import { desc, eq } from 'drizzle-orm';
import type { Address } from 'viem';
import { register, serve, skill, type ServeOptions, type SkillServer } from 'skill-market/creator';
import { PAYMENT_VERIFICATION_DEFAULTS } from '../../src/config';
import { paymentVerifications, skillCalls } from '../../src/db/schema';
import type { PaymentVerifier } from '../../src/registry/modules/payment-verification';
import { registryFixture, chainVerifier } from '../support/registry';
import { json, newCreator, type Creator } from '../support/catalogue';
import { freePort } from '../support/process';
import { loopbackServeOptions, paidPost, recordingLogger, startPaymentStack, type PaymentStack } from '../support/skill-server';

const fx = registryFixture('embedded', { catalogue: { allowHttpEndpoints: true, viewWindowSeconds: 3600, newSkillsPerHour: 30 } });
let stack: PaymentStack;
let creator: Creator;
let payee: Address;
let registryPort: number;
let front: ReturnType<typeof Bun.serve> | undefined;
/** A reported call counts once its payment is verified on chain: each test runs a round of checks. */
let verifier: PaymentVerifier;
/** The id the registry gave the `tracked` skill, registered before any test. */
let skillId: string;
/** Call-record requests that reached the registry (batch or single). */
let recordsReceived = 0;
const servers: SkillServer[] = [];

/** The registry behind a port that can really go away (connection refused) and come back. */
const registryUp = () => {
  front = Bun.serve({
    hostname: '127.0.0.1',
    port: registryPort,
    fetch: (request) => {
      const url = new URL(request.url);
      if (url.pathname === '/analytics/calls' || url.pathname === '/analytics/call') recordsReceived++;
      return fx.registry.app.handle(new Request(`http://localhost${url.pathname}${url.search}`, request));
    },
  });
};
const registryDown = async () => {
  await front?.stop(true);
  front = undefined;
};

const skills = {
  tracked: skill({ price: '$0.01', groups: ['tools'] }, () => ({ ok: true })),
  unknown: skill({ price: '$0.01', groups: ['tools'] }, () => ({ ok: true })),
};

beforeAll(async () => {
  stack = await startPaymentStack();
  const payeeAccount = await stack.chain.createAccount();
  payee = payeeAccount.address;
  creator = await newCreator(fx.request);
  await creator.prove(payeeAccount);
  await creator.group('tools');
  registryPort = await freePort();
  registryUp();
  verifier = chainVerifier(fx, stack.chain, { ...PAYMENT_VERIFICATION_DEFAULTS, enabled: true });
  const [registered] = await register(
    { tracked: skills.tracked },
    {
      apiKey: creator.key,
      apiUrl: `http://127.0.0.1:${registryPort}`,
      paymentAddress: payee,
      endpoint: 'http://skills.test',
      network: stack.chain.network,
    },
  );
  skillId = registered!.skillId!;
}, 60_000);

// Each test's servers stop with it, so records a failed test left queued never reach the next test's counts.
afterEach(async () => {
  for (const s of servers.splice(0)) await s.stop();
});

afterAll(async () => {
  await registryDown();
  await stack?.close();
});

async function start(extra: Partial<ServeOptions>, chosen: Partial<typeof skills> = { tracked: skills.tracked }) {
  const logger = recordingLogger();
  const server = await serve(
    chosen as typeof skills,
    loopbackServeOptions(stack.chain, stack.facilitatorUrl, payee, {
      apiKey: creator.key,
      apiUrl: `http://127.0.0.1:${registryPort}`,
      logger,
      trackCalls: { baseDelayMs: 50, maxDelayMs: 200 },
      ...extra,
    }),
  );
  servers.push(server);
  return { server, logger };
}

/** The skill's call count once every delivered record's payment has been checked on chain. */
const callCount = async () => {
  await verifier.verifyNow();
  return (await json<{ callCount: number }>(await fx.request(`/analytics/${skillId}`))).callCount;
};
const newPayer = () => stack.chain.createAccount({ usdc: 1_000_000n });

describe('call tracking', () => {
  it('records each settled call with the registered skill id, the amount and the transaction as paymentRef', async () => {
    const { server } = await start({ register: { endpoint: 'http://skills.test' } });
    expect(server.registration[0]!.skillId).toBe(skillId);
    const before = await callCount();
    const res = await paidPost(`${server.url}/tracked`, {}, await newPayer());
    expect(res.status).toBe(200);
    expect(await server.flushCalls()).toBe(true);
    expect(server.pendingCalls()).toBe(0);
    expect(await callCount()).toBe(before + 1);
    // The record names the payment by the payer's authorization nonce; its check counted that transfer.
    const [record] = await fx.database.db
      .select()
      .from(skillCalls)
      .where(eq(skillCalls.skillId, skillId))
      .orderBy(desc(skillCalls.createdAt))
      .limit(1);
    expect(record?.paymentNonce).toMatch(/^0x[0-9a-f]{64}$/);
    const [check] = await fx.database.db.select().from(paymentVerifications).where(eq(paymentVerifications.id, record!.paymentId!));
    expect(check).toMatchObject({ status: 'verified', nonce: record!.paymentNonce });
    expect(check?.logIndex).toBeNumber();
  });

  it('keeps paid calls fast while the registry is down and delivers their records once it is back', async () => {
    const { server } = await start({});
    const before = await callCount();
    await registryDown();
    try {
      // Each paid call is answered while its record is still queued: the answer never waits on the registry.
      for (let i = 0; i < 3; i++) {
        const res = await paidPost(`${server.url}/tracked`, {}, await newPayer());
        expect(res.status).toBe(200);
        expect(server.pendingCalls()).toBe(i + 1);
      }
      // Tried at once while the registry is gone: nothing arrives and the records stay queued
      // (the wait here is the flush's own limit, which is what is tested).
      const received = recordsReceived;
      expect(await server.flushCalls(300)).toBe(false);
      expect(server.pendingCalls()).toBe(3);
      expect(recordsReceived).toBe(received);
    } finally {
      registryUp();
    }
    expect(await server.flushCalls()).toBe(true);
    expect(await callCount()).toBe(before + 3);
  });

  it('finds the skill id through the registry when this server did not register (no register option)', async () => {
    const { server } = await start({});
    expect(server.registration).toEqual([]);
    const before = await callCount();
    expect((await paidPost(`${server.url}/tracked`, {}, await newPayer())).status).toBe(200);
    expect(await server.flushCalls()).toBe(true);
    expect(await callCount()).toBe(before + 1);
  });

  it('warns about a skill the registry does not know, and drops a record with a warning after its attempts', async () => {
    const { server, logger } = await start({ trackCalls: { baseDelayMs: 10, maxDelayMs: 20, maxAttempts: 2 } }, skills);
    expect((await paidPost(`${server.url}/unknown`, {}, await newPayer())).status).toBe(200);
    expect(await server.flushCalls()).toBe(true);
    expect(logger.has('warn', 'call not tracked: the skill is not registered under this API key')).toBe(true);

    await registryDown();
    try {
      expect((await paidPost(`${server.url}/tracked`, {}, await newPayer())).status).toBe(200);
      expect(await server.flushCalls()).toBe(true); // dropped after its attempts, so none is left
      expect(logger.has('warn', 'call record dropped after 2 attempts')).toBe(true);
    } finally {
      registryUp();
    }
  });

  it('does not track with trackCalls false', async () => {
    const { server } = await start({ trackCalls: false });
    const before = await callCount();
    const received = recordsReceived;
    expect((await paidPost(`${server.url}/tracked`, {}, await newPayer())).status).toBe(200);
    expect(server.pendingCalls()).toBe(0);
    expect(await server.stop().then(() => recordsReceived)).toBe(received);
    expect(await callCount()).toBe(before);
  });
});
