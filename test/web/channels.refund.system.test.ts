/**
 * Money back from the page, in a real Chromium on a local chain, for a payer holding no ETH: the
 * payer's wallet pays one skill over two channels, one opened by our SDK (the wallet signs its
 * vouchers) and one by Try it (this browser's session key signs them). In My channels each row
 * offers what is the payer's back; the session key's is refunded at once, the wallet's after one
 * signature (no transaction). The skill server refunds through its facilitator, which pays the gas.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { SkillMarket } from 'skill-market';
import { serve, skill as paidSkill, type SkillServer } from 'skill-market/creator';
import type { Skill } from 'skill-market/registry';
import { newWallet } from '../support/auth';
import type { TestAccount } from '../support/chain';
import { freePort } from '../support/process';
import {
  type PaidWeb,
  screenshot,
  selfRegisteringServeOptions,
  startPaidWeb,
  type TestWallet,
  VIEWPORTS,
  walletPage,
} from '../support/web';

const PRICE = 1_000n; // $0.001
const KEY = 'page-refund-receiver-key-0123456789';
const payeeAccount = newWallet();
const payee = payeeAccount.address;

let web: PaidWeb;
let server: SkillServer;
let folder: string;
let payer: TestAccount;
let page: Page;
let wallet: TestWallet;
let errors: string[];
let skill: Skill;

beforeAll(async () => {
  web = await startPaidWeb({ facilitator: { receiverKeys: [{ receiver: payee, key: KEY }] }, verifyPayments: true });
  await web.creator.prove(payeeAccount);
  folder = await mkdtemp(join(tmpdir(), 'page-refund-'));
  const echo = paidSkill({ price: '$0.001', groups: ['tools'] }, (input) => ({ echo: input }));
  server = await serve(
    { echo },
    selfRegisteringServeOptions(web, payee, await freePort(), { facilitatorApiKey: KEY, trackCalls: true, channels: { store: folder } }),
  );
  const listed = ((await (await web.registry.request(`/creators/${web.creator.address}`)).json()) as { skills: { slug: string }[] }).skills;
  skill = (await (await web.registry.request(`/skills/${listed[0]!.slug}`)).json()) as Skill;
  payer = await web.stack.chain.createAccount({ eth: 0n, usdc: 1_000_000n });
  ({ wallet, page, errors } = await walletPage(web.browser, web.registry.url, payer, web.stack.chain.chainId));
}, 90_000);

afterAll(async () => {
  await server?.stop();
  await web?.close();
  if (folder) await rm(folder, { recursive: true, force: true });
});

describe('money back from a channel, from the page', () => {
  it('refunds both of a payer’s channels from My channels: the session key’s at once, the wallet’s after one signature; no ETH', async () => {
    // Channel A: the SDK, the wallet signing vouchers; two calls.
    const market = new SkillMarket({
      apiUrl: web.registry.url,
      wallet: payer,
      network: web.stack.chain.network,
      assets: [{ network: web.stack.chain.network, address: web.stack.asset.address }],
      payment: 'channel',
      maxDeposit: '$0.01',
    });
    for (const i of [1, 2]) await market.call(skill.slug, { i });
    // Channel B: Try it through a channel (opted in), the session key signing; one call.
    await page.goto(`/skill/${skill.slug}`);
    await page.getByLabel('Input (JSON)').fill('{"i":3}');
    await page.getByRole('button', { name: 'Call this skill' }).click();
    await page.getByRole('heading', { name: 'Confirm the payment' }).waitFor();
    await page.getByRole('button', { name: 'Connect with Test Wallet' }).click();
    await page.getByLabel(/Pay through a payment channel/).check();
    await page.getByRole('button', { name: /pay \$0\.001 and call/i }).click();
    await page.getByRole('heading', { name: 'Result' }).waitFor();
    const afterCalls = await web.stack.chain.balanceOf(payer.address);

    await page.goto(`/signin?next=${encodeURIComponent('/dashboard/my-channels')}`);
    await page.getByRole('button', { name: 'Sign in with Test Wallet' }).click();
    await page.getByRole('navigation', { name: 'Dashboard' }).waitFor();
    // Both channels once the registry has read them on chain, each with what is the payer's.
    const buttons = page.getByRole('button', { name: 'Get it back' });
    for (let tries = 0; (await buttons.count()) < 2; tries++) {
      if (tries > 100) throw new Error(`My channels shows ${await buttons.count()} refundable channels, not 2`);
      await page.waitForTimeout(200);
      await page.reload();
      await page.getByRole('navigation', { name: 'Dashboard' }).waitFor();
    }
    await screenshot(page, 'dashboard-my-channels-refund');
    await page.setViewportSize(VIEWPORTS.phone);
    await screenshot(page, 'dashboard-my-channels-refund');
    await page.setViewportSize(VIEWPORTS.desktop);
    const signaturesBefore = wallet.requests.filter((r) => r.method === 'eth_signTypedData_v4').length;

    // The first row whose vouchers this browser's session key signed is refunded without the wallet.
    const rows = page.getByTestId('channel-row');
    const left = async (row: number) => (await rows.nth(row).getByTestId('channel-left').textContent())!;
    const yours = [await left(0), await left(1)];
    await rows.nth(0).getByRole('button', { name: /^Get/ }).click();
    const first = rows.nth(0);
    const needsWallet = await first
      .getByRole('button', { name: /^Sign and get/ })
      .waitFor({ timeout: 15_000 })
      .then(
        () => true,
        () => false,
      );
    if (needsWallet) await first.getByRole('button', { name: /^Sign and get/ }).click();
    await first.getByTestId('refund-done').waitFor({ timeout: 30_000 });
    await rows.nth(1).getByRole('button', { name: /^Get/ }).click();
    const second = rows.nth(1);
    if (!needsWallet) {
      await second.getByRole('button', { name: /^Sign and get/ }).click();
    }
    await second.getByTestId('refund-done').waitFor({ timeout: 30_000 });
    // What is the payer's is back: the rows say so at once.
    expect([await left(0), await left(1)]).toEqual(['$0', '$0']);

    // One wallet signature in all (the wallet's channel), no transaction, and the money is back.
    const typed = wallet.requests.filter((r) => r.method === 'eth_signTypedData_v4').slice(signaturesBefore);
    expect(typed.map((r) => JSON.parse(r.params[1] as string).primaryType)).toEqual(['Voucher']);
    expect(wallet.requests.some((r) => r.method === 'eth_sendTransaction')).toBe(false);
    const back = yours.reduce((sum, text) => sum + BigInt(Math.round(Number(text.replace('$', '')) * 1e6)), 0n);
    expect(await web.stack.chain.balanceOf(payer.address)).toBe(afterCalls + back);
    expect(await web.stack.chain.balanceOf(payer.address)).toBe(1_000_000n - 3n * PRICE);
    expect(await web.stack.chain.publicClient.getBalance({ address: payer.address })).toBe(0n);
    await screenshot(page, 'dashboard-my-channels-refunded');
    await page.setViewportSize(VIEWPORTS.phone);
    await screenshot(page, 'dashboard-my-channels-refunded');
    expect(errors).toEqual([]);
  }, 120_000);
});
