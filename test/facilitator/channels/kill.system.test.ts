/**
 * A claim survives a facilitator SIGKILLed between recording it and sending it: `market facilitator`
 * (a real process) records the claim and its signed transaction's hash, then dies while the node
 * has not got the transaction (an RPC proxy holds every eth_sendRawTransaction). Restarted on the
 * same database, its resume pass sends the claim, and the claim is mined exactly once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Hex, getAbiItem, slice, toFunctionSelector } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { BATCH_SETTLEMENT_ADDRESS, batchSettlementAbi } from '../../../src/chain/batch-settlement';
import { type LocalChain, channelState, depositToChannel, startChain, type TestAccount } from '../../support/chain';
import { createMigratedPostgresDatabase, databaseKinds, seedEmbeddedDataDir } from '../../support/database';
import { eventually } from '../../support/eventually';
import { freePort, startMarket, waitForJson, type MarketProcess } from '../../support/process';
import { body, channelRequirements, claimRowOf, newChannel, PRICE } from './payloads';

let chain: LocalChain;
const work = mkdtempSync(join(tmpdir(), 'channel-kill-'));
/** Every eth_sendRawTransaction is held (never forwarded, never answered) while this is set. */
let holding = false;
let held = 0;
let proxy: ReturnType<typeof Bun.serve>;

beforeAll(async () => {
  chain = await startChain();
  proxy = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    idleTimeout: 0,
    async fetch(request) {
      const text = await request.text();
      if (holding && text.includes('eth_sendRawTransaction')) {
        held++;
        return new Promise<Response>(() => undefined); // the process dies waiting
      }
      const answer = await fetch(chain.rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: text });
      return new Response(await answer.text(), { headers: { 'content-type': 'application/json' } });
    },
  });
}, 60_000);

afterAll(async () => {
  proxy?.stop(true);
  await chain?.stop();
  rmSync(work, { recursive: true, force: true });
});

const claimSelector = toFunctionSelector(getAbiItem({ abi: batchSettlementAbi, name: 'claimWithSignature' }));

/** The relayer's claimWithSignature transactions mined since `fromBlock`. */
async function minedClaims(relayer: TestAccount, fromBlock: bigint): Promise<Hex[]> {
  const latest = await chain.publicClient.getBlockNumber();
  const hashes: Hex[] = [];
  for (let n = fromBlock; n <= latest; n++) {
    const block = await chain.publicClient.getBlock({ blockNumber: n, includeTransactions: true });
    for (const tx of block.transactions) {
      if (tx.from.toLowerCase() === relayer.address.toLowerCase() && tx.to?.toLowerCase() === BATCH_SETTLEMENT_ADDRESS.toLowerCase()) {
        if (slice(tx.input, 0, 4) === claimSelector) hashes.push(tx.hash);
      }
    }
  }
  return hashes;
}

for (const kind of databaseKinds) {
  describe(`a facilitator killed mid-claim (market facilitator process, ${kind} database)`, () => {
    let database: Record<string, string>;
    let drop: (() => Promise<void>) | undefined;
    let facilitator: MarketProcess | undefined;
    const authorizerKey = generatePrivateKey();

    beforeAll(async () => {
      if (kind === 'postgres') {
        const created = await createMigratedPostgresDatabase();
        drop = created.drop;
        database = { DATABASE_URL: created.url, DATABASE_POOL_SIZE: '3' };
      } else {
        database = { MARKET_DATA_DIR: join(work, `data-${crypto.randomUUID()}`) };
        await seedEmbeddedDataDir(database.MARKET_DATA_DIR!);
      }
    });
    afterAll(async () => {
      facilitator?.child.kill('SIGKILL');
      await facilitator?.exited;
      await drop?.();
    });

    const start = (port: number, relayer: TestAccount) =>
      startMarket(['facilitator', '--port', String(port), '--host', '127.0.0.1'], {
        LOG_LEVEL: 'info',
        ...database,
        FACILITATOR_PRIVATE_KEY: relayer.privateKey,
        FACILITATOR_AUTHORIZER_KEY: authorizerKey,
        FACILITATOR_RPC_URL: `http://127.0.0.1:${proxy.port}`,
        FACILITATOR_NETWORK: chain.network,
        FACILITATOR_ASSETS: chain.token.address,
        FACILITATOR_RECONCILE_INTERVAL_MS: '500',
      });

    it('resumes the recorded claim after the restart and it is mined once', async () => {
      const relayer = (await chain.createAccount()) as TestAccount;
      const payer = (await chain.createAccount({ usdc: 1_000_000n })) as TestAccount;
      const receiver = (await chain.createAccount()).address;
      const { config } = newChannel(chain, payer, receiver, privateKeyToAccount(authorizerKey).address);
      await depositToChannel(chain, payer, config, 10n * PRICE);
      const fromBlock = (await chain.publicClient.getBlockNumber()) + 1n;
      const operation = { ...channelRequirements(chain, receiver), amount: '0', maxTimeoutSeconds: 0, extra: {} };
      const claim = body(operation, { type: 'claim', claims: [await claimRowOf(chain, payer, config, 4n * PRICE, 4n * PRICE)] });

      const port = await freePort();
      const url = `http://127.0.0.1:${port}`;
      facilitator = start(port, relayer);
      await waitForJson(`${url}/supported`, 90_000);
      holding = true;
      held = 0;
      const asked = fetch(`${url}/settle`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(claim),
      }).catch((error: unknown) => error);
      // The transaction's hash is recorded before its broadcast: once the node is asked, it is on record.
      await eventually(
        () => Promise.resolve(held),
        (n) => n > 0,
        'the claim transaction to be broadcast',
        30_000,
        {
          context: () => facilitator?.output() ?? '',
        },
      );
      facilitator.child.kill('SIGKILL');
      await facilitator.exited;
      expect(await asked).toBeInstanceOf(Error); // the resource server got no answer
      expect((await channelState(chain, config)).totalClaimed).toBe(0n);
      holding = false;

      facilitator = start(port, relayer);
      await eventually(
        () => channelState(chain, config),
        (state) => state.totalClaimed === 4n * PRICE,
        'the resumed claim to be mined',
        60_000,
        { context: () => facilitator?.output() ?? '' },
      );
      expect(await minedClaims(relayer, fromBlock)).toHaveLength(1);
      expect(facilitator.output()).toContain('sending a channel operation a stopped process recorded but never broadcast');
    }, 180_000);
  });
}
