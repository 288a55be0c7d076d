/**
 * Real Chromium for page tests: Debian's `chromium` driven by playwright-core. A missing browser
 * fails the test with the command that installs it (never a skip).
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const SCREENSHOTS = join(import.meta.dir, '../../web/screenshots');

export const VIEWPORTS = {
  desktop: { width: 1280, height: 860 },
  phone: { width: 390, height: 844 },
} as const;

export async function launchBrowser(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `Chromium not found at ${CHROMIUM}: install it (apt-get install -y chromium) or set CHROMIUM_PATH. Page tests need a real browser.`,
    );
  }
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
}

/** Console errors and failed page scripts, so a test can require a clean page. */
export function pageErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(`pageerror: ${error.message}`));
  page.on('console', (message) => {
    // A failed fetch the test caused on purpose (an API error state) logs a resource error; those are expected.
    if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) errors.push(`console: ${message.text()}`);
  });
  return errors;
}

/** Writes `<name>-<viewport>.png` into test/web/screenshots (full page). */
export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  const size = page.viewportSize();
  const kind = size && size.width <= VIEWPORTS.phone.width ? 'phone' : 'desktop';
  const path = join(SCREENSHOTS, `${name}-${kind}.png`);
  await page.screenshot({ path, fullPage: true, animations: 'disabled' });
  return path;
}

export async function newContext(
  browser: Browser,
  viewport: keyof typeof VIEWPORTS = 'desktop',
  baseURL?: string,
): Promise<BrowserContext> {
  return browser.newContext({
    viewport: VIEWPORTS[viewport],
    ...(baseURL ? { baseURL } : {}),
    colorScheme: 'light',
    reducedMotion: 'reduce',
  });
}
