/**
 * The dashboard's Webhooks section in a real Chromium, signed in with an injected wallet, against
 * a registry on a local marketplace (private addresses allowed) with a real receiver on loopback:
 * the empty and error states, adding an endpoint (its secret once, with the keyboard), a test
 * event delivered and shown with its attempt, turning it off, removing it, and phone width.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { Webhook } from 'standardwebhooks';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { systemClock } from '../../src/registry/context';
import { createWebhookDeliverer } from '../../src/registry/modules/webhooks';
import { memoryLogger } from '../support/registry';
import { isWebhookDelivery } from '../support/webhooks';
import { injectWallet, launchBrowser, newContext, pageErrors, screenshot, startWebRegistry, type WebRegistry } from '../support/web';

let registry: WebRegistry;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let errors: string[];
const received: { headers: Record<string, string>; body: string }[] = [];
let receiver: ReturnType<typeof Bun.serve>;

beforeAll(async () => {
  receiver = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(request) {
      if (!isWebhookDelivery(request)) return new Response('not a webhook', { status: 404 });
      received.push({ headers: Object.fromEntries(request.headers), body: await request.text() });
      return new Response('thanks');
    },
  });
  [registry, browser] = await Promise.all([startWebRegistry({ env: { MARKET_HEALTH_ALLOW_PRIVATE: 'true' } }), launchBrowser()]);
  context = await newContext(browser, 'desktop', registry.url);
  await injectWallet(context, privateKeyToAccount(generatePrivateKey()), 8453);
  page = await context.newPage();
  errors = pageErrors(page);
  await page.goto('/signin?next=/dashboard/webhooks');
  await page.getByRole('button', { name: 'Sign in with Test Wallet' }).click();
  await page.getByRole('navigation', { name: 'Dashboard' }).waitFor();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await registry?.close();
  receiver?.stop(true);
});

describe('the Webhooks section', () => {
  it('says what it is for when empty, and shows the registry’s error when it cannot load', async () => {
    await page.goto('/dashboard/webhooks');
    await page.getByText('No webhooks yet').waitFor();
    await screenshot(page, 'dashboard-webhooks-empty');
    await page.route(
      (url) => url.pathname === '/webhooks', // the API, not the page
      (route) =>
        route.fulfill({
          status: 503,
          contentType: 'application/json',
          headers: { 'x-request-id': 'req-test-42' },
          body: JSON.stringify({ error: 'Database unavailable', code: 'UNAVAILABLE', requestId: 'req-test-42' }),
        }),
      { times: 1 },
    );
    await page.goto('/dashboard/webhooks');
    const alert = page.getByRole('alert');
    await alert.getByText('Could not load your webhooks').waitFor();
    expect(await alert.textContent()).toContain('req-test-42');
  });

  it('adds an endpoint with the keyboard, shows its secret once, and delivers a signed test event the log then shows', async () => {
    await page.goto('/dashboard/webhooks');
    await page.getByText('No webhooks yet').waitFor();
    await page.getByRole('button', { name: 'New webhook' }).click();
    const dialog = page.getByRole('dialog', { name: 'New webhook' });
    await page.waitForFunction('document.activeElement?.id === "webhook-url"');
    await page.keyboard.type(`http://127.0.0.1:${receiver.port}/hooks`);
    await dialog.getByLabel(/review\.created/).check();
    await page.keyboard.press('Enter');
    const shown = page.getByRole('dialog', { name: 'Your webhook secret' });
    await shown.getByText('Copy it now: it is shown only this once.').waitFor();
    const secret = await shown.getByLabel(/Signing secret/).inputValue();
    expect(secret).toMatch(/^whsec_/);
    await screenshot(page, 'dashboard-webhook-created');
    await shown.getByRole('button', { name: 'Done' }).click();
    const card = page.locator('.webhook').first();
    await card.getByText('call.paid, review.created').waitFor();
    expect(await page.content()).not.toContain(secret);

    await card.getByRole('button', { name: 'Send test event' }).click();
    await card.getByText('No deliveries yet', { exact: false }).or(card.locator('.delivery')).first().waitFor();
    // The registry's deliverer (off in tests) sends what was stored.
    const deliverer = createWebhookDeliverer({
      db: registry.database.db,
      clock: systemClock,
      logger: memoryLogger().logger,
      allowPrivateAddresses: true,
    });
    expect(await deliverer.deliverDue()).toMatchObject({ delivered: 1 });
    const [request] = received;
    expect(new Webhook(secret).verify(request!.body, request!.headers)).toMatchObject({ type: 'webhook.test' });
    await card.getByRole('button', { name: 'Hide deliveries' }).click();
    await card.getByRole('button', { name: 'Deliveries' }).click();
    await card.getByText('HTTP 200').waitFor();
    expect(await card.locator('.delivery').first().textContent()).toContain('delivered');
    await screenshot(page, 'dashboard-webhooks');

    // Off, then removed after confirmation.
    await card.getByRole('button', { name: 'Turn off' }).click();
    await card.getByText('off', { exact: true }).waitFor();
    await card.getByRole('button', { name: /^Remove / }).click();
    await page.getByRole('dialog', { name: 'Remove this webhook?' }).getByRole('button', { name: 'Remove the webhook' }).click();
    await page.getByText('No webhooks yet').waitFor();
  });

  it('fits a phone without sideways scrolling', async () => {
    const token = (await context.cookies()).find((c) => c.name === 'market_token')!.value;
    const made = await registry.request('/webhooks', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({
        url: `http://127.0.0.1:${receiver.port}/a/rather/long/path/that/must/wrap/on/a/phone`,
        events: ['call.paid'],
      }),
    });
    expect(made.status).toBe(201);
    const phone = await newContext(browser, 'phone', registry.url);
    await phone.addCookies(await context.cookies());
    const small = await phone.newPage();
    await small.goto('/dashboard/webhooks');
    await small.locator('.webhook').getByRole('button', { name: 'Send test event' }).waitFor();
    const width = (await small.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth')) as number;
    expect(width).toBeLessThanOrEqual(0);
    await screenshot(small, 'dashboard-webhooks-phone');
    await phone.close();
  });

  it('raised no error in the page', () => {
    expect(errors).toEqual([]);
  });
});
