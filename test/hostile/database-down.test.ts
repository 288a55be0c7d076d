/**
 * A database that goes away under running servers: the registry and the facilitator answer 503
 * `Service unavailable` with Retry-After — promptly, because every statement has a deadline —
 * instead of a 500, or a request hanging until TCP gives up. PostgreSQL is made unreachable
 * through a TCP proxy the test cuts (connections reset, new ones refused) or blackholes (a
 * partition: nothing comes back); the embedded database is closed under the server.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { openDatabase, type DatabaseHandle } from '../../src/db';
import { type LocalChain, startChain } from '../support/chain';
import { createMigratedPostgresDatabase, openTestDatabase, TEST_DATABASE_URL } from '../support/database';
import { paymentBody, requirementsFor, startFacilitatorFixture } from '../support/facilitator';
import { balances, paidPost } from '../support/skill-server';
import { serve, skill } from 'skill-market/creator';
import { LISTENER_OPTIONS } from '../../src/http';
import { testRegistry } from '../support/registry';
import { expectRefusal, postJson } from './support';
import { startTcpProxy } from '../support/tcp-proxy';
import { lastReading } from '../support/eventually';

/** Far above the statement deadline: an answer later than this is a hang. */
const HANG_MS = 8_000;

async function answered(pending: Promise<Response>): Promise<Response> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const hang = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${HANG_MS} ms`)), HANG_MS)));
  return Promise.race([pending, hang]).finally(() => clearTimeout(timer));
}

interface Outage {
  database: DatabaseHandle;
  down(): Promise<void>;
  /** Brings the database back, where the outage allows it. */
  up?: () => Promise<void>;
  close(): Promise<void>;
}

async function closedEmbedded(): Promise<Outage> {
  const database = await openTestDatabase('embedded');
  return { database, down: () => database.close(), close: () => database.close() };
}

async function postgresBehindProxy(how: 'cut' | 'blackhole'): Promise<Outage> {
  const created = await createMigratedPostgresDatabase();
  const url = new URL(created.url);
  const drop = created.drop;
  await (await openDatabase({ kind: 'postgres', url: url.toString(), poolSize: 1 })).close(); // migrated
  const proxy = await startTcpProxy({ host: url.hostname, port: Number(url.port || 5432) });
  const viaProxy = new URL(url);
  viaProxy.host = `127.0.0.1:${proxy.port}`;
  // A deadline shorter than the default (1.5 s) so that the partition's 503s come sooner; still far
  // above what a statement takes on a loaded machine.
  const database = await openDatabase({ kind: 'postgres', url: viaProxy.toString(), poolSize: 3, deadlineMs: 600 }, { migrate: false });
  return {
    database,
    down: async () => (how === 'cut' ? proxy.cut() : proxy.blackhole()),
    up: async () => proxy.restore(),
    close: async () => {
      await proxy.close();
      await database.close();
      await drop();
    },
  };
}

const outages: [string, () => Promise<Outage>][] = [['the embedded database closed', closedEmbedded]];
if (TEST_DATABASE_URL) {
  outages.push(['PostgreSQL refusing connections', () => postgresBehindProxy('cut')]);
  outages.push(['PostgreSQL partitioned away', () => postgresBehindProxy('blackhole')]);
}

let chain: LocalChain;
beforeAll(async () => {
  chain = await startChain({ payers: 1 });
}, 60_000);
afterAll(() => chain.stop());

for (const [label, start] of outages) {
  describe(`registry with ${label}`, () => {
    let outage: Outage;
    let registry: ReturnType<typeof testRegistry>;
    beforeAll(async () => {
      outage = await start();
      registry = testRegistry(outage.database);
      expect((await registry.request('/health')).status).toBe(200);
      await outage.down();
    });
    afterAll(() => outage.close(), 20_000);

    it('answers /health 503 with Retry-After', async () => {
      const res = await answered(registry.request('/health'));
      expect(res.status).toBe(503);
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(await res.json()).toMatchObject({ status: 'unavailable' });
    });

    it('answers reads and writes 503 Service unavailable in the error shape, with Retry-After', async () => {
      for (const pending of [
        registry.request('/skills'),
        registry.request('/skills/some-skill'),
        registry.request('/groups'),
        registry.request('/analytics/view', postJson(JSON.stringify({ skillId: crypto.randomUUID() }))),
      ]) {
        const res = await answered(pending);
        expect(res.headers.get('retry-after')).not.toBeNull();
        const body = await expectRefusal(res, 503, 'UNAVAILABLE');
        expect(body.error).toBe('Service unavailable');
      }
    });

    it('answers many requests at once, none left hanging', async () => {
      const all = await Promise.all(Array.from({ length: 12 }, (_, i) => answered(registry.request(i % 2 ? '/skills' : '/health'))));
      expect(all.map((r) => r.status)).toEqual(Array(12).fill(503));
    });

    if (label.startsWith('PostgreSQL')) {
      it('answers again once the database is back', async () => {
        await outage.up!();
        // The first statements open new connections, which on a loaded machine can take longer than
        // this file's short deadline: the answer meanwhile is the 503 with Retry-After that a client
        // asks again on. Every answer is one or the other, and 200 comes within seconds.
        for (const path of ['/health', '/skills']) {
          const answers = await lastReading(
            async () => {
              const res = await answered(registry.request(path));
              return { status: res.status, retryAfter: res.headers.get('retry-after') !== null };
            },
            (a) => a.status !== 503,
            15_000,
          );
          expect(answers).toEqual({ status: 200, retryAfter: false });
        }
      });
    }
  });

  describe(`facilitator with ${label}`, () => {
    let outage: Outage;
    let facilitator: Awaited<ReturnType<typeof startFacilitatorFixture>>;
    beforeAll(async () => {
      outage = await start();
      facilitator = await startFacilitatorFixture(chain, 'embedded', { database: outage.database });
      await outage.down();
    }, 60_000);
    afterAll(async () => {
      await facilitator.close().catch(() => undefined);
      await outage.close();
    }, 60_000);

    it('answers /verify and /settle 503 Service unavailable with Retry-After, not a 500 or a hang', async () => {
      const requirements = requirementsFor(chain, chain.accounts.payee.address);
      for (const path of ['/verify', '/settle']) {
        const body = await paymentBody(chain, chain.accounts.payers[0]!, requirements);
        const res = (await answered(facilitator.post(path, body))) as Response;
        expect(res.headers.get('retry-after')).not.toBeNull();
        expect((await expectRefusal(res, 503, 'UNAVAILABLE')).error).toBe('Service unavailable');
      }
      expect((await answered(facilitator.get('/health'))).status).toBe(503);
    });

    it('lets a skill server answer a paid call 503 promptly, not after its verify timeout, and charge nothing', async () => {
      facilitator.facilitator.app.listen({ hostname: '127.0.0.1', port: 0, ...LISTENER_OPTIONS });
      const server = await serve(
        { echo: skill({ price: '$0.01' }, (input: unknown) => ({ input })) },
        {
          port: 0,
          hostname: '127.0.0.1',
          wallet: chain.accounts.payee.address,
          facilitatorUrl: `http://127.0.0.1:${facilitator.facilitator.app.server!.port}`,
          network: chain.network,
          asset: { address: chain.token.address, name: chain.token.name, version: chain.token.version, decimals: chain.token.decimals },
          logger: { info() {}, warn() {}, error() {} },
        },
      );
      const payer = chain.accounts.payers[0]!;
      try {
        const [before] = await balances(chain, payer.address);
        const res = (await answered(paidPost(`http://127.0.0.1:${server.port}/echo`, { a: 1 }, payer))) as Response;
        expect(res.status).toBe(503);
        expect(res.headers.get('retry-after')).not.toBeNull();
        expect((await balances(chain, payer.address))[0]).toBe(before);
      } finally {
        await server.stop();
        await facilitator.facilitator.app.stop();
      }
    });
  });
}
