import { spawn } from 'node:child_process';
import { join } from 'node:path';

export interface LoadSpec {
  url: string;
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  connections: number;
  duration: number;
  /** Rotate through these paths, one per request. */
  paths?: string[];
  /** A different X-Forwarded-For on every request (distinct clients behind a trusted proxy). */
  forwardedFor?: boolean;
}

export interface LoadResult {
  requestsPerSecond: number;
  p50: number;
  p99: number;
  total: number;
  non2xx: number;
  errors: number;
  timeouts: number;
}

/** Runs autocannon under Node in a child process, so the load generator is not the server. */
export function runLoad(spec: LoadSpec): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const child = spawn('node', [join(import.meta.dir, 'autocannon-runner.mjs'), JSON.stringify(spec)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out) as LoadResult) : reject(new Error(`autocannon exited ${code}`))));
  });
}
