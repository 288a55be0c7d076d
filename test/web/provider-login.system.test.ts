/**
 * Email and social sign-in through the identity provider (Privy) on /signin, in a real Chromium.
 *
 * The provider's server is simulated at the network edge (test/support/web/privy.ts: playwright
 * answers the page's HTTPS requests to the provider as the provider does, with ES256 tokens signed
 * by a test key); the provider's SDK in the page, the page, and the registry's verification of the
 * token at POST /auth/privy (configured with PRIVY_VERIFICATION_KEY for that key) are all real.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { privateKeyToAccount, generatePrivateKey } from 'viem/accounts';
import { providerKeys, PROVIDER_APP_ID } from '../support/auth';
import { eventually } from '../support/eventually';
import {
  launchBrowser,
  newContext,
  pageErrors,
  screenshot,
  simulateProvider,
  SOCIAL_EMAIL,
  startWebRegistry,
  type ProviderSimulation,
  type WebRegistry,
} from '../support/web';

let registry: WebRegistry;
let plain: WebRegistry;
let browser: Browser;
let privateKey: Awaited<ReturnType<typeof providerKeys>>['privateKey'];
const contexts: BrowserContext[] = [];

beforeAll(async () => {
  const keys = await providerKeys();
  privateKey = keys.privateKey;
  [registry, plain, browser] = await Promise.all([
    startWebRegistry({ env: { PRIVY_APP_ID: PROVIDER_APP_ID, PRIVY_VERIFICATION_KEY: keys.publicKeyPem } }),
    startWebRegistry(),
    launchBrowser(),
  ]);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await registry?.close();
  await plain?.close();
});

interface Visit {
  context: BrowserContext;
  page: Page;
  sim: ProviderSimulation;
  errors: string[];
  /** Content-security-policy violations the page reported. */
  violations(): Promise<string[]>;
}

async function visit(viewport: 'desktop' | 'phone' = 'desktop', base = registry.url): Promise<Visit> {
  const context = await newContext(browser, viewport, base);
  contexts.push(context);
  await context.addInitScript(`window.__violations = [];
    document.addEventListener('securitypolicyviolation', (e) => window.__violations.push(e.violatedDirective + ' ' + e.blockedURI));`);
  const sim = await simulateProvider(context, { appId: PROVIDER_APP_ID, privateKey });
  const page = await context.newPage();
  const errors = pageErrors(page);
  return { context, page, sim, errors, violations: () => page.evaluate('window.__violations') as Promise<string[]> };
}

const newAddress = () => privateKeyToAccount(generatePrivateKey()).address;

async function me(context: BrowserContext): Promise<{ status: number; walletAddress?: string }> {
  const cookies = await context.cookies(registry.url);
  const res = await registry.request('/creators/me', { headers: { cookie: cookies.map((c) => `${c.name}=${c.value}`).join('; ') } });
  return { status: res.status, ...((await res.json()) as { walletAddress?: string }) };
}

describe('sign-in with the identity provider (provider simulated at the network edge)', () => {
  it('emails a code, refuses a wrong one, signs in with the right one and lands on the page asked for', async () => {
    const { context, page, sim, errors, violations } = await visit();
    const wallet = newAddress();
    sim.users.set('ada@example.com', { id: `did:privy:${crypto.randomUUID()}`, email: 'ada@example.com', wallet });
    await page.goto('/signin?next=/dashboard/keys');
    await page.getByRole('heading', { name: 'Sign in with email or a social account' }).waitFor();
    await page.getByLabel('Email', { exact: true }).fill('ada@example.com');
    await page.getByRole('button', { name: 'Email me a sign-in code' }).click();
    const codeField = page.getByLabel('Code from the email');
    await codeField.waitFor();
    await page.getByText('We sent a code to ada@example.com').waitFor();
    const code = sim.codes.get('ada@example.com')!;
    expect(code).toMatch(/^\d{6}$/);

    await codeField.fill(code === '000000' ? '111111' : '000000');
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    expect(await alert.textContent()).toContain('That code is not right');
    await screenshot(page, 'signin-provider-wrong-code');

    await codeField.fill(code);
    const exchange = page.waitForRequest((r) => r.url() === `${registry.url}/auth/privy`);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.waitForURL((url) => url.pathname === '/dashboard/keys');
    await page.getByRole('heading', { level: 1, name: 'API keys' }).waitFor();
    const sent = await exchange;
    expect(sent.method()).toBe('POST');
    expect(await sent.headerValue('origin')).toBe(registry.url);
    expect(await sent.headerValue('authorization')).toMatch(/^Bearer ey/);

    expect(await me(context)).toMatchObject({ status: 200, walletAddress: wallet });
    const cookies = await context.cookies(registry.url);
    expect(
      cookies
        .filter((c) => c.name.startsWith('market_'))
        .map((c) => [c.name, c.httpOnly])
        .sort(),
    ).toEqual([
      ['market_refresh', true],
      ['market_token', true],
    ]);
    // The provider's session ended once ours began: no provider token is left in the page.
    expect(sim.loggedOut).toHaveLength(1);
    expect(await page.evaluate(`Object.keys(sessionStorage).filter((k) => /token|refresh|pat/.test(k))`)).toEqual([]);
    expect(cookies.some((c) => c.name.startsWith('privy'))).toBe(false);
    expect(sim.requests).toContain('POST /api/v1/passwordless/authenticate');
    expect(await violations()).toEqual([]);
    expect(errors).toEqual([]);
    await screenshot(page, 'signin-provider-signed-in');
  });

  it('signs in with Google: to the provider and back, the PKCE-checked code exchanged, the next page kept', async () => {
    const { context, page, sim, errors, violations } = await visit();
    const wallet = newAddress();
    sim.users.set(SOCIAL_EMAIL, { id: `did:privy:${crypto.randomUUID()}`, email: SOCIAL_EMAIL, wallet });
    await page.goto('/signin?next=/dashboard/groups');
    await page.getByRole('button', { name: 'Continue with Google' }).click();
    await page.waitForURL((url) => url.pathname === '/dashboard/groups');
    await page.getByRole('heading', { level: 1, name: 'Groups' }).waitFor();
    expect(sim.requests).toEqual(
      expect.arrayContaining(['POST /api/v1/oauth/init', 'GET accounts.google.com (consent)', 'POST /api/v1/oauth/authenticate']),
    );
    expect(await me(context)).toMatchObject({ status: 200, walletAddress: wallet });
    expect(sim.loggedOut).toHaveLength(1);
    expect(await violations()).toEqual([]);
    expect(errors).toEqual([]);
  });

  it('refuses a social login that comes back to another tab (state not issued here), and says so', async () => {
    const { context, page, sim } = await visit();
    await page.goto('/signin?privy_oauth_code=stolen&privy_oauth_state=not-ours&privy_oauth_provider=google');
    const alert = page.getByRole('alert');
    await alert.waitFor();
    expect(await alert.textContent()).toContain('Could not finish signing in');
    expect(await alert.textContent()).toContain('does not belong to this browser tab');
    expect(sim.requests).not.toContain('POST /api/v1/oauth/authenticate');
    expect((await me(context)).status).toBe(401);
  });

  it('shows the registry’s refusal of an account without a wallet, with its request id', async () => {
    const { context, page, sim } = await visit();
    sim.identityTokens = false;
    await page.goto('/signin');
    await page.getByLabel('Email', { exact: true }).fill('new@example.com');
    await page.getByRole('button', { name: 'Email me a sign-in code' }).click();
    await page.getByLabel('Code from the email').fill(await emailedCode(sim, 'new@example.com'));
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    expect(await alert.textContent()).toContain('The provider account has no linked wallet');
    await page.getByText('link a wallet to your account with the sign-in service').waitFor();
    expect(await alert.locator('.request-id').textContent()).toMatch(/\S+/);
    expect((await me(context)).status).toBe(401);
    await screenshot(page, 'signin-provider-no-wallet');
  });

  it('says when the provider cannot be reached, keeps wallet sign-in, and recovers on Try again', async () => {
    const { page, sim } = await visit('phone');
    sim.unreachable = true;
    await page.goto('/signin');
    const alert = page.getByRole('alert');
    // The SDK retries three times (0.5 s, 1.5 s, 4.5 s) before it gives up.
    await alert.waitFor({ timeout: 20_000 });
    expect(await alert.textContent()).toContain('Email and social sign-in are unavailable');
    expect(await alert.textContent()).toContain('could not be reached');
    expect(await page.getByText('No wallet found in this browser').count()).toBe(1);
    await screenshot(page, 'signin-provider-unreachable');
    sim.unreachable = false;
    await alert.getByRole('button', { name: 'Try again' }).click();
    await page.getByLabel('Email', { exact: true }).waitFor();
  });

  it('works by keyboard alone at phone width', async () => {
    const { context, page, sim, errors } = await visit('phone');
    const wallet = newAddress();
    sim.users.set('kb@example.com', { id: `did:privy:${crypto.randomUUID()}`, email: 'kb@example.com', wallet });
    await page.goto('/signin?next=/dashboard/profile');
    const email = page.getByLabel('Email', { exact: true });
    await email.waitFor();
    // Tab from the top of the page until the email field has focus.
    const focused = () => page.evaluate('document.activeElement?.id') as Promise<string | undefined>;
    for (let i = 0; i < 30 && (await focused()) !== 'provider-email'; i++) await page.keyboard.press('Tab');
    expect(await focused()).toBe('provider-email');
    await page.keyboard.type('kb@example.com');
    await page.keyboard.press('Enter');
    const codeField = page.getByLabel('Code from the email');
    await codeField.waitFor();
    // The code field takes focus as it appears.
    await page.waitForFunction("document.activeElement?.id === 'provider-code'", undefined, { timeout: 2000 }).catch(() => {});
    expect(await focused()).toBe('provider-code');
    await screenshot(page, 'signin-provider-code');
    await page.keyboard.type(await emailedCode(sim, 'kb@example.com'));
    await page.keyboard.press('Enter');
    await page.waitForURL((url) => url.pathname === '/dashboard/profile');
    expect(await me(context)).toMatchObject({ status: 200, walletAddress: wallet });
    const overflow = await page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth');
    expect(overflow).toBe(0);
    expect(errors).toEqual([]);
  });

  it('loads the provider SDK only on /signin, and never when the registry does not offer provider login', async () => {
    const { page, sim } = await visit();
    const scripts: string[] = [];
    page.on('request', (r) => r.resourceType() === 'script' && scripts.push(new URL(r.url()).pathname));
    await page.goto('/');
    await page.getByRole('heading', { level: 1 }).waitFor();
    await page.waitForLoadState('networkidle');
    const onMarketplace = [...scripts];
    expect(sim.requests).toEqual([]);
    await page.goto('/signin');
    await page.getByLabel('Email', { exact: true }).waitFor();
    const extra = scripts.slice(onMarketplace.length).filter((s) => !onMarketplace.includes(s));
    const carriesSdk = async (path: string) => (await (await registry.request(path)).text()).includes('auth.privy.io');
    expect(await Promise.all(onMarketplace.map(carriesSdk))).not.toContain(true);
    expect(await Promise.all(extra.map(carriesSdk))).toContain(true);

    const other = await visit('desktop', plain.url);
    await other.page.goto('/signin');
    await other.page.getByText('No wallet found in this browser').waitFor();
    await other.page.waitForLoadState('networkidle');
    expect(await other.page.getByText('Sign in with email or a social account').count()).toBe(0);
    expect(other.sim.requests).toEqual([]);
  });

  it('a page on another site cannot use the exchange to plant a session (no CORS for it)', async () => {
    const { context, page } = await visit();
    const { providerToken } = await import('../support/auth');
    const token = await providerToken(privateKey, { wallet: newAddress() });
    await context.route('https://evil.example/**', (route) =>
      route.fulfill({ status: 200, headers: { 'content-type': 'text/html' }, body: '<!doctype html><title>evil</title>' }),
    );
    await page.goto('https://evil.example/');
    const outcome = await page.evaluate(
      async ([url, token]) => {
        try {
          const res = await fetch(url!, { method: 'POST', credentials: 'include', headers: { authorization: `Bearer ${token}` } });
          return `answered ${res.status}`;
        } catch (error) {
          return `refused: ${(error as Error).name}`;
        }
      },
      [`${registry.url}/auth/privy`, token],
    );
    expect(outcome).toBe('refused: TypeError');
    expect((await context.cookies(registry.url)).filter((c) => c.name.startsWith('market_'))).toEqual([]);
  });
});

/** The code the provider emailed to `email`, once it has sent one. */
async function emailedCode(sim: ProviderSimulation, email: string): Promise<string> {
  return (await eventually(
    () => sim.codes.get(email),
    (code) => code !== undefined,
    `the provider emails a code to ${email}`,
    2_000,
  ))!;
}

afterAll(async () => {
  for (const context of contexts) await context.close().catch(() => undefined);
});
