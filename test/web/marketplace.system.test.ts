/**
 * The public pages in a real Chromium over a seeded catalogue: the marketplace (search as you
 * type, filters, sorts, cursor paging), the skill page (details, schemas, chart, snippets, view
 * count, favourite) and the creator page, each with its loading, empty and error states (an API
 * error shows the registry's message and request id), by keyboard and at phone width.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import type { Browser, BrowserContext, Page, Route } from 'playwright-core';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { bearer, jsonPost, walletSignIn } from '../support/auth';
import { confirmReportedPayments, newCreator, txHash, type Creator } from '../support/catalogue';
import { injectWallet, launchBrowser, newContext, pageErrors, screenshot, startWebRegistry, type WebRegistry } from '../support/web';

let registry: WebRegistry;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let errors: string[];
let alice: Creator;
let bob: Creator;
let lonely: { address: string };
const translator = { slug: '', id: '' };

const TRANSLATE_SCHEMA = {
  type: 'object',
  required: ['text', 'to'],
  properties: {
    text: { type: 'string', description: 'The text to translate' },
    to: { type: 'string', enum: ['fr', 'de', 'es'], description: 'Target language' },
    formal: { type: 'boolean' },
  },
};

beforeAll(async () => {
  [registry, browser] = await Promise.all([startWebRegistry(), launchBrowser()]);
  const request = registry.request;
  [alice, bob] = await Promise.all([newCreator(request), newCreator(request)]);
  lonely = { address: (await walletSignIn(request)).creator.walletAddress };
  const text = await alice.group('Text tools');
  const data = await bob.group('Data');
  const register = async (creator: Creator, body: Record<string, unknown>) => {
    const res = await request(
      '/skills',
      jsonPost({ endpoint: 'https://skills.example.com', paymentAddress: creator.address, ...body }, bearer(creator.key)),
    );
    if (res.status !== 201) throw new Error(`register: ${res.status} ${await res.text()}`);
    return (await res.json()) as { slug: string; id: string };
  };
  const t = await register(alice, {
    name: 'translate',
    price: '$0.002',
    description: 'Translate short texts between English, French, German and Spanish.',
    groups: [text.name],
    inputSchema: TRANSLATE_SCHEMA,
    outputSchema: { type: 'object', properties: { translation: { type: 'string' } } },
  });
  Object.assign(translator, t);
  await register(alice, {
    name: 'summarize',
    price: '$0.01',
    description: 'Summarize a long article into three sentences.',
    groups: [text.name],
  });
  // Enough data skills for two pages of 24.
  for (let i = 0; i < 28; i++) {
    await register(bob, {
      name: `dataset-${String(i).padStart(2, '0')}`,
      price: `$0.${String(100 + i).padStart(4, '0')}`,
      description: `Rows of dataset number ${i}.`,
      groups: [data.name],
    });
  }
  // Some paid calls, so "most called" has an order (they count once their payments are verified).
  for (const n of [1, 2, 3])
    await request('/analytics/call', jsonPost({ skillId: t.id, amount: '0.002', paymentRef: txHash(n) }, bearer(alice.key)));
  await confirmReportedPayments(registry.database.db, new Date());
  context = await newContext(browser, 'desktop', registry.url);
  await injectWallet(context, privateKeyToAccount(generatePrivateKey()), 8453);
  page = await context.newPage();
  errors = pageErrors(page);
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await registry?.close();
});

const cards = () => page.locator('.skill-grid:not([aria-hidden]) > li');
/** Waits until exactly `n` cards are listed. */
const cardCount = (n: number) => page.waitForFunction(`document.querySelectorAll('.skill-grid:not([aria-hidden]) h3').length === ${n}`);
const cardNames = () => page.locator('.skill-grid:not([aria-hidden]) h3').allTextContents();

/** Holds every request matching `pattern` until `release()`: the view's loading state stays on screen. */
async function holdRequests(target: Page, pattern: string | RegExp) {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const handler = async (route: Route) => {
    await gate;
    // A request the page gave up on (it navigated) is already finished.
    await route.continue().catch(() => undefined);
  };
  await target.route(pattern, handler);
  return async () => {
    await target.unroute(pattern, handler);
    release();
  };
}

describe('marketplace', () => {
  it('shows placeholder cards while the skills load, then the cards', async () => {
    const release = await holdRequests(page, /\/skills\?/);
    await page.goto('/');
    await page.locator('.card-skeleton').first().waitFor();
    expect(await page.locator('[aria-busy="true"]').count()).toBe(1);
    await screenshot(page, 'marketplace-loading');
    await release();
    await cards().first().waitFor();
    expect(await page.locator('.card-skeleton').count()).toBe(0);
  });

  it('loads without layout shift: placeholders hold the space the cards take', async () => {
    await page.goto('/');
    await cards().first().waitFor();
    // Layout shifts the browser measured since navigation (Cumulative Layout Shift, as Web Vitals count it).
    const shift = (await page.evaluate(`new Promise((resolve) => {
      let total = 0;
      new PerformanceObserver((list) => {
        for (const entry of list.getEntries()) if (!entry.hadRecentInput) total += entry.value;
      }).observe({ type: 'layout-shift', buffered: true });
      setTimeout(() => resolve(total), 50);
    })`)) as number;
    console.log(`marketplace layout shift: ${shift.toFixed(4)}`);
    expect(shift).toBeLessThan(0.01);
  });

  it('lists skills with name, description, price in USDC, creator, calls and buyers', async () => {
    await page.goto('/');
    await cards().first().waitFor();
    expect(await cards().count()).toBe(24);
    const card = cards().filter({ hasText: 'translate' }).first();
    await page.getByLabel('Sort by').selectOption('popular');
    await page.waitForURL('**/?sort=popular');
    await page.locator('.skill-grid h3').first().filter({ hasText: 'translate' }).waitFor();
    const text = await card.textContent();
    expect(text).toContain('Translate short texts');
    expect(text).toContain('$0.002 USDC');
    expect(text).toContain('Calls3');
    expect(text).toContain('RatingNo reviews');
    expect(text).toContain('Buyers1');
    expect(text).toContain(`${alice.address.slice(0, 6)}…${alice.address.slice(-4)}`);
    await screenshot(page, 'marketplace');
  });

  it('searches as you type, with the words in the address', async () => {
    await page.goto('/');
    await cards().first().waitFor();
    await page.getByLabel('Search skills').pressSequentially('translat', { delay: 20 });
    await page.waitForURL('**/?q=translat');
    await cardCount(1);
    expect(await cardNames()).toEqual(['translate']);
    expect(await page.getByLabel('Sort by').inputValue()).toBe('relevance');
  });

  it('filters by group and by price, and sorts by price', async () => {
    await page.goto('/');
    await cards().first().waitFor();
    await page.getByLabel('Group').selectOption({ label: 'Text tools' });
    await page.waitForURL(/group=text-tools/);
    await cardCount(2);
    expect((await cardNames()).sort()).toEqual(['summarize', 'translate']);
    await page.getByLabel('Max price (USDC)').fill('0.005');
    await page.getByLabel('Max price (USDC)').press('Enter');
    await page.waitForURL(/maxPrice=0.005/);
    await cardCount(1);
    expect(await cardNames()).toEqual(['translate']);
    await page.goto('/?group=data&sort=price');
    await cards().first().waitFor();
    expect((await cardNames()).slice(0, 3)).toEqual(['dataset-00', 'dataset-01', 'dataset-02']);
  });

  it('pages with the registry cursor: "Show more skills" appends the next page', async () => {
    await page.goto('/?sort=price');
    await cards().first().waitFor();
    expect(await cards().count()).toBe(24);
    await page.getByRole('button', { name: 'Show more skills' }).click();
    await cardCount(30);
    const names = await cardNames();
    expect(new Set(names).size).toBe(30);
    expect(await page.getByRole('button', { name: 'Show more skills' }).count()).toBe(0);
  });

  it('says when nothing matches', async () => {
    await page.goto('/?q=zebra-unicorn');
    await page.getByText('No skills match').waitFor();
    await screenshot(page, 'marketplace-no-match');
  });

  it("shows the registry's error message and request id when the search is refused", async () => {
    await page.goto('/?maxPrice=lots');
    const alert = page.getByRole('alert');
    await alert.waitFor();
    const message = await alert.locator('.error-message').textContent();
    expect(message).toContain('maxPrice');
    const requestId = await alert.locator('.request-id').textContent();
    expect(requestId).toMatch(/^[0-9a-zA-Z-]{8,}$/);
    await screenshot(page, 'marketplace-error');
    // The same request answers the same message: the page shows the registry's words.
    const direct = await registry.request('/skills?maxPrice=lots&limit=24');
    expect(((await direct.json()) as { error: string }).error).toBe(message!);
  });

  it('opens a skill from its card with the keyboard', async () => {
    await page.goto('/?q=translate');
    await cards().first().waitFor();
    const link = page.getByRole('link', { name: 'translate', exact: true });
    await link.focus();
    await page.keyboard.press('Enter');
    await page.waitForURL((url) => url.pathname === `/skill/${translator.slug}`);
    await page.getByRole('heading', { name: 'translate', level: 1 }).waitFor();
    await page.waitForFunction("document.activeElement?.tagName === 'H1'", undefined, { timeout: 2000 }).catch(() => {});
    expect(await page.evaluate('document.activeElement?.outerHTML')).toStartWith('<h1');
    expect(errors).toEqual([]);
  });
});

describe('skill page', () => {
  it('shows price, network, endpoint, readable schemas, counters, the chart and copy-ready snippets', async () => {
    await page.goto(`/skill/${translator.slug}`);
    await page.locator('.chart canvas').waitFor();
    const body = await page.locator('main').textContent();
    expect(body).toContain('$0.002');
    expect(body).toContain('Base');
    expect(body).toContain('https://skills.example.com/translate');
    const input = page.locator('.schema table').first();
    expect(await input.textContent()).toContain('Target language');
    expect(await input.locator('tr', { hasText: 'text' }).first().textContent()).toContain('required');
    expect(await page.locator('.stats').textContent()).toContain('Calls3');
    expect(await page.locator('.chart figcaption').textContent()).toContain('3 in all');
    const snippets = await page.locator('.snippets').textContent();
    expect(snippets).toContain(`market.call("${translator.slug}", {"text":"text","to":"fr"})`);
    expect(snippets).toContain(`market call '${translator.slug}'`);
    expect(snippets).toContain(`--api-url '${registry.url}'`);
    expect(snippets).toContain(`curl -i -X POST 'https://skills.example.com/translate'`);
    // Try it is generated from the input schema.
    expect(await page.getByLabel('to').evaluate((el) => el.tagName)).toBe('SELECT');
    expect(await page.getByLabel('formal').getAttribute('type')).toBe('checkbox');
    await screenshot(page, 'skill');
  });

  it('records a view when the page opens', async () => {
    const res = await registry.request(
      '/skills',
      jsonPost(
        {
          name: 'just-listed',
          endpoint: 'https://skills.example.com',
          paymentAddress: alice.address,
          price: '$0.001',
          groups: ['Text tools'],
        },
        bearer(alice.key),
      ),
    );
    const fresh = (await res.json()) as { id: string; slug: string };
    const views = async () => ((await (await registry.request(`/analytics/${fresh.id}`)).json()) as { viewCount: number }).viewCount;
    expect(await views()).toBe(0);
    const viewed = page.waitForResponse((r) => r.url().endsWith('/analytics/view') && r.status() === 200);
    await page.goto(`/skill/${fresh.slug}`);
    await viewed;
    expect(await views()).toBe(1);
  });

  it('offers a favourite button only when signed in, and it changes the count', async () => {
    await page.goto(`/skill/${translator.slug}`);
    await page.locator('.chart canvas').waitFor();
    expect(await page.getByRole('button', { name: /favourites/ }).count()).toBe(0);
    await page.goto(`/signin?next=/skill/${translator.slug}`);
    await page.getByRole('button', { name: 'Sign in with Test Wallet' }).click();
    await page.waitForURL((url) => url.pathname === `/skill/${translator.slug}`);
    const button = page.getByRole('button', { name: '☆ Add to favourites' });
    await button.click();
    await page.getByRole('button', { name: '★ Favourited' }).waitFor();
    expect(await page.locator('.stats').textContent()).toContain('Favourites1');
    expect(((await (await registry.request(`/skills/${translator.slug}`)).json()) as { favoriteCount: number }).favoriteCount).toBe(1);
    await page.getByRole('button', { name: '★ Favourited' }).click();
    await page.getByRole('button', { name: '☆ Add to favourites' }).waitFor();
    expect(await page.locator('.stats').textContent()).toContain('Favourites0');
  });

  it('shows a loading placeholder, then for an unknown skill the 404 message with its request id', async () => {
    const release = await holdRequests(page, /\/skills\/no-such-skill$/);
    await page.goto('/skill/no-such-skill');
    await page.getByRole('status', { name: 'Loading the skill' }).waitFor();
    await release();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    expect(await alert.locator('.error-message').textContent()).toBe('Skill not found');
    expect(await alert.locator('.request-id').textContent()).toMatch(/\S{8,}/);
    await screenshot(page, 'skill-not-found');
  });
});

describe('creator page', () => {
  it("shows the creator's profile and active skills", async () => {
    await page.goto(`/creator/${alice.address}`);
    await cards().first().waitFor();
    expect(await page.locator('main').textContent()).toContain(alice.address);
    // just-listed came from the view test above.
    expect((await cardNames()).sort()).toEqual(['just-listed', 'summarize', 'translate']);
    await screenshot(page, 'creator');
  });

  it('says when a creator has no active skills', async () => {
    await page.goto(`/creator/${lonely.address}`);
    await page.getByText('No active skills').waitFor();
  });

  it('shows the error message and request id for an unknown creator', async () => {
    await page.goto('/creator/0x00000000000000000000000000000000000000aa');
    const alert = page.getByRole('alert');
    await alert.waitFor();
    expect(await alert.locator('.error-message').textContent()).toBe('Creator not found');
    expect(await alert.locator('.request-id').count()).toBe(1);
    expect(errors).toEqual([]);
  });
});

describe('at phone width', () => {
  it('fits the marketplace, a skill and a creator in 390 px', async () => {
    const phone = await newContext(browser, 'phone', registry.url);
    const small = await phone.newPage();
    for (const [path, name, ready] of [
      ['/', 'marketplace', '.skill-grid h3'],
      [`/skill/${translator.slug}`, 'skill', '.chart canvas'],
      [`/creator/${alice.address}`, 'creator', '.skill-grid h3'],
    ] as const) {
      await small.goto(path);
      await small.locator(ready).first().waitFor();
      expect(await small.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
      await screenshot(small, name);
    }
    await phone.close();
  });
});
