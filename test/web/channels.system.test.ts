/**
 * Payment channels in the dashboard, in a real Chromium against a registry that checks channels
 * on anvil in the background: the creator sees their skills' channels (one with calls claimed and
 * one still earning, one settled) and the calls in the skill's analytics at once, revenue apart
 * from what is earned; the payer sees their channel's deposit, charges, what is still theirs and
 * the withdrawal they started, and in their paid calls each channel call with its state and the
 * channel's deposit as a deposit; both at desktop and phone width.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { bearer, createKey, jsonPost, newWallet, walletSignIn } from '../support/auth';
import { provePayee } from '../support/catalogue';
import type { Hex } from 'viem';
import { BATCH_SETTLEMENT_ADDRESS, batchSettlementAbi } from '../../src/chain/batch-settlement';
import { claimRow, type LocalChain, type OpenChannel, openChannel, settlementTx, signVoucher, startChain } from '../support/chain';
import { eventually } from '../support/eventually';
import { injectWallet, launchBrowser, newContext, pageErrors, screenshot, startWebRegistry, type WebRegistry } from '../support/web';

let chain: LocalChain;
let registry: WebRegistry;
let browser: Browser;
const contexts: BrowserContext[] = [];
const creatorWallet = newWallet();
let earning: OpenChannel;
let settled: OpenChannel;
/** The transaction of the earning channel's deposit. */
let depositTx: Hex;

const claim = async (channel: OpenChannel, total: bigint, voucherMax = total) => {
  const voucher = await signVoucher(chain, channel.payer, channel.config, voucherMax);
  await settlementTx(chain, channel.authorizer, 'claim', [[claimRow(channel.config, voucherMax, voucher, total)]]);
};

beforeAll(async () => {
  [chain, browser] = await Promise.all([startChain({ payers: 1, payees: 1 }), launchBrowser()]);
  registry = await startWebRegistry({
    env: { MARKET_NETWORK: chain.network, MARKET_USDC_ADDRESS: chain.token.address, MARKET_RPC_URL: chain.rpcUrl },
    verifyPayments: true,
  });
  // Two channels to one skill's payment address: 2,000 of 3,000 claimed, and 1,000 claimed and settled.
  earning = await openChannel(chain);
  settled = await openChannel(chain, { receiver: earning.receiver, authorizer: earning.authorizer });
  await claim(earning, 2000n, 3000n);
  await claim(settled, 1000n);
  await settlementTx(chain, earning.authorizer, 'settle', [earning.receiver.address, chain.token.address]);
  // The earning channel's payer starts the timed withdrawal of 5,000 of the 8,000 unclaimed.
  await settlementTx(chain, earning.payer, 'initiateWithdraw', [earning.config, 5000n]);
  const [deposited] = await chain.publicClient.getContractEvents({
    address: BATCH_SETTLEMENT_ADDRESS,
    abi: batchSettlementAbi,
    eventName: 'Deposited',
    args: { channelId: earning.channelId },
    fromBlock: 0n,
  });
  depositTx = deposited!.transactionHash;

  const session = await walletSignIn(registry.request, creatorWallet);
  const { key } = await createKey(registry.request, session.token, 'creator');
  await provePayee(registry.request, key, earning.receiver);
  expect((await registry.request('/groups', jsonPost({ name: 'tools' }, bearer(key)))).status).toBe(201);
  const res = await registry.request(
    '/skills',
    jsonPost(
      {
        name: 'word-count',
        endpoint: 'https://skills.example.com',
        price: '$0.001',
        paymentAddress: earning.receiver.address,
        network: chain.network,
        groups: ['tools'],
      },
      bearer(key),
    ),
  );
  expect(res.status).toBe(201);
  const skill = (await res.json()) as { id: string };
  const call = (channelId: string, cumulative: number) => ({
    skillId: skill.id,
    channelId,
    chargedCumulativeAmount: String(cumulative),
    amount: '0.001',
  });
  const calls = [
    call(earning.channelId, 1000),
    call(earning.channelId, 2000),
    call(earning.channelId, 3000),
    call(settled.channelId, 1000),
  ];
  expect((await registry.request('/analytics/calls', jsonPost({ calls }, bearer(key)))).status).toBe(200);
  // The payer's client records the same three calls in the payer's history, the first with the channel's deposit.
  const payer = await walletSignIn(registry.request, earning.payer);
  for (const cumulative of [1000, 2000, 3000]) {
    const record = {
      skillId: skill.id,
      amountAtomic: '1000',
      channelId: earning.channelId,
      chargedCumulativeAmount: String(cumulative),
      ...(cumulative === 1000 ? { depositTransaction: depositTx, depositAmountAtomic: '10000' } : {}),
    };
    expect((await registry.request('/analytics/usage', jsonPost(record, bearer(payer.token)))).status).toBe(200);
  }
  // The background check has read both channels.
  await eventually(
    async () => (await (await registry.request(`/analytics/${skill.id}`)).json()) as { channels: { claimedCalls: number } },
    (a) => a.channels.claimedCalls === 3,
    'the claimed channel calls counted',
  );
}, 60_000);

afterAll(async () => {
  for (const c of contexts) await c.close();
  await browser?.close();
  await registry?.close();
  await chain?.stop();
});

async function signedIn(account: Parameters<typeof injectWallet>[1], viewport: 'desktop' | 'phone', next: string): Promise<Page> {
  const context = await newContext(browser, viewport, registry.url);
  contexts.push(context);
  await injectWallet(context, account, chain.chainId);
  const page = await context.newPage();
  await page.goto(`/signin?next=${encodeURIComponent(next)}`);
  await page.getByRole('button', { name: 'Sign in with Test Wallet' }).click();
  await page.getByRole('navigation', { name: 'Dashboard' }).waitFor();
  return page;
}

/** No sideways scrolling: the page fits its viewport. */
const fitsWidth = (page: Page) => page.evaluate('document.documentElement.scrollWidth <= window.innerWidth');

describe('channels in the dashboard', () => {
  for (const viewport of ['desktop', 'phone'] as const) {
    it(`shows the creator each channel of their skills with earned, claimed and settled calls (${viewport})`, async () => {
      const page = await signedIn(creatorWallet, viewport, '/dashboard/channels');
      const errors = pageErrors(page);
      await page.getByText('unclaimed calls').waitFor();
      const rows = page.getByTestId('channel-row');
      expect(await rows.count()).toBe(2);
      const earningRow = rows.filter({ has: page.locator(`code[title="${earning.channelId}"]`) });
      expect(await earningRow.textContent()).toContain('$0.001');
      expect(await earningRow.textContent()).toContain('(1 call)');
      expect(await earningRow.textContent()).toContain('$0.002');
      const settledRow = rows.filter({ has: page.locator(`code[title="${settled.channelId}"]`) });
      expect(await settledRow.getByText('settled', { exact: true }).count()).toBe(1);
      expect(await fitsWidth(page)).toBe(true);
      await screenshot(page, 'dashboard-channels');
      // The skill's analytics say the same, apart from its revenue.
      await page.goto('/dashboard/skills/word-count');
      const line = page.getByTestId('channel-revenue');
      await line.waitFor();
      expect(await line.textContent()).toMatch(
        /\$0\.003 claimed on chain \(3 calls, in the revenue above; \$0\.003 settled\), and \$0\.001 earned but not yet claimed \(1 call\)/,
      );
      // Every reported call counts as a call; the revenue is the claimed, what is earned is shown apart.
      expect(await page.getByTestId('stat-calls').textContent()).toBe('4');
      expect(await page.getByTestId('stat-revenue').textContent()).toBe('$0.003');
      expect(await page.getByTestId('stat-earned').textContent()).toBe('+ $0.001 earned, not yet claimed');
      expect(await page.getByTestId('stat-rejected').textContent()).toBe('0');
      expect(await fitsWidth(page)).toBe(true);
      await screenshot(page, 'dashboard-skill-channel-revenue');
      expect(errors).toEqual([]);
    });

    it(`shows the payer their channel's deposit, charges, what is still theirs and their withdrawal, and how to withdraw the rest (${viewport})`, async () => {
      const page = await signedIn(earning.payer, viewport, '/dashboard/my-channels');
      const errors = pageErrors(page);
      const row = page.getByTestId('channel-row');
      await row.first().waitFor();
      expect(await row.count()).toBe(1);
      const text = await row.textContent();
      expect(text).toContain('$0.01'); // the deposit
      expect(text).toContain('$0.003'); // charged for three calls
      expect(text).toContain('$0.002'); // claimed
      // The deposit less all that was charged (not only what was claimed) is the payer's.
      expect(await page.getByTestId('channel-left').textContent()).toBe('$0.007');
      expect(await page.getByTestId('channel-withdrawal').textContent()).toContain('$0.005 started');
      expect(await page.getByTestId('channel-checked').textContent()).not.toBe('—');
      await page.getByText('market channels --withdraw').waitFor();
      expect(await fitsWidth(page)).toBe(true);
      await screenshot(page, 'dashboard-my-channels');
      expect(errors).toEqual([]);
    });

    it(`shows the payer each channel call with its state and the channel's deposit as a deposit, no transfer check (${viewport})`, async () => {
      const page = await signedIn(earning.payer, viewport, '/dashboard/calls');
      const errors = pageErrors(page);
      const receipts = page.locator('td.receipt-cell');
      await receipts.first().waitFor();
      expect(await receipts.count()).toBe(3);
      const texts = await receipts.allTextContents();
      // Newest first: the third call still earned, the first two claimed and paid out; the first made the deposit.
      expect(texts[0]).toContain('earned by the skill, not yet claimed');
      expect(texts[1]).toContain('claimed and paid out on chain');
      expect(texts[2]).toContain('claimed and paid out on chain');
      for (const text of texts) {
        expect(text).toContain('Paid from channel');
        expect(text).not.toMatch(/rejected|being checked|pending/);
      }
      expect(texts[2]).toContain('Deposit of $0.01 (yours until charged)');
      expect(texts[2]).toContain(depositTx);
      expect(await fitsWidth(page)).toBe(true);
      await screenshot(page, 'dashboard-calls-channel');
      expect(errors).toEqual([]);
    });
  }
});
