/**
 * `market dev` from source as a child process, as `npm start` runs it, with its banner parsed:
 * used by test/dev and bench/dev.ts. Ports are free ones so that runs never clash.
 */
import { join } from 'node:path';
import { CLI_ENTRY, freePort, inheritedEnv } from './process';
import { TEST_CACHE_HOME } from './cache';

export const ROOT = join(import.meta.dir, '../..');

export interface DevBanner {
  marketplace: string;
  facilitator: string;
  skillServer: string;
  rpcUrl: string;
  token: string;
  wallet: string;
  /** As printed, e.g. "100" or "99.998". */
  balance: string;
  /** The printed `market call …` line. */
  call: string;
  /** The printed `market channels …` line. */
  channels: string;
}

export interface DevProcess {
  child: ReturnType<typeof Bun.spawn>;
  ports: { registry: number; facilitator: number; skills: number; chain: number };
  output(): string;
  /** Exit code once exited. */
  exited: Promise<number>;
  /** Resolves with the parsed banner; rejects with the output if the process exits first. */
  banner: Promise<DevBanner>;
}

export async function freeDevPorts() {
  return { registry: await freePort(), facilitator: await freePort(), skills: await freePort(), chain: await freePort() };
}

/** Runs `bun src/cli/main.ts dev --dir <dir> <ports> …extra` from the repository root (the tests' cache folder, unless `env` says). */
export async function spawnDev(
  dir: string,
  extra: string[] = [],
  ports?: DevProcess['ports'],
  env: Record<string, string> = {},
): Promise<DevProcess> {
  const p = ports ?? (await freeDevPorts());
  const child = Bun.spawn(
    [
      process.execPath,
      CLI_ENTRY,
      'dev',
      '--dir',
      dir,
      '--port',
      `${p.registry}`,
      '--facilitator-port',
      `${p.facilitator}`,
      '--skills-port',
      `${p.skills}`,
      '--chain-port',
      `${p.chain}`,
      ...extra,
    ],
    {
      cwd: ROOT,
      env: { ...inheritedEnv(), HOME: process.env.HOME ?? '/tmp', XDG_CACHE_HOME: TEST_CACHE_HOME, ...env },
      stdin: 'ignore',
      stdout: 'pipe',
      stderr: 'pipe',
    },
  );
  const chunks: string[] = [];
  const output = () => chunks.join('');
  // The banner is read as the output arrives: settled by the chunk that completes it, or by the exit.
  let printed: (banner: DevBanner) => void = () => undefined;
  const drain = async (stream: ReadableStream<Uint8Array>) => {
    const decoder = new TextDecoder();
    for await (const chunk of stream) {
      chunks.push(decoder.decode(chunk, { stream: true }));
      const parsed = parseBanner(output());
      if (parsed) printed(parsed);
    }
  };
  const drained = Promise.all([drain(child.stdout), drain(child.stderr)]).catch(() => undefined);
  const exited = child.exited.then(async (code) => {
    await drained;
    return code;
  });
  const banner = new Promise<DevBanner>((resolve, reject) => {
    printed = resolve;
    const already = parseBanner(output());
    if (already) resolve(already);
    void exited.then((code) => {
      const parsed = parseBanner(output());
      if (parsed) resolve(parsed);
      else reject(new Error(`market dev exited with ${code} before its banner:\n${output()}`));
    });
  });
  banner.catch(() => undefined); // a run expected to fail need not await it
  return { child, ports: p, output, exited, banner };
}

function parseBanner(text: string): DevBanner | undefined {
  const call = /Pay for a skill from here:\n\s+(.+)\n/.exec(text)?.[1];
  const channels = /Your channels[^\n]*:\n\s+(.+)\n/.exec(text)?.[1] ?? '';
  if (!call) return undefined;
  const field = (name: string) => new RegExp(`${name}\\s+(\\S+)`).exec(text)?.[1] ?? '';
  const wallet = /Demo wallet\s+(0x[0-9a-fA-F]{40})\s+(\S+) test USDC/.exec(text);
  return {
    marketplace: field('Marketplace'),
    facilitator: field('Facilitator'),
    skillServer: field('Skill server'),
    rpcUrl: field('Local chain'),
    token: /test USDC (0x[0-9a-fA-F]{40})/.exec(text)?.[1] ?? '',
    wallet: wallet?.[1] ?? '',
    balance: wallet?.[2] ?? '',
    call,
    channels,
  };
}

/** Runs a printed command line with sh from the repository root; its exit code and output. */
export async function runPrinted(command: string): Promise<{ code: number; stdout: string; stderr: string }> {
  const child = Bun.spawn(['sh', '-c', command], {
    cwd: ROOT,
    env: { ...inheritedEnv(), HOME: process.env.HOME ?? '/tmp' },
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  return { code, stdout, stderr };
}

/** Pids of processes whose command line mentions `needle` (ps, so children of any parent count). */
export async function processesMentioning(needle: string): Promise<string[]> {
  const ps = Bun.spawn(['ps', '-eo', 'pid=,args='], { stdout: 'pipe' });
  const text = await new Response(ps.stdout).text();
  return text
    .split('\n')
    .filter((line) => line.includes(needle) && !line.includes('ps -eo'))
    .map((line) => line.trim());
}
