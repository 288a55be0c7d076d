/**
 * Real Chromium for page tests: Debian's `chromium-headless-shell` (the same Blink and V8 without the
 * browser's window and GPU layers: about a third less CPU per page test here), or its `chromium` where
 * only that is installed, driven by playwright-core. A missing browser fails the test with the
 * command that installs it (never a skip).
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

export const CHROMIUM =
  process.env.CHROMIUM_PATH ||
  ['/usr/bin/chromium-headless-shell', '/usr/bin/chromium'].find((path) => existsSync(path)) ||
  '/usr/bin/chromium';
export const SCREENSHOTS = join(import.meta.dir, '../../web/screenshots');

export const VIEWPORTS = {
  desktop: { width: 1280, height: 860 },
  phone: { width: 390, height: 844 },
} as const;

let shared: Promise<Browser> | undefined;

/**
 * A lease on this process's Chromium, started at the first call: test files that run one after
 * another in a worker share it (a start is about a second of both cores). `close()` on the lease
 * closes the contexts and pages it opened, not the browser, which ends with the process.
 */
export async function launchBrowser(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `Chromium not found at ${CHROMIUM}: install it (apt-get install -y chromium-headless-shell) or set CHROMIUM_PATH. Page tests need a real browser.`,
    );
  }
  shared ??= chromium.launch({
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
  let browser: Browser;
  try {
    browser = await shared;
  } catch (error) {
    shared = undefined;
    throw error;
  }
  if (!browser.isConnected()) {
    shared = undefined;
    return launchBrowser();
  }
  const opened = new Set<BrowserContext>();
  const lease: Browser = new Proxy(browser, {
    get(target, key) {
      if (key === 'newContext') {
        return async (...args: Parameters<Browser['newContext']>) => {
          const context = await target.newContext(...args);
          opened.add(context);
          return context;
        };
      }
      if (key === 'newPage') {
        return async (...args: Parameters<Browser['newPage']>) => {
          const page = await target.newPage(...args);
          opened.add(page.context());
          return page;
        };
      }
      if (key === 'close') return async () => void (await Promise.all([...opened].map((c) => c.close().catch(() => {}))));
      const value = Reflect.get(target, key, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return lease;
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

/** Writes `<name>-<viewport>.png` into test/web/screenshots (full page), unless SCREENSHOTS=0. */
export async function screenshot(page: Page, name: string): Promise<string> {
  // CI sets SCREENSHOTS=0: nobody looks at them there, and each full page costs both cores a moment.
  if (process.env.SCREENSHOTS === '0') return '';
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
