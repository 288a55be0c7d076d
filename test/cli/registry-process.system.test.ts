/**
 * `market registry` as a process: it serves /health on its embedded database, a second registry on
 * the same directory is refused at once, and SIGTERM stops it.
 */
import { afterAll, describe, expect, it } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, spawnMarket, waitForJson } from '../support/process';

const work = mkdtempSync(join(tmpdir(), 'market-registry-process-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

async function run(args: string[], env: Record<string, string> = {}) {
  const child = spawnMarket(args, env, work);
  const [code, stdout, stderr] = await Promise.all([child.exited, new Response(child.stdout).text(), new Response(child.stderr).text()]);
  return { code, stdout, stderr };
}

describe('market registry process', () => {
  it('serves /health on the embedded database, refuses a second registry on the same directory, and stops on SIGTERM', async () => {
    const dataDir = join(work, 'data');
    const port = await freePort();
    const first = spawnMarket(['registry', '--port', String(port), '--host', '127.0.0.1'], { MARKET_DATA_DIR: dataDir }, work);
    try {
      expect(await waitForJson(`http://127.0.0.1:${port}/health`)).toMatchObject({ status: 'ok', database: 'embedded' });

      const began = performance.now();
      const second = await run(['registry', '--port', String(await freePort())], { MARKET_DATA_DIR: dataDir });
      expect(second.code).toBe(1);
      expect(second.stderr).toContain(`the embedded database in ${dataDir} is already in use by another process`);
      expect(performance.now() - began).toBeLessThan(10_000);
      expect(await waitForJson(`http://127.0.0.1:${port}/health`)).toMatchObject({ status: 'ok' });

      const stopping = performance.now();
      first.kill('SIGTERM');
      expect(await first.exited).toBe(0);
      expect(performance.now() - stopping).toBeLessThan(2000);
    } finally {
      first.kill('SIGKILL');
    }
  }, 60_000);
});
