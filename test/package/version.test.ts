/**
 * One version: the SDK package (sdk/package.json), the server's package.json, `market --version`,
 * the registry's `GET /health` and the newest released entry of CHANGELOG.md agree.
 */
import { describe, expect, it } from 'bun:test';
import { join, resolve } from 'node:path';
import { sdkManifest } from '../../scripts/sdk-package';
import { registryFixture } from '../support/registry';

const REPO = resolve(import.meta.dir, '../..');
const fx = registryFixture('embedded');

describe('the version', () => {
  it('is one: SDK package, server package, market --version, /health and the changelog', async () => {
    const sdk = (await sdkManifest()).version;
    expect(sdk).toMatch(/^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/);
    const server = ((await Bun.file(join(REPO, 'package.json')).json()) as { version: string }).version;
    expect(server).toBe(sdk);

    const cli = Bun.spawn([process.execPath, join(REPO, 'src/cli/main.ts'), '--version'], { cwd: REPO, stdout: 'pipe', stderr: 'pipe' });
    expect(await cli.exited).toBe(0);
    expect(await new Response(cli.stdout).text()).toBe(`${sdk}\n`);

    const health = await fx.request('/health');
    expect(health.status).toBe(200);
    expect(((await health.json()) as { version: string }).version).toBe(sdk);

    const changelog = await Bun.file(join(REPO, 'CHANGELOG.md')).text();
    const released = [...changelog.matchAll(/^## (\d+\.\d+\.\d+\S*) - \d{4}-\d{2}-\d{2}$/gm)].map((m) => m[1]);
    expect(released[0]).toBe(sdk);
  });
});
