/**
 * The skill server's /metrics (`market serve`'s collectors on serve()'s observer) after real paid
 * calls on anvil through our facilitator: an exact payment and payment-channel vouchers each move
 * the calls, paid-call and charged-amount counters and the latency histogram by exactly what was
 * paid, labelled by skill, scheme and network; refusals and handler failures are counted by reason
 * without a paid call; a claim and a settle are counted and the claims due read from the channels.
 * A scrape without the token is refused 401; not configured in production, /metrics is a skill's 404.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serve, skill, type SkillServer } from 'skill-market/creator';
import { createSkillServerMetrics, skillServerMetricsRoutes } from '../../src/creator-metrics';
import { createLogger } from '../../src/log';
import { jsonPost as post } from '../support/auth';
import { fileChannels, referenceChannelClient } from '../support/channel-server';
import { type Sample, sampleValue, scrape } from '../support/metrics';
import { loopbackServeOptions, type PaymentStack, paidPost, postJson, startPaymentStack } from '../support/skill-server';

const TOKEN = 'scrape-token-0123456789';
const logger = createLogger('silent');
let stack: PaymentStack;
let server: SkillServer;
let folder: string;

beforeAll(async () => {
  stack = await startPaymentStack({ payers: 1 });
  folder = await mkdtemp(join(tmpdir(), 'skill-metrics-'));
  const metrics = createSkillServerMetrics(logger, 0);
  const payee = (await stack.chain.createAccount()).address;
  server = await serve(
    {
      echo: skill({ price: '$0.001' }, (input: unknown) => ({ echo: input })),
      metered: skill({ price: '$0.001' }, (input: { units: number }, { charge }) => {
        charge(BigInt(input.units) * 100n);
        return { units: input.units };
      }),
      broken: skill({ price: '$0.001' }, () => {
        throw new Error('out of order');
      }),
    },
    loopbackServeOptions(stack.chain, stack.facilitatorUrl, payee, {
      channels: { ...fileChannels(await stack.chain.createAccount(), folder), claimAbove: '$100' },
      observe: metrics.observer,
      routes: skillServerMetricsRoutes(metrics, { enabled: true, token: TOKEN }, logger),
    }),
  );
  metrics.readChannels(() => server.channelBacklog());
}, 90_000);

afterAll(async () => {
  await server?.stop();
  await stack?.close();
  await rm(folder, { recursive: true, force: true });
});

const read = () => scrape((path, init) => fetch(`${server.url}${path}`, init), { authorization: `Bearer ${TOKEN}` });
const moved = (before: Sample[], after: Sample[]) => (name: string, labels: Record<string, string>) =>
  (sampleValue(after, name, labels) ?? 0) - (sampleValue(before, name, labels) ?? 0);

describe("the skill server's metrics", () => {
  it('counts an exact payment once: the call, its price and its latency, labelled by skill, scheme and network', async () => {
    const payer = stack.chain.accounts.payers[0]!;
    const before = (await read()).samples;
    const res = await paidPost(`${server.url}/echo`, { hello: 1 }, payer);
    expect(res.status).toBe(200);
    const { samples: after, text } = await read();
    const diff = moved(before, after);
    const where = { skill: 'echo', scheme: 'exact', network: stack.chain.network };

    expect(diff('market_skill_calls_total', { ...where, outcome: 'paid', reason: 'none' })).toBe(1);
    expect(diff('market_skill_paid_calls_total', where)).toBe(1);
    expect(diff('market_skill_charged_atomic_total', where)).toBe(1000);
    // The unpaid POST that asked for the terms is a refusal: no payment.
    expect(diff('market_skill_calls_total', { ...where, scheme: 'none', outcome: 'refused', reason: 'payment_required' })).toBe(1);
    const latency = { skill: 'echo', scheme: 'exact', outcome: 'paid' };
    expect(diff('market_skill_call_duration_seconds_count', latency)).toBe(1);
    expect(diff('market_skill_call_duration_seconds_bucket', { ...latency, le: '+Inf' })).toBe(1);
    expect(diff('market_skill_call_duration_seconds_sum', latency)).toBeGreaterThan(0);
    expect(text.toLowerCase()).not.toContain(payer.address.toLowerCase().slice(2));
  });

  it('counts channel calls by what each charged, and the claims due until a claim and a settle pay them', async () => {
    const payer = await stack.chain.createAccount({ usdc: 1_000_000n });
    const { pay } = referenceChannelClient(stack.chain, payer, { depositMultiplier: 10 });
    const before = (await read()).samples;
    expect((await pay(`${server.url}/echo`, post({ i: 1 }))).status).toBe(200);
    expect((await pay(`${server.url}/metered`, post({ units: 3 }))).status).toBe(200);
    const { samples: after } = await read();
    const diff = moved(before, after);
    const where = { scheme: 'batch-settlement', network: stack.chain.network };

    expect(diff('market_skill_paid_calls_total', { ...where, skill: 'echo' })).toBe(1);
    expect(diff('market_skill_charged_atomic_total', { ...where, skill: 'echo' })).toBe(1000);
    expect(diff('market_skill_paid_calls_total', { ...where, skill: 'metered' })).toBe(1);
    expect(diff('market_skill_charged_atomic_total', { ...where, skill: 'metered' })).toBe(300);
    expect(diff('market_skill_call_duration_seconds_count', { skill: 'metered', scheme: 'batch-settlement', outcome: 'paid' })).toBe(1);
    expect(sampleValue(after, 'market_skill_channel_claims_due')).toBe(1);
    expect(sampleValue(after, 'market_skill_channel_unclaimed_atomic')).toBe(1300);
    expect(sampleValue(after, 'market_skill_channel_claim_oldest_seconds')).toBeGreaterThanOrEqual(0);
    // 1 only while a claim round runs (the claimer looks every so often): present, whatever the moment.
    expect(sampleValue(after, 'market_skill_channel_claiming')).toBeDefined();

    expect(await server.claimChannels(true)).toMatchObject({ channels: 1 });
    const claimed = (await read()).samples;
    const settled = moved(after, claimed);
    expect(settled('market_skill_channel_settlements_total', { type: 'claim', outcome: 'ok' })).toBe(1);
    expect(settled('market_skill_channel_settlements_total', { type: 'settle', outcome: 'ok' })).toBe(1);
    expect(sampleValue(claimed, 'market_skill_channel_claims_due')).toBe(0);
    expect(sampleValue(claimed, 'market_skill_channel_unclaimed_atomic')).toBe(0);
    expect(sampleValue(claimed, 'market_skill_channel_unsettled_seconds')).toBe(0);
  });

  it('counts a refused payment by its reason and a failed handler as failed, neither as a paid call', async () => {
    const payer = stack.chain.accounts.payers[0]!;
    const before = (await read()).samples;
    expect((await postJson(`${server.url}/echo`, {}, { 'X-Payment': 'not-a-payment' })).status).toBe(402);
    expect((await paidPost(`${server.url}/broken`, {}, payer)).status).toBe(500);
    const diff = moved(before, (await read()).samples);
    const network = stack.chain.network;

    expect(
      diff('market_skill_calls_total', { skill: 'echo', scheme: 'none', network, outcome: 'refused', reason: 'invalid_payment' }),
    ).toBe(1);
    expect(diff('market_skill_calls_total', { skill: 'broken', scheme: 'exact', network, outcome: 'failed', reason: 'error' })).toBe(1);
    expect(diff('market_skill_paid_calls_total', { skill: 'broken', scheme: 'exact', network })).toBe(0);
    expect(diff('market_skill_call_duration_seconds_count', { skill: 'broken', scheme: 'exact', outcome: 'failed' })).toBe(1);
  });

  it('refuses a scrape without the token, or with another, as the registry does', async () => {
    const bare = await fetch(`${server.url}/metrics`);
    expect(bare.status).toBe(401);
    expect(bare.headers.get('www-authenticate')).toContain('Bearer');
    expect(await bare.json()).toMatchObject({ error: 'Authentication required', code: 'UNAUTHORIZED' });
    expect((await fetch(`${server.url}/metrics`, { headers: { authorization: 'Bearer another-token-0123456789' } })).status).toBe(401);
  });

  it('leaves /metrics out when they are not served there, and refuses a route that is a skill', async () => {
    const metrics = createSkillServerMetrics(logger);
    expect(skillServerMetricsRoutes(metrics, { enabled: false }, logger)).toEqual({});
    expect(skillServerMetricsRoutes(metrics, { enabled: true, listener: { host: '127.0.0.1', port: 0 } }, logger)).toEqual({});
    const payee = (await stack.chain.createAccount()).address;
    const attempt = serve(
      { metrics: skill({ price: '$0.001' }, () => ({})) },
      loopbackServeOptions(stack.chain, stack.facilitatorUrl, payee, {
        routes: skillServerMetricsRoutes(metrics, { enabled: true }, logger),
      }),
    );
    await expect(attempt).rejects.toThrow("route /metrics must start with / and not be a skill's");
  });
});
