/**
 * Webhook delivery limits, in process: the per-endpoint and per-account limits hold across
 * deliverers, and an account at its limit does not stop another's.
 */
import { describe, expect, it } from 'bun:test';
import { readHealthConfig } from '../../src/config';
import { createWebhookDeliverer, DELIVERY_LIMITS } from '../../src/registry/modules/webhooks';
import { walletSignIn } from '../support/auth';
import { databaseKinds } from '../support/database';
import { eventually } from '../support/eventually';
import { memoryLogger, registryFixture } from '../support/registry';
import { addEndpoint, hangingReceiver, healthyReceiver, sendTest } from '../support/webhooks';

for (const kind of databaseKinds) {
  describe(`delivery limits on ${kind}`, () => {
    const fx = registryFixture(kind, { health: readHealthConfig({ MARKET_HEALTH_ALLOW_PRIVATE: 'true' }, 'test') });
    const deliverer = () =>
      createWebhookDeliverer({
        db: fx.database.db,
        clock: fx.clock,
        logger: memoryLogger().logger,
        allowPrivateAddresses: true,
        timeoutMs: 30_000, // the held attempts stay in flight while the test looks
      });

    it('sends one endpoint at most perEndpoint at once and one account at most perAccount, across deliverers; another account goes on', async () => {
      const { perEndpoint, perAccount } = DELIVERY_LIMITS;
      const held = hangingReceiver();
      const healthy = healthyReceiver();
      try {
        const busy = await walletSignIn(fx.request);
        const first = await addEndpoint(fx.request, busy.token, held.url);
        for (let i = 0; i < perEndpoint + 3; i++) await sendTest(fx.request, busy.token, first);
        const [a, b, c] = [deliverer(), deliverer(), deliverer()];
        const rounds = [a.deliverDue(), b.deliverDue()];
        await eventually(
          () => held.state.held,
          (n) => n >= perEndpoint,
          'the first endpoint full',
        );
        expect(await c.deliverDue()).toMatchObject({ attempted: 0 });
        expect(held.state.held).toBe(perEndpoint);

        // The account's other endpoints fill its places, one delivery each, never more.
        const others: string[] = [];
        for (let i = 0; i < perAccount - perEndpoint + 2; i++) others.push(await addEndpoint(fx.request, busy.token, `${held.url}/${i}`));
        for (const id of others) await sendTest(fx.request, busy.token, id);
        const more = c.deliverDue();
        await eventually(
          () => held.state.held,
          (n) => n >= perAccount,
          'the account full',
        );
        expect(await a.deliverDue()).toMatchObject({ attempted: 0 });
        expect(held.state.held).toBe(perAccount);

        // Another account is not held up by the full one.
        const other = await walletSignIn(fx.request);
        await sendTest(fx.request, other.token, await addEndpoint(fx.request, other.token, healthy.url));
        expect(await b.deliverDue()).toMatchObject({ attempted: 1, delivered: 1 });
        held.stop(); // the held attempts end (no answer)
        const ended = await Promise.all([...rounds, more]);
        expect(ended.reduce((n, r) => n + r.attempted, 0)).toBe(perAccount);
      } finally {
        held.stop();
        healthy.stop();
      }
    }, 60_000);
  });
}
