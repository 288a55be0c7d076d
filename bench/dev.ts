/**
 * Time to first paid call with `market dev`, as a newcomer meets it: `npm start` (the dev command
 * from source) on a new data directory of a machine that never ran it (an empty cache folder), then
 * the `market call` command its banner prints, until the skill's result is back; then the same on
 * the existing directory (a later start), and on another new directory once the first kept its
 * migrated database as the template (`--fresh`, another `--dir`). Also the whole process tree's
 * memory once running (RSS from ps). Writes the "dev" section of bench/results.json.
 *
 *   bun bench/dev.ts
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type DevProcess, runPrinted, spawnDev } from '../test/support/dev';
import { benchGate } from './lib/quiet';
import { fmt, printTable, saveSection } from './lib/results';

const gate = await benchGate('bench/dev.ts', 'dev');
const work = mkdtempSync(join(tmpdir(), 'market-dev-bench-'));
const dir = join(work, 'data');
/** The cache folder of a machine that never ran market dev: the first start keeps its template there. */
const cacheEnv = { XDG_CACHE_HOME: join(work, 'cache') };

/** RSS in MiB of `pid` and all its descendants. */
async function treeRssMiB(pid: number): Promise<number> {
  const ps = Bun.spawn(['ps', '-eo', 'pid=,ppid=,rss='], { stdout: 'pipe' });
  const rows = (await new Response(ps.stdout).text())
    .trim()
    .split('\n')
    .map((l) => l.trim().split(/\s+/).map(Number) as [number, number, number]);
  const inTree = new Set([pid]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const [p, parent] of rows) {
      if (inTree.has(parent) && !inTree.has(p)) {
        inTree.add(p);
        grew = true;
      }
    }
  }
  return rows.filter(([p]) => inTree.has(p)).reduce((sum, [, , rss]) => sum + rss, 0) / 1024;
}

async function run(label: string, dataDir = dir) {
  const t0 = performance.now();
  const dev: DevProcess = await spawnDev(dataDir, [], undefined, cacheEnv);
  try {
    const banner = await dev.banner;
    const bannerMs = performance.now() - t0;
    const call = await runPrinted(banner.call);
    if (call.code !== 0) throw new Error(`the printed call failed: ${call.stderr}`);
    const firstPaidCallMs = performance.now() - t0;
    const callMs = firstPaidCallMs - bannerMs;
    await Bun.sleep(1000); // let the tree settle before measuring memory
    const rssMiB = await treeRssMiB(dev.child.pid);
    return {
      label,
      bannerMs: Math.round(bannerMs),
      callMs: Math.round(callMs),
      firstPaidCallMs: Math.round(firstPaidCallMs),
      rssMiB: Math.round(rssMiB),
    };
  } finally {
    const stopAt = performance.now();
    dev.child.kill('SIGTERM');
    await dev.exited;
    console.log(`${label}: stopped ${Math.round(performance.now() - stopAt)} ms after SIGTERM`);
  }
}

try {
  const first = await run('first start (new data directory)');
  const later = await run('later start (existing data directory)');
  const templated = await run('new data directory, template kept', join(work, 'other'));
  const rows = [first, later, templated];
  printTable(
    'market dev: time to first paid call (npm start, then the printed market call)',
    ['start', 'banner ms', 'market call ms', 'first paid call ms', 'tree RSS MiB'],
    rows.map((r) => [r.label, fmt(r.bannerMs), fmt(r.callMs), fmt(r.firstPaidCallMs), fmt(r.rssMiB)]),
  );
  saveSection('dev', { timeToFirstPaidCall: { first, later, templated } }, gate);
} finally {
  rmSync(work, { recursive: true, force: true });
}
