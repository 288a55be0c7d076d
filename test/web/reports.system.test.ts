/**
 * Reports a page at a time in a real Chromium: the operator's queue shows the first 20 open reports
 * and Load more brings the rest, each once; a reporter's My reports lists what they filed, newest
 * first, with what the operators did (the skill hidden, the report dismissed, still open) and
 * never the operators' reasons, older ones on demand. Desktop (1280 px) and phone (390 px) widths,
 * without sideways scrolling on the phone.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { bearer, createKey, jsonPost, walletSignIn } from '../support/auth';
import { skillInput } from '../support/catalogue';
import { injectWallet, launchBrowser, newContext, pageErrors, screenshot, startWebRegistry, type WebRegistry } from '../support/web';

const operatorWallet = privateKeyToAccount(generatePrivateKey());
const creatorWallet = privateKeyToAccount(generatePrivateKey());
const reporterWallet = privateKeyToAccount(generatePrivateKey());
const otherWallet = privateKeyToAccount(generatePrivateKey());
const HIDE_REASON = 'Phishes for keys, as the creator is told';
const DISMISS_REASON = 'Works as described: an internal note';
const SKILLS = 22;

let registry: WebRegistry;
let browser: Browser;
const contexts: BrowserContext[] = [];
const errors: string[][] = [];
/** The reporter's reports, in the order filed (one per skill). */
const filed: { id: string; slug: string }[] = [];

async function signedIn(wallet: typeof operatorWallet, next: string, viewport: 'desktop' | 'phone' = 'desktop'): Promise<Page> {
  const context = await newContext(browser, viewport, registry.url);
  contexts.push(context);
  await injectWallet(context, wallet, 8453);
  const page = await context.newPage();
  errors.push(pageErrors(page));
  await page.goto(`/signin?next=${encodeURIComponent(next)}`);
  await page.getByRole('button', { name: 'Sign in with Test Wallet' }).click();
  await page.waitForURL((url) => url.pathname === next);
  return page;
}

beforeAll(async () => {
  [registry, browser] = await Promise.all([
    startWebRegistry({ env: { OPERATOR_ADDRESSES: operatorWallet.address.toLowerCase(), MARKET_REPORTS_PER_HOUR: '100' } }),
    launchBrowser(),
  ]);
  const creator = await walletSignIn(registry.request, creatorWallet);
  const { key } = await createKey(registry.request, creator.token);
  expect((await registry.request('/groups', jsonPost({ name: 'tools' }, bearer(key)))).status).toBe(201);
  const reporter = await walletSignIn(registry.request, reporterWallet);
  const other = await walletSignIn(registry.request, otherWallet);
  for (let i = 0; i < SKILLS; i++) {
    const name = `tool-${String(i).padStart(2, '0')}`;
    const res = await registry.request(
      '/skills',
      jsonPost(skillInput({ name, paymentAddress: creatorWallet.address, groups: ['tools'] }), bearer(key)),
    );
    expect(res.status).toBe(201);
    const { slug } = (await res.json()) as { slug: string };
    const report = await registry.request(
      '/reports',
      jsonPost({ skillSlug: slug, category: 'spam', text: `Report number ${i}` }, bearer(reporter.token)),
    );
    expect(report.status).toBe(201);
    filed.push({ id: ((await report.json()) as { id: string }).id, slug });
  }
  const another = await registry.request(
    '/reports',
    jsonPost({ skillSlug: filed[0]!.slug, category: 'scam', text: 'Another reporter' }, bearer(other.token)),
  );
  expect(another.status).toBe(201);
  // The operator closes two of the reporter's: the last filed hidden, the one before dismissed.
  const operator = await walletSignIn(registry.request, operatorWallet);
  const last = filed.at(-1)!;
  const hide = await registry.request(
    `/operator/skills/${last.slug}/hide`,
    jsonPost({ reason: HIDE_REASON, reportId: last.id }, bearer(operator.token)),
  );
  expect(hide.status).toBe(200);
  const dismiss = await registry.request(
    `/operator/reports/${filed.at(-2)!.id}/dismiss`,
    jsonPost({ reason: DISMISS_REASON }, bearer(operator.token)),
  );
  expect(dismiss.status).toBe(200);
}, 120_000);

afterAll(async () => {
  for (const context of contexts) await context.close();
  await browser?.close();
  await registry?.close();
});

describe('reports a page at a time', () => {
  it('shows the operator 20 open reports, and the rest with Load more, each once', async () => {
    const page = await signedIn(operatorWallet, '/dashboard/operator');
    const cards = page.locator('.queue-item');
    await cards.nth(19).waitFor();
    expect(await cards.count()).toBe(20);
    await screenshot(page, 'dashboard-operator-paged');
    await page.getByRole('button', { name: 'Load more reports' }).click();
    // 21 open: 22 filed plus another reporter's, less the two closed.
    await cards.nth(20).waitFor();
    await page.getByRole('button', { name: 'Load more reports' }).waitFor({ state: 'detached' });
    expect(await cards.count()).toBe(21);
    const texts = await page.locator('.queue-text').allTextContents();
    expect(new Set(texts).size).toBe(21);
    expect(texts).toContain('Another reporter');
    // Closed: the two, and no Load more.
    await page.getByRole('button', { name: 'Closed' }).click();
    await page.locator('.queue-item').getByText('dismissed').waitFor();
    expect(await cards.count()).toBe(2);
    expect(await page.getByRole('button', { name: 'Load more reports' }).count()).toBe(0);
  });

  it('shows a reporter their reports newest first with what the operators did, and older ones on demand', async () => {
    const page = await signedIn(reporterWallet, '/dashboard/reports');
    await page.getByRole('heading', { name: 'My reports' }).waitFor();
    const table = page.getByRole('table', { name: 'Your reports, newest first' });
    const rows = table.locator('tbody tr');
    await rows.nth(19).waitFor();
    expect(await rows.count()).toBe(20);
    const newest = rows.filter({ hasText: filed.at(-1)!.slug });
    expect(await newest.textContent()).toContain('The operators hid the skill');
    expect(await newest.textContent()).toContain('actioned');
    const dismissed = rows.filter({ hasText: filed.at(-2)!.slug });
    expect(await dismissed.textContent()).toContain('Dismissed: the operators took no action');
    const open = rows.filter({ hasText: filed.at(-3)!.slug });
    expect(await open.textContent()).toContain('Waiting for the operators');
    const shown = (await page.locator('main').textContent()) ?? '';
    expect(shown).not.toContain(HIDE_REASON);
    expect(shown).not.toContain(DISMISS_REASON);
    await screenshot(page, 'dashboard-my-reports');

    await page.getByRole('button', { name: 'Show older reports' }).click();
    await rows.nth(21).waitFor();
    await page.getByRole('button', { name: 'Show older reports' }).waitFor({ state: 'detached' });
    expect(await rows.count()).toBe(SKILLS);
    const all = (await rows.allTextContents()).join('\n');
    for (const { slug } of filed) expect(all).toContain(slug);
  });

  it('fits a phone without sideways scrolling', async () => {
    const page = await signedIn(reporterWallet, '/dashboard/reports', 'phone');
    await page.getByRole('table', { name: 'Your reports, newest first' }).locator('tbody tr').first().waitFor();
    await screenshot(page, 'dashboard-my-reports');
    let width = (await page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth')) as number;
    expect(width).toBeLessThanOrEqual(0);
    const operator = await signedIn(operatorWallet, '/dashboard/operator', 'phone');
    await operator.getByRole('button', { name: 'Load more reports' }).waitFor();
    await screenshot(operator, 'dashboard-operator-paged');
    width = (await operator.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth')) as number;
    expect(width).toBeLessThanOrEqual(0);
  });

  it('raised no error in the pages', () => {
    expect(errors.flat()).toEqual([]);
  });
});
