/**
 * The client on Node 20+: a script run with `node --import tsx` pays a skill on the local chain
 * (both payment modes) through the registry and the test skill server started here.
 */
import { describe, expect, it } from 'bun:test';
import { join } from 'node:path';
import { NETWORK, useWorld } from './support/world';
import { inheritedEnv } from '../support/process';

const world = useWorld({ chain: true });
const SCRIPT = join(import.meta.dir, 'fixtures/node-pay.ts');

async function payOnNode(slug: string, privateKey: string) {
  const child = Bun.spawn(['node', '--import', 'tsx', SCRIPT], {
    cwd: join(import.meta.dir, '../..'),
    env: {
      ...inheritedEnv(),
      HOME: process.env.HOME ?? '/tmp',
      MARKET_API_URL: world.registryUrl,
      MARKET_API_KEY: world.consumerKey,
      MARKET_PRIVATE_KEY: privateKey,
      MARKET_NETWORK: NETWORK,
      MARKET_ASSET: world.asset.address,
      SKILL_SLUG: slug,
      SKILL_INPUT: JSON.stringify({ from: 'node' }),
    },
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const [code, stdout, stderr] = await Promise.all([child.exited, new Response(child.stdout).text(), new Response(child.stderr).text()]);
  if (code !== 0) throw new Error(`node exited ${code}: ${stderr}`);
  return JSON.parse(stdout) as {
    runtime: string;
    calls: { mode: string; result: unknown; receipt: { transaction: string; amount: string } }[];
    spent: string;
  };
}

describe('the client on Node', () => {
  it('pays a skill on the local chain in both modes: result, receipt, usage record and exactly the price moved', async () => {
    const skill = await world.addSkill();
    const payer = await world.payer();
    const before = await world.chain.balanceOf(skill.payTo);
    const run = await payOnNode(skill.slug, payer.privateKey);
    expect(run.runtime).toStartWith('node ');
    expect(run.calls.map((c) => c.mode)).toEqual(['standard', 'fast']);
    for (const call of run.calls) {
      expect(call.result).toEqual({ echo: { from: 'node' } });
      expect(call.receipt).toMatchObject({ amount: '10000', transaction: expect.stringMatching(/^0x[0-9a-f]{64}$/) });
    }
    expect(run.spent).toBe('20000');
    expect(await world.chain.balanceOf(skill.payTo)).toBe(before + 20_000n);
    expect((await world.usage(skill.id)).map((u) => u.paymentRef).sort()).toEqual(run.calls.map((c) => c.receipt.transaction).sort());
  });
});
