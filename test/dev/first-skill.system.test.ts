/**
 * The README's "Your first skill", run as written: its fenced shell blocks, in order, in a fresh
 * folder next to a fresh `market dev` whose directory is that folder's .market/dev (what a bare
 * `--dev` reads). `npx market` runs this checkout's CLI. A block ending in `&` starts a server
 * kept until the end; the block after it is retried until it succeeds (the server is starting),
 * every other block must succeed at once. It ends with a paid call at the edited price and one
 * charged by use (less than the usage-based skill's listed most). The Quick
 * start's paid call runs before the section and again after it: the example skills and the
 * section's skill are two skill servers of one creator, and a payer's one channel to that creator
 * pays both, in either order. Then the rest of dev mode on the same marketplace: `wallet new`, `fund`, `wallet balance`, `mcp --print-config`
 * and `mcp` with `--dev`.
 */
import { afterAll, describe, expect, it } from 'bun:test';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnDev, ROOT, type DevProcess } from '../support/dev';
import { stdioClient, tool } from '../mcp/support';
import { lastReading } from '../support/eventually';
import { CLI_ENTRY, inheritedEnv } from '../support/process';
import { TEST_CACHE_HOME } from '../support/cache';

/** The fenced `sh` blocks of one README section, dedented. */
function sectionBlocks(readme: string, heading: string): string[] {
  const start = readme.indexOf(`\n## ${heading}\n`);
  if (start < 0) throw new Error(`the README has no section "${heading}"`);
  const end = readme.indexOf('\n## ', start + 1);
  const section = readme.slice(start, end < 0 ? undefined : end);
  const blocks: string[] = [];
  for (const match of section.matchAll(/^([ \t]*)```sh\n([\s\S]*?)^\1```$/gm)) {
    const indent = match[1]!.length;
    blocks.push(
      match[2]!
        .split('\n')
        .map((line) => line.slice(Math.min(indent, line.length - line.trimStart().length)))
        .join('\n')
        .trim(),
    );
  }
  return blocks;
}

/** `npx market …` is this checkout's CLI; `exec` so that a server started by a block is the process we hold. */
const PRELUDE = `npx() { [ "$1" = market ] || { echo "unexpected: npx $*" >&2; return 127; }; shift; exec "${process.execPath}" "${CLI_ENTRY}" "$@"; }\n`;

async function run(script: string, cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  // A subshell per block, so that `exec` in npx replaces the subshell, not the script.
  const child = Bun.spawn(['sh', '-c', `${PRELUDE}(\n${script}\n)`], {
    cwd,
    env: { ...inheritedEnv(), HOME: cwd, XDG_CACHE_HOME: TEST_CACHE_HOME },
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  return { code, stdout, stderr };
}

describe('README: Your first skill', () => {
  const folder = mkdtempSync(join(tmpdir(), 'first-skill-'));
  let dev: DevProcess | undefined;
  let server: ReturnType<typeof Bun.spawn> | undefined;
  afterAll(async () => {
    server?.kill();
    await server?.exited;
    dev?.child.kill('SIGTERM');
    await dev?.exited;
    rmSync(folder, { recursive: true, force: true });
  });

  it(
    'runs every command of the section as printed, after and before the Quick start call, every call paid by one channel',
    async () => {
      const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
      const blocks = sectionBlocks(readme, 'Your first skill');
      expect(blocks.length).toBeGreaterThanOrEqual(6);
      const quickCall = sectionBlocks(readme, 'Quick start').find((b) => b.includes('market call'));
      expect(quickCall).toBeDefined();
      dev = await spawnDev(join(folder, '.market/dev'));
      await dev.banner;
      const receiptOf = (stderr: string) => JSON.parse(stderr.trim().split('\n').at(-1)!).receipt as Record<string, string>;
      const quickStart = async () => {
        const answer = await run(quickCall!, folder);
        if (answer.code !== 0)
          throw new Error(`the Quick start call failed (exit ${answer.code}):\n${answer.stdout}${answer.stderr}\n${dev!.output()}`);
        return receiptOf(answer.stderr);
      };
      const first = await quickStart();
      expect(first).toMatchObject({ slug: 'word-count', scheme: 'batch-settlement' });

      let afterServer = false;
      let last = { code: 0, stdout: '', stderr: '' };
      const outputs = new Map<string, { stdout: string; stderr: string }>();
      const log: string[] = [];
      for (const block of blocks) {
        if (block.endsWith('&')) {
          server = Bun.spawn(['sh', '-c', `${PRELUDE}${block.slice(0, -1)}`], {
            cwd: folder,
            env: { ...inheritedEnv(), HOME: folder, XDG_CACHE_HOME: TEST_CACHE_HOME },
            stdout: 'ignore',
            stderr: 'ignore',
          });
          afterServer = true;
          continue;
        }
        // A command after the skill server's start runs again until the server is up and registered.
        last = afterServer
          ? await lastReading(
              () => run(block, folder),
              (r) => r.code === 0,
              30_000,
            )
          : await run(block, folder);
        afterServer = false;
        log.push(`$ ${block}\n${last.stdout}${last.stderr}`);
        outputs.set(block, last);
        if (last.code !== 0) throw new Error(`a README command failed (exit ${last.code}):\n${log.join('\n')}\n${dev.output()}`);
      }

      // The paid call at the edited price: its result on stdout, its receipt on stderr.
      const calls = blocks.filter((b) => b.includes('market call'));
      expect(calls).toHaveLength(2);
      const priced = outputs.get(calls[0]!)!;
      expect(JSON.parse(priced.stdout)).toEqual({ city: 'Lyon', forecast: 'sunny' });
      const receipt = receiptOf(priced.stderr);
      expect(receipt).toMatchObject({ slug: 'forecast', price: '$0.005', amount: '5000', scheme: 'batch-settlement' });
      // The channel the Quick start call opened pays the section's skill too: a voucher, no new deposit.
      expect(receipt.channelId).toBe(first.channelId);
      expect(receipt.transaction).toBeNull();
      // The last block, the usage-based skill: charged what the call used (3 days), less than its listed most.
      expect(blocks.at(-1)).toBe(calls[1]);
      expect(JSON.parse(last.stdout)).toEqual({ city: 'Lyon', days: ['sunny', 'sunny', 'sunny'] });
      expect(receiptOf(last.stderr)).toMatchObject({
        slug: 'week',
        price: '$0.007',
        usageBased: true,
        amount: '3000',
        channelId: first.channelId,
      });
      expect(last.stderr).toContain('Authorizing at most $0.007 (a usage-based price');
      expect(last.stderr).toContain('Charged $0.003 of at most $0.007.');
      expect(priced.stderr).not.toContain('at most');
      // A single usage-based payment (x402 upto) from the demo wallet, which market dev approved Permit2 for: two days' charge moves.
      const upto = await run(`npx market call --dev week '{"city":"Lyon","days":2}' --payment upto`, folder);
      expect({ code: upto.code, stderr: upto.stderr }).toMatchObject({ code: 0 });
      expect(upto.stderr).toContain('Charged $0.002 of at most $0.007.');
      expect(receiptOf(upto.stderr)).toMatchObject({ slug: 'week', scheme: 'upto', amount: '2000' });
      const again = await quickStart();
      expect(again).toMatchObject({ slug: 'word-count', scheme: 'batch-settlement', channelId: first.channelId, transaction: null });
    },
    { timeout: 180_000 },
  );

  it(
    'dev mode for the rest: a wallet made with --dev is funded by market fund and read back; mcp --print-config points at the dev marketplace',
    async () => {
      expect(dev).toBeDefined(); // started by the test above
      const made = await run('npx market wallet new --dev --json', folder);
      expect(made.code).toBe(0);
      const { address } = JSON.parse(made.stdout) as { address: string };
      const funded = await run(`npx market fund ${address} 2.5 --dev`, folder);
      expect({ code: funded.code, stdout: funded.stdout }).toEqual({
        code: 0,
        stdout: `Minted $2.5 test USDC to ${address}; it now holds $2.5, and 0.01 test ETH for gas.\n`,
      });
      const balance = await run('npx market wallet balance --dev --json', folder);
      expect(balance.code).toBe(0);
      expect(JSON.parse(balance.stdout)).toMatchObject({ address, balanceAtomic: '2500000' });

      const config = await run('npx market mcp --print-config --dev', folder);
      expect(config.code).toBe(0);
      expect(config.stdout).toContain(`"--dev",\n        "${join(folder, '.market/dev')}"`);
      expect(config.stdout).not.toContain('MARKET_KEYSTORE_PASSPHRASE_FILE');

      // market doctor --dev finds the local marketplace sound: chain, token, channel contract, facilitator and its
      // channels, relayer, channel events, registry, creator key.
      const doctor = await run('npx market doctor --dev --json', folder);
      const checked = JSON.parse(doctor.stdout) as { results: { name: string; status: string }[] };
      expect({ code: doctor.code, failed: checked.results.filter((r) => r.status === 'fail') }).toEqual({ code: 0, failed: [] });
      expect(Object.fromEntries(checked.results.map((r) => [r.name, r.status]))).toMatchObject({
        rpc: 'ok',
        token: 'ok',
        'channel contract': 'ok',
        facilitator: 'ok',
        'facilitator channels': 'ok',
        'channel events': 'ok',
        registry: 'ok',
        'creator key': 'ok',
      });

      const refused = await run(`npx market fund ${address}`, folder);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain('pass --dev');
    },
    { timeout: 60_000 },
  );

  it(
    'market mcp --dev pays for the skill from the demo wallet, at the listing price',
    async () => {
      expect(dev).toBeDefined(); // started by the first test
      const client = await stdioClient({ ...inheritedEnv(), HOME: folder }, ['--dev', join(folder, '.market/dev')]);
      try {
        const paid = await tool(client, 'call_skill', { slug: 'forecast', input: { city: 'Lyon' } });
        expect(paid.isError).toBeFalsy();
        expect(paid.structuredContent.result).toEqual({ city: 'Lyon', forecast: 'sunny' });
        expect(paid.structuredContent.receipt).toMatchObject({ amount: '5000', payTo: expect.stringMatching(/^0x/) });
        expect(client.stderr()).toContain('paying from 0x');
      } finally {
        await client.close();
      }
    },
    { timeout: 60_000 },
  );
});
