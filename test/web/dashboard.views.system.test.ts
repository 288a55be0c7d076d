/**
 * The dashboard's views in a real Chromium, signed in with an injected wallet: each section's empty
 * state, its error state (the registry's message and request id), the writes each view makes
 * (groups, API keys, a spending wallet made in the page, profile, skill editing), dialogs used
 * with the keyboard, and every view at phone width without sideways scrolling.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { readFileSync } from 'node:fs';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { decryptKeystore } from 'skill-market/wallet';
import { eq } from 'drizzle-orm';
import { verifyMessage } from 'viem';
import { PAYMENT_REVERTED_REASON } from 'skill-market/registry';
import { paymentVerifications } from '../../src/db/schema';
import { pageConfig as webPageConfig } from '../../src/web/config';
import { markRejected } from '../../src/registry/modules/payment-verification/store';
import { bearer, jsonPost } from '../support/auth';
import { injectWallet, launchBrowser, newContext, pageErrors, screenshot, startWebRegistry, type WebRegistry } from '../support/web';

let registry: WebRegistry;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let errors: string[];
let token: string;

/** The session's access token (the HttpOnly cookie), to set up data through the API as this user. */
async function accessToken(): Promise<string> {
  return (await context.cookies()).find((c) => c.name === 'market_token')!.value;
}

async function open(section: string, ready: string): Promise<void> {
  await page.goto(`/dashboard/${section}`);
  await page.getByText(ready).first().waitFor();
}

/** Answers `path` (a glob) with the registry's error shape, once. */
async function failOnce(path: string, status = 503): Promise<void> {
  await page.route(
    path,
    (route) =>
      route.fulfill({
        status,
        contentType: 'application/json',
        headers: { 'x-request-id': 'req-test-42' },
        body: JSON.stringify({ error: 'Database unavailable', code: 'UNAVAILABLE', requestId: 'req-test-42' }),
      }),
    { times: 1 },
  );
}

beforeAll(async () => {
  [registry, browser] = await Promise.all([startWebRegistry(), launchBrowser()]);
  context = await newContext(browser, 'desktop', registry.url);
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: registry.url });
  await injectWallet(context, privateKeyToAccount(generatePrivateKey()), 8453);
  page = await context.newPage();
  errors = pageErrors(page);
  await page.goto('/signin?next=/dashboard/skills');
  await page.getByRole('button', { name: 'Sign in with Test Wallet' }).click();
  await page.getByRole('navigation', { name: 'Dashboard' }).waitFor();
  token = await accessToken();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await registry?.close();
});

describe('empty states', () => {
  it('says what each section is for when it has nothing yet', async () => {
    for (const [section, empty, shot] of [
      ['skills', 'No skills yet', 'dashboard-skills-empty'],
      ['groups', 'No groups yet', 'dashboard-groups-empty'],
      ['keys', 'No API keys yet', 'dashboard-keys-empty'],
      ['wallets', 'No spending wallets yet', 'dashboard-wallets-empty'],
      ['calls', 'No paid calls yet', 'dashboard-calls-empty'],
      ['favourites', 'No favourites yet', 'dashboard-favourites-empty'],
    ] as const) {
      await open(section, empty);
      await screenshot(page, shot);
    }
    expect(errors).toEqual([]);
  });
});

describe('error states', () => {
  it('shows the registry error message and request id in every view, and recovers on Try again', async () => {
    for (const [section, path, title] of [
      ['skills', '**/creators/me/skills', 'Could not load your skills'],
      ['groups', '**/groups?creator=*', 'Could not load your groups'],
      ['keys', '**/auth/api-keys', 'Could not load your API keys'],
      ['wallets', '**/wallet/all', 'Could not load your wallets'],
      ['calls', '**/analytics/usage?*', 'Could not load your paid calls'],
      ['favourites', '**/analytics/favorites', 'Could not load your favourites'],
    ] as const) {
      await failOnce(path);
      await page.goto(`/dashboard/${section}`);
      const alert = page.getByRole('alert').filter({ hasText: title });
      await alert.waitFor();
      expect(await alert.textContent()).toContain('Database unavailable');
      expect(await alert.locator('.request-id').textContent()).toBe('req-test-42');
      if (section === 'keys') await screenshot(page, 'dashboard-error');
      await alert.getByRole('button', { name: 'Try again' }).click();
      await alert.waitFor({ state: 'detached' });
    }
  });
});

describe('groups', () => {
  it('creates, renames with an icon, and refuses to delete a group in use with a clear 409', async () => {
    await open('groups', 'No groups yet');
    await page.getByRole('button', { name: 'New group' }).click();
    const dialog = page.getByRole('dialog', { name: 'New group' });
    await dialog.getByLabel('Name').fill('Text tools');
    await dialog.getByRole('button', { name: 'Create group' }).click();
    await page.getByRole('list', { name: 'Your groups' }).getByText('Text tools').waitFor();

    await page.getByRole('button', { name: 'Edit Text tools' }).click();
    const edit = page.getByRole('dialog', { name: 'Edit Text tools' });
    await edit.getByLabel('Name').fill('Text');
    await edit.getByLabel('Icon').fill('📝');
    await edit.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('list', { name: 'Your groups' }).getByText('📝').waitFor();
    const [group] = (await (
      await registry.request(
        `/groups?creator=${((await (await registry.request('/creators/me', { headers: bearer(token) })).json()) as any).walletAddress}`,
      )
    ).json()) as { name: string; icon: string; slug: string }[];
    expect(group).toMatchObject({ name: 'Text', icon: '📝' });

    // A skill in the group (paid to the creator's own sign-in wallet): deleting it now is refused.
    const me = (await (await registry.request('/creators/me', { headers: bearer(token) })).json()) as { walletAddress: string };
    const res = await registry.request(
      '/skills',
      jsonPost(
        {
          name: 'word-count',
          endpoint: 'https://skills.example/word-count',
          price: '0.002',
          paymentAddress: me.walletAddress,
          groups: [group!.slug],
          description: 'Counts words',
        },
        { ...bearer(token), origin: registry.url },
      ),
    );
    expect(res.status).toBe(201);
    await page.reload();
    await page.getByRole('button', { name: 'Delete Text' }).click();
    const confirm = page.getByRole('dialog', { name: 'Delete Text?' });
    await confirm.getByRole('button', { name: 'Delete the group' }).click();
    const refusal = confirm.getByRole('alert');
    await refusal.getByText('This group is still in use').waitFor();
    expect(await refusal.locator('.request-id').count()).toBe(1);
    await screenshot(page, 'dashboard-groups-in-use');
    await page.keyboard.press('Escape');
    await confirm.waitFor({ state: 'detached' });
    await page.waitForFunction('document.activeElement?.getAttribute("aria-label") === "Delete Text"');
    await open('groups', 'Text');
    await screenshot(page, 'dashboard-groups');
  });
});

describe('my skills', () => {
  it('lists the skill with its counters, edits description, price and schemas with JSON checked as you type', async () => {
    await open('skills', 'word-count');
    const row = page.getByRole('row', { name: /word-count/ });
    expect(await row.textContent()).toContain('$0.002');
    await page.getByRole('button', { name: 'Edit word-count' }).click();
    const dialog = page.getByRole('dialog', { name: 'Edit word-count' });
    await dialog.getByLabel('Description').fill('Counts the words of a text');
    await dialog.getByLabel('Price per call (USDC)').fill('0.003');
    const input = dialog.getByLabel('Input schema (JSON Schema)');
    await input.fill('{"type": "object",');
    await dialog.getByText(/^Not valid JSON/).waitFor();
    expect(await dialog.getByRole('button', { name: 'Save' }).isDisabled()).toBe(true);
    await screenshot(page, 'dashboard-skill-edit');
    await input.fill('{"type": "object", "required": ["text"], "properties": {"text": {"type": "string"}}}');
    await dialog.getByRole('button', { name: 'Save' }).click();
    await dialog.waitFor({ state: 'detached' });
    await row.getByText('$0.003').waitFor();
    const skill = await (await registry.request('/skills/word-count')).json();
    expect(skill).toMatchObject({ description: 'Counts the words of a text', price: '$0.003', inputSchema: { required: ['text'] } });
    await screenshot(page, 'dashboard-skills');
    // The revenue ledger downloads with the session (nothing verified yet: the header and a zero total).
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('link', { name: 'Download your revenue per skill and day (CSV)' }).click(),
    ]);
    expect(download.suggestedFilename()).toBe('revenue.csv');
    expect(readFileSync((await download.path())!, 'utf8')).toBe(
      'date,skill,paid_calls,revenue_usdc,revenue_atomic,exact_atomic,upto_atomic,channel_claimed_atomic,channel_settled_atomic,channel_unclaimed_atomic\r\ntotal,,0,0.000000,0,0,0,0,0,0\r\n',
    );
  });

  it('edits the free trial and the volume steps with errors shown inline, saved with the same PATCH', async () => {
    await open('skills', 'word-count');
    await page.getByRole('button', { name: 'Edit word-count' }).click();
    const dialog = page.getByRole('dialog', { name: 'Edit word-count' });
    await dialog.getByLabel('Free calls for each new wallet').check();
    await dialog.getByLabel('Free calls', { exact: true }).fill('0');
    await dialog.getByText('A whole number from 1 to 1000').waitFor();
    expect(await dialog.getByRole('button', { name: 'Save' }).isDisabled()).toBe(true);
    await dialog.getByLabel('Free calls', { exact: true }).fill('5');
    await dialog.getByLabel('Per wallet each').selectOption('week');
    await dialog.getByLabel("Lower prices for a payer's many calls").check();
    await dialog.getByLabel('Step 1: after paid calls').fill('100');
    await dialog.getByLabel('Step 1: price (USDC)').fill('0.01');
    await dialog.getByText('Lower than the price before it').waitFor();
    await dialog.getByLabel('Step 1: price (USDC)').fill('0.002');
    await dialog.getByRole('button', { name: 'Add a step' }).click();
    await dialog.getByLabel('Step 2: after paid calls').fill('50');
    await dialog.getByLabel('Step 2: price (USDC)').fill('0.001');
    await dialog.getByText('More calls than the step before').waitFor();
    await dialog.getByLabel('Step 2: after paid calls').fill('1000');
    await dialog.getByRole('button', { name: 'Add a step' }).click();
    await dialog.getByRole('button', { name: 'Remove step 3' }).click();
    await screenshot(page, 'dashboard-skill-plans');
    await dialog.getByRole('button', { name: 'Save' }).click();
    await dialog.waitFor({ state: 'detached' });
    const skill = await (await registry.request('/skills/word-count')).json();
    expect(skill).toMatchObject({
      trial: { calls: 5, period: 'week' },
      tiers: {
        period: 'month',
        steps: [
          { after: 100, price: '$0.002' },
          { after: 1000, price: '$0.001' },
        ],
      },
    });
    // Off again: both removed.
    await page.getByRole('button', { name: 'Edit word-count' }).click();
    await dialog.getByLabel('Free calls for each new wallet').uncheck();
    await dialog.getByLabel("Lower prices for a payer's many calls").uncheck();
    await dialog.getByRole('button', { name: 'Save' }).click();
    await dialog.waitFor({ state: 'detached' });
    expect(await (await registry.request('/skills/word-count')).json()).toMatchObject({ trial: null, tiers: null });
  });

  it('pauses a skill after confirmation and lists it again with the switch', async () => {
    await open('skills', 'word-count');
    const toggle = page.getByRole('switch', { name: 'word-count listed' });
    expect(await toggle.getAttribute('aria-checked')).toBe('true');
    await toggle.click();
    await page.getByRole('dialog', { name: 'Pause word-count?' }).getByRole('button', { name: 'Pause the skill' }).click();
    await page.locator('[role=switch][aria-checked=false]').waitFor();
    expect(((await (await registry.request('/skills/word-count')).json()) as any).isActive).toBe(false);
    await toggle.click();
    await page.locator('[role=switch][aria-checked=true]').waitFor();
    expect(((await (await registry.request('/skills/word-count')).json()) as any).isActive).toBe(true);
  });

  it('shows the skill analytics with three charts and switches between 7 and 30 days', async () => {
    await open('skills', 'word-count');
    await page.getByRole('link', { name: 'word-count' }).click();
    await page.getByText('Calls per day').first().waitFor({ state: 'attached' });
    expect(await page.locator('.chart canvas').count()).toBe(3);
    expect(await page.locator('.chart .visually-hidden table').first().locator('tr').count()).toBe(30);
    await page.getByRole('button', { name: '7 days' }).click();
    await page.waitForFunction('document.querySelector(".chart .visually-hidden table")?.querySelectorAll("tr").length === 7');
    expect(await page.getByRole('button', { name: '7 days' }).getAttribute('aria-pressed')).toBe('true');
    await screenshot(page, 'dashboard-analytics');
  });
});

describe('API keys', () => {
  it('shows a new key once with a copy button and a warning, lists it by prefix, and revokes it after confirmation', async () => {
    await open('keys', 'No API keys yet');
    const opener = page.getByRole('button', { name: 'New API key' });
    await opener.click();
    const dialog = page.getByRole('dialog', { name: 'New API key' });
    // Focus moved into the dialog; Escape closes it and focus returns to the button.
    await page.waitForFunction('document.activeElement?.id === "key-name"');
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
    await page.waitForFunction('document.activeElement?.textContent === "New API key"');

    await page.keyboard.press('Enter');
    await page.waitForFunction('document.activeElement?.id === "key-name"');
    await page.keyboard.type('laptop');
    await dialog.getByLabel(/Consumer/).check();
    await page.keyboard.press('Enter');
    const shown = page.getByRole('dialog', { name: 'Your new API key' });
    await shown.getByText('Copy it now: it is shown only this once.').waitFor();
    const key = await shown.getByLabel(/Consumer key/).inputValue();
    expect(key).toMatch(/^ck_/);
    await shown.getByRole('button', { name: 'Copy the key' }).click();
    await shown.getByRole('button', { name: 'Copied' }).waitFor();
    await screenshot(page, 'dashboard-key-created');
    await shown.getByRole('button', { name: 'Done' }).click();
    const row = page.getByRole('row', { name: /laptop/ });
    await row.waitFor();
    expect(await row.textContent()).toContain(key.slice(0, 6));
    expect(await row.textContent()).toContain('never');
    expect(await page.content()).not.toContain(key);
    await screenshot(page, 'dashboard-keys');

    expect((await registry.request('/wallet/all', { headers: bearer(key) })).status).toBe(200);
    await page.getByRole('button', { name: 'Revoke laptop' }).click();
    await page.getByRole('dialog', { name: 'Revoke laptop?' }).getByRole('button', { name: 'Revoke the key' }).click();
    await row.getByText('revoked').waitFor();
    const refused = await registry.request('/wallet/all', { headers: bearer(key) });
    expect({ status: refused.status, error: ((await refused.json()) as any).error }).toEqual({ status: 403, error: 'API key revoked' });
  });
});

describe('spending wallets', () => {
  it('makes the key in the page, downloads its encrypted keystore, sends only the address, labels and revokes it', async () => {
    await open('wallets', 'No spending wallets yet');
    await page.getByRole('button', { name: 'New wallet' }).click();
    const dialog = page.getByRole('dialog', { name: 'New spending wallet' });
    await dialog.getByLabel('Label').fill('agents');
    await dialog.getByLabel('Passphrase', { exact: true }).fill('short');
    await dialog.getByText(/At least 8 characters/).waitFor();
    expect(await dialog.getByLabel('Passphrase', { exact: true }).getAttribute('aria-invalid')).toBe('true');
    const passphrase = 'a long browser passphrase';
    await dialog.getByLabel('Passphrase', { exact: true }).fill(passphrase);
    await dialog.getByLabel('Passphrase again').fill(`${passphrase}x`);
    await dialog.getByText('The two passphrases differ.').waitFor();
    expect(await dialog.getByRole('button', { name: 'Create and download' }).isDisabled()).toBe(true);
    await dialog.getByLabel('Passphrase again').fill(passphrase);
    const sent: string[] = [];
    page.on('request', (r) => r.postData() && sent.push(r.postData()!));
    const [file] = await Promise.all([
      page.waitForEvent('download', { timeout: 30_000 }),
      dialog.getByRole('button', { name: 'Create and download' }).click(),
    ]);
    const address = await page.getByTestId('new-wallet-address').textContent({ timeout: 30_000 });
    const keystore = JSON.parse(readFileSync((await file.path())!, 'utf8'));
    const privateKey = await decryptKeystore(keystore, passphrase);
    expect(privateKeyToAccount(privateKey).address).toBe(address as `0x${string}`);
    expect(file.suggestedFilename()).toContain(address!.slice(2).toLowerCase());
    // Only the address went out; never the key.
    expect(sent.some((body) => body.includes(address!))).toBe(true);
    expect(sent.some((body) => body.toLowerCase().includes(privateKey.slice(2).toLowerCase()))).toBe(false);
    // The registration carries the new key's signature of the registry's message: the wallet is proven.
    const registration = sent.map((body) => JSON.parse(body)).find((body) => body.proof);
    expect(registration).toMatchObject({ address });
    expect(await verifyMessage({ address: address as `0x${string}`, ...registration.proof })).toBe(true);
    await page.getByRole('button', { name: 'Done' }).click();
    const item = page.getByRole('list', { name: 'Your spending wallets' }).getByRole('listitem').first();
    await item.getByText('agents').waitFor();
    // This registry's chain is unreachable: the balance says so instead of failing the list.
    await item.getByText('unavailable').waitFor();
    await screenshot(page, 'dashboard-wallets');

    await page.getByRole('button', { name: 'Label agents' }).click();
    await page.getByRole('dialog', { name: 'Label the wallet' }).getByLabel('Label').fill('bots');
    await page.getByRole('dialog', { name: 'Label the wallet' }).getByRole('button', { name: 'Save' }).click();
    await item.getByText('bots').waitFor();
    await page.getByRole('button', { name: 'Revoke bots' }).click();
    await page.getByRole('dialog', { name: 'Revoke this wallet?' }).getByRole('button', { name: 'Revoke the wallet' }).click();
    await item.getByText('revoked').waitFor();
    const [listed] = (await (await registry.request('/wallet/all', { headers: bearer(token) })).json()) as {
      address: string;
      label: string;
      revokedAt: string | null;
    }[];
    expect(listed).toMatchObject({ address, label: 'bots', revokedAt: expect.any(String) });
  });
});

describe('profile', () => {
  it('saves name and bio, shown in the header and on the public creator page', async () => {
    await open('profile', 'Save profile');
    await page.getByLabel('Name').fill('Ada');
    await page.getByLabel('Bio').fill('Writes small text skills.');
    await page.getByLabel('Avatar image address').fill('not a url');
    await page.getByRole('button', { name: 'Save profile' }).click();
    // The browser's own URL check stops it before the registry: nothing saved yet.
    expect(((await (await registry.request('/creators/me', { headers: bearer(token) })).json()) as any).name).toBeNull();
    await page.getByLabel('Avatar image address').fill('');
    await page.getByRole('button', { name: 'Save profile' }).click();
    await page.getByText('Saved.').waitFor();
    expect(await page.locator('.account-slot').textContent()).toContain('Ada');
    expect((await (await registry.request('/creators/me', { headers: bearer(token) })).json()) as any).toMatchObject({
      name: 'Ada',
      bio: 'Writes small text skills.',
    });
    await screenshot(page, 'dashboard-profile');
    expect(errors).toEqual([]);
  });
});

describe('form fields', () => {
  /** Each text field of the open forms that a screen reader would not describe in full: no label, a hint or error it is not told about. */
  const unlinked = () =>
    page.evaluate(`[...document.querySelectorAll('form .field')].flatMap((field) => {
      const control = field.querySelector(':scope > input, :scope > textarea');
      if (!control) return [];
      const problems = [];
      if (control.labels.length === 0) problems.push('no label');
      const described = (control.getAttribute('aria-describedby') ?? '').split(' ').filter(Boolean);
      for (const note of field.querySelectorAll('.hint')) if (!described.includes(note.id)) problems.push('hint not described: ' + note.textContent);
      for (const id of described) if (!document.getElementById(id)) problems.push('described by a missing ' + id);
      const error = field.querySelector('.field-error');
      if (Boolean(error) !== (control.getAttribute('aria-invalid') === 'true')) problems.push('aria-invalid does not match the error shown');
      return problems.map((problem) => control.id + ': ' + problem);
    })`) as Promise<string[]>;

  it('label every control and describe it by its hint and its error, marked invalid while the error shows', async () => {
    await open('profile', 'Save profile');
    expect(await unlinked()).toEqual([]);
    for (const [section, ready, opener, dialogName] of [
      ['groups', 'New group', 'New group', 'New group'],
      ['keys', 'New API key', 'New API key', 'New API key'],
      ['webhooks', 'New webhook', 'New webhook', 'New webhook'],
      ['wallets', 'New wallet', 'New wallet', 'New spending wallet'],
    ] as const) {
      await open(section, ready);
      await page.getByRole('button', { name: opener }).first().click();
      const dialog = page.getByRole('dialog', { name: dialogName });
      await dialog.waitFor();
      expect({ section, problems: await unlinked() }).toEqual({ section, problems: [] });
      if (section === 'wallets') {
        await dialog.getByLabel('Passphrase', { exact: true }).fill('short');
        await dialog.getByLabel('Passphrase again').fill('other');
        await dialog.getByText('The two passphrases differ.').waitFor();
        expect(await unlinked()).toEqual([]);
        const again = dialog.getByLabel('Passphrase again');
        expect(await again.getAttribute('aria-invalid')).toBe('true');
        expect(await again.getAttribute('aria-describedby')).toBe('wallet-passphrase-again-error');
        await screenshot(page, 'dashboard-wallet-fields');
      }
      await page.keyboard.press('Escape');
      await dialog.waitFor({ state: 'detached' });
    }
    // The same fields at phone width, an error showing.
    const phone = await newContext(browser, 'phone', registry.url);
    await phone.addCookies((await context.cookies()).filter((c) => c.name.startsWith('market_')));
    const small = await phone.newPage();
    await small.goto('/dashboard/wallets');
    await small.getByRole('button', { name: 'New wallet' }).first().click();
    const dialog = small.getByRole('dialog', { name: 'New spending wallet' });
    await dialog.getByLabel('Passphrase', { exact: true }).fill('short');
    await dialog.getByText('Too short.').waitFor();
    await screenshot(small, 'dashboard-wallet-fields');
    await phone.close();
    expect(errors).toEqual([]);
  });
});

describe('phone width and keyboard', () => {
  it('fits every view on a 390 px screen without sideways scrolling', async () => {
    const phone = await newContext(browser, 'phone', registry.url);
    await phone.addCookies((await context.cookies()).filter((c) => c.name.startsWith('market_')));
    const small = await phone.newPage();
    for (const [section, ready] of [
      ['skills', 'word-count'],
      ['skills/word-count', 'Calls per day'],
      ['groups', 'Text'],
      ['keys', 'laptop'],
      ['wallets', 'bots'],
      ['calls', 'No paid calls yet'],
      ['favourites', 'No favourites yet'],
      ['profile', 'Save profile'],
    ] as const) {
      await small.goto(`/dashboard/${section}`);
      await small.getByText(ready).first().waitFor({ state: 'attached' });
      expect({ section, width: await small.evaluate('document.documentElement.scrollWidth') }).toEqual({ section, width: 390 });
      await screenshot(small, section === 'skills/word-count' ? 'dashboard-analytics' : `dashboard-${section}`);
    }
    await phone.close();
  });

  it('reaches every section from the dashboard navigation with the keyboard', async () => {
    await open('skills', 'word-count');
    await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'My skills' }).focus();
    await page.keyboard.press('Tab');
    expect(await page.evaluate('document.activeElement?.textContent')).toBe('Groups');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { level: 1, name: 'Groups' }).waitFor();
    expect(await page.evaluate('location.pathname')).toBe('/dashboard/groups');
    // Focus went to the new section's heading, for screen readers (bounded wait: a failure names what holds the focus).
    await page.waitForFunction("document.activeElement?.tagName === 'H1'", undefined, { timeout: 2000 }).catch(() => {});
    expect(await page.evaluate('document.activeElement?.outerHTML')).toStartWith('<h1');
  });
});

describe('reverted payments', () => {
  it("lists a skill's reverted payment for its creator, and tells the payer they were not charged", async () => {
    const skill = (await (await registry.request('/skills/word-count')).json()) as { id: string };
    // The skill's analytics before: an empty list, with its loading state while the registry answers.
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    await page.route(
      '**/analytics/*/payments?*',
      async (route) => {
        await held;
        await route.continue();
      },
      { times: 1 },
    );
    await page.goto('/dashboard/skills/word-count');
    await page.getByRole('status', { name: 'Loading the rejected payments' }).waitFor();
    release();
    await page.getByText('No rejected payments').waitFor();
    expect(await page.getByTestId('stat-rejected').textContent()).toBe('0');

    // Two paid calls reported by the payer: one transfer reverted on chain, one paid someone else.
    const reverted = `0x${'ab'.repeat(32)}`;
    const misdirected = `0x${'cd'.repeat(32)}`;
    for (const paymentRef of [misdirected, reverted]) {
      const res = await registry.request(
        '/analytics/usage',
        jsonPost({ skillId: skill.id, amount: 3000, paymentRef }, { ...bearer(token), origin: registry.url }),
      );
      expect(res.status).toBe(200);
    }
    // What the verifier stores for them (the chain check itself runs on anvil in test/catalogue/reverted-payments.test.ts).
    const checks = await registry.database.db.select().from(paymentVerifications).where(eq(paymentVerifications.skillId, skill.id));
    const reason = new Map([
      [reverted, PAYMENT_REVERTED_REASON],
      [misdirected, "the transfer goes to 0x0000000000000000000000000000000000000001, not the skill's payment address"],
    ]);
    for (const check of checks) await markRejected(registry.database.db, check.id, reason.get(check.txHash)!, new Date());

    await page.reload();
    const section = page.getByRole('region', { name: 'Rejected payments' });
    await section.getByText('payment reverted: not charged').waitFor();
    expect(await page.getByTestId('stat-rejected').textContent()).toBe('2');
    const rows = section.getByRole('row');
    expect(await rows.count()).toBe(3); // header and two payments
    const explorer = webPageConfig(registry.config).explorer;
    const link = section.getByRole('link', { name: reverted });
    expect(await link.getAttribute('href')).toBe(`${explorer!.url}/tx/${reverted}`);
    expect(await link.getAttribute('target')).toBe('_blank');
    expect(await section.textContent()).toContain("not the skill's payment address");
    expect(await section.textContent()).toContain('$0.003');
    await screenshot(page, 'dashboard-analytics-rejected');

    // The list's error state does not hide the analytics, and recovers.
    await failOnce('**/analytics/*/payments?*');
    await page.reload();
    const alert = page.getByRole('alert').filter({ hasText: 'Could not load the rejected payments' });
    await alert.waitFor();
    expect(await alert.locator('.request-id').textContent()).toBe('req-test-42');
    expect(await page.getByTestId('stat-rejected').textContent()).toBe('2');
    await alert.getByRole('button', { name: 'Try again' }).click();
    await section.getByText('payment reverted: not charged').waitFor();

    // The payer's own history keeps both calls and says what happened to each payment.
    await open('calls', 'payment reverted: not charged');
    const callRows = page.getByRole('row');
    expect(await callRows.nth(1).textContent()).toContain('payment reverted: not charged');
    expect(await callRows.nth(2).textContent()).toContain(
      'payment rejected: the transfer goes to 0x0000000000000000000000000000000000000001',
    );
    await screenshot(page, 'dashboard-calls-reverted');

    // At phone width the list scrolls inside its table, not the page.
    const phone = await newContext(browser, 'phone', registry.url);
    await phone.addCookies((await context.cookies()).filter((c) => c.name.startsWith('market_')));
    const small = await phone.newPage();
    await small.goto('/dashboard/skills/word-count');
    await small.getByText('payment reverted: not charged').waitFor();
    expect(await small.evaluate('document.documentElement.scrollWidth')).toBe(390);
    await screenshot(small, 'dashboard-analytics-rejected');
    await phone.close();
    expect(errors).toEqual([]);
  });
});
