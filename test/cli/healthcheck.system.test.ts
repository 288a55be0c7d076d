/**
 * `market healthcheck`: a container's health check against a registry listening on a port, by its
 * /health URL or its base URL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { join } from 'node:path';
import type { DatabaseHandle } from '../../src/db';
import { openTestDatabase } from '../support/database';
import { testRegistry } from '../support/registry';

let database: DatabaseHandle;
const servers: { stop(): Promise<unknown> }[] = [];

beforeAll(async () => {
  database = await openTestDatabase('embedded');
});
afterAll(async () => {
  for (const server of servers) await server.stop();
  await database.close();
});

/** A registry over `handle` listening on a free port: its base URL. */
function listening(handle: DatabaseHandle): string {
  const { app } = testRegistry(handle);
  app.listen({ hostname: '127.0.0.1', port: 0 });
  servers.push(app);
  return `http://127.0.0.1:${app.server!.port}`;
}

async function healthcheck(url: string): Promise<{ code: number; stdout: string; stderr: string }> {
  const run = Bun.spawn([process.execPath, join(import.meta.dir, '../../src/cli/main.ts'), 'healthcheck', '--url', url], {
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const [code, stdout, stderr] = await Promise.all([run.exited, new Response(run.stdout).text(), new Response(run.stderr).text()]);
  return { code, stdout, stderr };
}

describe('market healthcheck', () => {
  it('exits 0 when the registry’s /health answers ok, given the /health URL or the base URL', async () => {
    const base = listening(database);
    expect(await healthcheck(`${base}/health`)).toEqual({ code: 0, stdout: `ok ${base}/health\n`, stderr: '' });
    expect(await healthcheck(base)).toEqual({ code: 0, stdout: `ok ${base}\n`, stderr: '' });
  });

  it('exits 1 naming the status when the database does not answer, and when nothing answers', async () => {
    const broken = listening({ ...database, ping: () => Promise.reject(new Error('connection refused')) });
    expect(await healthcheck(`${broken}/health`)).toEqual({ code: 1, stdout: '', stderr: `unhealthy: ${broken}/health answered 503\n` });
    expect(await healthcheck('http://127.0.0.1:9/health')).toEqual({
      code: 1,
      stdout: '',
      stderr: 'unhealthy: http://127.0.0.1:9/health answered nothing\n',
    });
  });
});
