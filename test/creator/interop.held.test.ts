/**
 * The reference x402 client (@x402/fetch 2.27, unmodified) sends a paid request once and takes
 * whatever comes back: a 409 "retry later" would leave it paid and empty-handed. So when the
 * settlement's outcome is still open, our skill server holds the request and answers it the
 * result once the outcome lands: a receipt that came late (confirmed mode, no block for a while),
 * and a settle that never reached the facilitator (it was unreachable when the settle was sent;
 * the skill server sends it again once it is back, while the authorization is still valid).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'bun:test';
import type { Address } from 'viem';
import { serve, skill, type ServeOptions, type SkillServer } from 'skill-market/creator';
import { decodeSettleResponse, readReceiptHeader } from 'skill-market/x402';
import { type LocalChain, startChain, type TestAccount } from '../support/chain';
import { oneDatabase } from '../support/database';
import { type FacilitatorFixture, startFacilitatorFixture } from '../support/facilitator';
import { balances, recordingLogger, recordingFetch, loopbackServeOptions } from '../support/skill-server';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy';
import { referenceExactFetch } from '../support/reference-fetch';

const PRICE = 20_000n; // $0.02
let chain: LocalChain;
beforeAll(async () => {
  chain = await startChain({ payers: 1, relayers: 1 });
}, 60_000);
afterAll(() => chain.stop());
afterEach(() => chain.testClient.setAutomine(true));

const referenceFetch = (account: TestAccount) => referenceExactFetch(chain, account);

const post = (body: unknown): RequestInit => ({
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(body),
});

for (const kind of oneDatabase) {
  describe(`the reference client gets the result on its one request while the payment outcome is open (${kind} facilitator database)`, () => {
    let f: FacilitatorFixture;
    /** The facilitator as the skill server reaches it: a proxy the test cuts. */
    let proxy: TcpProxy;
    let payee: Address;
    const servers: SkillServer[] = [];
    const runs = { shout: 0 };
    /** Runs inside the handler, after the payment was verified and before it is settled. */
    let duringHandler: (() => void) | undefined;
    const skills = {
      shout: skill({ price: '$0.02' }, ({ text }: { text: string }) => {
        runs.shout++;
        duringHandler?.();
        return { shout: text.toUpperCase() };
      }),
    };
    const start = async (extra: Partial<ServeOptions>) => {
      const logger = recordingLogger();
      const server = await serve(
        skills,
        loopbackServeOptions(chain, proxy.url, payee, {
          logger,
          ...extra,
        }),
      );
      servers.push(server);
      return { server, logger };
    };

    beforeAll(async () => {
      // A short receipt wait, so a settle answers `settlement_pending` soon; a reconciler that records the late receipt.
      f = await startFacilitatorFixture(chain, kind, { config: { receiptTimeoutMs: 1000, reconcileIntervalMs: 200 } });
      f.facilitator.app.listen({ hostname: '127.0.0.1', port: 0 });
      proxy = await startTcpProxy({ host: '127.0.0.1', port: f.facilitator.app.server!.port! });
      payee = (await chain.createAccount()).address;
    }, 120_000);
    afterAll(async () => {
      for (const s of servers) await s.stop();
      await proxy.close();
      await f.facilitator.app.stop();
      await f.close();
    });

    it('confirmed mode, no block until after the facilitator answered settlement_pending: the one request gets the result and its receipt, one transfer', async () => {
      const { server, logger } = await start({ settlement: 'confirmed' });
      const payer = await chain.createAccount({ usdc: 1_000_000n });
      const [payerBefore, payeeBefore] = await balances(chain, payer.address, payee);
      const before = runs.shout;
      await chain.testClient.setAutomine(false);

      const answer = referenceFetch(payer)(`${server.url}/shout`, post({ text: 'late' }));
      await logger.logged('warn', 'settlement outcome unknown (pending); result held');
      await chain.testClient.mine({ blocks: 1 });
      await chain.testClient.setAutomine(true);

      const res = await answer;
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ success: true, result: { shout: 'LATE' } });
      const receipt = decodeSettleResponse(res.headers.get('PAYMENT-RESPONSE')!);
      expect(receipt).toMatchObject({ success: true, payer: payer.address, network: chain.network });
      const mined = await chain.publicClient.getTransactionReceipt({ hash: receipt.transaction as `0x${string}` });
      expect(mined.status).toBe('success');
      // The released result carries its signed receipt, for that transaction.
      const signed = readReceiptHeader(res.headers);
      expect(signed?.type === 'receipt' && signed.receipt.payload).toMatchObject({
        transaction: receipt.transaction,
        amount: String(PRICE),
      });
      expect(runs.shout - before).toBe(1);
      expect(await balances(chain, payer.address, payee)).toEqual([payerBefore - PRICE, payeeBefore + PRICE]);
    }, 60_000);

    it('a settle that never reached the facilitator (unreachable from the handler on) is sent again once it is back: the one request gets the result, one transfer', async () => {
      const sent = recordingFetch();
      const { server, logger } = await start({ fetch: sent.fetch });
      const payer = await chain.createAccount({ usdc: 1_000_000n });
      const pay = referenceFetch(payer);
      // A payer who paid here before is verified by the settle itself: the facilitator hears of the
      // next call only through its settle.
      expect((await pay(`${server.url}/shout`, post({ text: 'first' }))).status).toBe(200);
      const [payerBefore, payeeBefore] = await balances(chain, payer.address, payee);
      const before = runs.shout;
      const count = (path: string) => sent.sent.filter((r) => r.path === path).length;
      const settlesBefore = count('/settle');
      const verifiesBefore = count('/verify');

      duringHandler = () => proxy.cut();
      const answer = pay(`${server.url}/shout`, post({ text: 'again' }));
      try {
        await logger.logged('warn', 'settlement outcome unknown (facilitator unavailable); result held');
      } finally {
        duringHandler = undefined;
      }
      expect(await balances(chain, payer.address, payee)).toEqual([payerBefore, payeeBefore]);
      proxy.restore();

      const res = await answer;
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ success: true, result: { shout: 'AGAIN' } });
      expect(decodeSettleResponse(res.headers.get('PAYMENT-RESPONSE')!)).toMatchObject({ success: true, payer: payer.address });
      expect(runs.shout - before).toBe(1);
      expect(await balances(chain, payer.address, payee)).toEqual([payerBefore - PRICE, payeeBefore + PRICE]);
      // No verify: the first settle was lost on the way, the second one reached the facilitator and settled.
      expect(count('/verify') - verifiesBefore).toBe(0);
      expect(count('/settle') - settlesBefore).toBe(2);
    }, 60_000);
  });
}
