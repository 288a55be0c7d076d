/**
 * `market doctor` on a real local chain, with a real facilitator and registry over HTTP: a sound
 * deployment has no fault, and each fault an operator meets is named in plain words.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { join } from 'node:path';
import { privateKeyToAccount, generatePrivateKey } from 'viem/accounts';
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
  funded = await startFacilitatorFixture(chain, kind);
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

describe('market doctor', () => {
  it('finds nothing wrong with a sound deployment, and says what it checked', async () => {
    const results = byName(await runDoctor(sound()));
    expect(results.rpc).toMatchObject({ status: 'ok' });
    expect(results.token).toMatchObject({ status: 'ok', detail: expect.stringContaining('EIP-3009') });
    expect(results.facilitator).toMatchObject({ status: 'ok' });
    expect(results.relayer?.status).not.toBe('fail');
    expect(results.relayer?.detail).toContain('settlements');
    expect(results.registry).toMatchObject({ status: 'skip', detail: expect.stringContaining('--registry') });
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
    const run = Bun.spawn(
      [
        process.execPath,
        join(import.meta.dir, '../../src/cli/main.ts'),
        'doctor',
        '--network',
        chain.network,
        '--rpc-url',
        'http://127.0.0.1:9',
      ],
      { stdout: 'pipe', stderr: 'pipe', env: { ...process.env, MARKET_FACILITATOR_URL: '', MARKET_API_URL: '' } },
    );
    const [out, code] = await Promise.all([new Response(run.stdout).text(), run.exited]);
    expect(code).toBe(1);
    expect(out).toMatch(/^FAIL {2}rpc: the RPC at 127\.0\.0\.1:9 does not answer/m);
    expect(out).toContain('problem');
  });
});
