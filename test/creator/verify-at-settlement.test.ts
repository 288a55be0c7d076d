/**
 * When the facilitator verifies: a payer who already paid this skill server is verified by the
 * settle itself (one facilitator round trip per call instead of two); a new payer, a signature
 * that does not check out, and every call in `verify: 'first'` mode go through /verify before the
 * handler runs. A known payer who emptied their wallet gets no result and pays nothing, and is
 * verified first again afterwards. Real skill server, our facilitator, anvil.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import type { Address } from 'viem';
import { serve, skill, type ServeOptions, type SkillServer } from 'skill-market/creator';
import { decodePaymentRequired, decodeSettleResponse } from 'skill-market/x402';
import { type LocalChain, startChain } from '../support/chain';
import { oneDatabase } from '../support/database';
import { type FacilitatorFixture, startFacilitatorFixture } from '../support/facilitator';
import { balances, localServeOptions, paidPost, postJson, proofFor, recordingLogger, recordingFetch } from '../support/skill-server';

const PRICE = 10_000n; // $0.01
let chain: LocalChain;
beforeAll(async () => {
  chain = await startChain({ payers: 1, relayers: 1 });
}, 60_000);
afterAll(() => chain.stop());

const runs = { work: 0 };
const skills = {
  work: skill({ price: '$0.01' }, async (input: { n?: number }) => {
    runs.work++;
    await Bun.sleep(20);
    return { doubled: (input.n ?? 0) * 2 };
  }),
};

for (const kind of oneDatabase) {
  describe(`verify at settlement (${kind} facilitator database)`, () => {
    let f: FacilitatorFixture;
    let payee: Address;
    const servers: SkillServer[] = [];
    /** Facilitator requests of the skill servers, by path. */
    const recording = recordingFetch();
    const start = async (extra: Partial<ServeOptions> = {}) => {
      const server = await serve(skills, localServeOptions(chain, f, payee, recordingLogger(), { fetch: recording.fetch, ...extra }));
      servers.push(server);
      return server;
    };
    /** The facilitator paths one paid call asked for. */
    const pathsOf = async (call: () => Promise<Response>) => {
      const from = recording.sent.length;
      const res = await call();
      const paths = recording.sent.slice(from).map((r) => r.path);
      return { res, paths: paths.filter((p) => p === '/verify' || p === '/settle') };
    };
    beforeAll(async () => {
      f = await startFacilitatorFixture(chain, kind);
      f.facilitator.app.listen({ hostname: '127.0.0.1', port: 0 });
      payee = (await chain.createAccount()).address;
    }, 60_000);
    afterAll(async () => {
      for (const s of servers) await s.stop();
      await f.facilitator.app.stop();
      await f.close();
    });

    it('verifies a new payer first, then a payer who paid at settlement only: one round trip, the same money moved', async () => {
      const server = await start();
      const url = `${server.url}/work`;
      const payer = await chain.createAccount({ usdc: PRICE * 3n });
      const [payerBefore, payeeBefore] = await balances(chain, payer.address, payee);
      const first = await pathsOf(() => paidPost(url, { n: 1 }, payer));
      expect(first.res.status).toBe(200);
      expect(first.paths).toEqual(['/verify', '/settle']);
      for (const n of [2, 3]) {
        const next = await pathsOf(() => paidPost(url, { n }, payer));
        expect(next.res.status).toBe(200);
        expect(await next.res.json()).toMatchObject({ success: true, result: { doubled: n * 2 } });
        expect(decodeSettleResponse(next.res.headers.get('PAYMENT-RESPONSE')!).transaction).toMatch(/^0x[0-9a-f]{64}$/);
        expect(next.paths).toEqual(['/settle']);
      }
      expect(await balances(chain, payer.address, payee)).toEqual([payerBefore - 3n * PRICE, payeeBefore + 3n * PRICE]);
    });

    it("asks /verify before every run in verify: 'first' mode", async () => {
      const server = await start({ verify: 'first' });
      const url = `${server.url}/work`;
      const payer = await chain.createAccount({ usdc: PRICE * 2n });
      for (const n of [1, 2]) {
        const call = await pathsOf(() => paidPost(url, { n }, payer));
        expect(call.res.status).toBe(200);
        expect(call.paths).toEqual(['/verify', '/settle']);
      }
    });

    it('withholds the result from a known payer who emptied their wallet, charges nothing, and verifies them first again', async () => {
      const server = await start();
      const url = `${server.url}/work`;
      const payer = await chain.createAccount({ usdc: PRICE });
      expect((await paidPost(url, { n: 1 }, payer)).status).toBe(200);
      const left = await chain.balanceOf(payer.address);
      expect(left).toBe(0n);
      await chain.mint(payer.address, PRICE / 2n); // less than a call
      const before = runs.work;
      const refused = await pathsOf(() => paidPost(url, { n: 2 }, payer));
      expect(refused.res.status).toBe(402);
      expect(refused.paths).toEqual(['/settle']);
      expect(runs.work - before).toBe(1); // the handler ran; its result did not leave
      const body = await refused.res.text();
      expect(body).not.toContain('doubled');
      expect(decodePaymentRequired(refused.res.headers.get('PAYMENT-REQUIRED')!).error).toBe('invalid_exact_evm_insufficient_balance');
      expect(await chain.balanceOf(payer.address)).toBe(PRICE / 2n);

      // Off the list: the next call is verified before its handler, which does not run.
      const again = await pathsOf(() => paidPost(url, { n: 3 }, payer));
      expect(again.res.status).toBe(402);
      expect(again.paths).toEqual(['/verify']);
      expect(runs.work - before).toBe(1);
    });

    it("sends a forged signature in a known payer's name to /verify, and never runs the handler for it", async () => {
      const server = await start();
      const url = `${server.url}/work`;
      const payer = await chain.createAccount({ usdc: PRICE * 2n });
      expect((await paidPost(url, { n: 1 }, payer)).status).toBe(200);
      // Someone else signs an authorization that names the payer as `from`.
      const forger = await chain.createAccount();
      const proof = await proofFor(url, { n: 5 }, { ...forger, address: payer.address } as typeof forger);
      const before = runs.work;
      const forged = await pathsOf(() => postJson(url, { n: 5 }, { 'X-Payment': proof }));
      expect(forged.res.status).toBe(402);
      expect(forged.paths).toEqual(['/verify']);
      expect(runs.work - before).toBe(0);
      expect(await chain.balanceOf(payer.address)).toBe(PRICE);
    });

    it('runs 20 concurrent submissions of a known payer’s proof once, with one transfer', async () => {
      const server = await start();
      const url = `${server.url}/work`;
      const payer = await chain.createAccount({ usdc: PRICE * 5n });
      expect((await paidPost(url, { n: 1 }, payer)).status).toBe(200);
      const proof = await proofFor(url, { n: 4 }, payer);
      const [payerBefore, payeeBefore] = await balances(chain, payer.address, payee);
      const before = runs.work;
      const responses = await Promise.all(Array.from({ length: 20 }, () => postJson(url, { n: 4 }, { 'X-Payment': proof })));
      // The copies wait for the first's answer and get it as a replay.
      expect(responses.map((r) => r.status)).toEqual(Array.from({ length: 20 }, () => 200));
      expect(responses.filter((r) => r.headers.get('X-Payment-Replayed') === 'true')).toHaveLength(19);
      expect(runs.work - before).toBe(1);
      expect(await balances(chain, payer.address, payee)).toEqual([payerBefore - PRICE, payeeBefore + PRICE]);
    });

    it('refuses an unknown verify mode when the server is built', async () => {
      await expect(start({ verify: 'later' as never })).rejects.toThrow('verify must be one of first, at-settlement');
    });
  });
}
