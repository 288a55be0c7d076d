import { parseArgs } from 'node:util';
import { readPort, REGISTRY_DEFAULTS } from '../../config';

/**
 * `market healthcheck [--url U]`: exits 0 when the registry's /health answers ok, else 1.
 * For container health checks, where no curl is installed.
 */
export async function healthcheckCommand(args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { url: { type: 'string' } }, strict: true });
  const url = values.url ?? `http://127.0.0.1:${readPort(process.env, 'PORT', REGISTRY_DEFAULTS.port)}/health`;
  const res = await fetch(url, { signal: AbortSignal.timeout(3000) }).catch(() => undefined);
  const body = (await res?.json().catch(() => undefined)) as { status?: string } | undefined;
  if (res?.ok && body?.status === 'ok') {
    process.stdout.write(`ok ${url}\n`);
    return;
  }
  process.stderr.write(`unhealthy: ${url} answered ${res ? res.status : 'nothing'}\n`);
  process.exit(1);
}
