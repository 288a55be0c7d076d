/**
 * The marketplace's main story in a real Chromium against the compiled binary, every piece real: anvil with our
 * EIP-3009 token, and `dist/market` (built by `npm run build` when missing or stale) run three
 * times: `market facilitator` settling on that chain, `market registry` serving the pages (on
 * PostgreSQL from TEST_DATABASE_URL when set, else embedded) and verifying payments on the chain,
 * and `market serve` running examples/creator/skills.ts. Two injected wallets: the creator (who is
 * paid) and the consumer (who holds USDC).
 *
 * A creator connects, creates the groups the example skills name, creates a creator API key in the
 * dashboard and copies it (read back from the clipboard); the skill server registers with that key;
 * the skill is listed on the marketplace. A consumer signs in, searches, opens the skill and pays
 * with Try it: tokens move on chain, the result and receipt show. The call shows in the creator's
 * analytics and revenue and in the consumer's paid calls. The key is revoked in the dashboard and
 * the registry refuses it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { bearer } from '../support/auth';
import { ensureBinary, startBinary, type BinaryProcess } from '../support/binary';
import { startChain, type LocalChain } from '../support/chain';
import { createPostgresDatabase, seedEmbeddedDataDir, TEST_DATABASE_URL } from '../support/database';
import { eventually } from '../support/eventually';
import { freePort } from '../support/process';
import { injectWallet, launchBrowser, newContext, pageErrors, screenshot } from '../support/web';

const PRICE = 2_000n; // word-count: $0.002

let chain: LocalChain;
let facilitatorUrl: string;
let registryUrl: string;
let browser: Browser;
let creatorContext: BrowserContext;
let consumerContext: BrowserContext;
let creatorPage: Page;
let consumerPage: Page;
let skillServer: BinaryProcess | undefined;
const processes: BinaryProcess[] = [];
const cleanups: (() => Promise<void> | void)[] = [];
/** Console errors and failed scripts of each page; both must stay clean. */
const pageErrorLists: string[][] = [];
let creatorKey: string;

const registryRequest = (path: string, init?: RequestInit) => fetch(`${registryUrl}${path}`, init);

/** Where a server process keeps its data: a fresh PostgreSQL database when TEST_DATABASE_URL is set, else a seeded embedded one. */
async function databaseEnv(): Promise<Record<string, string>> {
  if (TEST_DATABASE_URL) {
    const created = await createPostgresDatabase();
    cleanups.push(() => created.drop());
    return { DATABASE_URL: created.url };
  }
  const dir = mkdtempSync(join(tmpdir(), 'market-e2e-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  await seedEmbeddedDataDir(dir);
  return { MARKET_DATA_DIR: dir };
}

async function signIn(page: Page, next: string): Promise<void> {
  await page.goto(`/signin?next=${next}`);
  await page.getByRole('button', { name: 'Sign in with Test Wallet' }).click();
  await page.getByRole('navigation', { name: 'Dashboard' }).waitFor();
}

beforeAll(async () => {
  const [binary, started, launched] = await Promise.all([
    ensureBinary(),
    startChain({ payers: 1, payees: 1, relayers: 1 }),
    launchBrowser(),
  ]);
  console.log(binary.buildMs ? `built dist/market in ${Math.round(binary.buildMs)} ms` : 'dist/market is up to date');
  chain = started;
  browser = launched;
  const [facilitatorPort, registryPort, facilitatorDb, registryDb] = await Promise.all([
    freePort(),
    freePort(),
    databaseEnv(),
    databaseEnv(),
  ]);
  facilitatorUrl = `http://127.0.0.1:${facilitatorPort}`;
  registryUrl = `http://127.0.0.1:${registryPort}`;
  const [facilitator, registry] = await Promise.all([
    startBinary(
      ['facilitator', '--port', String(facilitatorPort), '--host', '127.0.0.1'],
      {
        ...facilitatorDb,
        FACILITATOR_PRIVATE_KEY: chain.accounts.relayer.privateKey,
        FACILITATOR_NETWORK: chain.network,
        FACILITATOR_RPC_URL: chain.rpcUrl,
        FACILITATOR_ASSETS: chain.token.address,
      },
      `${facilitatorUrl}/health`,
    ),
    startBinary(
      ['registry', '--port', String(registryPort), '--host', '127.0.0.1'],
      {
        ...registryDb,
        PUBLIC_URL: registryUrl,
        AUTH_JWT_SECRET: 'e2e-binary-secret-that-is-at-least-32-chars',
        MARKET_NETWORK: chain.network,
        MARKET_USDC_ADDRESS: chain.token.address,
        MARKET_RPC_URL: chain.rpcUrl,
        MARKET_ALLOW_HTTP_ENDPOINTS: 'true',
        MARKET_PAYMENT_VERIFY_INTERVAL_MS: '100',
        RATE_LIMIT_AUTH: 'off',
        RATE_LIMIT_WRITE: 'off',
        RATE_LIMIT_READ: 'off',
      },
      `${registryUrl}/health`,
    ),
  ]);
  processes.push(facilitator, registry);
  creatorContext = await newContext(browser, 'desktop', registryUrl);
  consumerContext = await newContext(browser, 'desktop', registryUrl);
  // Copy buttons write to the clipboard; the story reads it back.
  await creatorContext.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: registryUrl });
  await injectWallet(creatorContext, chain.accounts.payee, chain.chainId);
  await injectWallet(consumerContext, chain.accounts.payer, chain.chainId);
  creatorPage = await creatorContext.newPage();
  consumerPage = await consumerContext.newPage();
  pageErrorLists.push(pageErrors(creatorPage), pageErrors(consumerPage));
}, 90_000);

afterAll(async () => {
  await browser?.close();
  for (const running of [skillServer, ...processes].filter((p) => p !== undefined)) await running.stop();
  await chain?.stop();
  for (const cleanup of cleanups) await cleanup();
});

describe('end to end: creator dashboard, marketplace, Try it, analytics and history, key revoked', () => {
  it('the creator connects the wallet, creates the groups and a creator API key taken from the page', async () => {
    const health = (await (await registryRequest('/health')).json()) as { status: string; database: string };
    expect(health).toMatchObject({ status: 'ok', database: TEST_DATABASE_URL ? 'postgres' : 'embedded' });
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
    await shown.getByRole('button', { name: 'Copy the key' }).click();
    await shown.getByRole('button', { name: 'Copied' }).waitFor();
    expect(await creatorPage.evaluate('navigator.clipboard.readText()')).toBe(creatorKey);
    await shown.getByRole('button', { name: 'Done' }).click();
    await creatorPage.getByRole('row', { name: /skill server/ }).waitFor();
  });

  it('market serve registers the skills with that key, and the marketplace lists them', async () => {
    const port = await freePort();
    const channelsDir = mkdtempSync(join(tmpdir(), 'market-e2e-channels-'));
    cleanups.push(() => rmSync(channelsDir, { recursive: true, force: true }));
    const endpoint = `http://127.0.0.1:${port}`;
    skillServer = await startBinary(
      [
        'serve',
        'examples/creator/skills.ts',
        // Its own channel folder: the default (.market/channels in the working directory, the
        // repository here) would carry channel records of an earlier run into this one.
        '--channels-dir',
        channelsDir,
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
      { MARKET_WALLET_ADDRESS: chain.accounts.payee.address, MARKET_API_KEY: creatorKey, MARKET_API_URL: registryUrl },
    );
    // The listings appear once the server has registered them (one by one); the marketplace shows
    // them once its read cache (a second) has let them through.
    const listedNames = async () =>
      ((await (await registryRequest(`/skills?creator=${chain.accounts.payee.address}`)).json()) as { name: string }[])
        .map((s) => s.name)
        .sort();
    const registered = { context: () => `the skill server:\n${skillServer?.output()}` };
    expect(
      await eventually(listedNames, (names) => names.length === 2, 'the skill server registers both skills', 20_000, registered),
    ).toEqual(['echo', 'word-count']);
    const page = creatorPage;
    await page.goto('/');
    const shown = async () => {
      await page.reload();
      await page.getByRole('heading', { level: 1 }).waitFor();
      return (await page.getByRole('link', { name: 'word-count' }).count()) + (await page.getByRole('link', { name: 'echo' }).count());
    };
    await eventually(shown, (links) => links === 2, 'the marketplace lists both skills', 10_000);
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
    const recorded = async () => {
      await page.reload();
      await page.getByRole('heading', { level: 1, name: 'My paid calls' }).waitFor();
      return page.getByRole('row', { name: /word-count/ }).count();
    };
    await eventually(recorded, (rows) => rows > 0, 'the paid call shows in My paid calls');
    const row = page.getByRole('row', { name: /word-count/ });
    expect(await row.textContent()).toContain('$0.002');
    expect(await row.locator('.tx-hash').textContent()).toMatch(/^0x[0-9a-f]{64}$/);
    await screenshot(page, 'dashboard-calls');

    await creatorPage.goto('/dashboard/skills/word-count');
    await creatorPage.getByTestId('stat-calls').waitFor();
    // The skill server reports the call off the response path: wait for it.
    const counted = async () => {
      await creatorPage.reload();
      return creatorPage.getByTestId('stat-calls').textContent();
    };
    await eventually(counted, (calls) => calls === '1', 'the creator analytics count the call');
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
    expect((await registryRequest('/creators/me/skills', { headers: bearer(creatorKey) })).status).toBe(200);
    await creatorPage.goto('/dashboard/keys');
    await creatorPage.getByRole('button', { name: 'Revoke skill server' }).click();
    await creatorPage.getByRole('dialog', { name: 'Revoke skill server?' }).getByRole('button', { name: 'Revoke the key' }).click();
    await creatorPage
      .getByRole('row', { name: /skill server/ })
      .getByText('revoked')
      .waitFor();
    const refused = await registryRequest('/creators/me/skills', { headers: bearer(creatorKey) });
    expect({ status: refused.status, error: ((await refused.json()) as { error: string }).error }).toEqual({
      status: 403,
      error: 'API key revoked',
    });
    expect(pageErrorLists).toEqual([[], []]);
  });
});
