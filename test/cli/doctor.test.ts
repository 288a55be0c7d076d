/**
 * `market doctor` on a real local chain, with a real facilitator and registry over HTTP: a sound
 * deployment has no fault, and each fault an operator meets is named in plain words, payment
 * channels included: a network without the contract, a facilitator not offering channels, and the
 * block channel events are read from (MARKET_CHANNELS_FROM_BLOCK).
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { join } from 'node:path';
import { privateKeyToAccount, generatePrivateKey } from 'viem/accounts';
import { BATCH_SETTLEMENT_ADDRESS, installBatchSettlement } from '../../src/chain/batch-settlement';
import { runDoctor, type CheckResult, type DoctorTarget } from '../../src/doctor/checks';
import { type LocalChain, startChain, type TestAccount } from '../support/chain';
import { type FacilitatorFixture, startFacilitatorFixture } from '../support/facilitator';
import { oneDatabase } from '../support/database';

const kind = oneDatabase[0]!;
let chain: LocalChain;
let funded: FacilitatorFixture;
let unfunded: FacilitatorFixture;
const urls: { funded: string; unfunded: string } = { funded: '', unfunded: '' };

function listen(f: FacilitatorFixture): string {
  f.facilitator.app.listen({ hostname: '127.0.0.1', port: 0 });
  return `http://127.0.0.1:${f.facilitator.app.server?.port}`;
}

beforeAll(async () => {
  chain = await startChain({ relayers: 1 });
  funded = await startFacilitatorFixture(chain, kind, { config: { open: false } }); // as `market facilitator` in production
  const key = generatePrivateKey();
  const broke = Object.assign(privateKeyToAccount(key), { privateKey: key }) as TestAccount; // no ETH at all
  unfunded = await startFacilitatorFixture(chain, kind, { relayers: [broke] });
  urls.funded = listen(funded);
  urls.unfunded = listen(unfunded);
}, 60_000);

afterAll(async () => {
  for (const f of [funded, unfunded]) {
    await f?.facilitator.app.stop();
    await f?.close();
  }
  await chain?.stop();
});

const sound = (): DoctorTarget => ({
  network: chain.network,
  rpcUrl: chain.rpcUrl,
  asset: chain.token.address,
  facilitatorUrl: urls.funded,
  timeoutMs: 3_000,
});
const byName = (results: CheckResult[]) => Object.fromEntries(results.map((r) => [r.name, r]));

/** `market doctor <args>` as a process, without the deployment variables of this shell unless given in `env`. */
async function doctorCli(args: string[], env: Record<string, string> = {}) {
  const run = Bun.spawn([process.execPath, join(import.meta.dir, '../../src/cli/main.ts'), 'doctor', ...args], {
    stdout: 'pipe',
    stderr: 'pipe',
    env: { ...process.env, MARKET_FACILITATOR_URL: '', MARKET_API_URL: '', MARKET_CHANNELS_FROM_BLOCK: '', ...env },
  });
  const [out, err, code] = await Promise.all([new Response(run.stdout).text(), new Response(run.stderr).text(), run.exited]);
  return { out, err, code };
}

describe('market doctor', () => {
  it('finds nothing wrong with a sound deployment, and says what it checked', async () => {
    const results = byName(await runDoctor(sound()));
    expect(results.rpc).toMatchObject({ status: 'ok' });
    expect(results.token).toMatchObject({ status: 'ok', detail: expect.stringContaining('EIP-3009') });
    expect(results.facilitator).toMatchObject({ status: 'ok' });
    expect(results.relayer?.status).not.toBe('fail');
    expect(results.relayer?.detail).toContain('settlements');
    expect(results.registry).toMatchObject({ status: 'skip', detail: expect.stringContaining('--registry') });
    expect(results['channel contract']).toMatchObject({ status: 'ok', detail: expect.stringContaining(BATCH_SETTLEMENT_ADDRESS) });
    expect(results['facilitator channels']).toMatchObject({ status: 'ok', detail: expect.stringContaining('offers batch-settlement') });
    expect(results['channel events']).toMatchObject({ status: 'ok', detail: expect.stringContaining('from block 0') });
    expect(results['facilitator claims']).toMatchObject({ status: 'ok', detail: expect.stringContaining('FACILITATOR_RECEIVER_KEYS') });
    expect(Object.values(results).filter((r) => r.status === 'fail' || r.status === 'warn')).toEqual([]);
  });

  it('catches an unreachable RPC, and names no more than its host', async () => {
    const results = byName(await runDoctor({ ...sound(), rpcUrl: 'http://127.0.0.1:9/v2/provider-secret' }));
    expect(results.rpc).toMatchObject({ status: 'fail', detail: expect.stringContaining('does not answer') });
    expect(JSON.stringify(results)).not.toContain('provider-secret');
    expect(results.token).toMatchObject({ status: 'skip' });
  });

  it('catches an RPC of another chain', async () => {
    const results = byName(await runDoctor({ ...sound(), network: 'eip155:8453' }));
    expect(results.rpc).toMatchObject({ status: 'fail', detail: expect.stringContaining(`serves chain ${chain.chain.id}`) });
  });

  it('catches a token address with no contract on the chain', async () => {
    const results = byName(await runDoctor({ ...sound(), asset: privateKeyToAccount(generatePrivateKey()).address }));
    expect(results.token).toMatchObject({ status: 'fail', detail: expect.stringContaining('no contract') });
  });

  it('catches a facilitator whose relayer holds no ETH, and one that does not settle the network', async () => {
    const broke = byName(await runDoctor({ ...sound(), facilitatorUrl: urls.unfunded }));
    expect(broke.relayer).toMatchObject({ status: 'fail', detail: expect.stringContaining('unfunded relayer') });
    const absent = byName(await runDoctor({ ...sound(), facilitatorUrl: 'http://127.0.0.1:9' }));
    expect(absent.facilitator).toMatchObject({ status: 'fail', detail: expect.stringContaining('does not answer') });
  });

  it('exits 1 and prints each fault as a line from the command line', async () => {
    const { out, code } = await doctorCli(['--network', chain.network, '--rpc-url', 'http://127.0.0.1:9']);
    expect(code).toBe(1);
    expect(out).toMatch(/^FAIL {2}rpc: the RPC at 127\.0\.0\.1:9 does not answer/m);
    expect(out).toContain('problem');
  });
});

describe('market doctor on payment channels', () => {
  /** A chain of `blocks` blocks before the channel contracts are placed, and their first block. */
  async function lateChain(blocks: number, options: { anvilArgs?: string[]; chainId?: number } = {}) {
    const late = await startChain({ batchSettlement: false, ...options });
    await late.testClient.mine({ blocks });
    const first = await late.publicClient.getBlockNumber();
    await installBatchSettlement(late.testClient);
    await late.testClient.mine({ blocks: 5 });
    return { late, first };
  }
  const on = (c: LocalChain, more: Partial<DoctorTarget> = {}): DoctorTarget => ({
    network: c.network,
    rpcUrl: c.rpcUrl,
    asset: c.token.address,
    timeoutMs: 3_000,
    ...more,
  });

  it('fails on a network without the contract, naming its address and the network, from the command line too', async () => {
    const bare = await startChain({ batchSettlement: false });
    try {
      const results = byName(await runDoctor(on(bare)));
      expect(results['channel contract']).toMatchObject({ status: 'fail' });
      expect(results['channel contract']?.detail).toContain(`no code at ${BATCH_SETTLEMENT_ADDRESS} (x402BatchSettlement)`);
      expect(results['channel contract']?.detail).toContain(`on ${bare.network} (Base Sepolia)`);
      expect(results['channel events']).toMatchObject({ status: 'skip' });
      expect(results.token).toMatchObject({ status: 'ok' });

      const { out, code } = await doctorCli(['--network', bare.network, '--rpc-url', bare.rpcUrl, '--asset', bare.token.address]);
      expect(code).toBe(1);
      expect(out).toMatch(new RegExp(`^FAIL {2}channel contract: no code at ${BATCH_SETTLEMENT_ADDRESS}`, 'm'));
      expect(out).toMatch(/^ok {4}rpc: /m);
    } finally {
      await bare.stop();
    }
  }, 60_000);

  it('warns when the facilitator does not offer batch-settlement where the contract has code', async () => {
    const exactOnly = await startFacilitatorFixture(chain, kind, { schemes: ['exact'] });
    try {
      const results = byName(await runDoctor({ ...sound(), facilitatorUrl: listen(exactOnly) }));
      expect(results.facilitator).toMatchObject({ status: 'ok' });
      expect(results['facilitator channels']).toMatchObject({
        status: 'warn',
        detail: expect.stringContaining(`does not offer batch-settlement on ${chain.network}`),
      });
    } finally {
      await exactOnly.facilitator.app.stop();
      await exactOnly.close();
    }
  });

  it('warns when the facilitator signs anyone’s claims (open) on a public network, and sends nothing', async () => {
    const open = await startFacilitatorFixture(chain, kind, { config: { open: true } });
    try {
      const sent = await chain.publicClient.getTransactionCount({ address: chain.accounts.relayer.address });
      const results = byName(await runDoctor({ ...sound(), facilitatorUrl: listen(open) }));
      expect(results['facilitator claims']).toMatchObject({ status: 'warn', detail: expect.stringContaining('FACILITATOR_OPEN=false') });
      expect(await chain.publicClient.getTransactionCount({ address: chain.accounts.relayer.address })).toBe(sent);
    } finally {
      await open.facilitator.app.stop();
      await open.close();
    }
  });

  it("finds the contract's first block for MARKET_CHANNELS_FROM_BLOCK, and fails a block after it or past the chain", async () => {
    const { late, first } = await lateChain(40);
    try {
      const events = async (channelsFromBlock?: bigint) => byName(await runDoctor(on(late, { channelsFromBlock })))['channel events'];
      expect(first).toBeGreaterThan(0n);
      for (const unset of [undefined, 0n]) {
        expect(await events(unset)).toMatchObject({
          status: 'warn',
          detail: expect.stringContaining(`has code from block ${first}: set MARKET_CHANNELS_FROM_BLOCK=${first}`),
        });
      }
      expect(await events(first)).toMatchObject({ status: 'ok' });
      expect(await events(first - 10n)).toMatchObject({ status: 'ok' });
      const after = await events(first + 2n);
      expect(after?.status).toBe('fail');
      expect(after?.detail).toContain(`first block (${first})`);
      expect(after?.detail).toContain(`set it to ${first}`);
      expect(await events(first + 1_000n)).toMatchObject({ status: 'fail', detail: expect.stringContaining('past the latest block') });

      // From the command line: --channels-from-block, else MARKET_CHANNELS_FROM_BLOCK.
      const doctor = (args: string[], fromBlock = '') =>
        doctorCli(['--network', late.network, '--rpc-url', late.rpcUrl, '--asset', late.token.address, ...args], {
          MARKET_CHANNELS_FROM_BLOCK: fromBlock,
        });
      const flagged = await doctor(['--json', '--channels-from-block', `${first + 2n}`]);
      expect(flagged.code).toBe(1);
      expect(byName((JSON.parse(flagged.out) as { results: CheckResult[] }).results)['channel events']?.status).toBe('fail');
      const fromEnv = await doctor(['--json'], `${first}`);
      expect(fromEnv.code).toBe(0);
      expect(byName((JSON.parse(fromEnv.out) as { results: CheckResult[] }).results)['channel events']?.status).toBe('ok');
      const bad = await doctor(['--channels-from-block', 'soon']);
      expect(bad.code).toBe(2);
      expect(bad.err).toContain('--channels-from-block must be a block number');
    } finally {
      await late.stop();
    }
  }, 60_000);

  it('on a node without past state, warns at block 0 saying where the creation block is found', async () => {
    const { late, first } = await lateChain(10, { anvilArgs: ['--prune-history'] });
    try {
      const events = async (channelsFromBlock: bigint) => byName(await runDoctor(on(late, { channelsFromBlock })))['channel events'];
      expect(await events(0n)).toMatchObject({
        status: 'warn',
        detail: expect.stringContaining(`https://sepolia.basescan.org/address/${BATCH_SETTLEMENT_ADDRESS}`),
      });
      expect(await events(first)).toMatchObject({ status: 'ok', detail: expect.stringContaining('no past state') });
    } finally {
      await late.stop();
    }
  }, 60_000);

  it('takes block 0 on a local chain, whose history is short', async () => {
    const { late } = await lateChain(10, { chainId: 31337 });
    try {
      const results = byName(await runDoctor(on(late)));
      expect(results['channel events']).toMatchObject({ status: 'ok', detail: expect.stringContaining('local chain') });
    } finally {
      await late.stop();
    }
  }, 60_000);
});
