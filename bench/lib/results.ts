import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';

const FILE = join(import.meta.dir, '..', 'results.json');

/** Merges one section into bench/results.json with the machine, versions and date. */
export function saveSection(name: string, data: unknown): void {
  const all = existsSync(FILE) ? (JSON.parse(readFileSync(FILE, 'utf8')) as Record<string, unknown>) : {};
  all.machine = {
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model,
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    platform: process.platform,
  };
  all.versions = {
    bun: typeof Bun === 'undefined' ? undefined : Bun.version,
    node: execFileSync('node', ['--version']).toString().trim(),
    postgres: execFileSync('psql', ['--version']).toString().trim(),
  };
  all[name] = { date: new Date().toISOString(), ...(data as object) };
  writeFileSync(FILE, `${JSON.stringify(all, null, 2)}\n`);
}

/**
 * Adds `data` to an existing section (keeping what another bench wrote there) and `ratios` to its
 * `ratios`, e.g. the batched-gas figures into the payments section.
 */
export function mergeIntoSection(name: string, data: object, ratios: Record<string, number>): void {
  const all = existsSync(FILE) ? (JSON.parse(readFileSync(FILE, 'utf8')) as Record<string, Record<string, unknown>>) : {};
  const section = all[name] ?? {};
  all[name] = { ...section, ...data, ratios: { ...(section.ratios as object | undefined), ...ratios } };
  writeFileSync(FILE, `${JSON.stringify(all, null, 2)}\n`);
}

/** Prints rows as an aligned table. */
export function printTable(title: string, header: string[], rows: (string | number)[][]): void {
  const cells = [header, ...rows.map((r) => r.map(String))];
  const widths = header.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? '').length)));
  console.log(`\n${title}`);
  for (const [i, row] of cells.entries()) {
    console.log(row.map((c, j) => c.padEnd(widths[j]!)).join('  '));
    if (i === 0) console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  }
}

export const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
