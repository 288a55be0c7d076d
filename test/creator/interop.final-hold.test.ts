/**
 * With the chain to read, a paid request whose settlement is still open when the hold ends is held
 * on until the outcome is final: the transfer mined (the result), or the authorization expired
 * unmined (a 402, nothing charged). The reference x402 client (@x402/fetch 2.27, unmodified) reads
 * one answer, so a 409 "retry later" would leave it charged without the result. Its own chain: the
 * test moves the chain's clock an hour on.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import type { Address } from 'viem';
import { serve, skill, type SkillServer } from 'skill-market/creator';
import { type LocalChain, startChain, type TestAccount } from '../support/chain';
import { oneDatabase } from '../support/database';
import { eventually } from '../support/eventually';
import { type FacilitatorFixture, startFacilitatorFixture } from '../support/facilitator';
import { balances, loopbackServeOptions, recordingLogger } from '../support/skill-server';
import { referenceExactFetch } from '../support/reference-fetch';

const PRICE = 20_000n; // $0.02
const kind = oneDatabase[0]!;
let chain: LocalChain;
let f: FacilitatorFixture;
let payee: Address;
let server: SkillServer;
const logger = recordingLogger();
const holdMs = 200;

const referenceFetch = (account: TestAccount) => referenceExactFetch(chain, account);

const post = (body: unknown): RequestInit => ({
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(body),
});

beforeAll(async () => {
  chain = await startChain({ payers: 1, relayers: 1 });
  // A short receipt wait, so a settle answers `settlement_pending` soon.
  f = await startFacilitatorFixture(chain, kind, { config: { receiptTimeoutMs: 1000, reconcileIntervalMs: 200 } });
  f.facilitator.app.listen({ hostname: '127.0.0.1', port: 0 });
  payee = (await chain.createAccount()).address;
  server = await serve(
    { shout: skill({ price: '$0.02' }, ({ text }: { text: string }) => ({ shout: text.toUpperCase() })) },
    loopbackServeOptions(chain, `http://127.0.0.1:${f.facilitator.app.server!.port}`, payee, {
      logger,
      settlement: 'confirmed',
      holdMs,
      rpcUrl: chain.rpcUrl,
    }),
  );
}, 120_000);

afterAll(async () => {
  await server?.stop();
  await f?.facilitator.app.stop();
  await f?.close();
  await chain?.stop();
});

/** Whether the request is still unanswered well past the hold. */
const stillHeld = async (answer: Promise<Response>) => (await Promise.race([answer, Bun.sleep(holdMs * 5).then(() => 'held')])) === 'held';
const heldSoFar = () => logger.lines.filter((l) => l.includes('result held')).length;

describe('a request held past the hold until its payment outcome is final', () => {
  it('past the hold, with the chain to read, the one request waits for the final outcome: mined, the result; expired unmined, a 402 and nothing charged', async () => {
    // Mined well after the hold: the request was still open, and gets the result.
    const payer = await chain.createAccount({ usdc: 1_000_000n });
    const [payerBefore, payeeBefore] = await balances(chain, payer.address, payee);
    await chain.testClient.setAutomine(false);
    const mined = referenceFetch(payer)(`${server.url}/shout`, post({ text: 'final' }));
    await eventually(heldSoFar, (n) => n === 1, 'the first result held');
    expect(await stillHeld(mined)).toBe(true);
    await chain.testClient.mine({ blocks: 1 });
    await chain.testClient.setAutomine(true);
    const res = await mined;
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ success: true, result: { shout: 'FINAL' } });
    expect(await balances(chain, payer.address, payee)).toEqual([payerBefore - PRICE, payeeBefore + PRICE]);

    // Not mined before its validBefore: the next block (an hour later) refuses the transfer, and
    // the request is answered a 402 as soon as the chain shows it expired; the payer keeps the money.
    const other = await chain.createAccount({ usdc: 1_000_000n });
    const [otherBefore, payeeNow] = await balances(chain, other.address, payee);
    await chain.testClient.setAutomine(false);
    const lost = referenceFetch(other)(`${server.url}/shout`, post({ text: 'never' }));
    await eventually(heldSoFar, (n) => n === 2, 'the second result held');
    expect(await stillHeld(lost)).toBe(true);
    await chain.testClient.increaseTime({ seconds: 3600 });
    await chain.testClient.mine({ blocks: 1 });
    const refused = await lost;
    await chain.testClient.setAutomine(true);
    expect(refused.status).toBe(402);
    expect(await balances(chain, other.address, payee)).toEqual([otherBefore, payeeNow]);
  }, 60_000);
});
