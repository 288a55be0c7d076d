/**
 * Channel call records across SIGKILLs: a `market serve` selling over payment channels is killed
 * twice in the middle of a burst of channel calls (the first time while the registry refuses call
 * records, so none of that run's records has left), and started again on its channel folder. Every
 * call it answered reaches the registry, once, and once its claims are mined the registry's channel
 * revenue equals what the contract shows claimed, channel by channel; the channels then keep no
 * record the registry has. On both databases.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { and, eq } from 'drizzle-orm';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChannelState } from 'skill-market/creator';
import { PAYMENT_VERIFICATION_DEFAULTS } from '../../src/config';
import { channelCalls } from '../../src/db/schema';
import { json, newCreator } from '../support/catalogue';
import { channelTotals, type LocalChain, receiverState, startChain, type TestAccount } from '../support/chain';
import { startBatchFacilitator } from '../support/chain/batch-facilitator';
import { referenceChannelClient } from '../support/channel-server';
import { databaseKinds } from '../support/database';
import { eventually } from '../support/eventually';
import { freePort, type MarketProcess, startMarket, waitForJson } from '../support/process';
import { chainVerifier, registryFixture } from '../support/registry';

const PRICE = 1_000n;
const PAYERS = 3;
/** Past the longest pause between two looks of the registry at a watched channel. */
const LATER = 3601;
let chain: LocalChain;
let facilitator: ReturnType<typeof startBatchFacilitator>;
let folder: string;

beforeAll(async () => {
  chain = await startChain({ payers: 1, relayers: 1 });
  facilitator = startBatchFacilitator(chain, chain.accounts.relayer);
  folder = await mkdtemp(join(tmpdir(), 'serve-crash-records-'));
  await writeFile(
    join(folder, 'skills.ts'),
    "import { skill } from 'skill-market/creator';\nexport const echo = skill({ price: '$0.001' }, (input) => ({ echo: input }));\n",
  );
}, 60_000);

afterAll(async () => {
  facilitator?.stop();
  await chain?.stop();
  await rm(folder, { recursive: true, force: true });
});

for (const kind of databaseKinds) {
  describe(`channel call records of market serve killed mid-burst (${kind} database)`, () => {
    const fx = registryFixture(kind, { catalogue: { allowHttpEndpoints: true, viewWindowSeconds: 3600, newSkillsPerHour: 30 } });
    /** The registry over HTTP; while `analyticsDown`, its call-record routes answer 503. */
    let front: ReturnType<typeof Bun.serve>;
    let analyticsDown = false;
    beforeAll(() => {
      front = Bun.serve({
        hostname: '127.0.0.1',
        port: 0,
        fetch: (request) => {
          const url = new URL(request.url);
          if (analyticsDown && url.pathname.startsWith('/analytics/'))
            return Response.json({ error: 'Service unavailable', code: 'UNAVAILABLE', requestId: 'test' }, { status: 503 });
          return fx.registry.app.handle(new Request(`http://localhost${url.pathname}${url.search}`, request));
        },
      });
    });
    afterAll(() => front?.stop(true));

    it('delivers the record of every answered call once, and counts per channel exactly what the contract shows claimed', async () => {
      const creator = await newCreator(fx.request);
      const group = await creator.group();
      const authorizer = await chain.createAccount();
      const port = await freePort();
      const url = `http://127.0.0.1:${port}`;
      const channelsDir = join(folder, `channels-${kind}`);
      const runs: MarketProcess[] = [];
      const start = async (claimWithin: string) => {
        const run = startMarket(
          [
            'serve',
            'skills.ts',
            ...['--port', String(port), '--host', '127.0.0.1', '--endpoint', url, '--groups', group.name],
            ...['--api-url', `http://127.0.0.1:${front.port}`, '--facilitator', facilitator.url],
            ...['--network', chain.network, '--asset', chain.token.address, '--channels-dir', channelsDir],
            ...['--claim-within', claimWithin, '--settle-within', '600'],
          ],
          { MARKET_WALLET_ADDRESS: creator.address, MARKET_API_KEY: creator.key, MARKET_RECEIVER_AUTHORIZER_KEY: authorizer.privateKey },
          folder,
        );
        runs.push(run);
        await waitForJson(`${url}/health`);
        return run;
      };
      const payers = await Promise.all(Array.from({ length: PAYERS }, () => chain.createAccount({ usdc: 10_000_000n })));
      const clients = payers.map((payer: TestAccount) => referenceChannelClient(chain, payer, { depositMultiplier: 1000 }).pay);
      let answered = 0;
      /** Each payer calls until `until` answered calls in all, the server dies, or it is refused three times in a row. */
      const burst = async (until: number) => {
        const load = async (pay: (typeof clients)[number]) => {
          for (let refused = 0; answered < until && refused < 3; ) {
            const res = await pay(`${url}/echo`, {
              method: 'POST',
              headers: { 'content-type': 'application/json' },
              body: JSON.stringify({ n: answered }),
            }).catch(() => undefined);
            if (!res) return;
            await res.arrayBuffer();
            if (res.status === 200) {
              answered++;
              refused = 0;
            } else refused++;
          }
        };
        return Promise.all(clients.map(load));
      };
      const skillId = async () => {
        const own = (await json(await fx.request('/creators/me/skills', { headers: { authorization: `Bearer ${creator.key}` } }))) as {
          id: string;
          name: string;
        }[];
        return own.find((s) => s.name === 'echo')?.id;
      };
      const records = async () => {
        const id = await skillId();
        return id ? fx.database.db.select().from(channelCalls).where(eq(channelCalls.skillId, id)) : [];
      };
      const killMidBurst = async (run: MarketProcess, until: number) => {
        // The kill comes while the payers still call: some calls are in flight.
        const loads = burst(Number.MAX_SAFE_INTEGER);
        await eventually(
          () => answered,
          (n) => n >= until,
          `${until} answered calls`,
          30_000,
          { context: run.output },
        );
        run.child.kill('SIGKILL');
        await run.exited;
        await loads;
      };

      try {
        // Run 1: the registry refuses call records; killed mid-burst, none of its records has left.
        analyticsDown = true;
        await killMidBurst(await start('1800'), 24);
        expect(await records()).toEqual([]);
        const firstRun = answered;

        // Run 2: the registry takes records again; killed mid-burst once more.
        analyticsDown = false;
        await killMidBurst(await start('1800'), firstRun + 24);

        // Run 3: it sends what it kept and claims everything within a second.
        const last = await start('1');
        const [delivered, claimed] = await eventually(
          async () => [(await records()).length, (await receiverState(chain, creator.address as `0x${string}`)).totalClaimed] as const,
          ([count, total]) => count >= answered && BigInt(count) * PRICE === total,
          'a record of every answered call, and a claim of each',
          60_000,
          { context: last.output },
        );
        // Every answered call, and at most the calls in flight at the two kills besides.
        expect(delivered).toBeGreaterThanOrEqual(answered);
        expect(delivered).toBeLessThanOrEqual(answered + 2 * PAYERS);
        expect(claimed).toBe(BigInt(delivered) * PRICE);

        // The registry reads the claims: per channel, the revenue it counts is what the contract paid.
        fx.clock.advance(LATER);
        await chainVerifier(fx, chain, { ...PAYMENT_VERIFICATION_DEFAULTS, enabled: false }).verifyNow();
        const rows = await records();
        expect(rows.filter((r) => r.status !== 'counted').map((r) => `${r.status}: ${r.reason}`)).toEqual([]);
        const channels = [...new Set(rows.map((r) => r.channelId))];
        expect(channels).toHaveLength(PAYERS);
        for (const channelId of channels) {
          const counted = await fx.database.db
            .select()
            .from(channelCalls)
            .where(and(eq(channelCalls.channelId, channelId), eq(channelCalls.status, 'counted')));
          const revenue = counted.reduce((sum, r) => sum + r.amount, 0n);
          expect({ channelId, revenue }).toEqual({
            channelId,
            revenue: (await channelTotals(chain, channelId as `0x${string}`)).totalClaimed,
          });
        }
        // Delivered, the records are dropped: the latest state each channel wrote keeps none (a
        // journal line is a checksum, a space and the record).
        const keptRecords = async () => {
          const latest = new Map<string, number>();
          for (const name of (await readdir(channelsDir)).filter((n) => /^journal-\d+\.log$/.test(n)).sort()) {
            for (const line of (await readFile(join(channelsDir, name), 'utf8')).split('\n').filter(Boolean)) {
              const { channelId, state } = JSON.parse(line.slice(line.indexOf(' ') + 1)) as {
                channelId: string;
                state: ChannelState | null;
              };
              latest.set(channelId, state?.unreported?.length ?? 0);
            }
          }
          return [...latest.values()];
        };
        await eventually(
          keptRecords,
          (kept) => kept.length === PAYERS && kept.every((n) => n === 0),
          'no channel keeping a delivered record',
          10_000,
          { context: last.output },
        );
      } finally {
        for (const run of runs) run.child.kill('SIGTERM');
        await Promise.all(runs.map((run) => run.exited));
      }
    }, 180_000);
  });
}
