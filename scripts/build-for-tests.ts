/**
 * Builds what the tests run (the binary dist/market and the SDK package's sdk/dist) once, before
 * `bun test` starts its workers: test files in two workers must never build into one folder at once.
 * Does nothing when both are newer than their sources (CI builds them before the tests).
 */
import { ensureBinary } from '../test/support/binary';
import { sdkBuildIsFresh } from './sdk-package';

const { buildMs } = await ensureBinary();
if (buildMs > 0) console.log(`built dist/market and sdk/dist for the tests in ${(buildMs / 1000).toFixed(1)} s`);
else if (!(await sdkBuildIsFresh())) {
  const build = Bun.spawnSync(['npm', 'run', 'build:sdk'], { stdout: 'inherit', stderr: 'inherit' });
  if (build.exitCode !== 0) process.exit(build.exitCode ?? 1);
}
