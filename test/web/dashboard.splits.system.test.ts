/**
 * A skill's analytics page in a real Chromium, for its creator: its paid calls and revenue by how
 * they were paid (with its free trial calls) and by volume price ("Base price", "After 100 calls"),
 * and the calls whose signed receipt disagrees with the chain, marked and counted, there and in the
 * payer's own paid calls (a match or a pending check shown quietly); a skill without volume prices
 * shows no price table. Desktop and phone width, without sideways scrolling.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { eq } from 'drizzle-orm';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { signSkillReceipt } from 'skill-market/x402';
import { paymentVerifications } from '../../src/db/schema';
import { markVerified } from '../../src/registry/modules/payment-verification/store';
import { bearer, createKey, jsonPost } from '../support/auth';
import { injectWallet, launchBrowser, newContext, pageErrors, screenshot, startWebRegistry, type WebRegistry } from '../support/web';

let registry: WebRegistry;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let errors: string[];
let token: string;
const receiptKey = privateKeyToAccount(generatePrivateKey());

const hash = () => `0x${crypto.randomUUID().replaceAll('-', '').padEnd(64, '0')}`;

beforeAll(async () => {
  [registry, browser] = await Promise.all([startWebRegistry(), launchBrowser()]);
  context = await newContext(browser, 'desktop', registry.url);
  await injectWallet(context, privateKeyToAccount(generatePrivateKey()), 8453);
  page = await context.newPage();
  errors = pageErrors(page);
  await page.goto('/signin?next=/dashboard/skills');
  await page.getByRole('button', { name: 'Sign in with Test Wallet' }).click();
  await page.getByRole('navigation', { name: 'Dashboard' }).waitFor();
  token = (await context.cookies()).find((c) => c.name === 'market_token')!.value;
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await registry?.close();
});

/** Registers a skill of the signed-in creator (paid to its wallet, receipts signed by `receiptKey`). */
async function register(name: string, extra: Record<string, unknown> = {}) {
  const me = (await (await registry.request('/creators/me', { headers: bearer(token) })).json()) as { walletAddress: string };
  const groups = await registry.request('/groups', jsonPost({ name: `Tools ${name}` }, { ...bearer(token), origin: registry.url }));
  const group = (await groups.json()) as { slug: string };
  const res = await registry.request(
    '/skills',
    jsonPost(
      {
        name,
        endpoint: `https://skills.example/${name}`,
        price: '0.001',
        paymentAddress: me.walletAddress,
        receiptSigner: receiptKey.address,
        groups: [group.slug],
        description: 'Counts words, cheaper in bulk',
        ...extra,
      },
      { ...bearer(token), origin: registry.url },
    ),
  );
  expect(res.status).toBe(201);
  return (await res.json()) as { id: string; slug: string; network: string };
}

describe('a skill’s analytics by price, by scheme and by receipt', () => {
  it('shows the paid calls and revenue by price and by how they were paid, and marks a receipt that disagrees with the chain', async () => {
    const skill = await register('bulk-count', { tiers: { period: 'month', steps: [{ after: 100, price: '$0.0008' }] } });
    await register('plain-count');
    const { key } = await createKey(registry.request, token);
    // Three paid calls as the skill server reports them (each with its tier and signed receipt), and one free trial call.
    const calls = [
      { tier: 0, amount: 1000n, chain: 1000n },
      { tier: 100, amount: 800n, chain: 800n },
      { tier: 100, amount: 800n, chain: 600n },
      { tier: 0, amount: 1000n, chain: null },
    ];
    for (const call of calls) {
      const transaction = hash();
      const receipt = await signSkillReceipt(receiptKey, {
        version: 1,
        resourceUrl: 'https://skills.example/bulk-count',
        skill: 'bulk-count',
        network: skill.network,
        scheme: 'exact',
        payer: privateKeyToAccount(generatePrivateKey()).address,
        amount: call.amount.toString(),
        transaction,
        cumulativeAmount: '0',
        issuedAt: Math.floor(Date.now() / 1000),
        bodyDigest: hash() as `0x${string}`,
      });
      const record = {
        skillId: skill.id,
        amountAtomic: call.amount.toString(),
        paymentRef: transaction,
        paymentNonce: hash(),
        receipt,
        tier: call.tier,
      };
      const res = await registry.request('/analytics/calls', jsonPost({ calls: [record] }, bearer(key)));
      expect(((await res.json()) as { recorded: number }).recorded).toBe(1);
      // What the chain check stores (the check itself runs on anvil in test/creator/receipts.test.ts).
      const [check] = await registry.database.db.select().from(paymentVerifications).where(eq(paymentVerifications.txHash, transaction));
      if (call.chain !== null) {
        const found = {
          transfers: [{ payer: receipt.payload.payer, logIndex: 1 }],
          amount: call.chain,
          blockNumber: 7n,
          scheme: 'exact' as const,
        };
        expect(await markVerified(registry.database.db, check!.id, found, new Date())).toBe('counted');
      }
      // The same signed-in user paid the call: its own history keeps the receipt.
      const usage = await registry.request(
        '/analytics/usage',
        jsonPost(
          { skillId: skill.id, amountAtomic: call.amount.toString(), paymentRef: transaction, receipt },
          { ...bearer(token), origin: registry.url },
        ),
      );
      expect(usage.status).toBe(200);
    }
    const trial = await registry.request(
      '/analytics/calls',
      jsonPost({ calls: [{ skillId: skill.id, amountAtomic: '0', kind: 'trial', paymentRef: 'nonce-1' }] }, bearer(key)),
    );
    expect(trial.status).toBe(200);

    await page.goto('/dashboard/skills/bulk-count');
    const byPrice = page.getByTestId('by-price');
    await byPrice.waitFor();
    const rows = async (table: typeof byPrice) =>
      (await table.getByRole('row').allTextContents()).slice(1).map((text) => text.replace(/\s+/g, ' ').trim());
    expect(await rows(byPrice)).toEqual(['Base price$0.0011$0.001', 'After 100 calls$0.00082$0.0014']);
    expect(await rows(page.getByTestId('paid-by'))).toEqual(['Single payments (exact)3$0.0024', 'Free trial1none']);
    expect(await page.getByTestId('stat-receipt-mismatch').textContent()).toBe('1 receipt disagrees with the chain');
    expect(await page.getByTestId('stat-calls').textContent()).toBe('3');
    const mismatches = page.getByRole('region', { name: /Receipts that disagree with the chain/ });
    const marked = mismatches.getByTestId('receipt-mismatch');
    expect(await marked.count()).toBe(1);
    expect((await marked.textContent())?.replace(/\s+/g, ' ')).toContain('$0.0008');
    expect((await marked.textContent())?.replace(/\s+/g, ' ')).toContain('$0.0006');
    await screenshot(page, 'dashboard-analytics-splits');

    // The payer's own calls: the receipt that disagrees is marked plainly, the others quietly.
    await page.goto('/dashboard/calls');
    await page.getByText('receipt disagrees with the chain').waitFor();
    const callRows = (await page.getByRole('row').allTextContents()).slice(1).map((text) => text.replace(/\s+/g, ' '));
    expect(callRows.filter((text) => text.includes('receipt disagrees with the chain'))).toEqual([
      expect.stringContaining('it says $0.0008; the payment moved another amount'),
    ]);
    expect(callRows.filter((text) => text.includes('receipt matches'))).toHaveLength(2);
    expect(callRows.filter((text) => text.includes('receipt not checked yet'))).toHaveLength(1);
    await screenshot(page, 'dashboard-calls-receipts');

    // A skill without volume prices: no price table, and no receipt section without a mismatch.
    await page.goto('/dashboard/skills/plain-count');
    await page.getByTestId('stat-calls').waitFor();
    expect(await page.getByTestId('by-price').count()).toBe(0);
    expect(await page.getByRole('region', { name: /Receipts that disagree/ }).count()).toBe(0);

    // At phone width the tables fit the page.
    const phone = await newContext(browser, 'phone', registry.url);
    await phone.addCookies((await context.cookies()).filter((c) => c.name.startsWith('market_')));
    const small = await phone.newPage();
    await small.goto('/dashboard/skills/bulk-count');
    await small.getByTestId('receipt-mismatch').waitFor();
    expect(await small.evaluate('document.documentElement.scrollWidth')).toBe(390);
    await screenshot(small, 'dashboard-analytics-splits');
    await small.goto('/dashboard/calls');
    await small.getByText('receipt disagrees with the chain').waitFor();
    expect(await small.evaluate('document.documentElement.scrollWidth')).toBe(390);
    await screenshot(small, 'dashboard-calls-receipts');
    await phone.close();
    expect(errors).toEqual([]);
  });
});
