import { parseArgs } from 'node:util';
import { RegistryClient, RegistryError } from 'skill-market/registry';
import { readRegistryConnection } from '../../config';
import { CommandFailure, describeFailure, reportFailures } from '../consumer';
import { readCredentials, saveCredentials } from '../credentials';
import { UsageError } from '../errors';
import { terminalText } from '../terminal';

const API_KEY = /^(sk|ck)_[A-Za-z0-9_-]{16,128}$/;

/**
 * `market login --api-key K [--api-url U]`: checks the key with the registry and stores both in
 * the config file (mode 0600) for the consumer commands. A registry that cannot be reached does
 * not stop the login; one that refuses the key does.
 */
export async function loginCommand(args: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args,
    options: { 'api-key': { type: 'string' }, 'api-url': { type: 'string' } },
    strict: true,
    allowPositionals: true,
  });
  if (positionals.length > 0) throw new UsageError(`login takes no arguments, got "${positionals[0]}"`);
  const apiKey = values['api-key'];
  if (!apiKey) throw new UsageError('login needs --api-key <key> (create one with POST /auth/api-keys or in the dashboard)');
  await reportFailures(async () => {
    if (!API_KEY.test(apiKey)) throw new CommandFailure('that is not an API key: keys start with sk_ (creator) or ck_ (consumer)');
    const env = process.env;
    const { apiUrl } = readRegistryConnection(env, { 'api-url': values['api-url'] }, await readCredentials(env));
    try {
      await new RegistryClient({ apiUrl, apiKey, timeoutMs: 10_000, retry: { attempts: 1 } }).wallets();
    } catch (error) {
      if (error instanceof RegistryError && (error.status === 401 || error.status === 403)) {
        throw new CommandFailure(`the registry at ${apiUrl} refused this key: ${error.error ?? error.message}`);
      }
      process.stderr.write(`market: warning: could not check the key: ${terminalText(describeFailure(error as Error))}\n`);
    }
    const path = await saveCredentials({ apiUrl, apiKey }, env);
    process.stdout.write(`Logged in to ${apiUrl} with ${apiKey.slice(0, 11)}…; saved to ${path}\n`);
  });
}
