/**
 * The marketplace grown past one instance: two registries and two facilitators on one PostgreSQL
 * database, each pair behind a round-robin proxy on loopback, and two instances of one skill
 * server (one payee, one skill, payment channels kept at the facilitator) behind a third. Each
 * registry is started as `market registry` starts it (its own pool, change notifications, webhook
 * deliverer); each facilitator has its own pool and relayer, and both the one receiver authorizer
 * key (FACILITATOR_AUTHORIZER_KEY, the same on every instance: channels name its address, so a
 * claim through either facilitator is signed by it). Consumers (several wallets, our SkillMarket
 * client) pay by `exact` and over channels at once; then one skill server claims for both.
 *
 * Shown: no payment charged twice (every payer's wallet moved by exactly what it was charged, every
 * EIP-3009 authorization used once); both registries count the calls and the revenue the chain
 * shows (exact transfers to the payee plus what its channels claimed), and so does the creator's
 * revenue; every `call.paid` reaches the creator's endpoint exactly once, though both registries
 * deliver; a listing an operator hides through one registry is hidden
 * through the other within the read cache's documented bound (docs/operators.md, Growing: 10 s
 * should a notice be missed).
 * PostgreSQL only: several instances on one database is what it shows.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { eq } from 'drizzle-orm';
import type { Address } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { SkillMarket } from 'skill-market';
import { hostedChannelStore, serve, skill, type SkillServer } from 'skill-market/creator';
import type { WebhookDelivery } from 'skill-market/registry';
import { loadRegistryConfig, PAYMENT_VERIFICATION_DEFAULTS, type RegistryConfig } from '../../src/config';
import { openDatabase, type DatabaseHandle } from '../../src/db';
import { webhookDeliveries } from '../../src/db/schema';
import { createLogger } from '../../src/log';
import { startRegistry, systemClock, type RunningRegistry } from '../../src/registry';
import { createPaymentVerifier } from '../../src/registry/modules/payment-verification';
import { bearer, createKey, jsonPost, walletSignIn } from '../support/auth';
import { json, provePayee } from '../support/catalogue';
import { channelState, type LocalChain, receiverState, startChain, type TestAccount, usdCoinAbi } from '../support/chain';
import { createMigratedPostgresDatabase, TEST_DATABASE_URL } from '../support/database';
import { eventually } from '../support/eventually';
import { type FacilitatorFixture, startFacilitatorFixture } from '../support/facilitator';
import { type RoundRobinProxy, startRoundRobinProxy } from '../support/round-robin-proxy';
import { chainAsset, loopbackServeOptions } from '../support/skill-server';
import { isWebhookDelivery } from '../support/webhooks';

const PRICE = 1_000n; // $0.001
/** Wallets per scheme, and the calls each makes one after another (the wallets at once). */
const WALLETS = 4;
const CALLS_PER_WALLET = 10;
const CALLS = WALLETS * CALLS_PER_WALLET;
const FUNDS = 1_000_000n;
/** The longest a listing's content is served unchanged should a change notice be missed (docs/operators.md, Growing). */
const CONTENT_BOUND_MS = 10_000;
/** The key the facilitators bind to the payee: its skill servers keep their channels there. */
const KEY = 'instances-receiver-key-0123456789abcdef';
/** The facilitators' receiver authorizer: the same on every instance, as docs/operators.md asks (channels name its address). */
const AUTHORIZER_KEY = generatePrivateKey();
/** The marketplace's operator (OPERATOR_ADDRESSES on both registries). */
const OPERATOR = privateKeyToAccount(generatePrivateKey());

describe.skipIf(!TEST_DATABASE_URL)('two registries, two facilitators and two skill server instances on one PostgreSQL', () => {
  let chain: LocalChain;
  let drop: () => Promise<void>;
  const registries: RunningRegistry[] = [];
  const registryConfigs: RegistryConfig[] = [];
  const facilitators: FacilitatorFixture[] = [];
  const pools: DatabaseHandle[] = [];
  const servers: SkillServer[] = [];
  let proxies: Record<'registry' | 'facilitator' | 'skill', RoundRobinProxy>;
  const sink: { server?: ReturnType<typeof Bun.serve>; deliveries: { id: string; body: WebhookDelivery<'call.paid'> }[] } = {
    deliveries: [],
  };
  let payee: Address;
  let creator: { token: string; key: string };
  let consumerKey: string;
  let slug: string;
  let skillId: string;

  const viaProxy = (path: string, init?: RequestInit) => fetch(`${proxies.registry.url}${path}`, init);
  const on = (registry: RunningRegistry, path: string, init?: RequestInit) => fetch(`${registry.url}${path}`, init);

  beforeAll(async () => {
    proxies = { registry: startRoundRobinProxy(), facilitator: startRoundRobinProxy(), skill: startRoundRobinProxy() };
    chain = await startChain({ payers: 1, relayers: 2 });
    const payeeAccount = await chain.createAccount();
    payee = payeeAccount.address;
    const created = await createMigratedPostgresDatabase();
    drop = created.drop;

    // Two registries as `market registry` runs them, on the one database, behind one proxy.
    const logger = createLogger('warn', () => {});
    for (let i = 0; i < 2; i++) {
      const config = loadRegistryConfig({
        NODE_ENV: 'test',
        HOST: '127.0.0.1',
        PORT: '0',
        DATABASE_URL: created.url,
        DATABASE_POOL_SIZE: '5',
        PUBLIC_URL: proxies.registry.url,
        AUTH_JWT_SECRET: 'instances-secret-that-is-at-least-32-chars',
        MARKET_ALLOW_HTTP_ENDPOINTS: 'true',
        MARKET_NETWORK: chain.network,
        MARKET_USDC_ADDRESS: chain.token.address,
        MARKET_RPC_URL: chain.rpcUrl,
        // The payment checks run below, on both instances at once, on a clock the test moves.
        MARKET_PAYMENT_VERIFICATION: 'off',
        MARKET_WEBHOOKS: 'on',
        OPERATOR_ADDRESSES: OPERATOR.address,
        MARKET_HEALTH_PROBES: 'off',
        MARKET_HEALTH_ALLOW_PRIVATE: 'true',
        RATE_LIMIT_AUTH: 'off',
        RATE_LIMIT_WRITE: 'off',
        RATE_LIMIT_READ: 'off',
      });
      // A loaded test machine may queue a statement past the production deadline without anything being wrong.
      const database = { ...config.database, deadlineMs: 15_000 } as RegistryConfig['database'];
      registryConfigs.push({ ...config, database });
      registries.push(await startRegistry({ ...config, database }, logger));
    }
    proxies.registry.setTargets(registries.map((r) => r.url));

    // Two facilitators, each its own pool and relayer, behind one proxy; both bind the key to the payee.
    for (let i = 0; i < 2; i++) {
      const pool = await openDatabase({ kind: 'postgres', url: created.url, poolSize: 5, deadlineMs: 15_000 });
      pools.push(pool);
      const facilitator = await startFacilitatorFixture(chain, 'postgres', {
        database: pool,
        relayers: [chain.accounts.relayers[i]!],
        config: { receiverKeys: [{ receiver: payee, key: KEY }], authorizerPrivateKey: AUTHORIZER_KEY },
      });
      facilitator.facilitator.app.listen({ hostname: '127.0.0.1', port: 0 });
      facilitators.push(facilitator);
    }
    proxies.facilitator.setTargets(facilitators.map((f) => `http://127.0.0.1:${f.facilitator.app.server!.port}`));

    // The creator signs in (the challenge from one registry, the answer to whichever the proxy picks),
    // proves the payee, makes the group, and has an endpoint hear call.paid.
    const session = await walletSignIn(viaProxy);
    creator = { token: session.token, key: (await createKey(viaProxy, session.token, 'creator')).key };
    await provePayee(viaProxy, creator.key, payeeAccount);
    expect((await viaProxy('/groups', jsonPost({ name: 'instances' }, bearer(creator.key)))).status).toBe(201);
    sink.server = Bun.serve({
      hostname: '127.0.0.1',
      port: 0,
      async fetch(request) {
        if (!isWebhookDelivery(request)) return new Response('not a webhook', { status: 404 });
        sink.deliveries.push({ id: request.headers.get('webhook-id')!, body: (await request.json()) as WebhookDelivery<'call.paid'> });
        return new Response('ok');
      },
    });
    const hook = await viaProxy(
      '/webhooks',
      jsonPost({ url: `http://127.0.0.1:${sink.server.port}/hooks`, events: ['call.paid'] }, bearer(creator.token)),
    );
    expect(hook.status).toBe(201);

    // Two instances of one skill server: same payee, same skill, registered at the proxy's address.
    const echo = skill({ price: '$0.001', description: 'Echoes its input', groups: ['instances'] }, (input: unknown) => ({ echo: input }));
    for (let i = 0; i < 2; i++) {
      servers.push(
        await serve(
          { echo },
          loopbackServeOptions(chain, proxies.facilitator.url, payee, {
            facilitatorApiKey: KEY,
            apiUrl: proxies.registry.url,
            apiKey: creator.key,
            register: { endpoint: proxies.skill.url, onError: 'throw' },
            trackCalls: { batchDelayMs: 20, baseDelayMs: 100 },
            channels: {
              store: hostedChannelStore({ url: proxies.facilitator.url, apiKey: KEY }),
              withdrawDelay: 900,
              claimAbove: '$100',
              claimWithinMs: 600_000,
            },
          }),
        ),
      );
    }
    proxies.skill.setTargets(servers.map((s) => s.url));
    const listed = await json<{ id: string; slug: string; endpoint: string }[]>(
      await viaProxy('/creators/me/skills', { headers: bearer(creator.key) }),
    );
    expect(listed.map((s) => s.endpoint)).toEqual([`${proxies.skill.url}/echo`]);
    ({ id: skillId, slug } = listed[0]!);

    const consumer = await walletSignIn(viaProxy);
    consumerKey = (await createKey(viaProxy, consumer.token, 'consumer')).key;
  }, 120_000);

  afterAll(async () => {
    for (const server of servers) await server.stop();
    sink.server?.stop(true);
    for (const proxy of Object.values(proxies ?? {})) proxy.close();
    for (const facilitator of facilitators) {
      await facilitator.facilitator.app.stop();
      await facilitator.close();
    }
    for (const pool of pools) await pool.close();
    for (const registry of registries) await registry.stop();
    await chain?.stop();
    await drop?.();
  });

  const market = (wallet: TestAccount, payment: 'exact' | 'channel') =>
    new SkillMarket({
      apiUrl: proxies.registry.url,
      apiKey: consumerKey,
      network: chain.network,
      assets: [{ network: chain.network, ...chainAsset(chain) }],
      wallet,
      payment,
      maxDeposit: '$0.1',
      depositCalls: CALLS_PER_WALLET,
      rpcUrl: chain.rpcUrl,
    });

  it('charges every paid call once, counts what the chain shows on both registries, delivers each call.paid once', async () => {
    const fromBlock = await chain.publicClient.getBlockNumber();
    const exactPayers = await Promise.all(Array.from({ length: WALLETS }, () => chain.createAccount({ usdc: FUNDS })));
    const channelPayers = await Promise.all(Array.from({ length: WALLETS }, () => chain.createAccount({ usdc: FUNDS })));
    const clients = [
      ...exactPayers.map((wallet) => ({ wallet, scheme: 'exact' as const, client: market(wallet, 'exact') })),
      ...channelPayers.map((wallet) => ({ wallet, scheme: 'channel' as const, client: market(wallet, 'channel') })),
    ];

    // Every wallet at once, each its calls one after another: both schemes through every instance.
    const answers = await Promise.all(
      clients.map(async ({ client }, w) => {
        const results: unknown[] = [];
        for (let i = 0; i < CALLS_PER_WALLET; i++) results.push(await client.call(slug, { wallet: w, i }));
        await client.flush();
        return results;
      }),
    );
    expect(answers.flat()).toHaveLength(2 * CALLS);
    expect(answers.flat()[0]).toEqual({ echo: { wallet: 0, i: 0 } });
    // The load balancers spread it: every instance of each pair took requests.
    for (const [name, proxy] of Object.entries(proxies))
      expect({ name, idle: proxy.served.filter((n) => n === 0).length }).toEqual({ name, idle: 0 });

    // Exact: each wallet paid exactly its calls, each authorization used once, all to the payee.
    for (const payer of exactPayers) expect(await chain.balanceOf(payer.address)).toBe(FUNDS - BigInt(CALLS_PER_WALLET) * PRICE);
    const used = await chain.publicClient.getContractEvents({
      address: chain.token.address,
      abi: usdCoinAbi,
      eventName: 'AuthorizationUsed',
      fromBlock,
    });
    const exactAddresses = new Set(exactPayers.map((p) => p.address.toLowerCase()));
    const exactNonces = used.filter((e) => exactAddresses.has(e.args.authorizer!.toLowerCase())).map((e) => e.args.nonce);
    expect(exactNonces).toHaveLength(CALLS);
    expect(new Set(exactNonces).size).toBe(CALLS);
    const transfers = await chain.publicClient.getContractEvents({
      address: chain.token.address,
      abi: usdCoinAbi,
      eventName: 'Transfer',
      args: { to: payee },
      fromBlock,
    });
    const exactTransfers = transfers.filter((t) => exactAddresses.has(t.args.from!.toLowerCase()));
    const exactOnChain = exactTransfers.reduce((sum, t) => sum + t.args.value!, 0n);
    expect(exactOnChain).toBe(BigInt(CALLS) * PRICE);

    // Channels: one skill server instance claims what both charged (kept at the facilitators).
    const claimedBefore = (await receiverState(chain, payee)).totalClaimed;
    expect(await servers[0]!.claimChannels()).toMatchObject({ channels: WALLETS });
    expect(await servers[1]!.claimChannels()).toMatchObject({ channels: 0 });
    const claimedOnChain = (await receiverState(chain, payee)).totalClaimed - claimedBefore;
    expect(claimedOnChain).toBe(BigInt(CALLS) * PRICE);
    for (const { wallet, scheme, client } of clients) {
      if (scheme !== 'channel') continue;
      const [channel, ...others] = await client.channels();
      expect(others).toEqual([]);
      // The wallet moved by its deposit alone; the channel was charged, and claimed, its calls once.
      expect(await chain.balanceOf(wallet.address)).toBe(FUNDS - BigInt(channel!.deposit));
      expect(BigInt(channel!.charged)).toBe(BigInt(CALLS_PER_WALLET) * PRICE);
      expect((await channelState(chain, channel!.config)).totalClaimed).toBe(BigInt(CALLS_PER_WALLET) * PRICE);
    }

    // Both registries run their payment checks at once, now that everything is on chain, until
    // everything reported is decided (a report looked at too soon is looked at again a second later).
    const verifiers = registries.map((registry, i) =>
      createPaymentVerifier({
        db: registry.database.db,
        config: { ...PAYMENT_VERIFICATION_DEFAULTS, enabled: false, retryBaseSeconds: 1 },
        chain: registryConfigs[i]!.chain,
        clock: systemClock,
        logger: createLogger('warn', () => {}),
      }),
    );
    const analytics = (registry: RunningRegistry) =>
      on(registry, `/analytics/${skillId}`).then((r) => json<{ callCount: number; paidCallCount: number; totalRevenueAtomic: string }>(r));
    await eventually(
      async () => {
        await Promise.all(verifiers.map((v) => v.verifyNow()));
        return analytics(registries[0]!);
      },
      (a) => a.paidCallCount >= 2 * CALLS,
      'both registries decide every reported payment',
      60_000,
    );
    const counted = { callCount: 2 * CALLS, paidCallCount: 2 * CALLS, totalRevenueAtomic: `${exactOnChain + claimedOnChain}` };
    for (const registry of registries) expect(await analytics(registry)).toMatchObject(counted);
    // The creator's revenue, as their ledger totals it, on either registry.
    for (const registry of registries) {
      const csv = await (await on(registry, '/analytics/revenue.csv', { headers: bearer(creator.key) })).text();
      const lines = csv.trimEnd().split('\r\n');
      const names = lines[0]!.split(',');
      const total = Object.fromEntries(
        lines
          .at(-1)!
          .split(',')
          .map((value, i) => [names[i], value]),
      );
      expect({
        paidCalls: total.paid_calls,
        revenue: total.revenue_atomic,
        exact: total.exact_atomic,
        claimed: total.channel_claimed_atomic,
      }).toEqual({
        paidCalls: `${2 * CALLS}`,
        revenue: `${exactOnChain + claimedOnChain}`,
        exact: `${exactOnChain}`,
        claimed: `${claimedOnChain}`,
      });
    }

    // Every call.paid (an exact payment once verified, a channel call once recorded) reached the
    // creator's endpoint once, though both registries' deliverers take deliveries.
    const stored = () =>
      pools[0]!.db.select({ status: webhookDeliveries.status }).from(webhookDeliveries).where(eq(webhookDeliveries.type, 'call.paid'));
    const rows = await eventually(
      stored,
      (r) => r.length === 2 * CALLS && r.every((d) => d.status === 'delivered'),
      'every call.paid delivered',
      30_000,
      {
        context: () => `${sink.deliveries.length} heard`,
      },
    );
    expect(rows).toHaveLength(2 * CALLS);
    expect(sink.deliveries).toHaveLength(2 * CALLS);
    expect(new Set(sink.deliveries.map((d) => d.id)).size).toBe(2 * CALLS);
    const exactHeard = sink.deliveries
      .filter((d) => d.body.data.scheme === 'exact')
      .map((d) => ('transaction' in d.body.data ? d.body.data.transaction : ''));
    expect(exactHeard).toHaveLength(CALLS);
    expect(new Set(exactHeard)).toEqual(new Set(exactTransfers.map((t) => t.transactionHash)));
    const channelHeard = sink.deliveries
      .filter((d) => d.body.data.scheme === 'batch-settlement')
      .map((d) => ('channelId' in d.body.data ? `${d.body.data.channelId}:${d.body.data.chargedCumulativeAmount}` : ''));
    expect(channelHeard).toHaveLength(CALLS);
    expect(new Set(channelHeard).size).toBe(CALLS);
  }, 240_000);

  it('hides a listing for everyone when an operator hides it through one registry: the other stops showing it within the documented bound', async () => {
    const [a, b] = registries as [RunningRegistry, RunningRegistry];
    const page = (registry: RunningRegistry) => on(registry, `/skills/${slug}`);
    const found = async (registry: RunningRegistry) =>
      (await json<{ slug: string }[]>(await on(registry, '/skills?q=echoes'))).map((s) => s.slug);
    // B has the listing and the search page in its read cache.
    expect((await page(b)).status).toBe(200);
    expect(await found(b)).toContain(slug);
    const counts = async () =>
      (
        await json<{ slug: string; paidCallCount: number; totalRevenueAtomic: string }[]>(
          await on(b, '/creators/me/skills', { headers: bearer(creator.key) }),
        )
      ).find((s) => s.slug === slug);
    const before = await counts();
    expect(before?.paidCallCount).toBeGreaterThan(0);

    // The operator signs in and hides the skill through A (its change notice reaches B).
    const operator = await walletSignIn((path, init) => on(a, path, init), OPERATOR);
    const hide = await on(
      a,
      `/operator/skills/${slug}/hide`,
      jsonPost({ reason: 'Copies another API without permission' }, bearer(operator.token)),
    );
    expect(hide.status).toBe(200);
    expect(
      await eventually(
        async () => (await page(b)).status,
        (status) => status === 404,
        'B answers the hidden skill 404',
        CONTENT_BOUND_MS,
      ),
    ).toBe(404);
    expect(
      await eventually(
        () => found(b),
        (slugs) => !slugs.includes(slug),
        'B stops finding the skill',
        CONTENT_BOUND_MS,
      ),
    ).not.toContain(slug);
    // Nothing is deleted: its creator still reads the same counts through B.
    expect(await counts()).toEqual(before);
  }, 60_000);
});
