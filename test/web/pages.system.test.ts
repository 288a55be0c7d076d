/**
 * The web face's foundation in a real Chromium: pages served by the registry beside an unchanged
 * API, the JavaScript budget, wallet sign-in with an injected EIP-6963 wallet (one signature,
 * HttpOnly cookies, refresh by itself, sign out), the dashboard frame, keyboard use, phone width.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { gzipSync } from 'bun';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { privateKeyToAccount, generatePrivateKey } from 'viem/accounts';
import {
  injectWallet,
  launchBrowser,
  newContext,
  screenshot,
  startWebRegistry,
  VIEWPORTS,
  type TestWallet,
  walletPage,
  type WebRegistry,
} from '../support/web';

let registry: WebRegistry;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let wallet: TestWallet;
let errors: string[];

beforeAll(async () => {
  [registry, browser] = await Promise.all([startWebRegistry(), launchBrowser()]);
  ({ context, wallet, page, errors } = await walletPage(browser, registry.url, privateKeyToAccount(generatePrivateKey()), 8453));
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await registry?.close();
});

async function assetsOf(html: string): Promise<{ path: string; type: string | null; bytes: Uint8Array<ArrayBuffer> }[]> {
  const paths = [...html.matchAll(/(?:src|href)="(\/[^"]+\.(?:js|css))"/g)].map((m) => m[1]!);
  return Promise.all(
    paths.map(async (path) => {
      const res = await registry.request(path);
      expect(res.status).toBe(200);
      return { path, type: res.headers.get('content-type'), bytes: new Uint8Array(await res.arrayBuffer()) as Uint8Array<ArrayBuffer> };
    }),
  );
}

describe('pages beside the API', () => {
  it('answers the page paths with the app and leaves API answers as JSON', async () => {
    for (const path of [
      '/',
      '/skill/some-skill',
      '/creator/0x0000000000000000000000000000000000000001',
      '/signin',
      '/dashboard',
      '/dashboard/keys',
    ]) {
      const res = await registry.request(path);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toContain('text/html');
      expect(await res.text()).toContain('<div id="app">');
    }
    const skills = await registry.request('/skills');
    expect(skills.headers.get('content-type')).toContain('application/json');
    expect(await skills.json()).toEqual([]);
    const missing = await registry.request('/skills/nope');
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ error: 'Skill not found', code: 'NOT_FOUND' });
    const unknown = await registry.request('/no-such-page');
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ code: 'NOT_FOUND' });
  });

  it('serves its scripts and styles from the registry, within 200 kB of gzipped JavaScript', async () => {
    const assets = await assetsOf(await (await registry.request('/')).text());
    const scripts = assets.filter((a) => a.path.endsWith('.js'));
    expect(scripts.length).toBeGreaterThan(0);
    expect(assets.some((a) => a.path.endsWith('.css'))).toBe(true);
    for (const a of scripts) expect(a.type).toContain('javascript');
    const gzipped = scripts.reduce((sum, a) => sum + gzipSync(a.bytes).length, 0);
    const raw = scripts.reduce((sum, a) => sum + a.bytes.length, 0);
    console.log(`page JavaScript: ${(raw / 1024).toFixed(1)} kB, ${(gzipped / 1024).toFixed(1)} kB gzipped`);
    expect(gzipped).toBeLessThanOrEqual(200 * 1024);
  });

  it('gives the page the registry settings it needs', async () => {
    const config = await (await registry.request('/web/config')).json();
    expect(config).toEqual({
      publicUrl: registry.url,
      network: { id: 'eip155:8453', name: 'Base', chainId: 8453 },
      asset: { address: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913', decimals: 6 },
      explorer: { name: 'BaseScan', url: 'https://basescan.org' },
      privyAppId: null,
      devMode: false,
      listAfterFirstCheck: false,
    });
  });
});

describe('content security policy', () => {
  it('runs only the registry own scripts: an injected inline script is refused', async () => {
    const violations: string[] = [];
    page.on('console', (m) => m.text().includes('Content Security Policy') && violations.push(m.text()));
    await page.goto('/');
    await page.getByLabel('Search skills').waitFor();
    await page.evaluate(
      `(() => { const s = document.createElement('script'); s.textContent = 'window.__injected = true'; document.body.append(s); })()`,
    );
    expect(await page.evaluate('window.__injected === true')).toBe(false);
    expect(violations.length).toBeGreaterThan(0);
    // That refusal is the point of this test, not a page error.
    errors.length = 0;
  });
});

describe('an empty marketplace', () => {
  it('says there are no skills yet, with a search box and filters', async () => {
    await page.goto('/');
    await page.getByText('No skills yet').waitFor();
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Find a skill, pay per call');
    expect(await page.getByLabel('Search skills').isVisible()).toBe(true);
    expect(await page.getByLabel('Sort by').isVisible()).toBe(true);
    await screenshot(page, 'marketplace-empty');
    expect(errors).toEqual([]);
  });
});

describe('wallet sign-in', () => {
  it('lists the wallet found by EIP-6963 and keeps you signed out when you decline the signature', async () => {
    await page.goto('/signin');
    const button = page.getByRole('button', { name: 'Sign in with Test Wallet' });
    await button.waitFor();
    wallet.declineNext();
    await button.click();
    await page.getByText('You declined the request in your wallet.').waitFor();
    expect(await page.getByRole('button', { name: 'Sign out' }).count()).toBe(0);
    expect(await button.isEnabled()).toBe(true);
    expect((await context.cookies()).filter((c) => c.name.startsWith('market_'))).toEqual([]);
  });

  it('signs in with one signature of the registry challenge and sets HttpOnly session cookies', async () => {
    const before = wallet.requests.length;
    await page.goto('/signin?next=/dashboard/keys');
    await page.getByRole('button', { name: 'Sign in with Test Wallet' }).click();
    await page.waitForURL((url) => url.pathname === '/dashboard/keys');
    await page.getByRole('heading', { name: 'API keys', level: 1 }).waitFor();
    const signed = wallet.requests.slice(before).filter((r) => r.method === 'personal_sign');
    expect(signed).toHaveLength(1);
    const message = Buffer.from((signed[0]!.params[0] as string).slice(2), 'hex').toString('utf8');
    expect(message).toContain(`${new URL(registry.url).host} wants you to sign in with your Ethereum account:`);
    expect(message).toContain(wallet.account.address);
    const cookies = await context.cookies();
    const names = cookies
      .filter((c) => c.httpOnly)
      .map((c) => c.name)
      .sort();
    expect(names).toEqual(['market_refresh', 'market_token']);
    expect(await page.evaluate('document.cookie')).toBe('');
    const short = `${wallet.account.address.slice(0, 6)}…${wallet.account.address.slice(-4)}`;
    expect(await page.locator('.account-slot').textContent()).toContain(short);
    await screenshot(page, 'dashboard');
    await page.setViewportSize(VIEWPORTS.phone);
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(VIEWPORTS.phone.width);
    await screenshot(page, 'dashboard');
    await page.setViewportSize(VIEWPORTS.desktop);
  });

  it('stays signed in after the access cookie is gone, by refreshing the session itself', async () => {
    const refresh = (await context.cookies()).find((c) => c.name === 'market_refresh')!;
    await context.clearCookies({ name: 'market_token' });
    await page.goto('/dashboard');
    await page.getByRole('navigation', { name: 'Dashboard' }).waitFor();
    const cookies = await context.cookies();
    expect(cookies.some((c) => c.name === 'market_token')).toBe(true);
    // The refresh token rotated: the old one was used once.
    expect(cookies.find((c) => c.name === 'market_refresh')!.value).not.toBe(refresh.value);
  });

  it('signs out: the cookies are cleared and the dashboard asks to sign in', async () => {
    await page.goto('/dashboard');
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('link', { name: 'Sign in' }).first().waitFor();
    expect((await context.cookies()).filter((c) => c.name.startsWith('market_') && c.value)).toEqual([]);
    await page.goto('/dashboard');
    await page.getByText('Sign in to manage your skills').waitFor();
    expect(errors).toEqual([]);
  });
});

describe('keyboard and small screens', () => {
  it('starts with a skip link that moves focus to the content, then reaches the search box', async () => {
    await page.goto('/');
    await page.getByText('No skills yet').waitFor();
    await page.keyboard.press('Tab');
    expect(await page.evaluate('document.activeElement?.textContent')).toBe('Skip to content');
    await page.keyboard.press('Enter');
    expect(await page.evaluate('document.activeElement?.id')).toBe('main');
    await page.keyboard.press('Tab');
    expect(await page.evaluate('document.activeElement?.id')).toBe('search');
  });

  it('fits a 390 px phone screen without sideways scrolling', async () => {
    const phone = await newContext(browser, 'phone', registry.url);
    await injectWallet(phone, wallet.account, 8453);
    const small = await phone.newPage();
    for (const [path, ready, name] of [
      ['/', 'No skills yet', 'marketplace-empty'],
      ['/signin', 'Sign in with Test Wallet', 'signin'],
    ] as const) {
      await small.goto(path);
      await small.getByText(ready).first().waitFor();
      expect(await small.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
      await screenshot(small, name);
    }
    await phone.close();
  });
});

describe('the demo wallet of `market dev`', () => {
  it('is offered only in dev mode, and signs in through the dev endpoints as an EIP-1193 provider', async () => {
    await page.goto('/signin');
    await page.getByRole('button', { name: 'Sign in with Test Wallet' }).waitFor();
    expect(await page.getByRole('button', { name: /Demo wallet/ }).count()).toBe(0);

    const dev = await startWebRegistry({ overrides: { devTools: true } });
    const demo = privateKeyToAccount(generatePrivateKey());
    const devContext = await newContext(browser, 'desktop', dev.url);
    // The dev server's two endpoints (added by `market dev`), answered here by the test's key.
    await devContext.route('**/dev/demo-wallet', (route) => route.fulfill({ json: { address: demo.address, label: 'Demo wallet' } }));
    await devContext.route('**/dev/demo-wallet/sign', async (route) => {
      const { method, params } = route.request().postDataJSON() as { method: string; params: [string, string] };
      expect(method).toBe('personal_sign');
      await route.fulfill({ json: { result: await demo.signMessage({ message: { raw: params[0] as `0x${string}` } }) } });
    });
    const devPage = await devContext.newPage();
    await devPage.goto('/signin?next=/dashboard');
    await devPage.getByRole('button', { name: 'Sign in with Demo wallet (dev only)' }).click();
    await devPage.getByRole('navigation', { name: 'Dashboard' }).waitFor();
    expect(await devPage.locator('.account-slot').textContent()).toContain(demo.address.slice(0, 6));
    await devContext.close();
    await dev.close();
  });
});
