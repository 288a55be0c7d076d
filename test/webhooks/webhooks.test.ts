/**
 * Webhooks end to end on both databases: endpoints managed by a signed-in session, events stored
 * with what caused them (a payment verified on anvil, a test event), delivered to a real HTTP
 * receiver with Standard Webhooks signatures (checked by the `standardwebhooks` verifier), retried
 * on the documented schedule with the fixture's clock, resumed after a restart, never sent twice
 * in parallel by two deliverers, and refused for private addresses outside a local marketplace.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { Value } from '@sinclair/typebox/value';
import { webhookDelivery, type WebhookEvent } from 'skill-market/registry';
import { Webhook } from 'standardwebhooks';
import type { Hash } from 'viem';
import { readHealthConfig } from '../../src/config';
import { systemClock, type Clock } from '../../src/registry/context';
import { createHealthProber } from '../../src/registry/modules/skill-health';
import { emitEvent } from '../../src/registry/modules/webhook-events';
import { createWebhookDeliverer, DISABLE_AFTER, RETRY_SCHEDULE_SECONDS } from '../../src/registry/modules/webhooks';
import { bearer, createKey, jsonPost, newWallet, walletSignIn } from '../support/auth';
import { json, newCreator, type Creator } from '../support/catalogue';
import { startChain, usdCoinAbi, type LocalChain } from '../support/chain';
import { databaseKinds } from '../support/database';
import { manualClock, memoryLogger, registryFixture, chainVerifier } from '../support/registry';
import { isWebhookDelivery } from '../support/webhooks';

/** A receiver on loopback: records every request; answers 500 while `failures` > 0. */
function receiver() {
  const seen: { headers: Record<string, string>; body: string }[] = [];
  const state = { failures: 0 };
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(request) {
      if (!isWebhookDelivery(request)) return new Response('not a webhook', { status: 404 });
      seen.push({ headers: Object.fromEntries(request.headers), body: await request.text() });
      if (state.failures > 0) {
        state.failures--;
        return new Response('temporarily broken', { status: 500 });
      }
      return new Response('ok');
    },
  });
  return { url: `http://127.0.0.1:${server.port}/hooks`, seen, state, stop: () => server.stop(true) };
}

const local = readHealthConfig({ MARKET_HEALTH_ALLOW_PRIVATE: 'true' }, 'test');
const jsonPatch = (body: unknown, headers: Record<string, string>) => ({
  method: 'PATCH',
  headers: { ...headers, 'content-type': 'application/json' },
  body: JSON.stringify(body),
});

/** One chain for both databases. */
let chain: LocalChain;
beforeAll(async () => {
  chain = await startChain({ payers: 1, payees: 1 });
}, 60_000);
afterAll(() => chain?.stop());

for (const kind of databaseKinds) {
  describe(`webhooks on ${kind}`, () => {
    const fx = registryFixture(kind, {
      health: local,
      catalogue: { allowHttpEndpoints: true, viewWindowSeconds: 3600, newSkillsPerHour: 30 },
    });
    const strict = registryFixture(kind);
    let creator: Creator;
    let sink: ReturnType<typeof receiver>;

    beforeAll(async () => {
      creator = await newCreator(fx.request);
      sink = receiver();
    }, 60_000);
    afterAll(() => sink?.stop());

    /** On the fixture's clock, unless told: signatures are checked against the real time. */
    const deliverer = (allowPrivateAddresses = true, clock: Clock = fx.clock) =>
      createWebhookDeliverer({
        db: fx.database.db,
        clock,
        logger: memoryLogger().logger,
        allowPrivateAddresses,
        timeoutMs: 5000,
      });
    const addEndpoint = async (events: string[], url = sink.url) => {
      const res = await fx.request('/webhooks', jsonPost({ url, events }, bearer(creator.token)));
      expect(res.status).toBe(201);
      return json<{ id: string; secret: string; url: string }>(res);
    };
    const sendTest = async (id: string) =>
      expect((await fx.request(`/webhooks/${id}/test`, jsonPost({}, bearer(creator.token)))).status).toBe(200);
    const deliveries = async (id: string) =>
      json<any[]>(await fx.request(`/webhooks/${id}/deliveries`, { headers: bearer(creator.token) }));

    it('manages endpoints with a session only: the secret once, then never; bad URLs and events refused', async () => {
      const created = await addEndpoint(['call.paid']);
      expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
      const list = await json<any[]>(await fx.request('/webhooks', { headers: bearer(creator.token) }));
      expect(list.find((w) => w.id === created.id)).toEqual({
        id: created.id,
        url: sink.url,
        events: ['call.paid'],
        enabled: true,
        disabledReason: null,
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      });
      expect(JSON.stringify(list)).not.toContain(created.secret);
      // An API key cannot point the account's events elsewhere.
      expect((await fx.request('/webhooks', jsonPost({ url: sink.url, events: ['call.paid'] }, bearer(creator.key)))).status).toBe(403);
      expect((await fx.request('/webhooks', jsonPost({ url: sink.url, events: ['nope'] }, bearer(creator.token)))).status).toBe(400);
      expect(
        (await fx.request('/webhooks', jsonPost({ url: 'ftp://x.example', events: ['call.paid'] }, bearer(creator.token)))).status,
      ).toBe(400);
      const patched = await fx.request(
        `/webhooks/${created.id}`,
        jsonPatch({ events: ['call.paid', 'review.created'] }, bearer(creator.token)),
      );
      expect(await json(patched)).toMatchObject({ events: ['call.paid', 'review.created'] });
      const stranger = await walletSignIn(fx.request);
      expect((await fx.request(`/webhooks/${created.id}`, jsonPatch({ enabled: false }, bearer(stranger.token)))).status).toBe(404);
      expect((await fx.request(`/webhooks/${created.id}`, { method: 'DELETE', headers: bearer(creator.token) })).status).toBe(200);
    });

    it('refuses loopback and private targets outside a local marketplace, at creation', async () => {
      const someone = await walletSignIn(strict.request);
      const post = (url: string) => strict.request('/webhooks', jsonPost({ url, events: ['call.paid'] }, bearer(someone.token)));
      expect((await post(sink.url)).status).toBe(400); // http
      for (const url of ['https://127.0.0.1/hooks', 'https://10.1.2.3/hooks', 'https://[::1]/hooks', 'https://localhost/hooks']) {
        const res = await post(url);
        expect({ url, status: res.status }).toEqual({ url, status: 400 });
        expect((await json(res)).error).toContain('public address');
      }
    });

    it('sends one call.paid when a paid call is verified on chain, signed so the standardwebhooks verifier accepts it', async () => {
      const endpoint = await addEndpoint(['call.paid']);
      const payToAccount = await chain.createAccount();
      await creator.prove(payToAccount);
      const payTo = payToAccount.address;
      const listed = await creator.register({ price: '$0.001', paymentAddress: payTo, network: chain.network });
      const skill = await json(listed);
      const hash: Hash = await chain
        .walletClient(chain.accounts.payer)
        .writeContract({ address: chain.token.address, abi: usdCoinAbi, functionName: 'transfer', args: [payTo, 1000n] });
      await chain.publicClient.waitForTransactionReceipt({ hash });
      const reported = await fx.request(
        '/analytics/usage',
        jsonPost({ skillSlug: skill.slug, consumerAddress: chain.accounts.payer.address, paymentTxHash: hash, amount: '$0.001' }),
      );
      expect(reported.status).toBe(200);
      const before = sink.seen.length;
      expect(await deliverer().deliverDue()).toMatchObject({ attempted: 0 }); // nothing until the chain says so
      const verifier = chainVerifier(fx, chain);
      expect(await verifier.verifyNow()).toMatchObject({ verified: 1 });
      expect(await deliverer(true, systemClock).deliverDue()).toMatchObject({ attempted: 1, delivered: 1 });
      const [request] = sink.seen.slice(before);
      const event = new Webhook(endpoint.secret).verify(request!.body, request!.headers) as any;
      expect(event).toEqual({
        type: 'call.paid',
        timestamp: expect.any(String),
        data: {
          version: 1,
          skill: skill.slug,
          amount: '1000',
          payer: chain.accounts.payer.address,
          scheme: 'exact',
          transaction: hash.toLowerCase(),
          network: chain.network,
          blockNumber: expect.any(String),
          reportedAt: expect.any(String),
        },
      });
      expect(request!.headers['webhook-id']).toMatch(/^msg_/);
      // Another secret does not verify it.
      expect(() => new Webhook(`whsec_${Buffer.alloc(32, 7).toString('base64')}`).verify(request!.body, request!.headers)).toThrow();
      expect(await deliverer().deliverDue()).toMatchObject({ attempted: 0 }); // sent once
      await fx.request(`/webhooks/${endpoint.id}`, { method: 'DELETE', headers: bearer(creator.token) });
    }, 60_000);

    it('sends payment.reverted when a payment reported for the skill reverted on chain', async () => {
      const endpoint = await addEndpoint(['payment.reverted', 'call.paid']);
      const payToAccount = await chain.createAccount();
      await creator.prove(payToAccount);
      const payTo = payToAccount.address;
      const skill = await json(await creator.register({ price: '$0.001', paymentAddress: payTo, network: chain.network }));
      // A transfer beyond the payer's balance, sent with a fixed gas limit so that it is mined, reverted.
      const broke = await chain.createAccount();
      const hash: Hash = await chain.walletClient(broke).writeContract({
        address: chain.token.address,
        abi: usdCoinAbi,
        functionName: 'transfer',
        args: [payTo, 1000n],
        gas: 100_000n,
      });
      expect((await chain.publicClient.waitForTransactionReceipt({ hash })).status).toBe('reverted');
      const reported = await fx.request(
        '/analytics/usage',
        jsonPost({ skillSlug: skill.slug, consumerAddress: broke.address, paymentTxHash: hash, amount: '$0.001' }),
      );
      expect(reported.status).toBe(200);
      const verifier = chainVerifier(fx, chain);
      expect(await verifier.verifyNow()).toMatchObject({ rejected: 1 });
      const before = sink.seen.length;
      expect(await deliverer(true, systemClock).deliverDue()).toMatchObject({ delivered: 1 });
      const [request] = sink.seen.slice(before);
      expect(new Webhook(endpoint.secret).verify(request!.body, request!.headers)).toMatchObject({
        type: 'payment.reverted',
        data: { version: 1, skill: skill.slug, transaction: hash.toLowerCase(), network: chain.network },
      });
      await fx.request(`/webhooks/${endpoint.id}`, { method: 'DELETE', headers: bearer(creator.token) });
    }, 60_000);

    it('retries a receiver answering 500 on the schedule: the fourth attempt delivers, with the same webhook-id, each attempt logged', async () => {
      const endpoint = await addEndpoint(['review.created']);
      await sendTest(endpoint.id);
      sink.state.failures = 3;
      const before = sink.seen.length;
      const d = deliverer();
      expect(await d.deliverDue()).toMatchObject({ attempted: 1, retrying: 1 });
      for (const pause of RETRY_SCHEDULE_SECONDS.slice(0, 3)) {
        expect(await d.deliverDue()).toMatchObject({ attempted: 0 }); // not due yet
        fx.clock.advance(pause);
        await d.deliverDue();
      }
      const sent = sink.seen.slice(before);
      expect(sent).toHaveLength(4);
      expect(new Set(sent.map((s) => s.headers['webhook-id'])).size).toBe(1);
      const [log] = await deliveries(endpoint.id);
      expect(log).toMatchObject({ type: 'webhook.test', status: 'delivered', attempts: 4, nextAttemptAt: null });
      expect(log.log.map((a: { status: number }) => a.status)).toEqual([200, 500, 500, 500]);
      expect(log.log[1].excerpt).toBe('temporarily broken');
      // Send again by hand: due at once, the same id.
      expect((await fx.request(`/webhooks/${endpoint.id}/deliveries/${log.id}/retry`, jsonPost({}, bearer(creator.token)))).status).toBe(
        200,
      );
      expect(await d.deliverDue()).toMatchObject({ delivered: 1 });
      expect(sink.seen.at(-1)!.headers['webhook-id']).toBe(sent[0]!.headers['webhook-id']);
      await fx.request(`/webhooks/${endpoint.id}`, { method: 'DELETE', headers: bearer(creator.token) });
    });

    it('keeps one server’s down and up in order: the up waits while the down is retried; unrelated events do not wait', async () => {
      const endpoint = await addEndpoint(['skill.down', 'skill.up']);
      const server = `https://order-${crypto.randomUUID().slice(0, 8)}.example`;
      const emit = (type: 'skill.down' | 'skill.up') =>
        emitEvent(fx.database.db, { userId: creator.userId, type, at: fx.clock.now(), data: { server, skills: ['a'] } });
      await emit('skill.down');
      await emit('skill.up');
      sink.state.failures = 1; // the down's first attempt fails
      const before = sink.seen.length;
      const d = deliverer();
      expect(await d.deliverDue()).toMatchObject({ attempted: 1, retrying: 1 }); // the down (500); the up waits
      await sendTest(endpoint.id); // no order to keep: it goes at once
      expect(await d.deliverDue()).toMatchObject({ attempted: 1, delivered: 1 });
      expect(await d.deliverDue()).toMatchObject({ attempted: 0 }); // the up still waits for the down
      fx.clock.advance(RETRY_SCHEDULE_SECONDS[0]);
      expect(await d.deliverDue()).toMatchObject({ attempted: 1, delivered: 1 }); // the down
      expect(await d.deliverDue()).toMatchObject({ attempted: 1, delivered: 1 }); // then the up
      const types = sink.seen.slice(before).map((s) => (JSON.parse(s.body) as { type: string }).type);
      expect(types.filter((t) => t !== 'webhook.test')).toEqual(['skill.down', 'skill.down', 'skill.up']);
      await fx.request(`/webhooks/${endpoint.id}`, { method: 'DELETE', headers: bearer(creator.token) });
    });

    it('delivers after a restart what was stored before it, and what a stopped instance had taken once its lease ends', async () => {
      const endpoint = await addEndpoint(['call.paid']);
      await sendTest(endpoint.id); // stored; no deliverer ran
      await sendTest(endpoint.id);
      // An instance takes both and stops before sending: its lease holds them for a minute.
      await fx.database.db.execute(
        `update webhook_deliveries set locked_until = '${new Date(fx.clock.now().getTime() + 60_000).toISOString()}' where status = 'pending'` as never,
      );
      const restarted = deliverer();
      expect(await restarted.deliverDue()).toMatchObject({ attempted: 0 });
      fx.clock.advance(61);
      expect(await restarted.deliverDue()).toMatchObject({ attempted: 2, delivered: 2 });
      await fx.request(`/webhooks/${endpoint.id}`, { method: 'DELETE', headers: bearer(creator.token) });
    });

    it('tells the account when one of its API keys is revoked, once', async () => {
      const endpoint = await addEndpoint(['key.revoked']);
      const { key } = await createKey(fx.request, creator.token, 'consumer');
      const [view] = (await json<any[]>(await fx.request('/auth/api-keys', { headers: bearer(creator.token) }))).filter((k) =>
        key.startsWith(k.keyPrefix),
      );
      const before = sink.seen.length;
      for (let i = 0; i < 2; i++) {
        const res = await fx.request(`/auth/api-keys/${view.id}`, { method: 'DELETE', headers: bearer(creator.token) });
        expect(res.status).toBe(200);
      }
      expect(await deliverer(true, systemClock).deliverDue()).toMatchObject({ delivered: 1 });
      const [request] = sink.seen.slice(before);
      expect(new Webhook(endpoint.secret).verify(request!.body, request!.headers)).toMatchObject({
        type: 'key.revoked',
        data: { version: 1, keyId: view.id, type: 'consumer', prefix: view.keyPrefix },
      });
      expect(JSON.stringify(request)).not.toContain(key); // never the key itself
      await fx.request(`/webhooks/${endpoint.id}`, { method: 'DELETE', headers: bearer(creator.token) });
    });

    it('tells the creator when the server of their skills stops answering, and when it answers again', async () => {
      const endpoint = await addEndpoint(['skill.down', 'skill.up']);
      // A skill server that answers /health while `up`.
      const state = { up: true };
      const server = Bun.serve({
        port: 0,
        hostname: '127.0.0.1',
        fetch: () => (state.up ? Response.json({ status: 'ok' }) : new Response('down', { status: 503 })),
      });
      try {
        const serverUrl = `http://127.0.0.1:${server.port}`;
        const res = await creator.register({ endpoint: serverUrl, network: chain.network });
        const skill = await json(res);
        // Its own clock: the fixture's sessions must not expire while probes wait out their backoff.
        const clock = manualClock(fx.clock.now());
        const prober = createHealthProber({ db: fx.database.db, config: fx.config.health, clock, logger: memoryLogger().logger });
        const probe = async () => {
          clock.advance(fx.config.health.maxBackoffSeconds + 1);
          await prober.probeNow();
        };
        await probe(); // first seen up: nothing to tell
        state.up = false;
        await probe();
        await probe(); // still down: told once
        state.up = true;
        await probe();
        const before = sink.seen.length;
        const live = deliverer(true, systemClock);
        expect(await live.deliverDue()).toMatchObject({ delivered: 1 }); // the down; the up goes after it
        expect(await live.deliverDue()).toMatchObject({ delivered: 1 });
        const events = sink.seen.slice(before).map((r) => new Webhook(endpoint.secret).verify(r.body, r.headers) as any);
        expect(events.map((e) => e.type)).toEqual(['skill.down', 'skill.up']);
        const down = events.find((e) => e.type === 'skill.down');
        expect(down.data).toMatchObject({ version: 1, server: serverUrl, skills: [skill.slug], reason: expect.stringContaining('503') });
        await fx.request(`/skills/${skill.slug}`, jsonPatch({ isActive: false }, bearer(creator.key)));
      } finally {
        server.stop(true);
        await fx.request(`/webhooks/${endpoint.id}`, { method: 'DELETE', headers: bearer(creator.token) });
      }
    });

    it('two deliverers send each of 20 events once', async () => {
      const endpoint = await addEndpoint(['call.paid']);
      for (let i = 0; i < 20; i++) await sendTest(endpoint.id);
      const before = sink.seen.length;
      const [a, b] = [deliverer(), deliverer()];
      // Side by side, a few at a time (an endpoint takes DELIVERY_LIMITS.perEndpoint at once).
      let delivered = 0;
      for (let round = 0; round < 20 && delivered < 20; round++) {
        delivered += (await Promise.all([a.deliverDue(), b.deliverDue()])).reduce((n, r) => n + r.delivered, 0);
      }
      expect(delivered).toBe(20);
      const ids = sink.seen.slice(before).map((s) => s.headers['webhook-id']);
      expect(ids).toHaveLength(20);
      expect(new Set(ids).size).toBe(20);
      await fx.request(`/webhooks/${endpoint.id}`, { method: 'DELETE', headers: bearer(creator.token) });
    });

    it('refuses a private address at delivery outside a local marketplace, and turns off an endpoint whose deliveries keep failing', async () => {
      const wallet = newWallet();
      const owner = await walletSignIn(fx.request, wallet);
      const res = await fx.request('/webhooks', jsonPost({ url: sink.url, events: ['call.paid'] }, bearer(owner.token)));
      const endpoint = await json<{ id: string }>(res);
      for (let i = 0; i < DISABLE_AFTER; i++) {
        expect((await fx.request(`/webhooks/${endpoint.id}/test`, jsonPost({}, bearer(owner.token)))).status).toBe(200);
      }
      const before = sink.seen.length;
      const guarded = deliverer(false);
      for (let round = 0; round <= RETRY_SCHEDULE_SECONDS.length; round++) {
        // Every due delivery, a few at a time (an endpoint takes DELIVERY_LIMITS.perEndpoint at once).
        while ((await guarded.deliverDue()).attempted > 0);
        fx.clock.advance(Math.max(...RETRY_SCHEDULE_SECONDS));
      }
      expect(sink.seen.length).toBe(before); // nothing ever reached the loopback receiver
      const again = await walletSignIn(fx.request, wallet); // days went by: a new session
      const logs = await json<any[]>(await fx.request(`/webhooks/${endpoint.id}/deliveries`, { headers: bearer(again.token) }));
      expect(logs.map((l) => l.status)).toEqual(Array(DISABLE_AFTER).fill('failed'));
      expect(logs[0].log).toHaveLength(RETRY_SCHEDULE_SECONDS.length + 1);
      expect(logs[0].log[0]).toMatchObject({ status: null, excerpt: expect.stringContaining('127.0.0.1') });
      const [view] = (await json<any[]>(await fx.request('/webhooks', { headers: bearer(again.token) }))).filter(
        (w) => w.id === endpoint.id,
      );
      expect(view).toMatchObject({
        enabled: false,
        disabledReason: expect.stringContaining(`${DISABLE_AFTER} deliveries in a row failed`),
      });
      // Its owner turns it back on: the reason goes.
      const on = await fx.request(`/webhooks/${endpoint.id}`, jsonPatch({ enabled: true }, bearer(again.token)));
      expect(await json(on)).toMatchObject({ enabled: true, disabledReason: null });
    });

    it('sent every event in the shape its documented schema gives (the OpenAPI document’s webhooks)', () => {
      const bodies = sink.seen.map((s) => JSON.parse(s.body) as { type: WebhookEvent });
      expect(new Set(bodies.map((b) => b.type))).toEqual(
        new Set(['call.paid', 'payment.reverted', 'key.revoked', 'skill.down', 'skill.up', 'webhook.test']),
      );
      for (const body of bodies) {
        const schema = webhookDelivery(body.type);
        expect({ type: body.type, errors: [...Value.Errors(schema, body)].map((e) => `${e.path}: ${e.message}`) }).toEqual({
          type: body.type,
          errors: [],
        });
      }
    });
  });
}
