/**
 * A `market serve` process selling over payment channels is killed with SIGKILL in the middle of
 * a load of channel calls; started again on the same channel folder, it claims every voucher it
 * answered for: nothing answered is lost (at most the calls in flight at the kill are claimed
 * besides, their vouchers written an instant before the answer could leave).
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Address } from 'viem';
import { type LocalChain, receiverState, startChain, type TestAccount } from '../support/chain';
import { startBatchFacilitator } from '../support/chain/batch-facilitator';
import { referenceChannelClient } from '../support/channel-server';
import { eventually } from '../support/eventually';
import { freePort, spawnMarket, waitForJson } from '../support/process';

const PRICE = 1_000n;
const PAYERS = 4;
let chain: LocalChain;
let facilitator: ReturnType<typeof startBatchFacilitator>;
let folder: string;

beforeAll(async () => {
  chain = await startChain({ payers: 1, relayers: 1 });
  facilitator = startBatchFacilitator(chain, chain.accounts.relayer);
  folder = await mkdtemp(join(tmpdir(), 'serve-crash-'));
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

const referencePay = (account: TestAccount) => referenceChannelClient(chain, account, { depositMultiplier: 1000 }).pay;

describe('market serve killed mid-load', () => {
  it('loses no voucher it answered: after a restart its claim covers every answered call', async () => {
    const payee: Address = (await chain.createAccount()).address;
    const authorizer = await chain.createAccount();
    const port = await freePort();
    const start = (claimWithin: string, settleWithin = '600') =>
      spawnMarket(
        [
          'serve',
          'skills.ts',
          '--port',
          String(port),
          '--host',
          '127.0.0.1',
          '--facilitator',
          facilitator.url,
          '--network',
          chain.network,
          '--asset',
          chain.token.address,
          '--no-register',
          '--channels-dir',
          join(folder, 'channels'),
          '--claim-within',
          claimWithin,
          '--settle-within',
          settleWithin,
        ],
        { MARKET_WALLET_ADDRESS: payee, MARKET_RECEIVER_AUTHORIZER_KEY: authorizer.privateKey },
        folder,
      );
    const url = `http://127.0.0.1:${port}`;
    const first = start('1800');
    await waitForJson(`${url}/health`);

    let answered = 0;
    let stop = false;
    const load = async (payer: TestAccount) => {
      const pay = referencePay(payer);
      for (let i = 0; !stop; i++) {
        const res = await pay(`${url}/echo`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ i }),
        }).catch(() => undefined);
        if (res?.status !== 200) return;
        await res.arrayBuffer();
        answered++;
      }
    };
    const payers = await Promise.all(Array.from({ length: PAYERS }, () => chain.createAccount({ usdc: 10_000_000n })));
    const loads = payers.map((payer) => load(payer));
    await eventually(
      () => answered,
      (n) => n >= 60,
      'sixty answered calls',
      30_000,
    );
    first.kill('SIGKILL');
    await first.exited;
    stop = true;
    await Promise.all(loads);
    expect(await receiverState(chain, payee)).toMatchObject({ totalClaimed: 0n });

    const second = start('1', '1');
    try {
      await waitForJson(`${url}/health`);
      const claimed = await eventually(
        async () => (await receiverState(chain, payee)).totalClaimed,
        (total) => total >= BigInt(answered) * PRICE,
        'a claim of every answered call',
        30_000,
      );
      expect(claimed).toBeLessThanOrEqual(BigInt(answered + PAYERS) * PRICE);
      await eventually(
        () => receiverState(chain, payee),
        (r) => r.totalSettled === claimed,
        'the claimed total settled to the receiver',
        10_000,
      );
    } finally {
      second.kill('SIGTERM');
      await second.exited;
    }
  }, 120_000);
});
