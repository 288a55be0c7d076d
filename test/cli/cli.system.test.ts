import { afterAll, describe, expect, it } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { VERSION } from '../../src/version';
import { freePort, spawnMarket, waitForJson } from '../support/process';

const work = mkdtempSync(join(tmpdir(), 'market-cli-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

async function run(args: string[], env: Record<string, string> = {}) {
  const child = spawnMarket(args, env, work);
  const [code, stdout, stderr] = await Promise.all([child.exited, new Response(child.stdout).text(), new Response(child.stderr).text()]);
  return { code, stdout, stderr };
}

describe('market command line', () => {
  it('prints the version with --version', async () => {
    const { code, stdout } = await run(['--version']);
    expect(code).toBe(0);
    expect(stdout.trim()).toBe(VERSION);
  });

  it('lists every subcommand with --help', async () => {
    const { code, stdout } = await run(['--help']);
    expect(code).toBe(0);
    for (const word of ['registry', 'serve <module.ts>', 'facilitator', 'group new', 'skill list', 'fund <address>', '--dev [D]'])
      expect(stdout).toContain(word);
  });

  it('prints usage and exits 2 on an unknown subcommand', async () => {
    const { code, stderr } = await run(['frobnicate']);
    expect(code).toBe(2);
    expect(stderr).toContain('unknown command "frobnicate"');
    expect(stderr).toContain('Usage:');
  });

  it('prints usage and exits 2 on an unknown flag', async () => {
    const { code, stderr } = await run(['registry', '--colour']);
    expect(code).toBe(2);
    expect(stderr).toContain('Usage:');
  });

  it('exits 1 naming PORT when PORT=abc', async () => {
    const { code, stderr } = await run([], { PORT: 'abc' });
    expect(code).toBe(1);
    expect(stderr).toContain('PORT must be a port number');
  });

  it('exits 1 naming DATABASE_URL when it is not a PostgreSQL URL', async () => {
    const { code, stderr } = await run(['registry'], { DATABASE_URL: 'mysql://root@localhost/db' });
    expect(code).toBe(1);
    expect(stderr).toContain('DATABASE_URL must start with postgres://');
  });
});

describe('market registry process', () => {
  it('serves /health on the embedded database, refuses a second registry on the same directory, and stops on SIGTERM', async () => {
    const dataDir = join(work, 'data');
    const port = await freePort();
    const first = spawnMarket(['registry', '--port', String(port), '--host', '127.0.0.1'], { MARKET_DATA_DIR: dataDir }, work);
    try {
      expect(await waitForJson(`http://127.0.0.1:${port}/health`)).toMatchObject({ status: 'ok', database: 'embedded' });

      // Refused at once: it exits while the first still holds the directory (a wait for the lock would last until the test's timeout).
      const second = await run(['registry', '--port', String(await freePort())], { MARKET_DATA_DIR: dataDir });
      expect(second.code).toBe(1);
      expect(second.stderr).toContain(`the embedded database in ${dataDir} is already in use by another process`);
      expect(await waitForJson(`http://127.0.0.1:${port}/health`)).toMatchObject({ status: 'ok' });

      first.kill('SIGTERM');
      expect(await first.exited).toBe(0);
    } finally {
      first.kill('SIGKILL');
    }
  }, 60_000);
});
