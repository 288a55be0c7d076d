import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import type { BenchGate, LoadFields } from './quiet';

/** bench/results.json: every bench's latest figures, one section each. */
export const RESULTS_FILE = join(import.meta.dir, '..', 'results.json');

type Section = Record<string, unknown> & { ratios?: Record<string, number> };

/**
 * What another bench writes into a section, kept when the section's own bench writes it again: the
 * payments section holds the gas of batched settlement (bench/batch-gas.ts) and the payment channels
 * (bench/channels.ts) beside the paid calls (bench/payments.ts).
 */
const WRITTEN_ELSEWHERE: Record<string, { parts: string[]; ratios: string[] }> = {
  payments: { parts: ['batchGas', 'channels'], ratios: ['gasPerPaymentBatchedVsSingle'] },
};

const readAll = (file: string): Record<string, unknown> =>
  existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>) : {};

/** The gate's load fields, also printed. */
function loadFields(section: string, gate: BenchGate): LoadFields {
  const fields = gate.fields();
  console.log(
    `${section}: load average ${fields.load.start} at the start, ${fields.load.end} at the end${fields.loaded ? ' (forced: marked "loaded")' : ''}`,
  );
  return fields;
}

/**
 * Writes one bench's section into bench/results.json with the date, the machine, the versions and
 * the load fields of the gate it passed (a section is written only by a bench the load gate let run).
 */
export function saveSection(name: string, data: object, gate: BenchGate, file = RESULTS_FILE): void {
  const all = readAll(file);
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
  const previous = (all[name] ?? {}) as Section;
  const kept = WRITTEN_ELSEWHERE[name] ?? { parts: [], ratios: [] };
  const section: Section = { date: new Date().toISOString(), ...data, ...loadFields(name, gate) };
  for (const part of kept.parts) if (previous[part] !== undefined) section[part] = previous[part];
  for (const ratio of kept.ratios) {
    const value = previous.ratios?.[ratio];
    if (value !== undefined) section.ratios = { ...section.ratios, [ratio]: value };
  }
  all[name] = section;
  writeFileSync(file, `${JSON.stringify(all, null, 2)}\n`);
}

/**
 * Writes one bench's part of a section another bench owns (e.g. `payments.batchGas`), with its date
 * and load fields, and adds `ratios` to the section's `ratios`.
 */
export function savePart(
  name: string,
  part: string,
  data: object,
  ratios: Record<string, number>,
  gate: BenchGate,
  file = RESULTS_FILE,
): void {
  const all = readAll(file);
  const section = (all[name] ?? {}) as Section;
  all[name] = {
    ...section,
    [part]: { date: new Date().toISOString(), ...data, ...loadFields(`${name}.${part}`, gate) },
    ratios: { ...section.ratios, ...ratios },
  };
  writeFileSync(file, `${JSON.stringify(all, null, 2)}\n`);
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
