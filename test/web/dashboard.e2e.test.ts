/**
 * Issue 14's story in a real Chromium, every piece real: anvil with our EIP-3009 token, a
 * facilitator on a real port settling there, the registry serving the pages, and `market serve`
 * (the CLI as a child process) running examples/creator/skills.ts. Two injected wallets: the
 * creator (who is paid) and the consumer (who holds USDC).
 *
 * A creator connects, creates the groups the example skills name, creates a creator API key in the
 * dashboard and takes it from the page; the skill server registers with that key; the skill is
 * listed on the marketplace. A consumer signs in, searches, opens the skill and pays with Try it:
 * tokens move on chain, the result and receipt show. The call shows in the creator's analytics and
 * revenue and in the consumer's paid calls. The key is revoked in the dashboard and the registry
 * refuses it.
 */
import { afterAll, beforeAll, describe, expect, it, setDefaultTimeout } from 'bun:test';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { startChain, type LocalChain } from '../support/chain';
import { startFacilitatorFixture, type FacilitatorFixture } from '../support/facilitator';
import { freePort } from '../support/process';
import { bearer } from '../support/auth';
import { injectWallet, launchBrowser, newContext, pageErrors, screenshot, startWebRegistry, type WebRegistry } from '../support/web';

setDefaultTimeout(30_000);

const ROOT = join(import.meta.dir, '../..');
const PRICE = 2_000n; // word-count: $0.002

let chain: LocalChain;
let facilitator: FacilitatorFixture;
let facilitatorUrl: string;
let registry: WebRegistry;
let browser: Browser;
let creatorContext: BrowserContext;
let consumerContext: BrowserContext;
let creatorPage: Page;
let consumerPage: Page;
let skillServer: ReturnType<typeof Bun.spawn> | undefined;
const serverOutput: string[] = [];
/** Console errors and failed scripts of each page; both must stay clean. */
const pageErrorLists: string[][] = [];
let creatorKey: string;

async function signIn(page: Page, next: string): Promise<void> {
  await page.goto(`/signin?next=${next}`);
  await page.getByRole('button', { name: 'Sign in with Test Wallet' }).click();
  await page.getByRole('navigation', { name: 'Dashboard' }).waitFor();
}

beforeAll(async () => {
  [chain, browser] = await Promise.all([startChain({ payers: 1, payees: 1, relayers: 1 }), launchBrowser()]);
  facilitator = await startFacilitatorFixture(chain, 'embedded');
  const port = await freePort();
  facilitator.facilitator.app.listen({ hostname: '127.0.0.1', port });
  facilitatorUrl = `http://127.0.0.1:${port}`;
  registry = await startWebRegistry({
    env: {
      MARKET_NETWORK: chain.network,
      MARKET_USDC_ADDRESS: chain.token.address,
      MARKET_RPC_URL: chain.rpcUrl,
      MARKET_ALLOW_HTTP_ENDPOINTS: 'true',
    },
    verifyPayments: true,
  });
  creatorContext = await newContext(browser, 'desktop', registry.url);
  consumerContext = await newContext(browser, 'desktop', registry.url);
  await injectWallet(creatorContext, chain.accounts.payee, chain.chainId);
  await injectWallet(consumerContext, chain.accounts.payer, chain.chainId);
  creatorPage = await creatorContext.newPage();
  consumerPage = await consumerContext.newPage();
  pageErrorLists.push(pageErrors(creatorPage), pageErrors(consumerPage));
}, 60_000);

afterAll(async () => {
  if (skillServer) {
    skillServer.kill('SIGTERM');
    await skillServer.exited;
  }
  await browser?.close();
  await registry?.close();
  await facilitator?.facilitator.app.stop(true);
  await facilitator?.close();
  await chain?.stop();
});

describe('issue 14 end to end: creator dashboard, marketplace, Try it, analytics and history, key revoked', () => {
  it('the creator connects the wallet, creates the groups and a creator API key taken from the page', async () => {
    await signIn(creatorPage, '/dashboard/groups');
    for (const name of ['text', 'tools']) {
      await creatorPage.getByRole('button', { name: 'New group' }).click();
      const dialog = creatorPage.getByRole('dialog', { name: 'New group' });
      await dialog.getByLabel('Name').fill(name);
      await dialog.getByRole('button', { name: 'Create group' }).click();
      await dialog.waitFor({ state: 'detached' });
      await creatorPage.getByRole('list', { name: 'Your groups' }).locator('strong', { hasText: name }).waitFor();
    }
    await creatorPage.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'API keys' }).click();
    await creatorPage.getByRole('button', { name: 'New API key' }).click();
    const dialog = creatorPage.getByRole('dialog', { name: 'New API key' });
    await dialog.getByLabel('Name').fill('skill server');
    expect(await dialog.getByLabel(/Creator/).isChecked()).toBe(true);
    await dialog.getByRole('button', { name: 'Create key' }).click();
    const shown = creatorPage.getByRole('dialog', { name: 'Your new API key' });
    creatorKey = await shown.getByLabel(/Creator key/).inputValue();
    expect(creatorKey).toMatch(/^sk_/);
    await shown.getByRole('button', { name: 'Done' }).click();
    await creatorPage.getByRole('row', { name: /skill server/ }).waitFor();
  });

  it('market serve registers the skills with that key, and the marketplace lists them', async () => {
    const port = await freePort();
    const endpoint = `http://127.0.0.1:${port}`;
    skillServer = Bun.spawn(
      [
        process.execPath,
        'src/cli/main.ts',
        'serve',
        'examples/creator/skills.ts',
        '--port',
        String(port),
        '--host',
        '127.0.0.1',
        '--endpoint',
        endpoint,
        '--facilitator',
        facilitatorUrl,
        '--network',
        chain.network,
        '--asset',
        chain.token.address,
      ],
      {
        cwd: ROOT,
        env: {
          PATH: process.env.PATH ?? '',
          HOME: process.env.HOME ?? '/tmp',
          LOG_LEVEL: 'warn',
          MARKET_WALLET_ADDRESS: chain.accounts.payee.address,
          MARKET_API_KEY: creatorKey,
          MARKET_API_URL: registry.url,
        },
        stdout: 'pipe',
        stderr: 'pipe',
      },
    );
    for (const stream of [skillServer.stdout, skillServer.stderr] as ReadableStream<Uint8Array>[])
      void (async () => {
        for await (const c of stream) serverOutput.push(new TextDecoder().decode(c));
      })();
    // The listing appears once the server has registered: reload the marketplace until it shows.
    const page = creatorPage;
    await page.goto('/');
    const deadline = Date.now() + 20_000;
    while ((await page.getByRole('link', { name: 'word-count' }).count()) === 0) {
      if (skillServer.exitCode !== null || Date.now() > deadline)
        throw new Error(`the skill server did not register:\n${serverOutput.join('')}`);
      await page.waitForTimeout(200);
      await page.reload();
      await page.getByRole('heading', { level: 1 }).waitFor();
    }
    expect(await page.getByRole('link', { name: 'echo' }).count()).toBe(1);
    const listed = (await (await registry.request(`/skills?creator=${chain.accounts.payee.address}`)).json()) as {
      name: string;
      endpoint: string;
    }[];
    expect(listed.map((s) => s.name).sort()).toEqual(['echo', 'word-count']);
    await screenshot(page, 'e2e-marketplace');
  });

  it('a consumer signs in, searches, opens the skill and pays with Try it: tokens move on chain, result and receipt shown', async () => {
    const page = consumerPage;
    await signIn(page, '/dashboard/calls');
    await page.goto('/');
    await page.getByLabel('Search skills').fill('count words');
    // The search box updates the address after a pause; clicking before that would be undone by it.
    await page.waitForURL(/q=count/);
    await page.getByText('Showing 1 skill').waitFor();
    await page.getByRole('link', { name: 'word-count' }).click();
    await page.getByRole('heading', { level: 1, name: 'word-count' }).waitFor();
    const [payerBefore, payeeBefore] = await Promise.all([
      chain.balanceOf(chain.accounts.payer.address),
      chain.balanceOf(chain.accounts.payee.address),
    ]);
    await page.getByLabel(/^text/).fill('three small words');
    await page.getByRole('button', { name: 'Call this skill' }).click();
    await page.getByRole('heading', { name: 'Confirm the payment' }).waitFor();
    const connectButton = page.getByRole('button', { name: 'Connect with Test Wallet' });
    if (await connectButton.count()) await connectButton.click();
    await page.getByRole('button', { name: 'Pay $0.002 and call' }).click();
    const receipt = page.getByLabel('Payment receipt');
    await receipt.waitFor({ timeout: 20_000 });
    expect(await page.locator('.result').textContent()).toContain('"words": 3');
    const tx = (await receipt.locator('.tx-hash').textContent())!;
    expect(tx).toMatch(/^0x[0-9a-f]{64}$/);
    const mined = await chain.publicClient.getTransactionReceipt({ hash: tx as `0x${string}` });
    expect(mined.status).toBe('success');
    expect(await chain.balanceOf(chain.accounts.payer.address)).toBe(payerBefore - PRICE);
    expect(await chain.balanceOf(chain.accounts.payee.address)).toBe(payeeBefore + PRICE);
    await screenshot(page, 'e2e-try-it');
  });

  it('the call shows in the creator analytics and revenue, and in the consumer paid calls', async () => {
    // The consumer's history (Try it records usage in the background after the result).
    const page = consumerPage;
    await page.goto('/dashboard/calls');
    const deadline = Date.now() + 10_000;
    while ((await page.getByRole('row', { name: /word-count/ }).count()) === 0 && Date.now() < deadline) {
      await page.waitForTimeout(200);
      await page.reload();
      await page.getByRole('heading', { level: 1, name: 'My paid calls' }).waitFor();
    }
    const row = page.getByRole('row', { name: /word-count/ });
    expect(await row.textContent()).toContain('$0.002');
    expect(await row.locator('.tx-hash').textContent()).toMatch(/^0x[0-9a-f]{64}$/);
    await screenshot(page, 'dashboard-calls');

    await creatorPage.goto('/dashboard/skills/word-count');
    await creatorPage.getByTestId('stat-calls').waitFor();
    const until = Date.now() + 10_000;
    // The skill server reports the call off the response path: wait for it.
    while ((await creatorPage.getByTestId('stat-calls').textContent()) !== '1' && Date.now() < until) {
      await creatorPage.waitForTimeout(200);
      await creatorPage.reload();
      await creatorPage.getByTestId('stat-calls').waitFor();
    }
    expect(await creatorPage.getByTestId('stat-calls').textContent()).toBe('1');
    expect(await creatorPage.getByTestId('stat-revenue').textContent()).toBe('$0.002');
    const today = new Date().toISOString().slice(0, 10);
    const callsTable = creatorPage.locator('.chart .visually-hidden table').first();
    expect(await callsTable.locator('tr', { hasText: today }).locator('td').textContent()).toBe('1');
    await screenshot(creatorPage, 'e2e-analytics');
    await creatorPage.goto('/dashboard/skills');
    expect(await creatorPage.getByRole('row', { name: /word-count/ }).textContent()).toContain('$0.002');
  });

  it('the key is revoked in the dashboard and the registry refuses it', async () => {
    expect((await registry.request('/creators/me/skills', { headers: bearer(creatorKey) })).status).toBe(200);
    await creatorPage.goto('/dashboard/keys');
    await creatorPage.getByRole('button', { name: 'Revoke skill server' }).click();
    await creatorPage.getByRole('dialog', { name: 'Revoke skill server?' }).getByRole('button', { name: 'Revoke the key' }).click();
    await creatorPage
      .getByRole('row', { name: /skill server/ })
      .getByText('revoked')
      .waitFor();
    const refused = await registry.request('/creators/me/skills', { headers: bearer(creatorKey) });
    expect({ status: refused.status, error: ((await refused.json()) as { error: string }).error }).toEqual({
      status: 403,
      error: 'API key revoked',
    });
    expect(pageErrorLists).toEqual([[], []]);
  });
});
