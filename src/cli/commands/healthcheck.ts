import { parseArgs } from 'node:util';
import { MarketError, REGISTRY_ROUTES, RegistryClient } from 'skill-market/registry';
import { readPort, REGISTRY_DEFAULTS } from '../../config';

/**
 * `market healthcheck [--url U]`: exits 0 when the server's /health answers ok, else 1. `U` is the
 * health URL (…/health) or the server's base URL. For container health checks, where no curl is
 * installed; the registry's and the facilitator's /health answer alike.
 */
export async function healthcheckCommand(args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { url: { type: 'string' } }, strict: true });
  const url = values.url ?? `http://127.0.0.1:${readPort(process.env, 'PORT', REGISTRY_DEFAULTS.port)}/health`;
  const server = new RegistryClient({ apiUrl: url.replace(/\/health\/?$/, ''), timeoutMs: 3000, retry: { attempts: 1 } });
  let status: number | undefined;
  try {
    const health = await server.call(REGISTRY_ROUTES.health, {}, { what: 'health check' });
    if (health.status === 'ok') {
      process.stdout.write(`ok ${url}\n`);
      return;
    }
  } catch (error) {
    // No answer is status 0; an answer that is not a health answer keeps its status.
    if (!(error instanceof MarketError)) throw error;
    status = error.status;
  }
  process.stderr.write(`unhealthy: ${url} answered ${status || 'nothing'}\n`);
  process.exit(1);
}
