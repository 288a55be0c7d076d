/**
 * The load gate of every bench: committed figures come from a quiet machine. A bench reads the
 * 1-minute load average (`os.loadavg()[0]`) before it starts any work; above QUIET_LOAD it waits a
 * while for the machine to calm down (the build or the bench before it), then refuses to run, so
 * the figures in bench/results.json stay as they are. `--force` or `BENCH_FORCE=1` runs anyway, and
 * the section it writes says `"loaded": true`. Every section carries the load at its start and end.
 * `--dry-run` says what the gate decides now and exits before any work.
 */
import { loadavg } from 'node:os';

/** The highest 1-minute load average at the start of a bench whose figures count as quiet. */
export const QUIET_LOAD = 1;

/** The load fields of a section of bench/results.json. */
export interface LoadFields {
  /** 1-minute load average when the bench started its work, and when it wrote its figures. */
  load: { start: number; end: number };
  /** Present when the bench was forced to run above QUIET_LOAD: the figures are not quiet ones. */
  loaded?: true;
}

/** A bench allowed to run: the load it started at, and the fields it writes with its figures. */
export interface BenchGate {
  readonly start: number;
  readonly loaded: boolean;
  /** The load fields for the section, the end load read now. */
  fields(): LoadFields;
}

/** The machine stayed above QUIET_LOAD and nothing forced the bench: its committed figures are kept. */
export class NotQuietError extends Error {
  override readonly name = 'NotQuietError';
}

export interface GateOptions {
  argv?: readonly string[];
  env?: Readonly<Record<string, string | undefined>>;
  /** The 1-minute load average now; `os.loadavg()[0]` by default. */
  readLoad?: () => number;
  /** How long to wait for the load to fall to QUIET_LOAD before refusing; BENCH_QUIET_WAIT seconds, default 180. */
  waitMs?: number;
  /** Pause between two readings while waiting (5 s). */
  pollMs?: number;
  sleep?: (ms: number) => Promise<void>;
  log?: (line: string) => void;
}

const round = (load: number) => Math.round(load * 100) / 100;

/** Whether `--force` or BENCH_FORCE=1 asks to run whatever the load. */
export const forced = (argv: readonly string[], env: Readonly<Record<string, string | undefined>>) =>
  argv.includes('--force') || env.BENCH_FORCE === '1';

/**
 * Lets the bench `name` start when the load is at most QUIET_LOAD, waiting up to `waitMs` for it
 * to get there; forced, it starts at once and its figures are marked loaded. Throws NotQuietError otherwise.
 */
export async function quietStart(name: string, options: GateOptions = {}): Promise<BenchGate> {
  const argv = options.argv ?? process.argv.slice(2);
  const env = options.env ?? process.env;
  const readLoad = options.readLoad ?? (() => loadavg()[0] ?? 0);
  const waitMs = options.waitMs ?? Number(env.BENCH_QUIET_WAIT ?? 180) * 1000;
  const pollMs = options.pollMs ?? 5_000;
  const sleep = options.sleep ?? ((ms: number) => Bun.sleep(ms));
  const log = options.log ?? ((line: string) => console.error(line));

  let load = readLoad();
  if (load > QUIET_LOAD && forced(argv, env)) {
    log(`${name}: load average ${load.toFixed(2)} is above ${QUIET_LOAD}; forced to run, its figures are marked "loaded": true`);
    return gate(round(load), true, readLoad);
  }
  if (load > QUIET_LOAD && waitMs > 0)
    log(`${name}: load average ${load.toFixed(2)}, waiting up to ${waitMs / 1000} s for it to fall to ${QUIET_LOAD}`);
  for (let waited = 0; load > QUIET_LOAD && waited < waitMs; waited += pollMs) {
    await sleep(pollMs);
    load = readLoad();
  }
  if (load > QUIET_LOAD) {
    throw new NotQuietError(
      `${name}: load average ${load.toFixed(2)} is above ${QUIET_LOAD}, so its figures would not be quiet ones; ` +
        `bench/results.json keeps the committed figures. Run it on a quiet machine, or with --force (BENCH_FORCE=1) ` +
        `to record them anyway, marked "loaded": true.`,
    );
  }
  return gate(round(load), false, readLoad);
}

function gate(start: number, loaded: boolean, readLoad: () => number): BenchGate {
  return {
    start,
    loaded,
    fields: () => ({ load: { start, end: round(readLoad()) }, ...(loaded ? { loaded: true as const } : {}) }),
  };
}

/**
 * What a bench script calls first, before any work: the gate, with its refusal printed and the
 * process ended (exit 3); with `--dry-run`, the decision printed and the process ended at once,
 * with the code the bench would have (0: it would run, 3: it would refuse).
 */
export async function benchGate(name: string, section: string): Promise<BenchGate> {
  const dryRun = process.argv.includes('--dry-run');
  try {
    const allowed = await quietStart(name, dryRun ? { waitMs: 0 } : {});
    if (dryRun) {
      console.log(
        `${name} (dry run): would run at load average ${allowed.start} and write ${section} into bench/results.json${allowed.loaded ? ', marked "loaded": true' : ''}`,
      );
      process.exit(0);
    }
    return allowed;
  } catch (error) {
    if (!(error instanceof NotQuietError)) throw error;
    console.error(dryRun ? `${error.message} (dry run)` : error.message);
    process.exit(3);
  }
}
