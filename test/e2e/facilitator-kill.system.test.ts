/**
 * The facilitator SIGKILLed under load and restarted at once, every piece in its own process: anvil
 * mining a block every 2 s, the facilitator (`market facilitator`, its database surviving the
 * restart: PostgreSQL when TEST_DATABASE_URL is set, else an embedded one in a data folder) and
 * the skill server (`market serve`, default settings: broadcast settlement, payers who paid before
 * verified at settlement, no RPC of its own). The clients are the reference x402 client
 * (@x402/fetch 2.27), which sends a paid request once and takes whatever comes back.
 *
 * What must hold for every call in flight at the kill: the client gets a final answer on its one
 * request (the result, a 402, or a 503 before anything ran) — never 409 "retry later", which the
 * skill server answers only once it has held a request for its `holdMs` (30 s by default) without
 * learning the payment's outcome; and a call whose handler ran is either delivered and charged
 * exactly once, or not charged at all.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { x402Client } from '@x402/core/client';
import { registerExactEvmScheme } from '@x402/evm/exact/client';
import { wrapFetchWithPayment } from '@x402/fetch';
import type { Address, Hex } from 'viem';
import { decodePaymentPayload, decodeSettleResponse } from 'skill-market/x402';
import { type LocalChain, startChain, type TestAccount, usdCoinAbi } from '../support/chain';
import { createMigratedPostgresDatabase, seedEmbeddedDataDir, TEST_DATABASE_URL } from '../support/database';
import { eventually } from '../support/eventually';
import { freePort, startMarket, waitForJson, type MarketProcess } from '../support/process';

const PAYERS = 8;
const WORKERS_PER_PAYER = 2;
const PRICE = 10_000n; // $0.01

/** How the facilitator settles: one transfer per payment, or queued into Multicall3 batches. */
const MODES = [
  { name: 'one transfer per payment', env: {} },
  { name: 'batched settlement', env: { FACILITATOR_BATCH_MAX: '10', FACILITATOR_BATCH_MS: '200' } },
] as const;

for (const mode of MODES) {
  describe(`${mode.name}`, () => {
    const work = mkdtempSync(join(tmpdir(), 'market-kill-'));

    let chain: LocalChain;
    let facilitator: MarketProcess;
    let skillServer: MarketProcess;
    let facilitatorPort: number;
    let skillUrl: string;
    let facilitatorDatabase: Record<string, string>;
    let dropDatabase: (() => Promise<void>) | undefined;
    let payee: Address;

    function startFacilitator(): MarketProcess {
      return startMarket(['facilitator', '--port', String(facilitatorPort), '--host', '127.0.0.1'], {
        LOG_LEVEL: 'info',
        ...facilitatorDatabase,
        FACILITATOR_PRIVATE_KEY: chain.accounts.relayer.privateKey,
        FACILITATOR_RPC_URL: chain.rpcUrl,
        FACILITATOR_NETWORK: chain.network,
        FACILITATOR_ASSETS: chain.token.address,
        ...mode.env,
      });
    }

    /** {@link eventually}, failing with the processes' output. */
    const until = <T>(what: string, read: () => Promise<T>, done: (value: T) => boolean, ms: number) =>
      eventually(read, done, what, ms, {
        context: () => `--- facilitator\n${facilitator.output().slice(-20_000)}\n--- skill server\n${skillServer.output().slice(-20_000)}`,
      });

    beforeAll(async () => {
      chain = await startChain({ payers: PAYERS, payees: 1, relayers: 1, anvilArgs: ['--block-time', '2'] });
      payee = chain.accounts.payee.address;
      if (TEST_DATABASE_URL) {
        const created = await createMigratedPostgresDatabase();
        dropDatabase = created.drop;
        facilitatorDatabase = { DATABASE_URL: created.url, DATABASE_POOL_SIZE: '5' };
      } else {
        facilitatorDatabase = { MARKET_DATA_DIR: join(work, 'facilitator-data') };
        await seedEmbeddedDataDir(facilitatorDatabase.MARKET_DATA_DIR!);
      }
      facilitatorPort = await freePort();
      facilitator = startFacilitator();

      const dir = join(work, 'creator');
      mkdirSync(dir);
      // The handler says on stdout which call it ran: the test's record of "the handler ran".
      writeFileSync(
        join(dir, 'skills.ts'),
        `import { skill } from 'skill-market/creator';
export const echo = skill({ price: '$0.01', description: 'Echoes its input' }, (input: { id: string }) => {
  console.log(\`handler ran \${input.id}\`);
  return { echo: input.id };
});
`,
      );
      const port = await freePort();
      skillUrl = `http://127.0.0.1:${port}`;
      skillServer = startMarket(
        [
          'serve',
          'skills.ts',
          '--port',
          String(port),
          '--host',
          '127.0.0.1',
          '--facilitator',
          `http://127.0.0.1:${facilitatorPort}`,
          '--network',
          chain.network,
          '--asset',
          chain.token.address,
        ],
        { LOG_LEVEL: 'info', MARKET_WALLET_ADDRESS: payee, MARKET_RPC_URL: '' },
        dir,
      );
      await Promise.all([waitForJson(`http://127.0.0.1:${facilitatorPort}/supported`, 60_000), waitForJson(`${skillUrl}/health`, 60_000)]);
    }, 120_000);

    afterAll(async () => {
      for (const p of [facilitator, skillServer]) p?.child.kill('SIGKILL');
      await Promise.all([facilitator?.exited, skillServer?.exited]);
      await chain?.stop();
      await dropDatabase?.();
      rmSync(work, { recursive: true, force: true });
    });

    /** One paid call as its client saw it. */
    interface Call {
      id: string;
      payer: TestAccount;
      /** The proofs its client sent (PAYMENT-SIGNATURE). */
      proofs: string[];
      status?: number;
      body?: string;
      receipt?: string | null;
      error?: string;
    }

    function payingClient(payer: TestAccount) {
      const client = new x402Client();
      registerExactEvmScheme(client, { signer: payer });
      client.setSpendControls({ allowedAssets: [{ network: chain.network, asset: chain.token.address }] });
      return client;
    }

    /** One call through @x402/fetch, its proofs recorded on the way out. */
    async function call(client: x402Client, record: Call): Promise<void> {
      const pay = wrapFetchWithPayment(
        // @x402/fetch hands its inner fetch a Request.
        ((request: Request) => {
          const proof = request.headers.get('PAYMENT-SIGNATURE');
          if (proof) record.proofs.push(proof);
          return fetch(request);
        }) as typeof fetch,
        client,
      );
      try {
        const res = await pay(`${skillUrl}/echo`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ id: record.id }),
        });
        record.body = await res.text();
        record.receipt = res.headers.get('PAYMENT-RESPONSE');
        record.status = res.status;
      } catch (error) {
        record.error = String(error);
        record.status = -1;
      }
    }

    const ran = () => new Set([...skillServer.output().matchAll(/^handler ran (\S+)$/gm)].map((m) => m[1]!));

    const used = (payer: Address, nonce: Hex) =>
      chain.publicClient.readContract({
        address: chain.token.address,
        abi: usdCoinAbi,
        functionName: 'authorizationState',
        args: [payer, nonce],
      });

    describe(`the facilitator SIGKILLed under load (real processes, anvil --block-time 2, ${TEST_DATABASE_URL ? 'PostgreSQL' : 'embedded'} facilitator database)`, () => {
      it('every call in flight gets its final answer on its one request within the 30 s hold, and a call whose handler ran is delivered and charged once, or not charged', async () => {
        const payers = chain.accounts.payers;
        const before = await Promise.all(payers.map((p) => chain.balanceOf(p.address)));
        const payeeBefore = await chain.balanceOf(payee);
        const calls: Call[] = [];
        let stopping = false;
        const workers = payers.flatMap((payer, p) =>
          Array.from({ length: WORKERS_PER_PAYER }, async (_, w) => {
            const client = payingClient(payer);
            for (let n = 0; !stopping; n++) {
              const record: Call = { id: `p${p}w${w}n${n}`, payer, proofs: [] };
              calls.push(record);
              await call(client, record);
            }
          }),
        );

        // Every payer has paid here (later calls are verified at settlement), then the kill strikes
        // while calls are between their handler and their answer.
        await until(
          'every payer has been served',
          async () => new Set(calls.filter((c) => c.status === 200).map((c) => c.payer.address)).size,
          (n) => n === PAYERS,
          90_000,
        );
        await until(
          'calls between their handler and their answer',
          async () => {
            const done = new Set(calls.filter((c) => c.status !== undefined).map((c) => c.id));
            return [...ran()].filter((id) => !done.has(id)).length;
          },
          (n) => n >= 2,
          60_000,
        );
        facilitator.child.kill('SIGKILL');
        stopping = true;
        await facilitator.exited;
        facilitator = startFacilitator();

        await until(
          'every call answered',
          async () => calls.filter((c) => c.status === undefined).length,
          (n) => n === 0,
          120_000,
        );
        await Promise.all(workers);
        // Whatever was sent is mined (or dropped) before the books are read.
        await until(
          'the mempool is empty',
          () => chain.testClient.getTxpoolStatus(),
          (s) => s.pending === 0 && s.queued === 0,
          60_000,
        );
        const block = await chain.publicClient.getBlockNumber();
        await until(
          'one more block',
          () => chain.publicClient.getBlockNumber(),
          (b) => b > block,
          30_000,
        );

        const handled = ran();
        const answers = await Promise.all(
          calls.map(async (c) => {
            const nonces = c.proofs.map((proof) => decodePaymentPayload(proof).authorization.nonce as Hex);
            const charged = (await Promise.all(nonces.map((nonce) => used(c.payer.address, nonce)))).filter(Boolean).length;
            return {
              id: c.id,
              status: c.status,
              ran: handled.has(c.id),
              charged,
              error: c.error,
              body: c.status === 200 ? undefined : c.body,
            };
          }),
        );
        const summary = answers.reduce<Record<string, number>>((counts, a) => {
          const key = `${a.status}${a.ran ? ' ran' : ''}${a.charged ? ' charged' : ''}`;
          counts[key] = (counts[key] ?? 0) + 1;
          return counts;
        }, {});
        console.info(`facilitator killed under load: ${calls.length} calls`, summary);

        // A final answer on the one request: the result, a refusal, or "unavailable" before anything ran.
        expect(answers.filter((a) => a.status !== 200 && a.status !== 402 && a.status !== 503)).toEqual([]);
        // Each handler run once; a result only with its payment, and a payment only with its result.
        expect(handled.size).toBe([...skillServer.output().matchAll(/^handler ran /gm)].length);
        expect(answers.filter((a) => a.charged > 1)).toEqual([]);
        expect(answers.filter((a) => (a.status === 200) !== (a.charged === 1))).toEqual([]);
        expect(answers.filter((a) => a.status === 200 && !a.ran)).toEqual([]);
        for (const c of calls.filter((x) => x.status === 200)) {
          expect(JSON.parse(c.body!)).toMatchObject({ success: true, result: { echo: c.id } });
          expect(decodeSettleResponse(c.receipt!)).toMatchObject({ success: true, payer: c.payer.address });
        }
        // The books: each payer paid exactly for what they got.
        const delivered = (payer: TestAccount) => BigInt(calls.filter((c) => c.payer === payer && c.status === 200).length);
        expect(await Promise.all(payers.map((p) => chain.balanceOf(p.address)))).toEqual(
          payers.map((p, i) => before[i]! - delivered(p) * PRICE),
        );
        expect(await chain.balanceOf(payee)).toBe(payeeBefore + BigInt(calls.filter((c) => c.status === 200).length) * PRICE);
      }, 400_000);
    });
  });
}
