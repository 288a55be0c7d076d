/**
 * `market serve` from the compiled binary, run in folders without node_modules: the example
 * module answers /health and a paid call (counted on /metrics behind MARKET_METRICS_TOKEN), named
 * exports get registered (/metrics on --metrics-port), and mistakes exit cleanly.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { registryFixture } from '../support/registry';
import { json, newCreator } from '../support/catalogue';
import { lastReading } from '../support/eventually';
import { sampleValue, scrape } from '../support/metrics';
import { freePort, waitForJson, inheritedEnv } from '../support/process';
import { paidPost, postJson, startPaymentStack, type PaymentStack } from '../support/skill-server';

const work = mkdtempSync(join(tmpdir(), 'market-serve-'));
const binary = join(work, 'market');
const fx = registryFixture('embedded', { catalogue: { allowHttpEndpoints: true, viewWindowSeconds: 3600, newSkillsPerHour: 30 } });
let stack: PaymentStack;
const METRICS_TOKEN = 'serve-metrics-token-0123';

beforeAll(async () => {
  const build = Bun.spawn(
    [process.execPath, 'build', '--compile', '--minify', join(import.meta.dir, '../../src/cli/main.ts'), '--outfile', binary],
    { stdout: 'pipe', stderr: 'pipe' },
  );
  const [code, stderr] = await Promise.all([build.exited, new Response(build.stderr).text()]);
  if (code !== 0) throw new Error(`build failed: ${stderr}`);
  stack = await startPaymentStack();
}, 60_000);

afterAll(async () => {
  await stack?.close();
  rmSync(work, { recursive: true, force: true });
});

/** A fresh folder holding only `files`. */
function folder(name: string, files: Record<string, string>): string {
  const dir = join(work, name);
  mkdirSync(dir);
  for (const [file, text] of Object.entries(files)) writeFileSync(join(dir, file), text);
  return dir;
}

function market(args: string[], env: Record<string, string>, cwd: string) {
  return Bun.spawn([binary, ...args], { cwd, env: { ...inheritedEnv(), HOME: work, ...env }, stdout: 'pipe', stderr: 'pipe' });
}

async function finished(child: ReturnType<typeof market>) {
  const [code, stdout, stderr] = await Promise.all([child.exited, new Response(child.stdout).text(), new Response(child.stderr).text()]);
  return { code, stdout, stderr };
}

const chainFlags = () => [
  '--host',
  '127.0.0.1',
  '--facilitator',
  stack.facilitatorUrl,
  '--network',
  stack.chain.network,
  '--asset',
  stack.chain.token.address,
];

describe('market serve (compiled binary)', () => {
  it('runs the example module from an empty folder: /health, input validation, a paid call counted on /metrics; stops on SIGTERM', async () => {
    const dir = join(work, 'example');
    mkdirSync(dir);
    copyFileSync(join(import.meta.dir, '../../examples/creator/skills.ts'), join(dir, 'skills.ts'));
    const payee = await stack.chain.createAccount();
    const port = await freePort();
    const child = market(
      [
        'serve',
        'skills.ts',
        '--port',
        String(port),
        ...chainFlags(),
        '--service-name',
        'Word Tools',
        '--icon-url',
        'https://words.example/i.png',
        '--contact',
        'words@words.example',
      ],
      { MARKET_WALLET_ADDRESS: payee.address, MARKET_METRICS_TOKEN: METRICS_TOKEN },
      dir,
    );
    try {
      const url = `http://127.0.0.1:${port}`;
      expect(await waitForJson(`${url}/health`, 15_000)).toMatchObject({ status: 'ok', skills: ['echo', 'word-count'] });
      const unpaid = await postJson(`${url}/word-count`, { text: 'one' });
      const offered = JSON.parse(Buffer.from(unpaid.headers.get('PAYMENT-REQUIRED')!, 'base64').toString('utf8'));
      expect(offered.resource).toMatchObject({ serviceName: 'Word Tools', iconUrl: 'https://words.example/i.png' });
      expect(offered.extensions.bazaar.info.input).toMatchObject({ type: 'http', method: 'POST', bodyType: 'json' });
      expect(await waitForJson(`${url}/.well-known/x402`, 5_000)).toEqual({
        version: 1,
        resources: [`http://localhost:${port}/echo`, `http://localhost:${port}/word-count`],
      });
      const openapi = (await waitForJson(`${url}/openapi.json`, 5_000)) as { info: { contact: unknown } };
      expect(openapi.info.contact).toEqual({ name: 'Word Tools', email: 'words@words.example' });
      expect((await postJson(`${url}/word-count`, { words: 'no' }, { 'X-Payment': 'e30=' })).status).toBe(400);
      const res = await paidPost(`${url}/word-count`, { text: 'one two  three' }, await stack.chain.createAccount({ usdc: 1_000_000n }));
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ success: true, result: { words: 3, characters: 14 } });
      expect(await stack.chain.balanceOf(payee.address)).toBe(2_000n);
      expect((await fetch(`${url}/metrics`)).status).toBe(401);
      const { samples } = await scrape((path, init) => fetch(`${url}${path}`, init), { authorization: `Bearer ${METRICS_TOKEN}` });
      const where = { skill: 'word-count', scheme: 'exact', network: stack.chain.network };
      expect(sampleValue(samples, 'market_skill_paid_calls_total', where)).toBe(1);
      expect(sampleValue(samples, 'market_skill_charged_atomic_total', where)).toBe(2000);
      expect(
        sampleValue(samples, 'market_skill_call_duration_seconds_count', { skill: 'word-count', scheme: 'exact', outcome: 'paid' }),
      ).toBe(1);
      child.kill('SIGTERM');
      const { code, stdout } = await finished(child);
      expect(code).toBe(0);
      expect(stdout).toContain('POST /word-count  0.002 USDC  Counts the words');
      expect(stdout).toContain('registration off');
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('registers the named exports of a module at start with --endpoint and --groups; metrics on a port of their own', async () => {
    fx.registry.app.listen({ hostname: '127.0.0.1', port: 0 });
    const creator = await newCreator(fx.request);
    await creator.group('cli-tools');
    const dir = folder('named', {
      'skills.ts': `import { skill } from 'skill-market/creator';\nexport const shout = skill({ price: '$0.003' }, ({ text }: { text: string }) => text.toUpperCase());\nexport const helper = 42;\n`,
    });
    const port = await freePort();
    const metricsPort = await freePort();
    const payee = await stack.chain.createAccount();
    await creator.prove(payee);
    const wallet = payee.address;
    const child = market(
      [
        'serve',
        'skills.ts',
        '--port',
        String(port),
        '--endpoint',
        `http://127.0.0.1:${port}`,
        '--groups',
        'cli-tools',
        '--api-url',
        `http://127.0.0.1:${fx.registry.app.server!.port}`,
        '--metrics-port',
        String(metricsPort),
        ...chainFlags(),
      ],
      { MARKET_WALLET_ADDRESS: wallet, MARKET_API_KEY: creator.key },
      dir,
    );
    try {
      expect(await waitForJson(`http://127.0.0.1:${port}/health`, 15_000)).toMatchObject({ skills: ['shout'] });
      const own = async () =>
        (await json(await fx.request('/creators/me/skills', { headers: { authorization: `Bearer ${creator.key}` } }))) as {
          name: string;
        }[];
      const listed = await lastReading(own, (skills) => skills.length > 0, 5_000);
      expect(listed).toMatchObject([{ name: 'shout', endpoint: `http://127.0.0.1:${port}/shout`, groups: ['cli-tools'], price: '$0.003' }]);
      // On a port of their own: the skill's port has no /metrics.
      expect((await fetch(`http://127.0.0.1:${port}/metrics`)).status).toBe(404);
      const { samples } = await scrape((path, init) => fetch(`http://127.0.0.1:${metricsPort}${path}`, init));
      expect(sampleValue(samples, 'market_skill_channel_claims_due')).toBe(0);
      child.kill('SIGTERM');
      expect((await finished(child)).code).toBe(0);
    } finally {
      child.kill('SIGKILL');
      await fx.registry.app.stop();
    }
  });

  it('exits 1 with a clear message for a missing module, a module without skills, a bad skill, no wallet, a chain without USDC, no dev marketplace or a metrics port taken; 2 without a module or with a bad --settlement, --verify, --metrics or --trusted-proxies', async () => {
    const dir = folder('mistakes', {
      'none.ts': 'export const answer = 42;\n',
      'bad.ts': `import { skill } from 'skill-market/creator';\nexport const s = skill({ price: '$1,000' }, () => 1);\n`,
      'ok.ts': `import { skill } from 'skill-market/creator';\nexport default { ok: skill({ price: '$0.01' }, () => 1) };\n`,
    });
    // A port another process holds, for --metrics-port.
    const taken = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('taken') });
    const wallet = { MARKET_WALLET_ADDRESS: `0x${'11'.repeat(20)}` };
    const cases: [string[], Record<string, string>, number, string][] = [
      [
        ['serve', 'ok.ts', '--host', '127.0.0.1', '--metrics-port', String(taken.port)],
        wallet,
        1,
        `cannot serve metrics on 127.0.0.1:${taken.port}`,
      ],
      [['serve', 'missing.ts'], {}, 1, 'cannot find the skills module'],
      [['serve', 'none.ts'], {}, 1, 'no skills found in none.ts'],
      [['serve', 'bad.ts'], {}, 1, 'skill(): price: Invalid price "$1,000"'],
      [['serve', 'ok.ts'], {}, 1, 'wallet not found'],
      [['serve', 'ok.ts'], { MARKET_WALLET_ADDRESS: '0x1234' }, 1, 'MARKET_WALLET_ADDRESS must be a 42-character 0x address'],
      [['serve'], {}, 2, 'serve needs a skills module'],
      [['serve', 'ok.ts', '--settlement', 'eventually'], {}, 2, '--settlement must be broadcast or confirmed'],
      [['serve', 'ok.ts', '--verify', 'never'], {}, 2, '--verify (MARKET_VERIFY) must be first or at-settlement'],
      [['serve', 'ok.ts'], { MARKET_VERIFY: 'later' }, 2, '--verify (MARKET_VERIFY) must be first or at-settlement'],
      [['serve', 'ok.ts', '--metrics', 'maybe'], {}, 2, '--metrics must be on or off'],
      [['serve', 'ok.ts', '--trusted-proxies', 'proxy.example'], {}, 2, '--trusted-proxies must list IP addresses, got "proxy.example"'],
      [['serve', 'ok.ts'], { MARKET_METRICS_TOKEN: 'short' }, 1, 'MARKET_METRICS_TOKEN must be at least 16 characters without spaces'],
      [['serve', 'ok.ts', '--metrics-port', 'http'], {}, 2, '--metrics-port must be a port number'],
      [['serve', 'ok.ts'], { MARKET_METRICS_PORT: 'http' }, 1, 'MARKET_METRICS_PORT must be a port number'],
      [
        ['serve', 'ok.ts', '--network', 'eip155:31337'],
        { MARKET_WALLET_ADDRESS: `0x${'11'.repeat(20)}` },
        1,
        'eip155:31337 has no built-in USDC: pass --asset <token address>',
      ],
      [['serve', 'ok.ts', '--dev'], {}, 1, `no dev marketplace in ${join(dir, '.market/dev')}`],
    ];
    // Each refusal is its own process, all at once: none of them gets as far as serving.
    const outcomes = await Promise.all(cases.map(([args, env]) => finished(market(args, env, dir)))).finally(() => taken.stop(true));
    for (const [i, [args, , expected, message]] of cases.entries()) {
      const { code, stderr } = outcomes[i]!;
      expect({ args, code }).toEqual({ args, code: expected });
      expect(stderr).toContain(message);
      expect(stderr).not.toContain('    at '); // no stack trace
    }
  });
});
