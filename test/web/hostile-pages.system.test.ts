/**
 * The pages against a hostile world, in a real Chromium: the skill page's snippets quote the
 * listing's endpoint (pasted into a real shell they run only curl, with the endpoint as one
 * argument), a page on another origin cannot frame the signed-in dashboard, and /docs renders the
 * API reference from the registry alone (every other host unreachable) under its content policy.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { eq } from 'drizzle-orm';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { skills } from '../../src/db/schema';
import { json, newCreator, type Creator } from '../support/catalogue';
import { eventually } from '../support/eventually';
import {
  injectWallet,
  launchBrowser,
  newContext,
  pageErrors,
  runInShell,
  screenshot,
  startWebRegistry,
  type WebRegistry,
} from '../support/web';

let registry: WebRegistry;
let browser: Browser;
let creator: Creator;
let group: string;

beforeAll(async () => {
  [registry, browser] = await Promise.all([startWebRegistry(), launchBrowser()]);
  creator = await newCreator(registry.request);
  group = (await creator.group('Tools')).name;
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await registry?.close();
});

/** Registers a skill and answers its slug. */
async function listed(name: string, endpoint: string): Promise<string> {
  const res = await creator.register({
    name,
    endpoint,
    groups: [group],
    inputSchema: { type: 'object', properties: { text: { type: 'string' } } },
  });
  if (res.status !== 201) throw new Error(`register: ${res.status} ${await res.text()}`);
  return (await json<{ slug: string }>(res)).slug;
}

/** The text of the skill page's code block labelled `label`. */
async function snippet(page: Page, label: string): Promise<string> {
  const block = page.locator('.code-block', { has: page.locator('figcaption span', { hasText: new RegExp(`^${label}`) }) });
  return (await block.locator('code').textContent()) ?? '';
}

describe('skill page snippets', () => {
  it('quote a hostile-looking but valid endpoint, and curl gets it as one argument', async () => {
    const slug = await listed('quoted', 'https://skills.example.com/~team/v1?key=abc,def');
    const endpoint = 'https://skills.example.com/~team/v1/quoted?key=abc,def';
    for (const viewport of ['desktop', 'phone'] as const) {
      const context = await newContext(browser, viewport, registry.url);
      const page = await context.newPage();
      const errors = pageErrors(page);
      await page.goto(`/skill/${slug}`);
      await page.locator('.snippets').waitFor();
      const curl = await snippet(page, 'curl');
      expect(curl).toContain(`curl -i -X POST '${endpoint}' \\`);
      expect(runInShell(curl)).toEqual({
        args: [['-i', '-X', 'POST', endpoint, '-H', 'content-type: application/json', '-d', '{"text":"text"}']],
        pwned: false,
        exitCode: 0,
        stderr: '',
      });
      await screenshot(page, 'skill-snippets');
      expect(errors).toEqual([]);
      await context.close();
    }
  });

  it('run nothing but curl and market for an endpoint stored before the registry refused shell metacharacters', async () => {
    const slug = await listed('legacy', 'https://skills.example.com');
    const endpoint = "https://skills.example.com/$(touch$IFS.pwned);touch$IFS'pwned'|'`id`'/legacy";
    await registry.database.db.update(skills).set({ endpoint }).where(eq(skills.slug, slug));
    const context = await newContext(browser, 'desktop', registry.url);
    const page = await context.newPage();
    await page.goto(`/skill/${slug}`);
    await page.locator('.snippets').waitFor();
    expect(await page.locator('main').textContent()).toContain(endpoint);
    const curl = runInShell(await snippet(page, 'curl'));
    expect({ pwned: curl.pwned, stderr: curl.stderr, endpoints: curl.args.map((args) => args[3]) }).toEqual({
      pwned: false,
      stderr: '',
      endpoints: [endpoint],
    });
    const cli = runInShell(await snippet(page, 'CLI'));
    expect({ pwned: cli.pwned, stderr: cli.stderr, calls: cli.args.map((args) => args.slice(0, 2)) }).toEqual({
      pwned: false,
      stderr: '',
      calls: [['call', slug]],
    });
    await context.close();
  });
});

describe('framing', () => {
  let context: BrowserContext;
  let attacker: ReturnType<typeof Bun.serve>;
  beforeAll(async () => {
    context = await newContext(browser, 'desktop', registry.url);
    await injectWallet(context, privateKeyToAccount(generatePrivateKey()), 8453);
    // Another origin on the same host (another port): the same site, so the session cookies go along.
    attacker = Bun.serve({
      hostname: '127.0.0.1',
      port: 0,
      fetch: () =>
        new Response(
          `<!doctype html><title>Win a prize</title><iframe src="${registry.url}/dashboard/keys" width="1000" height="700"></iframe>`,
          {
            headers: { 'content-type': 'text/html' },
          },
        ),
    });
  });
  afterAll(async () => {
    await context?.close();
    attacker?.stop(true);
  });

  it('a page on another origin cannot show the signed-in /dashboard/keys in a frame', async () => {
    const own = await context.newPage();
    await own.goto('/signin?next=/dashboard/keys');
    await own.getByRole('button', { name: 'Sign in with Test Wallet' }).click();
    // Signed in: the keys page shows in the registry's own tab.
    await own.getByRole('button', { name: 'New API key' }).waitFor();

    const page = await context.newPage();
    const refusals: string[] = [];
    page.on('console', (message) => {
      if (message.text().includes("frame-ancestors 'none'")) refusals.push(message.text());
    });
    await page.goto(`http://127.0.0.1:${attacker.port}/`);
    await eventually(
      async () => refusals.length,
      (n) => n > 0,
      'Chromium refusing to frame the dashboard',
      20_000,
    );
    const frame = page.frames().find((f) => f !== page.mainFrame());
    expect(frame).toBeDefined();
    expect(await frame!.locator('text=API keys').count()).toBe(0);
    expect(await frame!.locator('nav').count()).toBe(0);
  });
});

describe('/docs', () => {
  for (const viewport of ['desktop', 'phone'] as const) {
    it(`renders the API reference with every other host unreachable, under its content policy (${viewport})`, async () => {
      const context = await newContext(browser, viewport, registry.url);
      const elsewhere: string[] = [];
      await context.route(
        (url) => url.origin !== registry.url,
        (route) => {
          elsewhere.push(route.request().url());
          return route.abort('internetdisconnected');
        },
      );
      const page = await context.newPage();
      const errors = pageErrors(page);
      const violations: string[] = [];
      page.on('console', (message) => {
        if (message.text().includes('Content Security Policy')) violations.push(message.text());
      });
      await page.goto('/docs');
      await page.locator('.opblock').first().waitFor({ timeout: 30_000 });
      expect(await page.locator('.opblock').count()).toBeGreaterThan(20);
      expect(await page.locator('body').textContent()).toContain('Liveness and database reachability');
      expect(await page.locator('.info .title').textContent()).toContain('Skill Market registry');
      await screenshot(page, 'docs');
      expect(elsewhere).toEqual([]);
      expect(violations).toEqual([]);
      expect(errors).toEqual([]);
      await context.close();
    });
  }
});
