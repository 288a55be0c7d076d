/**
 * Try it: a paid call from the browser on a local chain. A skill server (the SDK's serve(), with
 * our facilitator and the EIP-3009 token on anvil) registers itself; a consumer signs in with the
 * injected wallet, fills the form generated from the input schema, sees the price checked against
 * the listing, confirms, signs the transfer authorization in the wallet, and gets the result and
 * the receipt; the tokens move on chain and the usage is recorded. Declining, and terms that differ
 * from the listing, move nothing. A skill with a free trial is tried free: the wallet signs its
 * sign-in, nothing moves, and once the free call is used the visitor confirms a payment; the page
 * then says the trial is used up and asks that wallet no sign-in again. A usage-based skill is
 * listed "up to" its price, charged by use, on its card and its page.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eq } from 'drizzle-orm';
import type { Page } from 'playwright-core';
import type { Address, Hex } from 'viem';
import { serve, skill, type SkillServer } from 'skill-market/creator';
import { usdc } from '../../src/web/app/lib/format';
import { usageRecords } from '../../src/db/schema';
import { bearer } from '../support/auth';
import type { Creator } from '../support/catalogue';
import type { TestAccount } from '../support/chain';
import { freePort } from '../support/process';
import type { PaymentStack } from '../support/skill-server';
import {
  type PaidWeb,
  screenshot,
  selfRegisteringServeOptions,
  startPaidWeb,
  VIEWPORTS,
  type TestWallet,
  walletPage,
  type WebRegistry,
} from '../support/web';

const PRICE = 10_000n; // $0.01

let web: PaidWeb;
let stack: PaymentStack;
let registry: WebRegistry;
let server: SkillServer;
let creator: Creator;
let payee: Address;
let payer: TestAccount;
let page: Page;
let wallet: TestWallet;
let errors: string[];
let slug: string;
let closedSlug: string;
let sampleSlug: string;
let meteredSlug: string;
let trials: string;
let skillId: string;

const skills = {
  shout: skill(
    {
      price: '$0.01',
      groups: ['tools'],
      description: 'Says your text louder.',
      inputSchema: {
        type: 'object',
        required: ['text'],
        properties: { text: { type: 'string', maxLength: 100, description: 'What to shout' } },
        additionalProperties: false,
      },
      outputSchema: { type: 'object', properties: { shouted: { type: 'string' } } },
    },
    (input) => ({ shouted: `${(input as { text: string }).text.toUpperCase()}!` }),
  ),
  sample: skill(
    {
      price: '$0.01',
      groups: ['tools'],
      description: 'Free to try once a day.',
      trial: { calls: 1, period: 'day' },
      inputSchema: { type: 'object', required: ['text'], properties: { text: { type: 'string' } } },
    },
    (input) => ({ sampled: (input as { text: string }).text }),
  ),
  metered: skill(
    {
      price: '$0.003',
      upto: true,
      groups: ['tools'],
      description: 'Counts your words, $0.001 a word up to three.',
      trial: { calls: 2, period: 'month' },
      tiers: [{ after: 2, price: '$0.001' }],
      tierPeriod: 'month',
      inputSchema: { type: 'object', required: ['text'], properties: { text: { type: 'string' } } },
    },
    (input, { charge }) => {
      const words = (input as { text: string }).text.split(/\s+/).filter(Boolean).length;
      charge(BigInt(Math.min(words, 3)) * 1000n);
      return { words };
    },
  ),
  closed: skill({ price: '$0.01', groups: ['tools'], description: 'Always fails.' }, () => {
    throw new Error('the oracle is closed today');
  }),
};

beforeAll(async () => {
  web = await startPaidWeb();
  trials = await mkdtemp(join(tmpdir(), 'try-it-trials-'));
  ({ stack, registry, creator } = web);
  payee = await web.payee();
  payer = await stack.chain.createAccount({ usdc: 1_000_000n });
  server = await serve(
    skills,
    // its listing read at start only: a later edit makes the terms differ
    selfRegisteringServeOptions(web, payee, await freePort(), { listingRefreshMs: 0, trials: { store: trials } }),
  );
  skillId = server.registration.find((r) => r.name === 'shout')!.skillId!;
  const listed = ((await (await registry.request(`/creators/${creator.address}`)).json()) as { skills: { slug: string; name: string }[] })
    .skills;
  slug = listed.find((s) => s.name === 'shout')!.slug;
  closedSlug = listed.find((s) => s.name === 'closed')!.slug;
  sampleSlug = listed.find((s) => s.name === 'sample')!.slug;
  meteredSlug = listed.find((s) => s.name === 'metered')!.slug;
  ({ wallet, page, errors } = await walletPage(web.browser, registry.url, payer, stack.chain.chainId));
}, 90_000);

afterAll(async () => {
  await server?.stop();
  await web?.close();
  if (trials) await rm(trials, { recursive: true, force: true });
});

const balances = () => Promise.all([stack.chain.balanceOf(payer.address), stack.chain.balanceOf(payee)]);

async function openTryIt(text: string) {
  await page.goto(`/skill/${slug}`);
  await page.getByLabel('text').fill(text);
  await page.getByRole('button', { name: 'Call this skill' }).click();
  await page.getByRole('heading', { name: 'Confirm the payment' }).waitFor();
}

describe('Try it', () => {
  it('works from the keyboard: connects the wallet when it is not, and moves nothing when the signature is declined', async () => {
    const before = await balances();
    const focused = () => page.evaluate('document.activeElement?.textContent?.trim()');
    /** Tabs forward until the focused control reads `text`. */
    const tabTo = async (text: string) => {
      for (let i = 0; i < 6 && (await focused()) !== text; i++) await page.keyboard.press('Tab');
      expect(await focused()).toBe(text);
    };
    await page.goto(`/skill/${slug}`);
    await page.getByLabel('text').focus();
    await page.keyboard.type('hello');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Confirm the payment' }).waitFor();
    expect(await page.locator('.confirm').textContent()).toContain('Pay $0.01 USDC to');
    const pay = page.getByRole('button', { name: 'Pay $0.01 and call' });
    expect(await pay.isDisabled()).toBe(true);
    await tabTo('Connect with Test Wallet');
    await page.keyboard.press('Enter');
    await page.getByText(`Paying from ${payer.address.slice(0, 6)}`).waitFor();
    wallet.declineNext();
    await page.waitForFunction(`document.activeElement?.textContent === 'Pay $0.01 and call'`);
    await page.keyboard.press('Enter');
    await page.getByText('You declined the request in your wallet.').waitFor();
    expect(await balances()).toEqual(before);
  });

  it('pays from the browser: the price is confirmed, the wallet signs the transfer, tokens move on chain, the result and receipt show', async () => {
    await page.goto(`/signin?next=/skill/${slug}`);
    await page.getByRole('button', { name: 'Sign in with Test Wallet' }).click();
    await page.waitForURL((url) => url.pathname === `/skill/${slug}`);
    const [payerBefore, payeeBefore] = await balances();
    await openTryIt('hello market');
    // The payer's balance before paying, read on chain by the registry.
    await page.locator('.balance-before').waitFor();
    expect(await page.locator('.balance-before').textContent()).toBe(`${usdc(payerBefore)} USDC`);
    // One primary action while confirming: Pay, not "Call this skill" beside it.
    expect(await page.getByRole('button', { name: 'Call this skill' }).getAttribute('class')).not.toContain('button-primary');
    await screenshot(page, 'try-it-confirm');
    const signed = wallet.requests.length;
    const usage = page.waitForResponse((r) => r.url().endsWith('/analytics/usage'));
    await page.getByRole('button', { name: 'Pay $0.01 and call' }).click();
    await page.getByRole('heading', { name: 'Result' }).waitFor();
    expect(JSON.parse((await page.locator('.result').textContent())!)).toEqual({ shouted: 'HELLO MARKET!' });
    expect(await page.locator('.balance-after').textContent()).toBe(`${usdc(payerBefore - PRICE)} USDC`);

    // The wallet signed one EIP-3009 transfer of exactly the price to the listed payee.
    const typed = wallet.requests.slice(signed).filter((r) => r.method === 'eth_signTypedData_v4');
    expect(typed).toHaveLength(1);
    const data = JSON.parse(typed[0]!.params[1] as string);
    expect(data.primaryType).toBe('TransferWithAuthorization');
    expect(data.domain).toMatchObject({ chainId: stack.chain.chainId, verifyingContract: stack.asset.address.toLowerCase() });
    expect(data.message).toMatchObject({ from: payer.address.toLowerCase(), to: payee.toLowerCase(), value: PRICE.toString() });

    // On chain: exactly the price moved, in the transaction the receipt names.
    expect(await balances()).toEqual([payerBefore - PRICE, payeeBefore + PRICE]);
    const tx = (await page.locator('.tx-hash').textContent()) as Hex;
    expect(tx).toMatch(/^0x[0-9a-f]{64}$/);
    const receipt = await stack.chain.publicClient.getTransactionReceipt({ hash: tx });
    expect(receipt.status).toBe('success');
    // Base Sepolia has an explorer: the hash links to it.
    expect(await page.locator('a.tx-hash').getAttribute('href')).toBe(`https://sepolia.basescan.org/tx/${tx}`);
    await screenshot(page, 'try-it-receipt');
    await page.setViewportSize(VIEWPORTS.phone);
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(VIEWPORTS.phone.width);
    await screenshot(page, 'try-it-receipt');
    await page.setViewportSize(VIEWPORTS.desktop);

    // The signed-in consumer's usage is recorded with the transaction as its reference.
    const recorded = await usage;
    expect(recorded.status()).toBe(200);
    expect(await recorded.json()).toEqual({ success: true, recorded: true });
    const rows = await registry.database.db
      .select({ amount: usageRecords.amount, paymentRef: usageRecords.paymentRef })
      .from(usageRecords)
      .where(eq(usageRecords.skillId, skillId));
    expect(rows).toEqual([{ amount: PRICE, paymentRef: tx }]);
    expect(errors).toEqual([]);
  });

  it('says a failed call was not charged, with the skill server reason, and nothing moves', async () => {
    const before = await balances();
    await page.goto(`/skill/${closedSlug}`);
    await page.getByLabel('Input (JSON)').fill('{}');
    await page.getByRole('button', { name: 'Call this skill' }).click();
    await page.getByRole('button', { name: 'Pay $0.01 and call' }).click();
    const alert = page.getByRole('alert');
    await alert.getByRole('heading', { name: 'The skill answered 500' }).waitFor();
    expect(await alert.locator('.error-message').textContent()).toBe('the oracle is closed today');
    expect(await alert.textContent()).toContain('you were not charged');
    expect(await balances()).toEqual(before);
  });

  it('refuses terms that differ from the listing before anything is signed', async () => {
    // The creator doubles the listed price; this skill server reads its listing only at start, so it still asks the old one.
    const res = await registry.request(`/skills/${slug}`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json', ...bearer(creator.key) },
      body: JSON.stringify({ price: '$0.02' }),
    });
    expect(res.status).toBe(200);
    const before = await balances();
    const signed = wallet.requests.length;
    await page.goto(`/skill/${slug}`);
    await page.getByLabel('text').fill('too cheap');
    await page.getByRole('button', { name: 'Call this skill' }).click();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    expect(await alert.textContent()).toContain('price');
    expect(wallet.requests.slice(signed).filter((r) => r.method === 'eth_signTypedData_v4')).toHaveLength(0);
    expect(await balances()).toEqual(before);
  });

  it('tries a skill free: the wallet signs the sign-in, nothing moves; the next call asks for a payment', async () => {
    const before = await balances();
    await page.goto(`/skill/${sampleSlug}`);
    expect(await page.locator('.trial-offer').textContent()).toContain('1 free call a day per wallet. Try it free');
    await page.getByLabel('text').fill('free');
    const signed = wallet.requests.length;
    await page.getByRole('button', { name: 'Try free' }).click();
    await page.getByRole('heading', { name: 'Result' }).waitFor();
    expect(JSON.parse((await page.locator('.result').textContent())!)).toEqual({ sampled: 'free' });
    expect(await page.locator('.trial-done').textContent()).toBe('A free trial call: nothing was paid. 0 free calls left.');
    const asked = wallet.requests.slice(signed).map((r) => r.method);
    expect(asked).toContain('personal_sign');
    expect(asked).not.toContain('eth_signTypedData_v4');
    expect(await balances()).toEqual(before);
    await screenshot(page, 'try-it-trial');
    // Used up: trying again leads to the payment's confirmation, nothing signed for money yet.
    await page.getByRole('button', { name: 'Try free' }).click();
    await page.getByRole('heading', { name: 'Confirm the payment' }).waitFor();
    expect(wallet.requests.slice(signed).filter((r) => r.method === 'eth_signTypedData_v4')).toHaveLength(0);
    expect(await balances()).toEqual(before);
    // The server said when the day's free call comes back: the page says the trial is used up until then.
    const usedUp = await page.locator('.confirm .trial-used').textContent();
    expect(usedUp).toStartWith(`Free trial used up for ${payer.address.slice(0, 6)}`);
    expect(usedUp).toContain(' until ');
    expect(usedUp).toEndWith(': calls are paid.');
    await screenshot(page, 'try-it-trial-used-up');

    // From now on no sign-in: the offer says the trial is used up, and a call goes straight to the payment.
    await page.getByRole('button', { name: 'Cancel' }).click();
    expect(await page.locator('.trial-offer').textContent()).toContain('Free trial used up');
    await screenshot(page, 'try-it-trial-offer-used-up');
    expect(await page.getByRole('button', { name: 'Try free' }).count()).toBe(0);
    const sentBefore = wallet.requests.length;
    await page.getByRole('button', { name: 'Call this skill' }).click();
    await page.getByRole('heading', { name: 'Confirm the payment' }).waitFor();
    expect(await page.locator('.confirm .trial-used').textContent()).toContain('Free trial used up');
    expect(wallet.requests.slice(sentBefore).map((r) => r.method)).not.toContain('personal_sign');
    expect(await balances()).toEqual(before);
    await page.setViewportSize(VIEWPORTS.phone);
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(VIEWPORTS.phone.width);
    await screenshot(page, 'try-it-trial-used-up');
    await page.setViewportSize(VIEWPORTS.desktop);
    expect(errors).toEqual([]);
  });

  it('lists a usage-based skill "up to" its price, charged by use, with its trial and volume prices, on its card and its page', async () => {
    await page.goto(`/creator/${creator.address}`);
    const card = page.locator('.skill-card', { has: page.getByRole('link', { name: 'metered' }) });
    await card.waitFor();
    expect(await card.locator('.price').textContent()).toBe('up to $0.003 USDC, $0.001 after 2 calls a month');
    expect(await card.locator('dt').first().textContent()).toBe('Price by use');
    expect(await card.locator('.trial').textContent()).toBe('2 free calls a month per wallet');
    // A flat price reads as before.
    const flat = page.locator('.skill-card', { has: page.getByRole('link', { name: 'sample' }) });
    expect(await flat.locator('.price').textContent()).toBe('$0.01 USDC');
    expect(await flat.locator('dt').first().textContent()).toBe('Price');
    await screenshot(page, 'skill-card-usage-based');

    await page.goto(`/skill/${meteredSlug}`);
    await page.getByRole('heading', { name: 'metered' }).waitFor();
    expect((await page.locator('.price-line').textContent())?.replace(/\s+/g, ' ')).toBe('up to $0.003 USDC per call, charged by use');
    expect(await page.locator('.details .tiers').textContent()).toBe('up to $0.003 USDC, $0.001 after 2 calls a month');
    await screenshot(page, 'skill-usage-based');
    await page.setViewportSize(VIEWPORTS.phone);
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(VIEWPORTS.phone.width);
    await screenshot(page, 'skill-usage-based');
    await page.goto(`/creator/${creator.address}`);
    await card.waitFor();
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(VIEWPORTS.phone.width);
    await screenshot(page, 'skill-card-usage-based');
    await page.setViewportSize(VIEWPORTS.desktop);
    expect(errors).toEqual([]);
  });
});
