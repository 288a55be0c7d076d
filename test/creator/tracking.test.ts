/**
 * Call tracking: each settled call reaches the registry's POST /analytics/call in the background,
 * a registry outage never slows or fails a paid call, and the records arrive once it is back.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import type { Address } from 'viem';
import { serve, skill, type ServeOptions, type SkillServer } from 'skill-market/creator';
import { PAYMENT_VERIFICATION_DEFAULTS } from '../../src/config';
import { createPaymentVerifier, type PaymentVerifier } from '../../src/registry/modules/payment-verification';
import { memoryLogger, registryFixture } from '../support/registry';
import { json, newCreator, type Creator } from '../support/catalogue';
import { freePort } from '../support/process';
import { paidPost, recordingLogger, startPaymentStack, type PaymentStack } from '../support/skill-server';

const fx = registryFixture('embedded', { catalogue: { allowHttpEndpoints: true, viewWindowSeconds: 3600 } });
let stack: PaymentStack;
let creator: Creator;
let payee: Address;
let registryPort: number;
let front: ReturnType<typeof Bun.serve> | undefined;
/** A reported call counts once its payment is verified on chain: checks run in the background here. */
let verifier: PaymentVerifier;
const servers: SkillServer[] = [];

/** The registry behind a port that can really go away (connection refused) and come back. */
const registryUp = () => {
  front = Bun.serve({
    hostname: '127.0.0.1',
    port: registryPort,
    fetch: (request) => {
      const url = new URL(request.url);
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
  payee = (await stack.chain.createAccount()).address;
  creator = await newCreator(fx.request);
  await creator.group('tools');
  registryPort = await freePort();
  registryUp();
  verifier = createPaymentVerifier({
    db: fx.database.db,
    config: { ...PAYMENT_VERIFICATION_DEFAULTS, enabled: true, intervalMs: 25 },
    chain: { ...fx.config.chain, network: stack.chain.network, usdcAddress: stack.chain.token.address, rpcUrl: stack.chain.rpcUrl },
    clock: fx.clock,
    logger: memoryLogger().logger,
  });
  verifier.start();
}, 30_000);

afterAll(async () => {
  await verifier?.stop();
  for (const s of servers) await s.stop();
  await registryDown();
  await stack?.close();
});

async function start(extra: Partial<ServeOptions>, chosen: Partial<typeof skills> = { tracked: skills.tracked }) {
  const logger = recordingLogger();
  const server = await serve(chosen as typeof skills, {
    port: 0,
    hostname: '127.0.0.1',
    wallet: payee,
    facilitatorUrl: stack.facilitatorUrl,
    network: stack.chain.network,
    asset: stack.asset,
    apiKey: creator.key,
    apiUrl: `http://127.0.0.1:${registryPort}`,
    logger,
    env: {},
    trackCalls: { baseDelayMs: 50, maxDelayMs: 200 },
    ...extra,
  });
  servers.push(server);
  return { server, logger };
}

const callCount = async (skillId: string) => (await json<{ callCount: number }>(await fx.request(`/analytics/${skillId}`))).callCount;
async function waitFor(check: () => Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await Bun.sleep(25);
  }
}
const newPayer = () => stack.chain.createAccount({ usdc: 1_000_000n });

describe('call tracking', () => {
  let skillId: string;

  it('records each settled call with the registered skill id, the amount and the transaction as paymentRef', async () => {
    const { server } = await start({ register: { endpoint: 'http://skills.test' } });
    skillId = server.registration[0]!.skillId!;
    expect(skillId).toBeTruthy();
    const res = await paidPost(`${server.url}/tracked`, {}, await newPayer());
    expect(res.status).toBe(200);
    await waitFor(async () => (await callCount(skillId)) === 1);
  });

  it('keeps paid calls fast while the registry is down and delivers their records once it is back', async () => {
    const { server } = await start({});
    const before = await callCount(skillId);
    await registryDown();
    for (let i = 0; i < 3; i++) {
      const started = Date.now();
      const res = await paidPost(`${server.url}/tracked`, {}, await newPayer());
      expect(res.status).toBe(200);
      expect(Date.now() - started).toBeLessThan(1000);
    }
    await Bun.sleep(300); // a few failed deliveries
    registryUp();
    await waitFor(async () => (await callCount(skillId)) === before + 3);
  });

  it('finds the skill id through the registry when this server did not register (no register option)', async () => {
    const { server } = await start({});
    expect(server.registration).toEqual([]);
    const before = await callCount(skillId);
    expect((await paidPost(`${server.url}/tracked`, {}, await newPayer())).status).toBe(200);
    await waitFor(async () => (await callCount(skillId)) === before + 1);
  });

  it('warns about a skill the registry does not know, and drops a record with a warning after its attempts', async () => {
    const { server, logger } = await start({ trackCalls: { baseDelayMs: 10, maxDelayMs: 20, maxAttempts: 2 } }, skills);
    expect((await paidPost(`${server.url}/unknown`, {}, await newPayer())).status).toBe(200);
    await waitFor(async () => logger.has('warn', 'call not tracked: the skill is not registered under this API key'));

    await registryDown();
    try {
      expect((await paidPost(`${server.url}/tracked`, {}, await newPayer())).status).toBe(200);
      await waitFor(async () => logger.has('warn', 'call record dropped after 2 attempts'));
    } finally {
      registryUp();
    }
  });

  it('does not track with trackCalls false', async () => {
    const { server } = await start({ trackCalls: false });
    const before = await callCount(skillId);
    expect((await paidPost(`${server.url}/tracked`, {}, await newPayer())).status).toBe(200);
    await Bun.sleep(200);
    expect(await callCount(skillId)).toBe(before);
  });
});
