/**
 * First render of the marketplace page with 10,000 skills on PostgreSQL, in Chromium: the time
 * from navigation to the first skill card on screen (cold: a fresh browser context each run), and
 * the page's JavaScript size gzipped. Runs the compiled binary when dist/market exists, else the
 * source.   npx bun bench/web.ts   (BENCH_RUNS=7 by default)
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'bun';
import postgres from 'postgres';
import { launchBrowser } from '../test/support/web/browser';
import { seed, SKILLS } from './lib/catalogue';
import { freePort, startProcess } from './lib/processes';
import { fmt, printTable, saveSection } from './lib/results';

const ROOT = join(import.meta.dir, '..');
const ADMIN_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const RUNS = Number(process.env.BENCH_RUNS ?? 7);

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main() {
  const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
  const name = `market_bench_web_${Date.now().toString(36)}`;
  await admin.unsafe(`create database ${name}`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  const stops: (() => Promise<void>)[] = [];
  try {
    await seed(url.toString());
    const port = await freePort();
    const binary = join(ROOT, 'dist/market');
    const command = existsSync(binary) ? [binary, 'registry'] : ['bun', join(ROOT, 'src/cli/main.ts'), 'registry'];
    const base = `http://127.0.0.1:${port}`;
    const registry = await startProcess(
      [...command, '--port', String(port), '--host', '127.0.0.1'],
      { DATABASE_URL: url.toString(), LOG_LEVEL: 'warn', RATE_LIMIT_READ: 'off' },
      `${base}/health`,
    );
    stops.push(registry.stop);

    const html = await (await fetch(`${base}/`)).text();
    const scripts = [...html.matchAll(/src="(\/[^"]+\.js)"/g)].map((m) => m[1]!);
    const bytes = await Promise.all(scripts.map(async (path) => new Uint8Array(await (await fetch(`${base}${path}`)).arrayBuffer())));
    const raw = bytes.reduce((s, b) => s + b.length, 0);
    const gzipped = bytes.reduce((s, b) => s + gzipSync(b as Uint8Array<ArrayBuffer>).length, 0);

    const browser = await launchBrowser();
    stops.push(() => browser.close());
    const firstCard: number[] = [];
    const contentful: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
      // The page notes the moment the first card is in the document (not when the test notices it).
      await context.addInitScript(`new MutationObserver((_, observer) => {
        if (document.querySelector('.skill-grid:not([aria-hidden]) h3')) { window.__firstCard = performance.now(); observer.disconnect(); }
      }).observe(document, { childList: true, subtree: true });`);
      const page = await context.newPage();
      await page.goto(`${base}/`);
      await page.locator('.skill-grid:not([aria-hidden]) h3').first().waitFor();
      // Both in the page's own clock, from navigation start.
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
    const rows = [
      ['first skill cards on screen', fmt(median(firstCard)), fmt(Math.min(...firstCard)), fmt(Math.max(...firstCard))],
      ['first contentful paint', fmt(median(contentful)), fmt(Math.min(...contentful)), fmt(Math.max(...contentful))],
    ];
    printTable(
      `Marketplace page, ${SKILLS.toLocaleString()} skills on PostgreSQL, ${RUNS} cold loads (${existsSync(binary) ? 'binary' : 'source'}), ms`,
      ['measure', 'median', 'min', 'max'],
      rows,
    );
    console.log(`\npage JavaScript: ${fmt(raw / 1024, 1)} kB, ${fmt(gzipped / 1024, 1)} kB gzipped (budget 200 kB)`);
    saveSection('web', {
      skills: SKILLS,
      runs: RUNS,
      firstCardMs: median(firstCard),
      firstContentfulPaintMs: median(contentful),
      javascriptKiB: raw / 1024,
      javascriptGzipKiB: gzipped / 1024,
    });
  } finally {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
    await admin.unsafe(`drop database if exists ${name} with (force)`);
    await admin.end();
  }
}

await main();
