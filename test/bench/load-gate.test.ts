/**
 * The benches' load gate: figures are written only from a quiet machine (1-minute load average at
 * most 1 when the bench starts), or forced and then marked `"loaded": true`; each section carries the
 * load at its start and end. The gate is driven with made-up load readings and a sleep that only
 * counts; the bench scripts themselves are run with `--dry-run`, which decides and exits before any work.
 */
import { afterAll, describe, expect, it } from 'bun:test';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NotQuietError, quietStart } from '../../bench/lib/quiet';
import { RESULTS_FILE, savePart, saveSection } from '../../bench/lib/results';

/** A load average that reads `values` one after the other (the last one from then on). */
const readings = (...values: number[]) => {
  let i = 0;
  return () => values[Math.min(i++, values.length - 1)]!;
};

/** A sleep that returns at once and remembers how long it was asked to wait. */
const countingSleep = () => {
  const waits: number[] = [];
  return { waits, sleep: async (ms: number) => void waits.push(ms) };
};

const quiet = { argv: [], env: {}, log: () => {} };

describe('the load gate', () => {
  it('lets a bench start on a quiet machine and gives the load at its start and end', async () => {
    const { waits, sleep } = countingSleep();
    const gate = await quietStart('bench/x.ts', { ...quiet, readLoad: readings(0.42, 1.87), sleep });
    expect({ start: gate.start, loaded: gate.loaded, waits }).toEqual({ start: 0.42, loaded: false, waits: [] });
    expect(gate.fields()).toEqual({ load: { start: 0.42, end: 1.87 } });
  });

  it('refuses a busy machine after waiting for it to calm down, naming the way to force it', async () => {
    const { waits, sleep } = countingSleep();
    const refused = quietStart('bench/x.ts', { ...quiet, readLoad: readings(3.5), waitMs: 15_000, pollMs: 5_000, sleep });
    await expect(refused).rejects.toBeInstanceOf(NotQuietError);
    await expect(refused).rejects.toThrow(/load average 3\.50 is above 1.*--force \(BENCH_FORCE=1\).*"loaded": true/);
    expect(waits).toEqual([5_000, 5_000, 5_000]);
  });

  it('starts once the load has fallen to 1 while it waits, at the load it started at', async () => {
    const { waits, sleep } = countingSleep();
    const gate = await quietStart('bench/x.ts', { ...quiet, readLoad: readings(2.4, 1.6, 1, 1.9), waitMs: 60_000, pollMs: 5_000, sleep });
    expect({ start: gate.start, loaded: gate.loaded, waits }).toEqual({ start: 1, loaded: false, waits: [5_000, 5_000] });
    expect(gate.fields()).toEqual({ load: { start: 1, end: 1.9 } });
  });

  it('waits BENCH_QUIET_WAIT seconds: 0 refuses at once', async () => {
    const { waits, sleep } = countingSleep();
    await expect(quietStart('bench/x.ts', { ...quiet, env: { BENCH_QUIET_WAIT: '0' }, readLoad: readings(1.01), sleep })).rejects.toThrow(
      NotQuietError,
    );
    expect(waits).toEqual([]);
  });

  it('runs when forced by BENCH_FORCE=1 or --force, at once, and marks the figures loaded', async () => {
    for (const forcing of [{ env: { BENCH_FORCE: '1' } }, { argv: ['--force'] }]) {
      const { waits, sleep } = countingSleep();
      const gate = await quietStart('bench/x.ts', { ...quiet, ...forcing, readLoad: readings(6.25, 7), sleep });
      expect({ loaded: gate.loaded, waits, fields: gate.fields() }).toEqual({
        loaded: true,
        waits: [],
        fields: { load: { start: 6.25, end: 7 }, loaded: true },
      });
    }
  });

  it('does not mark a forced run on a quiet machine', async () => {
    const gate = await quietStart('bench/x.ts', { ...quiet, env: { BENCH_FORCE: '1' }, readLoad: readings(0.3) });
    expect(gate.fields()).toEqual({ load: { start: 0.3, end: 0.3 } });
  });
});

describe('bench/results.json sections', () => {
  const folder = mkdtempSync(join(tmpdir(), 'bench-results-'));
  const file = join(folder, 'results.json');
  afterAll(() => rmSync(folder, { recursive: true, force: true }));

  it('carry the gate load fields; the paid-call bench keeps what the gas and channel benches wrote', async () => {
    writeFileSync(
      file,
      JSON.stringify({
        payments: {
          date: 'old',
          loadAverageAtStart: [0.13, 0.49, 1.42],
          runs: ['old run'],
          ratios: { sequentialP50: 0.73, gasPerPaymentBatchedVsSingle: 0.66 },
          batchGas: { date: 'gas' },
          channels: { date: 'channels' },
        },
      }),
    );
    const gate = await quietStart('bench/payments.ts', { ...quiet, readLoad: readings(0.5, 1.4) });
    saveSection('payments', { runs: ['new run'], ratios: { sequentialP50: 0.41 } }, gate, file);
    const payments = JSON.parse(readFileSync(file, 'utf8')).payments;
    expect(payments).toEqual({
      date: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      runs: ['new run'],
      ratios: { sequentialP50: 0.41, gasPerPaymentBatchedVsSingle: 0.66 },
      load: { start: 0.5, end: 1.4 },
      batchGas: { date: 'gas' },
      channels: { date: 'channels' },
    });

    const forced = await quietStart('bench/batch-gas.ts', { ...quiet, argv: ['--force'], readLoad: readings(2.5, 2.75) });
    savePart('payments', 'batchGas', { runs: [] }, { gasPerPaymentBatchedVsSingle: 0.65 }, forced, file);
    const after = JSON.parse(readFileSync(file, 'utf8')).payments;
    expect(after.batchGas).toEqual({ date: expect.any(String), runs: [], load: { start: 2.5, end: 2.75 }, loaded: true });
    expect(after.ratios).toEqual({ sequentialP50: 0.41, gasPerPaymentBatchedVsSingle: 0.65 });
    expect(after.runs).toEqual(['new run']);
  });

  it('committed: each section says its load at start and end, and is marked when not a quiet one', () => {
    const all = JSON.parse(readFileSync(RESULTS_FILE, 'utf8'));
    const sections = {
      registry: all.registry,
      payments: all.payments,
      batchGas: all.payments.batchGas,
      channels: all.payments.channels,
      web: all.web,
      dev: all.dev,
    };
    for (const [name, section] of Object.entries(sections)) {
      const { start, end } = section.load ?? {};
      expect({ name, start: typeof start, end: typeof end }).toEqual({
        name,
        start: start === null ? 'object' : 'number',
        end: end === null ? 'object' : 'number',
      });
      // Recorded before the gate without a load reading: it says why its figures are not known to be quiet ones.
      if (start === null) expect({ name, note: typeof section.unverified }).toEqual({ name, note: 'string' });
      // Recorded above a load of 1: marked.
      if (start > 1) expect({ name, loaded: section.loaded }).toEqual({ name, loaded: true });
    }
  });
});

describe('the bench scripts', () => {
  it('pass the gate before any work: --dry-run decides and exits, writing nothing', async () => {
    const before = readFileSync(RESULTS_FILE, 'utf8');
    const scripts = {
      'registry.ts': 'registry',
      'payments.ts': 'payments',
      'batch-gas.ts': 'payments.batchGas',
      'channels.ts': 'payments.channels',
      'web.ts': 'web',
      'dev.ts': 'dev',
      'instances.ts': 'instances',
    };
    const runs = await Promise.all(
      Object.entries(scripts).map(async ([script, section]) => {
        const child = Bun.spawn([process.execPath, join(import.meta.dir, '../../bench', script), '--dry-run'], {
          env: { ...process.env, BENCH_FORCE: '1' },
          stdout: 'pipe',
          stderr: 'pipe',
        });
        const [stdout, stderr, code] = await Promise.all([
          new Response(child.stdout).text(),
          new Response(child.stderr).text(),
          child.exited,
        ]);
        return {
          script,
          code,
          said: stdout.includes(`would run at load average`) && stdout.includes(`write ${section} into bench/results.json`),
          stderr,
        };
      }),
    );
    for (const run of runs)
      expect({ script: run.script, code: run.code, said: run.said }).toEqual({ script: run.script, code: 0, said: true });
    expect(readFileSync(RESULTS_FILE, 'utf8')).toBe(before);
  }, 60_000);
});
