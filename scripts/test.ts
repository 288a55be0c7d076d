/**
 * The two test tiers. `npm test` (`bun scripts/test.ts`): the type check and the in-process tests at
 * once. The tests keep both cores busy only part of the time (they wait on the chain, the database
 * and sockets), so the type checker runs in their gaps (at a lower priority) instead of before them,
 * with one checker (`--checkers 1` in the `typecheck` script: tsc's default of four checkers types
 * the shared modules, the registry's route chain first, once in each, about twice the CPU for a
 * second less). The tests' output streams as they run; the type checker's is printed after it.
 * `npm run test:system` (`bun scripts/test.ts --system`): builds what the system tests run when stale
 * (scripts/build-for-tests.ts), then runs them. Both fill the caches every test process reads
 * first (scripts/prepare-tests.ts: the compiled test contracts, the migrated embedded database),
 * which on a fresh checkout each worker would otherwise make at once. Exits non-zero when anything
 * fails. Further arguments go to `bun test` (a file, a filter).
 *
 * Both give the tests a temporary folder in memory (`TMPDIR` in /dev/shm, removed at the end) where
 * the machine has one and TMPDIR is not set: the tests write thousands of small files (database
 * directories, projects, browser profiles), which cost about a tenth of the system tier's CPU on a disk.
 */
import { mkdtempSync, rmSync, statfsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';

const system = process.argv[2] === '--system';
const passed = process.argv.slice(system ? 3 : 2);

/** Least free space in /dev/shm to use it: the tests' files at their peak are a few hundred MB. */
const MEMORY_TMP_MIN_BYTES = 2 * 1024 ** 3;

function memoryTmpdir(): string | undefined {
  if (process.env.TMPDIR) return undefined;
  try {
    const fs = statfsSync('/dev/shm');
    if (fs.bavail * fs.bsize < MEMORY_TMP_MIN_BYTES) return undefined;
    return mkdtempSync('/dev/shm/market-tests-');
  } catch {
    return undefined;
  }
}

/**
 * Bun's allocator (mimalloc) keeps the memory it frees instead of handing it back to the kernel
 * within milliseconds: the test processes free and reuse hundreds of MB, and each page taken back
 * from the kernel is a page fault (on a virtual machine like this one, about 14 µs per 4 KB page, a
 * quarter of an in-process file's CPU). Every process the tests start inherits it (test/support/process.ts).
 */
const ALLOCATOR = { MIMALLOC_PURGE_DELAY: process.env.MIMALLOC_PURGE_DELAY ?? '-1' };

const tmp = memoryTmpdir();
const env = { ...process.env, ...ALLOCATOR, ...(tmp ? { TMPDIR: tmp } : {}) };
const children = new Set<ReturnType<typeof Bun.spawn>>();

function spawn(argv: string[], piped = false) {
  const child = Bun.spawn(argv, { env, stdin: 'inherit', stdout: piped ? 'pipe' : 'inherit', stderr: piped ? 'pipe' : 'inherit' });
  children.add(child);
  return child;
}

function finish(code: number): never {
  if (tmp) rmSync(tmp, { recursive: true, force: true });
  process.exit(code);
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    for (const child of children) child.kill(signal);
    void Promise.all([...children].map((c) => c.exited)).then(() => finish(130));
  });
}

/** The caches every test process reads, filled once before the workers start (scripts/prepare-tests.ts). */
async function prepare(): Promise<void> {
  const steps = ['contracts', 'database'].map((what) => spawn([process.execPath, join(import.meta.dir, 'prepare-tests.ts'), what]).exited);
  const failed = (await Promise.all(steps)).find((code) => code !== 0);
  if (failed !== undefined) finish(failed);
}

/**
 * Test workers: one more than the cores (at most 8, the port slices of test/support/process.ts). Every
 * test file waits part of its time on a chain, a database, a socket or a child process; with a worker
 * per core those waits leave the cores idle a quarter of the time, and a third worker fills them: on
 * 2 cores the in-process tests take about 115 s instead of 143, the system tests 140 s instead of 159,
 * for the same CPU. `TEST_WORKERS` sets another number.
 */
const WORKERS = Number(process.env.TEST_WORKERS) || Math.min(availableParallelism() + 1, 8);

const BUN_TEST = [process.execPath, 'test', '--timeout', '60000', `--parallel=${WORKERS}`, '--no-isolate', '--timings=test/timings.json'];

if (system) {
  const built = await spawn([process.execPath, join(import.meta.dir, 'build-for-tests.ts')]).exited;
  if (built !== 0) finish(built);
  await prepare();
  // Every system test, unless the arguments name some.
  const files = passed.some((a) => a.includes('.system.test')) ? [] : ['.system.test.ts'];
  finish(await spawn([...BUN_TEST, ...passed, ...files]).exited);
}

const typecheck = spawn(['nice', '-n', '10', 'npm', 'run', '--silent', 'typecheck'], true);
await prepare();
const tests = spawn([...BUN_TEST, '--path-ignore-patterns=**/*.system.test.ts', ...passed]);

const [testsCode, typecheckCode, typecheckOut, typecheckErr] = await Promise.all([
  tests.exited,
  typecheck.exited,
  new Response(typecheck.stdout as ReadableStream).text(),
  new Response(typecheck.stderr as ReadableStream).text(),
]);
if (typecheckCode === 0) console.log('type check: no errors (tsc -p . && tsc -p src/web/app)');
else {
  process.stdout.write(typecheckOut);
  process.stderr.write(typecheckErr);
  console.error(`type check failed (exit ${typecheckCode})`);
}
finish(testsCode !== 0 ? testsCode : typecheckCode);
