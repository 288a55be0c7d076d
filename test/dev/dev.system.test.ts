/**
 * `market dev` as `npm start` runs it (from source, here on a temp data directory and free ports):
 * the printed `market call` pays on the local chain; the first start keeps its migrated database as
 * the template of new directories; the demo wallet API signs for the page; state
 * survives a restart; a second instance, a busy port and a dead child are reported clearly; SIGTERM
 * and Ctrl-C leave no process behind, nor does SIGKILL; --fresh starts over; a module of one's own replaces the
 * example skills on the listing. Outside dev mode the demo wallet API does not exist.
 */
import { afterAll, describe, expect, it } from 'bun:test';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPublicClient, http, parseEventLogs, verifyMessage, verifyTypedData, type Address, type Hex } from 'viem';
import { batchSettlementAbi } from '../../src/chain/batch-settlement';
import { templatePath } from '../../src/db/template';
import { openTestDatabase } from '../support/database';
import { eventually, lastReading } from '../support/eventually';
import { type DevBanner, type DevProcess, processesMentioning, runPrinted, spawnDev } from '../support/dev';
import { sampleValue, scrape } from '../support/metrics';
import { testRegistry } from '../support/registry';
import { jsonPost } from '../support/auth';

const work = mkdtempSync(join(tmpdir(), 'market-dev-'));
const dir = join(work, 'data');
const running: DevProcess[] = [];
// Generous: the first start creates the database (initdb), which is slow on a busy machine.
const STEP_MS = 90_000;

/** This file's own cache folder: the first start finds no template there and keeps one. */
const cacheEnv = { XDG_CACHE_HOME: join(work, 'cache') };

async function start(extra: string[] = [], ports?: DevProcess['ports']): Promise<{ dev: DevProcess; banner: DevBanner }> {
  const dev = await spawnDev(dir, extra, ports, cacheEnv);
  running.push(dev);
  return { dev, banner: await dev.banner };
}

/** SIGTERM (or another signal) and the exit code; SIGKILL after 10 s so nothing outlives the file. */
async function stop(dev: DevProcess, signal: 'SIGTERM' | 'SIGINT' = 'SIGTERM'): Promise<number> {
  dev.child.kill(signal);
  const force = setTimeout(() => dev.child.kill('SIGKILL'), 10_000);
  try {
    return await dev.exited;
  } finally {
    clearTimeout(force);
  }
}

/** Every process of this stack: anvil names the data directory, the skill server its port. */
const leftovers = async (dev: DevProcess) => [
  ...(await processesMentioning(dir)),
  ...(await processesMentioning(`--port ${dev.ports.skills} `)),
];

afterAll(async () => {
  for (const dev of running) if (dev.child.exitCode === null) dev.child.kill('SIGKILL');
  await Promise.all(running.map((d) => d.exited));
  rmSync(work, { recursive: true, force: true });
});

let first: { dev: DevProcess; banner: DevBanner };
let paid: { transaction: Hex; payTo: Address; amount: string; channelId: Hex };

describe('market dev', () => {
  it(
    'starts everything and prints a market call command that pays for a skill over a payment channel on the local chain',
    async () => {
      first = await start();
      const { banner } = first;
      expect({ ...banner }).toMatchObject({
        marketplace: `http://127.0.0.1:${first.dev.ports.registry}`,
        wallet: expect.stringMatching(/^0x/),
        balance: '100',
      });
      expect(banner.call).toContain(` call --dev ${dir} word-count '{"text":`);
      // The new database's migrated schema is kept for the next new directory (--fresh, another --dir).
      expect(existsSync(templatePath(join(cacheEnv.XDG_CACHE_HOME, 'skill-market')))).toBe(true);

      const { code, stdout, stderr } = await runPrinted(banner.call);
      expect({ code, stderr: code === 0 ? '' : stderr }).toEqual({ code: 0, stderr: '' });
      expect(JSON.parse(stdout)).toEqual({ words: 6, characters: 26 });
      const receipt = JSON.parse(stderr.trim().split('\n').at(-1)!).receipt as typeof paid & {
        payer: string;
        asset: string;
        network: string;
      };
      expect(receipt).toMatchObject({
        payer: banner.wallet,
        asset: banner.token,
        network: 'eip155:31337',
        amount: '2000',
        scheme: 'batch-settlement',
        channelId: expect.stringMatching(/^0x[0-9a-f]{64}$/),
      });
      paid = receipt;

      // The first call opened the channel: its transaction is the deposit of ten calls' worth.
      const chain = createPublicClient({ transport: http(banner.rpcUrl) });
      const mined = await chain.getTransactionReceipt({ hash: paid.transaction });
      expect(mined.status).toBe('success');
      const deposits = parseEventLogs({ abi: batchSettlementAbi, eventName: 'Deposited', logs: mined.logs });
      expect(deposits.map((d) => [d.args.channelId, d.args.amount])).toEqual([[receipt.channelId, 20_000n]]);

      // The second call is a voucher on that channel: no transaction, and the banner's channels line shows both charges.
      const block = await chain.getBlockNumber();
      const again = await runPrinted(banner.call);
      expect(again.code).toBe(0);
      expect(JSON.parse(again.stderr.trim().split('\n').at(-1)!).receipt).toMatchObject({
        transaction: null,
        channelId: receipt.channelId,
      });
      expect(await chain.getBlockNumber()).toBe(block);
      expect(banner.channels).toContain(` channels --dev ${dir}`);
      const listed = await runPrinted(`${banner.channels} --json`);
      expect(listed.code).toBe(0);
      expect(JSON.parse(listed.stdout)).toMatchObject([{ channelId: receipt.channelId, deposit: '20000', charged: '4000' }]);
    },
    STEP_MS,
  );

  it('serves /metrics on the marketplace, the facilitator and the skill server: the channel deposit settled, the voucher calls counted', async () => {
    const registry = await scrape((path, init) => fetch(`${first.banner.marketplace}${path}`, init));
    // The example skills' server, listed (up or not yet probed).
    const servers = registry.samples.filter((s) => s.name === 'market_skill_servers').reduce((sum, s) => sum + s.value, 0);
    expect(servers).toBeGreaterThanOrEqual(1);
    const facilitator = await scrape((path, init) => fetch(`http://127.0.0.1:${first.dev.ports.facilitator}${path}`, init));
    const deposits = sampleValue(facilitator.samples, 'market_settlements_total', {
      scheme: 'batch-settlement',
      network: 'eip155:31337',
      outcome: 'settled',
      reason: 'none',
    });
    expect(deposits).toBeGreaterThanOrEqual(1);
    expect(facilitator.samples.find((s) => s.name === 'market_relayer_balance_eth')?.value).toBeGreaterThan(0);
    // The skill server's own: both channel calls (the deposit's and the voucher's, which only it saw).
    const skills = await scrape((path, init) => fetch(`http://127.0.0.1:${first.dev.ports.skills}${path}`, init));
    const where = { skill: 'word-count', scheme: 'batch-settlement', network: 'eip155:31337' };
    expect(sampleValue(skills.samples, 'market_skill_paid_calls_total', where)).toBe(2);
    expect(sampleValue(skills.samples, 'market_skill_charged_atomic_total', where)).toBe(4000);
    expect(
      sampleValue(skills.samples, 'market_skill_call_duration_seconds_count', {
        skill: 'word-count',
        scheme: 'batch-settlement',
        outcome: 'paid',
      }),
    ).toBe(2);
  });

  it(
    'serves the demo wallet API: its address, and signatures by its key (or the demo creator’s) for this marketplace only; the demo wallet operates',
    async () => {
      const base = first.banner.marketplace;
      const address = first.banner.wallet as Address;
      expect(await (await fetch(`${base}/dev/demo-wallet`)).json()).toEqual({ address, label: expect.stringContaining('test only') });
      const sign = (body: unknown, headers: Record<string, string> = {}) =>
        fetch(`${base}/dev/demo-wallet/sign`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...headers },
          body: JSON.stringify(body),
        });

      const message = 'Sign in to the dev marketplace';
      const signed = (await (await sign({ method: 'personal_sign', params: [message, address] })).json()) as { result: Hex };
      expect(await verifyMessage({ address, message, signature: signed.result })).toBe(true);

      const typed = {
        domain: { name: 'USD Coin', version: '2', chainId: 31337, verifyingContract: first.banner.token },
        types: {
          EIP712Domain: [
            { name: 'name', type: 'string' },
            { name: 'version', type: 'string' },
            { name: 'chainId', type: 'uint256' },
            { name: 'verifyingContract', type: 'address' },
          ],
          TransferWithAuthorization: [
            { name: 'from', type: 'address' },
            { name: 'to', type: 'address' },
            { name: 'value', type: 'uint256' },
            { name: 'validAfter', type: 'uint256' },
            { name: 'validBefore', type: 'uint256' },
            { name: 'nonce', type: 'bytes32' },
          ],
        },
        primaryType: 'TransferWithAuthorization',
        message: {
          from: address,
          to: paid.payTo,
          value: '1000',
          validAfter: '0',
          validBefore: '99999999999',
          nonce: `0x${'11'.repeat(32)}`,
        },
      };
      const typedSigned = (await (await sign({ method: 'eth_signTypedData_v4', params: [address, JSON.stringify(typed)] })).json()) as {
        result: Hex;
      };
      const { EIP712Domain: _, ...types } = typed.types;
      const valid = await verifyTypedData({
        address,
        domain: { ...typed.domain, verifyingContract: typed.domain.verifyingContract as Address },
        types,
        primaryType: 'TransferWithAuthorization',
        message: {
          ...typed.message,
          to: paid.payTo,
          value: 1000n,
          validAfter: 0n,
          validBefore: 99999999999n,
          nonce: typed.message.nonce as Hex,
        },
        signature: typedSigned.result,
      });
      expect(valid).toBe(true);

      // The demo creator (paid into: it owns the example skills) signs in from the pages too; no one else.
      const creator = (await (await fetch(`${base}/dev/demo-creator`)).json()) as { address: Address };
      expect(creator.address).toBe(paid.payTo);
      const asCreator = (await (await sign({ method: 'personal_sign', params: [message, creator.address] })).json()) as { result: Hex };
      expect(await verifyMessage({ address: creator.address, message, signature: asCreator.result })).toBe(true);
      const other = await sign({ method: 'personal_sign', params: [message, `0x${'12'.repeat(20)}`] });
      expect({ status: other.status, body: await other.json() }).toMatchObject({
        status: 400,
        body: { code: 'VALIDATION', requestId: expect.any(String) },
      });
      const elsewhere = await sign({ method: 'personal_sign', params: [message, address] }, { origin: 'https://evil.example' });
      expect(elsewhere.status).toBe(403);
      expect((await sign({ method: 'eth_sign', params: [] })).status).toBe(400);

      // Signed in with it, one operates the local marketplace: the operators' queue answers.
      const challenge = (await (await fetch(`${base}/auth/challenge`, jsonPost({ address }))).json()) as { message: string };
      const signIn = (await (await sign({ method: 'personal_sign', params: [challenge.message, address] })).json()) as { result: Hex };
      const session = await fetch(`${base}/auth/verify`, jsonPost({ message: challenge.message, signature: signIn.result }));
      const { token } = (await session.json()) as { token: string };
      expect((await fetch(`${base}/operator/reports`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
    },
    STEP_MS,
  );

  it(
    'refuses a second market dev on the same directory, and names a busy port',
    async () => {
      const second = await spawnDev(dir);
      running.push(second);
      expect(await second.exited).toBe(1);
      expect(second.output()).toContain(`market dev is already running on ${dir}`);

      const busy = await spawnDev(join(work, 'other'), [], { ...first.dev.ports, chain: first.dev.ports.chain });
      running.push(busy);
      expect(await busy.exited).toBe(1);
      expect(busy.output()).toContain(`port ${first.dev.ports.registry} (marketplace) is already in use`);
      expect(busy.output()).toContain('--port');
    },
    STEP_MS,
  );

  it(
    'stops every process on SIGTERM, anvil included, with exit code 0',
    async () => {
      expect((await leftovers(first.dev)).length).toBeGreaterThanOrEqual(2); // anvil (and its watchdog), the skill server
      expect(await stop(first.dev)).toBe(0);
      expect(await leftovers(first.dev)).toEqual([]);
    },
    STEP_MS,
  );

  it(
    'keeps chain, wallet and keys across a restart; Ctrl-C stops it too',
    async () => {
      const again = await start();
      expect(again.banner.wallet).toBe(first.banner.wallet);
      expect(again.banner.balance).toBe('99.98'); // 100 minus the channel's deposit: the chain state was kept
      const { code, stdout } = await runPrinted(again.banner.call);
      expect(code).toBe(0);
      expect(JSON.parse(stdout)).toEqual({ words: 6, characters: 26 });
      expect(await stop(again.dev, 'SIGINT')).toBe(0);
      expect(await leftovers(again.dev)).toEqual([]);
    },
    STEP_MS,
  );

  it(
    'serves a given module instead of the example skills (taken off the listing), with a banner call from its schema; back on the examples, a child that dies brings the whole down',
    async () => {
      const module = join(work, 'forecast.ts');
      writeFileSync(
        module,
        `import { skill } from 'skill-market/creator';
export const forecast = skill(
  { price: '$0.001', groups: ['weather'], inputSchema: { type: 'object', additionalProperties: false, properties: { city: { type: 'string', pattern: '^[A-Z]', examples: ['Lyon'] } }, required: ['city'] } },
  ({ city }: { city: string }) => ({ city, forecast: 'sunny' }),
);
`,
      );
      const listed = async (base: string) =>
        ((await (await fetch(`${base}/skills?q=`)).json()) as { name: string }[]).map((s) => s.name).sort();
      const { dev, banner } = await start([module]);
      try {
        expect(await listed(banner.marketplace)).toEqual(['forecast']);
        expect(banner.call).toContain(` forecast '{"city":"Lyon"}'`);
        const { code, stdout } = await runPrinted(banner.call);
        expect(code).toBe(0);
        expect(JSON.parse(stdout)).toEqual({ city: 'Lyon', forecast: 'sunny' });
      } finally {
        expect(await stop(dev)).toBe(0);
      }

      // Back on the examples: they are listed again, the module's skill is not.
      const examples = await start();
      expect(await listed(examples.banner.marketplace)).toEqual(['echo', 'word-count']);

      // A child that dies brings the whole down with a clear message.
      const anvil = (await processesMentioning(dir)).find((line) => /^\d+ \S*anvil /.test(line));
      expect(anvil).toBeDefined();
      process.kill(Number(anvil!.split(' ')[0]), 'SIGKILL');
      expect(await examples.dev.exited).toBe(1);
      expect(examples.dev.output()).toContain('market dev: the local chain (anvil) exited');
      expect(await leftovers(examples.dev)).toEqual([]);
    },
    STEP_MS,
  );

  it(
    'starts over with --fresh: a new demo wallet with a full balance; a given module is served and reloaded when saved; SIGKILL leaves nothing behind',
    async () => {
      const module = join(work, 'my-skills.ts');
      const source = (extra: string) =>
        `import { skill } from 'skill-market/creator';\nexport const shout = skill({ price: '$0.001', groups: ['fun'] }, (i: { text: string }) => ({ text: String(i.text).toUpperCase() }));\n${extra}`;
      writeFileSync(module, source(''));
      const { dev, banner } = await start(['--fresh', module]);
      expect(banner.wallet).not.toBe(first.banner.wallet);
      expect(banner.balance).toBe('100');
      expect(banner.call).toContain(' shout ');

      writeFileSync(
        module,
        source(`export const whisper = skill({ price: '$0.001' }, (i: { text: string }) => ({ text: String(i.text).toLowerCase() }));\n`),
      );
      const names = async () =>
        ((await (await fetch(`${banner.marketplace}/skills?q=`)).json()) as { name: string }[]).map((s) => s.name).sort();
      await eventually(dev.output, (output) => output.includes('skills reloaded'), 'market dev reloads the saved module', 20_000, {
        context: dev.output,
      });
      expect(dev.output()).toContain('skills module changed: reloading my-skills.ts\nskills reloaded');
      expect(await names()).toEqual(['shout', 'whisper']);

      // Killed outright (SIGKILL: no handler runs), it leaves nothing behind: anvil's watchdog and
      // the skill server both see their pipe from market dev close.
      expect((await leftovers(dev)).length).toBeGreaterThanOrEqual(2);
      dev.child.kill('SIGKILL');
      await dev.exited;
      expect(
        await lastReading(
          () => leftovers(dev),
          (left) => left.length === 0,
        ),
      ).toEqual([]);
    },
    STEP_MS,
  );
});

describe('outside market dev', () => {
  it('the registry has no demo wallet API', async () => {
    const database = await openTestDatabase('embedded');
    try {
      const { request } = testRegistry(database);
      expect((await request('/dev/demo-wallet')).status).toBe(404);
      const post = await request('/dev/demo-wallet/sign', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ method: 'personal_sign', params: ['x', '0x'] }),
      });
      expect(post.status).toBe(404);
    } finally {
      await database.close();
    }
  });
});
