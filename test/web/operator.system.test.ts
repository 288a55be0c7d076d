/**
 * Moderation in a real Chromium against a registry whose OPERATOR_ADDRESSES names one wallet: a
 * signed-in visitor reports a skill from its page; the operator finds it in the dashboard's
 * Operator section (with the listing, its health and buyers), hides it with a reason given with the
 * keyboard, and reads the audit log and its export; the skill's page then says it is hidden by
 * the operators, and its creator sees it hidden with the reason; suspended, the creator reads why.
 * Accounts that are no operator see no Operator section. Phone width too.
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
const REASON = 'Asks callers for their private keys';
const SUSPENSION = 'Lists copies of other creators’ skills';

let registry: WebRegistry;
let browser: Browser;
const contexts: BrowserContext[] = [];
const errors: string[][] = [];
let slug: string;

/** A page signed in with `wallet` (the injected test wallet), at `next`. */
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
    startWebRegistry({ env: { OPERATOR_ADDRESSES: operatorWallet.address.toLowerCase() } }),
    launchBrowser(),
  ]);
  // The creator lists a skill through the API, as `market serve` does.
  const creator = await walletSignIn(registry.request, creatorWallet);
  const { key } = await createKey(registry.request, creator.token);
  const group = await registry.request('/groups', jsonPost({ name: 'tools' }, bearer(key)));
  expect(group.status).toBe(201);
  const res = await registry.request(
    '/skills',
    jsonPost(skillInput({ name: 'key-helper', paymentAddress: creatorWallet.address, groups: ['tools'] }), bearer(key)),
  );
  expect(res.status).toBe(201);
  slug = ((await res.json()) as { slug: string }).slug;
}, 60_000);

afterAll(async () => {
  for (const context of contexts) await context.close();
  await browser?.close();
  await registry?.close();
});

describe('moderation in the pages', () => {
  it('lets a signed-in visitor report a skill from its page', async () => {
    const page = await signedIn(reporterWallet, `/skill/${slug}`);
    await page.getByRole('heading', { name: 'key-helper' }).waitFor();
    await page.getByRole('button', { name: 'Report' }).click();
    const dialog = page.getByRole('dialog', { name: 'Report key-helper' });
    await dialog.getByLabel('What is wrong').selectOption('malware');
    await dialog.getByLabel('Details for the operators').fill('It asked me to paste my private key into the input');
    await screenshot(page, 'skill-report-dialog');
    await dialog.getByRole('button', { name: 'Send the report' }).click();
    await dialog.getByText('Thank you: the marketplace’s operators will look at your report.').waitFor();
    await dialog.getByRole('button', { name: 'Done' }).click();
    await page.getByRole('button', { name: 'Reported' }).waitFor();
    // Not an operator: no Operator section.
    await page.goto('/dashboard');
    await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'Profile' }).waitFor();
    expect(await page.getByRole('navigation', { name: 'Dashboard' }).getByText('Operator').count()).toBe(0);
  });

  it('shows the operator the report with the listing, and hides the skill with a reason typed with the keyboard', async () => {
    const page = await signedIn(operatorWallet, '/dashboard/operator');
    await page.getByRole('heading', { name: 'Reports and audit log' }).waitFor();
    const card = page.locator('.queue-item').first();
    await card.getByText('It asked me to paste my private key into the input').waitFor();
    expect(await card.textContent()).toContain(slug);
    expect(await card.textContent()).toContain('malware');
    await page.getByText('No actions yet').waitFor();
    await screenshot(page, 'dashboard-operator-queue');

    await card.getByRole('button', { name: 'Hide skill' }).click();
    const dialog = page.getByRole('dialog', { name: 'Hide the skill: key-helper' });
    await page.waitForFunction('document.activeElement?.id === "decision-reason"');
    expect(await dialog.getByRole('button', { name: 'Hide the skill' }).isDisabled()).toBe(true);
    await page.keyboard.type(REASON);
    await screenshot(page, 'dashboard-operator-decision');
    await dialog.getByRole('button', { name: 'Hide the skill' }).click();
    await dialog.waitFor({ state: 'detached' });
    // Closed as actioned: out of the open queue, in the log.
    await page.getByText('No open reports').waitFor();
    const log = page.getByRole('table', { name: 'Audit log' });
    await log.getByText(REASON).waitFor();
    expect(await log.textContent()).toContain('skill.hide');
    await page.getByRole('button', { name: 'Closed' }).click();
    await page.locator('.queue-item').getByText('actioned').waitFor();
    await page.locator('.queue-item').getByText('hidden', { exact: true }).waitFor();
    await screenshot(page, 'dashboard-operator');

    // The export link answers the whole log as CSV, with the operator's session.
    const href = await page.getByRole('link', { name: 'CSV' }).getAttribute('href');
    const csv = await page.request.get(href!);
    expect(csv.status()).toBe(200);
    const text = await csv.text();
    expect(text.split('\n')[0]).toBe('seq,created_at,operator_address,action,target_type,target_id,target_label,reason,report_id');
    expect(text).toContain(`skill.hide,skill,`);
    expect(text).toContain(REASON);
  });

  it('answers the skill’s page with the registry’s words once hidden', async () => {
    const context = await newContext(browser, 'desktop', registry.url);
    contexts.push(context);
    const page = await context.newPage();
    errors.push(pageErrors(page));
    await page.goto(`/skill/${slug}`);
    const alert = page.getByRole('alert');
    await alert.getByText('Could not load this skill').waitFor();
    expect(await alert.locator('.error-message').textContent()).toBe('This skill is hidden by the marketplace’s operators');
    await screenshot(page, 'skill-hidden');
  });

  it('shows the creator their skill hidden, with the operators’ reason', async () => {
    const page = await signedIn(creatorWallet, '/dashboard/skills');
    await page.getByText(`by the operators: ${REASON}`).waitFor();
    await screenshot(page, 'dashboard-skills-hidden');
  });

  it('suspends the creator from the closed report, and the creator reads why in the dashboard', async () => {
    const operator = await signedIn(operatorWallet, '/dashboard/operator');
    await operator.getByRole('button', { name: 'Closed' }).click();
    const card = operator.locator('.queue-item').first();
    await card.getByRole('button', { name: 'Suspend creator' }).click();
    const dialog = operator.getByRole('dialog', { name: /^Suspend the creator/ });
    await dialog.getByLabel('Reason').fill(SUSPENSION);
    await dialog.getByRole('button', { name: 'Suspend the creator' }).click();
    await card.getByText('creator suspended').waitFor();
    await card.getByRole('button', { name: 'Lift suspension' }).waitFor();
    await operator.getByRole('table', { name: 'Audit log' }).getByText(SUSPENSION).waitFor();

    const creator = await signedIn(creatorWallet, '/dashboard/skills');
    const notice = creator.getByRole('status').filter({ hasText: 'Your account is suspended by the marketplace’s operators' });
    await notice.getByText(`Reason: ${SUSPENSION}`).waitFor();
    await screenshot(creator, 'dashboard-suspended');
  });

  it('fits a phone without sideways scrolling', async () => {
    const page = await signedIn(operatorWallet, '/dashboard/operator', 'phone');
    await page.getByRole('table', { name: 'Audit log' }).waitFor();
    await page.getByRole('button', { name: 'Closed' }).click();
    await page.locator('.queue-item').first().waitFor();
    await screenshot(page, 'dashboard-operator');
    const width = (await page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth')) as number;
    expect(width).toBeLessThanOrEqual(0);
  });

  it('raised no error in the pages', () => {
    expect(errors.flat()).toEqual([]);
  });
});
