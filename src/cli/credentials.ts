/**
 * The consumer commands' stored login: `config.json` under `$XDG_CONFIG_HOME/skill-market/`
 * (or `~/.config/skill-market/`), mode 0600, holding the registry URL and API key.
 */
import { chmod, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { readConfigDir, type Env } from '../config';

export interface StoredCredentials {
  apiUrl?: string;
  apiKey?: string;
}

const credentialsPath = (env: Env) => join(readConfigDir(env), 'config.json');

export async function readCredentials(env: Env): Promise<StoredCredentials> {
  let text: string;
  try {
    text = await readFile(credentialsPath(env), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw error;
  }
  try {
    const parsed = JSON.parse(text) as Record<string, unknown>;
    return {
      ...(typeof parsed.apiUrl === 'string' ? { apiUrl: parsed.apiUrl } : {}),
      ...(typeof parsed.apiKey === 'string' ? { apiKey: parsed.apiKey } : {}),
    };
  } catch {
    throw new Error(`${credentialsPath(env)} is not valid JSON; fix it or run market login again`);
  }
}

/** Replaces the stored credentials atomically; the file is 0600 and its folder 0700. */
export async function saveCredentials(credentials: StoredCredentials, env: Env): Promise<string> {
  const path = credentialsPath(env);
  await mkdir(readConfigDir(env), { recursive: true, mode: 0o700 });
  const temporary = `${path}.${process.pid}.tmp`;
  await writeFile(temporary, `${JSON.stringify(credentials, null, 2)}\n`, { mode: 0o600 });
  await chmod(temporary, 0o600);
  await rename(temporary, path);
  return path;
}
