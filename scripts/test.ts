/**
 * `npm test`: the type check and the in-process tests at once. The tests keep both cores busy only
 * part of the time (they wait on the chain, the database and sockets), so the type checker runs in
 * their gaps (at a lower priority) instead of before them, with one checker (`--checkers 1` in the
 * `typecheck` script: tsc's default of four checkers types the shared modules, the registry's route
 * chain first, once in each, about twice the CPU for a second less). The tests' output streams as they run; the type checker's is
 * printed after it. Exits non-zero when either fails. Arguments go to `bun test` (a file, a filter).
 */
const typecheck = Bun.spawn(['nice', '-n', '10', 'npm', 'run', '--silent', 'typecheck'], { stdout: 'pipe', stderr: 'pipe' });
const tests = Bun.spawn(
  [
    process.execPath,
    'test',
    '--timeout',
    '60000',
    '--parallel=2',
    '--no-isolate',
    '--timings=test/timings.json',
    '--path-ignore-patterns=**/*.system.test.ts',
    ...process.argv.slice(2),
  ],
  { stdout: 'inherit', stderr: 'inherit', stdin: 'inherit' },
);

const [testsCode, typecheckCode, typecheckOut, typecheckErr] = await Promise.all([
  tests.exited,
  typecheck.exited,
  new Response(typecheck.stdout).text(),
  new Response(typecheck.stderr).text(),
]);
if (typecheckCode === 0) console.log('type check: no errors (tsc -p . && tsc -p src/web/app)');
else {
  process.stdout.write(typecheckOut);
  process.stderr.write(typecheckErr);
  console.error(`type check failed (exit ${typecheckCode})`);
}
process.exit(testsCode !== 0 ? testsCode : typecheckCode);
