/**
 * First render of the marketplace page with 10,000 skills on PostgreSQL, in Chromium: the time
 * from navigation to the first skill card on screen (cold: a fresh browser context each run),
 * against the same page on an empty catalogue in the same run (the reference: what the page costs
 * before any skill), and the page's JavaScript size gzipped. Runs the compiled binary when
 * dist/market exists, else the source.   npx bun bench/web.ts   (BENCH_RUNS=7 by default)
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'bun';
import type { Browser } from 'playwright-core';
import postgres from 'postgres';
import { launchBrowser } from '../test/support/web/browser';
import { seed, SKILLS } from './lib/catalogue';
import { freePort, startProcess } from './lib/processes';
import { benchGate } from './lib/quiet';
import { fmt, printTable, saveSection } from './lib/results';

const ROOT = join(import.meta.dir, '..');
const ADMIN_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const RUNS = Number(process.env.BENCH_RUNS ?? 7);

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

interface Loads {
  firstCard: number[];
  contentful: number[];
}

/** Cold loads of `base`/ (a fresh browser context each), timed in the page's own clock from navigation start. */
async function coldLoads(browser: Browser, base: string, cardSelector: string): Promise<Loads> {
  const firstCard: number[] = [];
  const contentful: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    // The page notes the moment its first content is in the document (not when the bench notices it).
    await context.addInitScript(`new MutationObserver((_, observer) => {
      if (document.querySelector(${JSON.stringify(cardSelector)})) { window.__firstCard = performance.now(); observer.disconnect(); }
    }).observe(document, { childList: true, subtree: true });`);
    const page = await context.newPage();
    await page.goto(`${base}/`);
    await page.locator(cardSelector).first().waitFor();
    const [card, fcp] = (await page.evaluate(
      `[window.__firstCard, performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? NaN]`,
    )) as [number, number];
    firstCard.push(card);
    if (process.env.BENCH_DEBUG)
      console.log(
        await page.evaluate(
          `JSON.stringify(performance.getEntriesByType('resource').map((e) => [e.name.replace(location.origin, ''), Math.round(e.startTime), Math.round(e.responseEnd)]))`,
        ),
        Math.round(card),
      );
    contentful.push(fcp);
    await context.close();
  }
  return { firstCard, contentful };
}

async function main() {
  const gate = await benchGate('bench/web.ts', 'web');
  const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
  const stamp = Date.now().toString(36);
  const names = [`market_bench_web_${stamp}`, `market_bench_web_empty_${stamp}`];
  const urls = names.map((name) => {
    const url = new URL(ADMIN_URL);
    url.pathname = `/${name}`;
    return url.toString();
  });
  for (const name of names) await admin.unsafe(`create database ${name}`);
  const stops: (() => Promise<void>)[] = [];
  try {
    await seed(urls[0]!);
    const binary = join(ROOT, 'dist/market');
    const command = existsSync(binary) ? [binary, 'registry'] : ['bun', join(ROOT, 'src/cli/main.ts'), 'registry'];
    // The same binary twice: on the 10,000-skill catalogue, and on an empty one (the reference).
    const [base, emptyBase] = await Promise.all(
      urls.map(async (databaseUrl) => {
        const port = await freePort();
        const base = `http://127.0.0.1:${port}`;
        const registry = await startProcess(
          [...command, '--port', String(port), '--host', '127.0.0.1'],
          { DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn', RATE_LIMIT_READ: 'off' },
          `${base}/health`,
        );
        stops.push(registry.stop);
        return base;
      }),
    );

    const html = await (await fetch(`${base}/`)).text();
    const scripts = [...html.matchAll(/src="(\/[^"]+\.js)"/g)].map((m) => m[1]!);
    const bytes = await Promise.all(scripts.map(async (path) => new Uint8Array(await (await fetch(`${base}${path}`)).arrayBuffer())));
    const raw = bytes.reduce((s, b) => s + b.length, 0);
    const gzipped = bytes.reduce((s, b) => s + gzipSync(b as Uint8Array<ArrayBuffer>).length, 0);

    const browser = await launchBrowser();
    stops.push(() => browser.close());
    // One browser, one machine state: the reference first, then the full catalogue.
    const empty = await coldLoads(browser, emptyBase!, '.notice-empty');
    const full = await coldLoads(browser, base!, '.skill-grid:not([aria-hidden]) h3');
    const row = (label: string, xs: number[]) => [label, fmt(median(xs)), fmt(Math.min(...xs)), fmt(Math.max(...xs))];
    printTable(
      `Marketplace page on PostgreSQL, ${RUNS} cold loads each (${existsSync(binary) ? 'binary' : 'source'}), ms from navigation start`,
      ['measure', 'median', 'min', 'max'],
      [
        row(`${SKILLS.toLocaleString()} skills: first skill cards on screen`, full.firstCard),
        row(`${SKILLS.toLocaleString()} skills: first contentful paint`, full.contentful),
        row('empty catalogue (reference): "no skills" on screen', empty.firstCard),
        row('empty catalogue (reference): first contentful paint', empty.contentful),
      ],
    );
    const ratio = median(full.firstCard) / median(empty.firstCard);
    console.log(`\nfirst cards with ${SKILLS.toLocaleString()} skills / empty page on screen: ${fmt(ratio, 2)}`);
    console.log(`page JavaScript: ${fmt(raw / 1024, 1)} kB, ${fmt(gzipped / 1024, 1)} kB gzipped (budget 200 kB)`);
    saveSection(
      'web',
      {
        skills: SKILLS,
        runs: RUNS,
        firstCardMs: median(full.firstCard),
        firstContentfulPaintMs: median(full.contentful),
        emptyCatalogueMs: median(empty.firstCard),
        emptyCatalogueFirstContentfulPaintMs: median(empty.contentful),
        firstCardOverEmpty: ratio,
        javascriptKiB: raw / 1024,
        javascriptGzipKiB: gzipped / 1024,
      },
      gate,
    );
  } finally {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
    for (const name of names) await admin.unsafe(`drop database if exists ${name} with (force)`);
    await admin.end();
  }
}

await main();
