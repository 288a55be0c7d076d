/**
 * `market dev` seen as a newcomer sees it: the printed marketplace URL opened in Chromium with no
 * wallet extension, sign-in with the dev-only demo wallet, and a paid call with Try it on the
 * example word-count skill; the test USDC moves on the local chain. Sign-in as the demo creator
 * shows the example skills in its dashboard.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { createPublicClient, http, type Address } from 'viem';
import { usdc } from '../../src/web/app/lib/format';
import { usdCoinAbi } from '../support/chain';
import { spawnDev, type DevBanner, type DevProcess } from '../support/dev';
import { launchBrowser, newContext, pageErrors, screenshot } from '../support/web';

/** A balance as the wallets view writes it. */
const usdcText = (atomic: bigint) => `${usdc(atomic)} USDC`;

const work = mkdtempSync(join(tmpdir(), 'market-dev-browser-'));
let dev: DevProcess;
let banner: DevBanner;
let browser: Browser;

beforeAll(async () => {
  [dev, browser] = await Promise.all([spawnDev(join(work, 'dev')), launchBrowser()]);
  banner = await dev.banner;
}, 120_000);

afterAll(async () => {
  await browser?.close();
  dev?.child.kill('SIGTERM');
  await dev?.exited;
  rmSync(work, { recursive: true, force: true });
});

describe('market dev in a browser', () => {
  it('opens the printed URL, signs in with the demo wallet and pays for a skill with Try it', async () => {
    const chain = createPublicClient({ transport: http(banner.rpcUrl) });
    const balance = () =>
      chain.readContract({
        address: banner.token as Address,
        abi: usdCoinAbi,
        functionName: 'balanceOf',
        args: [banner.wallet as Address],
      });
    const before = await balance();

    const context = await newContext(browser, 'desktop', banner.marketplace);
    const page = await context.newPage();
    const errors = pageErrors(page);
    await page.goto('/');
    await page.getByRole('heading', { name: 'word-count' }).waitFor();
    await page.goto('/signin?next=/skill/word-count');
    await page.getByRole('button', { name: 'Sign in with Demo wallet (dev only)' }).click();
    await page.waitForURL((url) => url.pathname === '/skill/word-count');

    await page.getByLabel('text').fill('paid from the browser');
    await page.getByRole('button', { name: 'Call this skill' }).click();
    await page.getByRole('heading', { name: 'Confirm the payment' }).waitFor();
    await page.getByRole('button', { name: 'Pay $0.002 and call' }).click();
    await page.getByRole('heading', { name: 'Result' }).waitFor();
    expect(JSON.parse((await page.locator('.result').textContent())!)).toEqual({ words: 4, characters: 21 });
    await screenshot(page, 'dev-try-it');

    // The transfer is on the local chain: the demo wallet paid exactly the price.
    const hash = (await page.locator('.receipt').textContent())?.match(/0x[0-9a-f]{64}/)?.[0] as `0x${string}` | undefined;
    expect(hash).toBeDefined();
    expect((await chain.getTransactionReceipt({ hash: hash! })).status).toBe('success');
    expect(before - (await balance())).toBe(2000n);

    // Its spending wallets offer test money in dev: $10 more, minted on the local chain.
    const paid = await balance();
    await page.goto('/dashboard/wallets');
    await page
      .getByRole('button', { name: /^Add \$10 test USDC to / })
      .first()
      .click();
    await page
      .getByTestId('wallet-balance')
      .filter({ hasText: usdcText(paid + 10_000_000n) })
      .waitFor();
    expect(await balance()).toBe(paid + 10_000_000n);
    await screenshot(page, 'dev-wallets');
    expect(errors).toEqual([]);
    await context.close();
  }, 90_000);

  it('signs in as the demo creator, whose dashboard lists the example skills', async () => {
    const context = await newContext(browser, 'desktop', banner.marketplace);
    const page = await context.newPage();
    const errors = pageErrors(page);
    await page.goto('/signin?next=/dashboard');
    await page.getByRole('button', { name: 'Sign in as demo creator (dev only)' }).click();
    await page.waitForURL((url) => url.pathname === '/dashboard');
    await page.getByRole('link', { name: 'word-count' }).first().waitFor();
    expect(await page.getByText('No skills yet').count()).toBe(0);
    expect(errors).toEqual([]);
    await context.close();
  }, 60_000);
});
