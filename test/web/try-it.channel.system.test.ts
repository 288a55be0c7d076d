/**
 * Try it through a payment channel, on a local chain: our skill server (`serve()`, settling
 * through our facilitator) offers a channel beside one payment per call for its $0.001 skill. Without opting in, a call is an exact payment as before. A visitor who opts
 * in sees the deposit beside the price before the wallet is asked, signs it once in the wallet; the
 * browser's session key signs every call's voucher, so three calls ask the wallet once, and the
 * chain sees one deposit and no transfer per call. The deposit is the SDK's one policy: SkillMarket
 * paying the same skill deposits the same, and the receipt names the deposit apart from the charge.
 * Signed in, a channel call joins the visitor's history as a channel call, never as a transfer to check.
 * A usage-based skill of the same server (`upto: true`) is confirmed at its most and its receipt says
 * what the call was charged, less than that.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { eq } from 'drizzle-orm';
import { type Address, getAddress, type Hex, parseAbiItem } from 'viem';
import { depositFor, SkillMarket } from 'skill-market/client';
import { serve, skill as paidSkill, type SkillServer } from 'skill-market/creator';
import type { Skill } from 'skill-market/registry';
import { BATCH_SETTLEMENT_ADDRESS, batchSettlementAbi } from '../../src/chain/batch-settlement';
import { usageRecords } from '../../src/db/schema';
import { usdc } from '../../src/web/app/lib/format';
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

const PRICE = 1_000n; // $0.001
// The deposit policy's figure for a new channel to this skill (it announces no minDeposit): ten calls' worth.
const DEPOSIT = depositFor({ price: PRICE, charged: 0n, balance: 0n });
const transfer = parseAbiItem('event Transfer(address indexed from, address indexed to, uint256 value)');

let web: PaidWeb;
let stack: PaymentStack;
let registry: WebRegistry;
let server: SkillServer;
let payee: Address;
let handled = 0;
let folder: string;
let payer: TestAccount;
let page: Page;
let wallet: TestWallet;
let errors: string[];
let skill: Skill;
let meteredSlug: string;

beforeAll(async () => {
  web = await startPaidWeb();
  ({ stack, registry } = web);
  payee = await web.payee();
  folder = await mkdtemp(join(tmpdir(), 'try-it-channels-'));
  const echo = paidSkill({ price: '$0.001', groups: ['tools'], description: 'Echoes its input.' }, (input) => ({
    echo: input,
    n: ++handled,
  }));
  // Priced by use: at most $0.005, charged $0.002 a call.
  const metered = paidSkill({ price: '$0.005', upto: true, groups: ['tools'], description: 'Charged by use.' }, (input, { charge }) => {
    charge(2_000n);
    return { metered: input };
  });
  server = await serve(
    { echo, metered },
    selfRegisteringServeOptions(web, payee, await freePort(), { channels: { store: folder } }), // offered by default below $0.01
  );
  const listed = (
    (await (await registry.request(`/creators/${web.creator.address}`)).json()) as { skills: { slug: string; name: string }[] }
  ).skills;
  const slugOf = (name: string) => listed.find((s) => s.name === name)!.slug;
  skill = (await (await registry.request(`/skills/${slugOf('echo')}`)).json()) as Skill;
  meteredSlug = slugOf('metered');
  payer = await stack.chain.createAccount({ usdc: 1_000_000n });
  ({ wallet, page, errors } = await walletPage(web.browser, registry.url, payer, stack.chain.chainId));
}, 90_000);

afterAll(async () => {
  await server?.stop();
  await web?.close();
  if (folder) await rm(folder, { recursive: true, force: true });
});

const balances = () => Promise.all([stack.chain.balanceOf(payer.address), stack.chain.balanceOf(payee)]);
const walletSignatures = () => wallet.requests.filter((r) => r.method === 'eth_signTypedData_v4');

/** Opens Try it with input `{ i }` and waits for the confirmation, connecting the wallet when it is not. */
async function confirmCall(i: number) {
  await page.goto(`/skill/${skill.slug}`);
  await page.getByLabel('Input (JSON)').fill(JSON.stringify({ i }));
  await page.getByRole('button', { name: 'Call this skill' }).click();
  await page.getByRole('heading', { name: 'Confirm the payment' }).waitFor();
  const connect = page.getByRole('button', { name: 'Connect with Test Wallet' });
  if (await connect.isVisible()) await connect.click();
  await page.getByText(`Paying from ${payer.address.slice(0, 6)}`).waitFor();
}

async function payAndRead(i: number) {
  await page.getByRole('button', { name: 'Pay $0.001 and call' }).click();
  await page.getByRole('heading', { name: 'Result' }).waitFor();
  expect(JSON.parse((await page.locator('.result').textContent())!)).toMatchObject({ echo: { i } });
}

describe('Try it with a payment channel', () => {
  it('pays exact as before while the visitor has not opted in, and offers the channel, off', async () => {
    const [payerBefore, payeeBefore] = await balances();
    await confirmCall(1);
    const optIn = page.getByLabel(/Pay through a payment channel/);
    expect(await optIn.isChecked()).toBe(false);
    expect(await page.locator('.channel-opt-in').textContent()).toContain(`one deposit of ${usdc(DEPOSIT)} USDC now`);
    const signed = walletSignatures().length;
    await payAndRead(1);
    const typed = walletSignatures().slice(signed);
    expect(typed).toHaveLength(1);
    expect(JSON.parse(typed[0]!.params[1] as string).primaryType).toBe('TransferWithAuthorization');
    expect(await balances()).toEqual([payerBefore - PRICE, payeeBefore + PRICE]);
    const tx = (await page.locator('.tx-hash').textContent()) as Hex;
    expect((await stack.chain.publicClient.getTransactionReceipt({ hash: tx })).status).toBe('success');
    expect(await page.locator('.receipt').textContent()).not.toContain('channel');
    expect(await page.locator('.channels').count()).toBe(0);
  });

  it('opted in: one deposit signed in the wallet for three calls, vouchers after it, no transfer per call on chain', async () => {
    const [payerBefore, payeeBefore] = await balances();
    const from = (await stack.chain.publicClient.getBlockNumber()) + 1n;
    const signed = walletSignatures().length;
    await confirmCall(1);
    await page.getByLabel(/Pay through a payment channel/).check();
    // The terms are asked for again with the channel first; the deposit is shown beside the price before the wallet is asked.
    const plan = page.locator('.channel-plan', { hasText: 'into a payment channel' });
    await plan.waitFor();
    expect(DEPOSIT).toBe(10n * PRICE);
    expect(await plan.textContent()).toContain(
      `deposit ${usdc(DEPOSIT)} USDC into a payment channel (refundable; each call is charged from it)`,
    );
    expect(await page.locator('.confirm .button-primary').textContent()).toBe(`Deposit ${usdc(DEPOSIT)}, pay $0.001 and call`);
    expect(walletSignatures().slice(signed)).toEqual([]);
    await screenshot(page, 'try-it-channel-opt-in');
    await page.setViewportSize(VIEWPORTS.phone);
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(VIEWPORTS.phone.width);
    await screenshot(page, 'try-it-channel-opt-in');
    await page.setViewportSize(VIEWPORTS.desktop);
    await payAndRead(1);
    const receipt = page.locator('.receipt');
    expect(await receipt.textContent()).toContain(`Paid from your channel: charged $0.001, channel balance left ${usdc(DEPOSIT - PRICE)}`);
    expect(await receipt.textContent()).toContain(
      `This call first deposited ${usdc(DEPOSIT)} into the channel (refundable; each call is charged from it) in transaction`,
    );
    await screenshot(page, 'try-it-channel-deposit-receipt');
    await page.setViewportSize(VIEWPORTS.phone);
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(VIEWPORTS.phone.width);
    await screenshot(page, 'try-it-channel-deposit-receipt');
    await page.setViewportSize(VIEWPORTS.desktop);
    const deposit = (await receipt.locator('.tx-hash').textContent()) as Hex;
    expect((await stack.chain.publicClient.getTransactionReceipt({ hash: deposit })).status).toBe('success');
    const afterDeposit = await stack.chain.publicClient.getBlockNumber();

    for (const i of [2, 3]) {
      await confirmCall(i);
      // The choice is remembered by this browser, and the open channel is shown with what it holds.
      expect(await page.getByLabel(/Pay through a payment channel/).isChecked()).toBe(true);
      await page.locator('.channel-plan', { hasText: 'No wallet prompt' }).waitFor();
      expect(await page.locator('.channels').textContent()).toContain(`${usdc(DEPOSIT - BigInt(i - 1) * PRICE)} USDC left`);
      // Shown below the call button: the wallet comes back a moment after the page shows, and what it
      // brings never moves the button under a pointer about to press it.
      const [button, line] = await Promise.all([
        page.getByRole('button', { name: 'Call this skill' }).boundingBox(),
        page.locator('.channels').boundingBox(),
      ]);
      expect(line!.y).toBeGreaterThan(button!.y + button!.height);
      await payAndRead(i);
      expect(await receipt.textContent()).toContain(`charged $0.001, channel balance left ${usdc(DEPOSIT - BigInt(i) * PRICE)}`);
      expect(await receipt.locator('.tx-hash').count()).toBe(0);
      expect(await receipt.textContent()).not.toContain('deposited');
    }
    await screenshot(page, 'try-it-channel-receipt');
    await page.setViewportSize(VIEWPORTS.phone);
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(VIEWPORTS.phone.width);
    await screenshot(page, 'try-it-channel-receipt');
    await page.setViewportSize(VIEWPORTS.desktop);

    // The wallet was asked once: the deposit (an ERC-3009 ReceiveWithAuthorization).
    const typed = walletSignatures().slice(signed);
    expect(typed).toHaveLength(1);
    expect(JSON.parse(typed[0]!.params[1] as string).primaryType).toBe('ReceiveWithAuthorization');
    expect(handled).toBe(4);

    // On chain: the deposit went into escrow, nothing reached the payee, no transaction after the deposit.
    expect(await balances()).toEqual([payerBefore - DEPOSIT, payeeBefore]);
    expect(await stack.chain.publicClient.getBlockNumber()).toBe(afterDeposit);
    const moved = await stack.chain.publicClient.getLogs({
      address: stack.asset.address,
      event: transfer,
      args: { from: payer.address },
      fromBlock: from,
    });
    expect(moved).toHaveLength(1);
    expect(moved[0]!.transactionHash).toBe(deposit);
    const [created, ...others] = await stack.chain.publicClient.getContractEvents({
      address: BATCH_SETTLEMENT_ADDRESS,
      abi: batchSettlementAbi,
      eventName: 'ChannelCreated',
      fromBlock: from,
    });
    expect(others).toEqual([]);
    const { config } = created!.args as { config: { payer: string; payerAuthorizer: string; receiver: string } };
    expect(getAddress(config.payer)).toBe(getAddress(payer.address));
    expect(getAddress(config.receiver)).toBe(payee);
    // The session key, not the wallet, is the channel's voucher signer.
    expect(getAddress(config.payerAuthorizer)).not.toBe(getAddress(payer.address));
    expect(errors).toEqual([]);
  });

  it('signed in, records a channel call in the history as one: its channel and cumulative charge, no transfer to check', async () => {
    await page.goto(`/signin?next=/skill/${skill.slug}`);
    await page.getByRole('button', { name: 'Sign in with Test Wallet' }).click();
    await page.getByRole('button', { name: 'Call this skill' }).waitFor();
    await confirmCall(4);
    const usage = page.waitForResponse((r) => r.url().endsWith('/analytics/usage') && r.request().method() === 'POST');
    await payAndRead(4);
    expect((await usage).status()).toBe(200);
    const rows = await registry.database.db
      .select({
        paymentRef: usageRecords.paymentRef,
        paymentId: usageRecords.paymentId,
        channelId: usageRecords.channelId,
        cumulative: usageRecords.cumulative,
        amount: usageRecords.amount,
      })
      .from(usageRecords)
      .where(eq(usageRecords.skillId, skill.id));
    // Three calls were paid from the channel before this one: its cumulative charge is now four calls' worth.
    expect(rows).toEqual([
      { paymentRef: null, paymentId: null, channelId: expect.stringMatching(/^0x[0-9a-f]{64}$/), cumulative: 4n * PRICE, amount: PRICE },
    ]);
    expect(errors).toEqual([]);
  });

  it('deposits what SkillMarket deposits for the same skill: one policy', async () => {
    const other = await stack.chain.createAccount({ usdc: 1_000_000n });
    const market = new SkillMarket({
      apiUrl: registry.url,
      network: stack.chain.network,
      assets: [{ network: stack.chain.network, ...stack.asset }],
      wallet: other,
      payment: 'channel',
      recordUsage: false,
    });
    const before = await stack.chain.balanceOf(other.address);
    const { receipt } = await market.callWithReceipt(skill.slug, { i: 'sdk' });
    expect(receipt).toMatchObject({ amount: `${PRICE}`, deposit: `${DEPOSIT}` });
    expect(await stack.chain.balanceOf(other.address)).toBe(before - DEPOSIT);
  });

  it('a usage-based skill is confirmed at its most, and its receipt says the charge: less, from the open channel', async () => {
    await page.goto(`/skill/${meteredSlug}`);
    await page.getByLabel('Input (JSON)').fill('{"n":1}');
    await page.getByRole('button', { name: 'Call this skill' }).click();
    await page.getByRole('heading', { name: 'Confirm the payment' }).waitFor();
    // Opted in before: the open channel (same server) pays it without a wallet prompt.
    await page.locator('.channel-plan', { hasText: 'No wallet prompt' }).waitFor();
    expect(await page.locator('.confirm').textContent()).toContain('Pay at most $0.005 USDC');
    expect(await page.locator('.usage-based').textContent()).toBe(
      'This skill is priced by use: the call is charged what it used, at most its price.',
    );
    await screenshot(page, 'try-it-usage-based');
    const [payerBefore] = await balances();
    await page.getByRole('button', { name: 'Pay at most $0.005 and call' }).click();
    await page.getByRole('heading', { name: 'Result' }).waitFor();
    expect(JSON.parse((await page.locator('.result').textContent())!)).toEqual({ metered: { n: 1 } });
    const left = DEPOSIT - 4n * PRICE - 2_000n;
    expect(await page.locator('.receipt').textContent()).toContain(`charged $0.002, channel balance left ${usdc(left)}`);
    await screenshot(page, 'try-it-usage-based-receipt');
    // A voucher: nothing moved on chain.
    expect((await balances())[0]).toBe(payerBefore);
    expect(errors).toEqual([]);
  });
});
