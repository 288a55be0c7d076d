/**
 * Batched call tracking through a real serve(): the records of many settled calls reach the
 * registry in few `POST /analytics/calls` requests (counted at the registry's door), each paid call
 * counts exactly once however often its record is re-sent, and a registry without the batch route
 * gets one `POST /analytics/call` per record. Tests await the server's delivery (`flushCalls`) and
 * then one round of payment checks (`verifyNow`), never a guessed time.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { count, eq } from 'drizzle-orm';
import type { Address, LocalAccount } from 'viem';
import { register, serve, skill, type ServeOptions, type SkillServer } from 'skill-market/creator';
import { PAYMENT_VERIFICATION_DEFAULTS } from '../../src/config';
import { paymentVerifications } from '../../src/db/schema';
import type { PaymentVerifier } from '../../src/registry/modules/payment-verification';
import { json, newCreator, type Creator } from '../support/catalogue';
import { oneDatabase } from '../support/database';
import { freePort } from '../support/process';
import { registryFixture, chainVerifier } from '../support/registry';
import { loopbackServeOptions, paidPost, recordingLogger, startPaymentStack, type PaymentStack } from '../support/skill-server';

let stack: PaymentStack;
beforeAll(async () => {
  stack = await startPaymentStack();
}, 60_000);
afterAll(async () => {
  await stack?.close();
});

/** Paid calls in flight at once. */
const IN_FLIGHT = 10;
/** Paid calls of the batching test and the most records a batch holds there: a few full batches show the rule. */
const MANY = 40;
const BATCH = 10;
const tracked = skill({ price: '$0.01', groups: ['tools'] }, () => ({ ok: true }));

for (const kind of oneDatabase) {
  describe(`batched call tracking on ${kind}`, () => {
    const fx = registryFixture(kind, { catalogue: { allowHttpEndpoints: true, viewWindowSeconds: 3600, newSkillsPerHour: 30 } });
    let creator: Creator;
    let payee: Address;
    let payers: LocalAccount[];
    let registryPort: number;
    let front: ReturnType<typeof Bun.serve> | undefined;
    let verifier: PaymentVerifier;
    let skillId: string;
    /** Requests that reached the registry, by path. */
    const received = { single: 0, batch: 0 };
    /** How the registry's door behaves: `old` answers 404 for the batch route (a registry of another kind). */
    const door = { old: false, loseAnswers: 0 };
    const servers: SkillServer[] = [];

    /** The registry behind a port that can really go away (connection refused) and come back. */
    const registryUp = () => {
      front = Bun.serve({
        hostname: '127.0.0.1',
        port: registryPort,
        fetch: async (request) => {
          const url = new URL(request.url);
          if (url.pathname === '/analytics/call') received.single++;
          if (url.pathname === '/analytics/calls') {
            received.batch++;
            if (door.old) return Response.json({ error: 'Not found', code: 'NOT_FOUND', requestId: 'r' }, { status: 404 });
          }
          const answer = await fx.registry.app.handle(new Request(`http://localhost${url.pathname}${url.search}`, request));
          // The registry recorded the batch but its answer never arrives: the tracker must re-send it.
          if (url.pathname === '/analytics/calls' && door.loseAnswers > 0) {
            door.loseAnswers--;
            return Response.json({ error: 'Bad gateway', code: 'UNAVAILABLE', requestId: 'r' }, { status: 502 });
          }
          return answer;
        },
      });
    };
    const registryDown = async () => {
      await front?.stop(true);
      front = undefined;
    };

    beforeAll(async () => {
      const payeeAccount = await stack.chain.createAccount();
      payee = payeeAccount.address;
      payers = await Promise.all(Array.from({ length: 4 }, () => stack.chain.createAccount({ usdc: 10_000_000n })));
      creator = await newCreator(fx.request);
      await creator.prove(payeeAccount);
      await creator.group('tools');
      registryPort = await freePort();
      registryUp();
      verifier = chainVerifier(fx, stack.chain, { ...PAYMENT_VERIFICATION_DEFAULTS, enabled: true });
      const [registered] = await register(
        { tracked },
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

    afterAll(async () => {
      for (const s of servers) await s.stop();
      await registryDown();
    });

    async function start(trackCalls: ServeOptions['trackCalls'] = {}) {
      const logger = recordingLogger();
      const server = await serve(
        { tracked },
        loopbackServeOptions(stack.chain, stack.facilitatorUrl, payee, {
          apiKey: creator.key,
          apiUrl: `http://127.0.0.1:${registryPort}`,
          logger,
          trackCalls: { baseDelayMs: 50, maxDelayMs: 200, maxAttempts: 100, ...(typeof trackCalls === 'object' ? trackCalls : {}) },
        }),
      );
      servers.push(server);
      return server;
    }

    /** The skill's call count once every delivered record's payment has been checked on chain. */
    const callCount = async () => {
      // A check the chain could not answer in time (a loaded machine) is tried again, and one whose
      // record failed keeps its lease: the clock moves both due until no check is pending.
      for (let i = 0; i < 50; i++) {
        const round = await verifier.verifyNow();
        if (round.retried > 0) fx.clock.advance(3600);
        if (round.checked > 0) continue;
        const [pending] = await fx.database.db
          .select({ n: count() })
          .from(paymentVerifications)
          .where(eq(paymentVerifications.status, 'pending'));
        if (!pending?.n) break;
        fx.clock.advance(3600);
      }
      return (await json<{ callCount: number }>(await fx.request(`/analytics/${skillId}`))).callCount;
    };
    /**
     * `n` paid calls, `IN_FLIGHT` at a time: the facilitator of this test (one process, on a shared
     * machine) times out /verify with hundreds at once, which is not what is tested here.
     */
    const calls = async (server: SkillServer, n: number) => {
      const answers: Response[] = [];
      let next = 0;
      const worker = async () => {
        for (let i = next++; i < n; i = next++) answers[i] = await paidPost(`${server.url}/tracked`, {}, payers[i % payers.length]!);
      };
      await Promise.all(Array.from({ length: Math.min(IN_FLIGHT, n) }, worker));
      return answers;
    };
    const sent = () => ({ ...received });

    it(`counts ${MANY} paid calls (${IN_FLIGHT} at a time) exactly once, in far fewer requests than calls`, async () => {
      const server = await start({ batchSize: BATCH });
      const before = await callCount();
      const was = sent();
      const began = performance.now();
      const answers = await calls(server, MANY);
      expect(answers.map((r) => r.status)).toEqual(answers.map(() => 200));
      expect(await server.flushCalls()).toBe(true);
      const elapsedMs = performance.now() - began;
      expect(await callCount()).toBe(before + MANY);
      expect(received.single - was.single).toBe(0);
      const batches = received.batch - was.batch;
      expect(batches).toBeGreaterThanOrEqual(MANY / BATCH); // BATCH records at most per batch
      // A batch goes when BATCH records wait or the oldest has waited 200 ms: at most one request per
      // 200 ms window of calls (a slower machine has more windows) and one per full batch.
      expect(batches).toBeLessThanOrEqual(Math.ceil(elapsedMs / 200) + MANY / BATCH);
      expect(batches).toBeLessThan(MANY / 2);
    }, 120_000);

    it('re-sends a batch whose answer was lost, and its calls still count once', async () => {
      const server = await start({ batchSize: 100 });
      const before = await callCount();
      door.loseAnswers = 1;
      const was = sent();
      expect((await calls(server, 10)).every((r) => r.status === 200)).toBe(true);
      expect(await server.flushCalls()).toBe(true);
      expect(door.loseAnswers).toBe(0);
      expect(received.batch - was.batch).toBeGreaterThanOrEqual(2);
      expect(await callCount()).toBe(before + 10);
    }, 60_000);

    it('delivers every record once after the registry was down, then comes back', async () => {
      const server = await start();
      const before = await callCount();
      await registryDown();
      try {
        expect((await calls(server, 30)).every((r) => r.status === 200)).toBe(true);
        expect(await server.flushCalls(300)).toBe(false);
        expect(server.pendingCalls()).toBe(30);
      } finally {
        registryUp();
      }
      const was = sent();
      expect(await server.flushCalls()).toBe(true);
      expect(server.pendingCalls()).toBe(0);
      expect(await callCount()).toBe(before + 30);
      expect(received.batch - was.batch).toBeLessThan(10); // 30 records
    }, 60_000);

    it('falls back to one POST /analytics/call per record against a registry without the batch route', async () => {
      door.old = true;
      try {
        const server = await start();
        const before = await callCount();
        const was = sent();
        expect((await calls(server, 12)).every((r) => r.status === 200)).toBe(true);
        expect(await server.flushCalls()).toBe(true);
        expect(await callCount()).toBe(before + 12);
        expect(received.single - was.single).toBe(12);
        expect(received.batch - was.batch).toBe(1); // asked once, then never again
      } finally {
        door.old = false;
      }
    }, 60_000);

    it('sends what is queued at once when the server stops', async () => {
      const server = await start({ batchDelayMs: 60_000, batchSize: 100 });
      const before = await callCount();
      expect((await calls(server, 5)).every((r) => r.status === 200)).toBe(true);
      expect(server.pendingCalls()).toBe(5);
      await server.stop();
      expect(await callCount()).toBe(before + 5);
    }, 60_000);
  });
}
