/**
 * The skill server follows its listing's free trial and volume prices as it follows its price: a
 * trial PATCHed onto a running skill that had none makes its 402 declare the sign-in within the
 * listing refresh and gives a payer the free call; volume prices PATCHed on charge the tier price
 * after the threshold (on anvil); a re-registration keeps the edited values; bad values are a 400
 * naming the field; `market skill trial|tiers` edit them and wait until the server follows.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Address } from 'viem';
import { SkillMarket } from 'skill-market';
import type { SkillView } from 'skill-market/registry';
import { register, serve, skill, updateSkill, type SkillServer } from 'skill-market/creator';
import { decodePaymentRequired } from 'skill-market/x402';
import { bearer } from '../support/auth';
import { json, newCreator, type Creator } from '../support/catalogue';
import { eventually } from '../support/eventually';
import { freePort, spawnMarket } from '../support/process';
import { registryFixture } from '../support/registry';
import { loopbackServeOptions, recordingLogger, startPaymentStack, type PaymentStack } from '../support/skill-server';

const fx = registryFixture('embedded', { catalogue: { allowHttpEndpoints: true, viewWindowSeconds: 3600, newSkillsPerHour: 30 } });
let stack: PaymentStack;
let creator: Creator;
let payee: Address;
let server: SkillServer;
let front: ReturnType<typeof Bun.serve>;
let apiUrl: string;
let folder: string;
let endpoint: string;
const logger = recordingLogger();

const skills = {
  plain: skill({ price: '$0.001', channels: false, groups: ['tools'] }, (input: { i: number }) => input),
  stream: skill({ price: '$0.001', channels: true, groups: ['tools'] }, (input: { i: number }) => input),
};

beforeAll(async () => {
  stack = await startPaymentStack();
  const payeeAccount = await stack.chain.createAccount();
  payee = payeeAccount.address;
  creator = await newCreator(fx.request);
  await creator.prove(payeeAccount);
  await creator.group('tools');
  front = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: (request) => fx.registry.app.handle(request) });
  apiUrl = `http://127.0.0.1:${front.port}`;
  folder = await mkdtemp(join(tmpdir(), 'listing-plans-'));
  const port = await freePort();
  endpoint = `http://127.0.0.1:${port}`;
  server = await serve(
    skills,
    loopbackServeOptions(stack.chain, stack.facilitatorUrl, payee, {
      port,
      apiKey: creator.key,
      apiUrl,
      logger,
      listingRefreshMs: 50,
      trials: { store: join(folder, 'plans') },
      channels: { store: join(folder, 'channels'), claimAbove: '$100', claimWithinMs: 600_000 },
      register: { endpoint, onError: 'throw' },
    }),
  );
}, 60_000);

afterAll(async () => {
  await server?.stop();
  await front?.stop(true);
  await stack?.close();
  if (folder) await rm(folder, { recursive: true, force: true });
});

const slug = (name = 'plain') => server.registration.find((r) => r.name === name)!.slug!;
const patch = (body: unknown, name = 'plain') =>
  fx.request(`/skills/${slug(name)}`, {
    method: 'PATCH',
    headers: { 'content-type': 'application/json', ...bearer(creator.token) },
    body: JSON.stringify(body),
  });
/** The extensions of the skill's 402. */
const declared = async () => {
  const res = await fetch(`${server.url}/plain`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
  expect(res.status).toBe(402);
  return Object.keys(decodePaymentRequired(res.headers.get('PAYMENT-REQUIRED')!).extensions ?? {});
};
const market = (privateKey: `0x${string}`) =>
  new SkillMarket({
    apiUrl,
    wallet: privateKey,
    network: stack.chain.network,
    assets: [{ network: stack.chain.network, address: stack.chain.token.address }],
    payment: 'exact',
  });

describe('editing the free trial and volume prices of a listing', () => {
  it('gives a free trial PATCHed onto a running skill that had none', async () => {
    expect(await declared()).not.toContain('sign-in-with-x');
    expect((await patch({ trial: { calls: 1, period: 'day' } })).status).toBe(200);
    await eventually(declared, (keys) => keys.includes('sign-in-with-x'), 'the 402 declares the sign-in');
    expect(logger.lines.join('\n')).toContain('"plain" now gives 1 free call(s) per day');

    const payer = await stack.chain.createAccount({ usdc: 10_000n });
    const buyer = market(payer.privateKey);
    expect(await buyer.callWithReceipt(slug(), { i: 1 })).toMatchObject({ trial: true, trialCallsLeft: 0, result: { i: 1 } });
    const paid = await buyer.callWithReceipt(slug(), { i: 2 });
    expect(paid.receipt?.amount).toBe('1000');
    expect(await stack.chain.balanceOf(payer.address)).toBe(10_000n - 1_000n);
  });

  it('charges the tier price PATCHed on after the threshold', async () => {
    const edit = await patch({ trial: null, tiers: { period: 'day', steps: [{ after: 2, price: '$0.0006' }] } });
    expect(edit.status).toBe(200);
    expect((await json<SkillView>(edit)).tiers).toEqual({ period: 'day', steps: [{ after: 2, price: '$0.0006', priceAtomic: '600' }] });
    await eventually(
      () => server.fetch(new Request(`${server.url}/plain`, { method: 'POST', body: '{}' })),
      () => logger.lines.some((line) => line.includes('no free trial and volume prices $0.0006 after 2 per day')),
      'the server follows the tiers',
    );
    const payer = await stack.chain.createAccount({ usdc: 100_000n });
    const buyer = market(payer.privateKey);
    const charges: string[] = [];
    for (let i = 1; i <= 4; i++) charges.push((await buyer.callWithReceipt(slug(), { i }, { trial: false })).receipt!.amount);
    expect(charges).toEqual(['1000', '1000', '600', '600']);
    expect(await stack.chain.balanceOf(payer.address)).toBe(100_000n - 3_200n);
  });

  it('charges the tier price PATCHed on in a payment channel after the threshold; the claim pays exactly the charges', async () => {
    expect((await patch({ tiers: { period: 'day', steps: [{ after: 2, price: '$0.0006' }] } }, 'stream')).status).toBe(200);
    await eventually(
      async () => logger.lines.join('\n'),
      (text) => text.includes('"stream" now gives no free trial and volume prices $0.0006 after 2 per day'),
      'the server follows the tiers',
    );
    const payer = await stack.chain.createAccount({ usdc: 1_000_000n });
    const buyer = new SkillMarket({
      apiUrl,
      wallet: payer.privateKey,
      network: stack.chain.network,
      assets: [{ network: stack.chain.network, address: stack.chain.token.address }],
      payment: 'channel',
      maxDeposit: '$0.1',
    });
    const charges: string[] = [];
    for (let i = 1; i <= 4; i++) charges.push((await buyer.callWithReceipt(slug('stream'), { i })).receipt!.amount);
    expect(charges).toEqual(['1000', '1000', '600', '600']);
    const [channel] = await buyer.channels();
    expect(channel?.charged).toBe('3200');
    const before = await stack.chain.balanceOf(payee);
    expect(await server.claimChannels(true)).toMatchObject({ channels: 1 });
    expect((await stack.chain.balanceOf(payee)) - before).toBe(3_200n);
  });

  it('keeps the edited trial and tiers when the module registers again', async () => {
    expect((await patch({ trial: { calls: 4, period: 'week' } })).status).toBe(200);
    const results = await register(skills, { apiKey: creator.key, apiUrl, paymentAddress: payee, endpoint, network: stack.chain.network });
    const again = results.find((r) => r.name === 'plain');
    expect(again).toMatchObject({ success: true, trial: { calls: 4, period: 'week' }, tiers: { period: 'day' } });
    const listing = await json<SkillView>(await fx.request(`/skills/${slug()}`));
    expect(listing.trial).toEqual({ calls: 4, period: 'week' });
    expect(listing.tiers?.steps).toEqual([{ after: 2, price: '$0.0006', priceAtomic: '600' }]);
  });

  it('market skill trial and tiers edit the listing and wait until the skill server gives them', async () => {
    const market = async (...args: string[]) => {
      const env = { XDG_CONFIG_HOME: join(folder, 'cli'), MARKET_API_URL: apiUrl, MARKET_API_KEY: creator.key };
      const child = spawnMarket(['skill', ...args], env, folder);
      const [code, stdout, stderr] = await Promise.all([
        child.exited,
        new Response(child.stdout).text(),
        new Response(child.stderr).text(),
      ]);
      return { code, stdout, stderr };
    };
    const trial = await market('trial', slug(), '2/week');
    expect(trial).toMatchObject({ code: 0, stderr: '' });
    expect(trial.stdout).toContain(`${slug()} now has 2 free calls per wallet a week (its listing).`);
    expect(trial.stdout).toContain('gives them now.');
    expect(await declared()).toContain('sign-in-with-x');

    const tiers = await market('tiers', slug(), '10:$0.0008,100:0.0005', '--period', 'week');
    expect(tiers).toMatchObject({ code: 0, stderr: '' });
    expect(tiers.stdout).toContain('volume prices $0.0008 after 10 calls, $0.0005 after 100 calls (counted per week)');
    expect(tiers.stdout).toContain('gives them now.');

    expect((await market('trial', slug(), 'off')).stdout).toContain('now has no free trial');
    const off = await market('tiers', slug(), 'off');
    expect(off.stdout).toContain('now has no volume prices');
    expect(off.stdout).toContain('gives them now.');
    expect(await declared()).not.toContain('sign-in-with-x');

    const bad = await market('trial', slug(), '3/year');
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('must be <calls>/<period>');
    const refused = await market('tiers', slug(), '10:$0.5');
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('tiers.steps.0.price');
  }, 60_000);

  it("follows volume prices below the listing's edited price though above the module's", async () => {
    const edit = await patch({ price: '$0.002', tiers: { period: 'day', steps: [{ after: 2, price: '$0.0015' }] } });
    expect(edit.status).toBe(200);
    await eventually(
      async () => logger.lines.join('\n'),
      (text) => text.includes('volume prices $0.0015 after 2 per day'),
      'the server gives the tiers',
    );
    expect(logger.lines.join('\n')).not.toContain('cannot give');
  });

  it('updateSkill edits the trial and the tiers, and says why the registry refused a bad one', async () => {
    const options = { apiKey: creator.key, apiUrl };
    expect(await updateSkill(slug(), { trial: { calls: 7, period: 'month' }, tiers: null }, options)).toEqual({ success: true });
    expect(await json<SkillView>(await fx.request(`/skills/${slug()}`))).toMatchObject({
      trial: { calls: 7, period: 'month' },
      tiers: null,
    });
    await eventually(
      async () => logger.lines.join('\n'),
      (text) => text.includes('"plain" now gives 7 free call(s) per month and no volume prices'),
      'the server follows',
    );
    const refused = await updateSkill(slug(), { tiers: { period: 'day', steps: [{ after: 1, price: '$5' }] } }, options);
    expect(refused.success).toBe(false);
    expect(refused.error).toContain('tiers.steps.0.price');
  });

  it('refuses bad values with a 400 naming the field', async () => {
    expect((await patch({ tiers: { period: 'day', steps: [{ after: 2, price: '$0.0006' }] } })).status).toBe(200);
    const cases: [unknown, string][] = [
      [{ trial: { calls: 0, period: 'day' } }, 'trial'],
      [{ trial: { calls: 2, period: 'year' } }, 'trial'],
      [{ tiers: { period: 'day', steps: [{ after: 2, price: '$0.002' }] } }, 'tiers.steps.0.price'],
      [
        {
          tiers: {
            period: 'day',
            steps: [
              { after: 5, price: '$0.0005' },
              { after: 5, price: '$0.0004' },
            ],
          },
        },
        'tiers.steps.1.after',
      ],
      [{ tiers: { period: 'day', steps: [] } }, 'tiers'],
      // The listing has a step at $0.0006 again: a price at or below it would make the step a rise.
      [{ price: '$0.0006' }, 'price'],
    ];
    for (const [body, field] of cases) {
      const res = await patch(body);
      expect(res.status).toBe(400);
      expect(JSON.stringify(await res.json())).toContain(field);
    }
  });
});
