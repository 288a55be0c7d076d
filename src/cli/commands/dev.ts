import { parseArgs } from 'node:util';
import { AnvilNotFoundError } from '../../chain/anvil';
import { banner } from '../../dev/banner';
import { readDevDir } from '../../config';
import { DEFAULT_DEV_DIR } from '../../dev/data-dir';
import { DevError } from '../../dev/errors';
import { startDev, type DevStack } from '../../dev/stack';
import { UsageError } from '../errors';

/** Everything must be gone within 2 s of a signal; past this the process exits regardless. */
const STOP_LIMIT_MS = 1_800;

/**
 * `market dev [module.ts] [--dir D] [--fresh] [--port N] [--facilitator-port N] [--skills-port N]
 * [--chain-port N]`: the whole marketplace on this machine (see src/dev/stack.ts), until Ctrl-C.
 */
export async function devCommand(args: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    strict: true,
    options: {
      dir: { type: 'string' },
      fresh: { type: 'boolean' },
      port: { type: 'string' },
      'facilitator-port': { type: 'string' },
      'skills-port': { type: 'string' },
      'chain-port': { type: 'string' },
    },
  });
  if (positionals.length > 1) throw new UsageError(`dev takes one skills module, got also "${positionals[1]}"`);
  const port = (flag: string, fallback: number) => {
    const raw = values[flag as keyof typeof values];
    if (raw === undefined) return fallback;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < 1 || n > 65_535) throw new UsageError(`--${flag} must be a port number (1-65535)`);
    return n;
  };
  const say = (line: string) => process.stdout.write(`${line}\n`);
  let stack: DevStack | undefined;
  let ending = false;
  const end = (code: number) => {
    if (ending) return;
    ending = true;
    setTimeout(() => process.exit(code), STOP_LIMIT_MS).unref();
    void (stack?.stop() ?? Promise.resolve()).finally(() => process.exit(code));
  };
  const onFatal = (reason: string) => {
    process.stderr.write(`market dev: ${reason}; stopping everything\n`);
    end(1);
  };
  // A signal while starting stops what has started (startDev cleans up when it fails).
  const onSignal = () => {
    say('market dev: stopping');
    end(0);
  };
  process.on('SIGINT', onSignal).on('SIGTERM', onSignal);

  const ports = {
    registry: port('port', 3000),
    facilitator: port('facilitator-port', 3001),
    skills: port('skills-port', 3002),
    chain: port('chain-port', 8545),
  };
  say(`market dev: starting the marketplace on this machine`);
  try {
    stack = await startDev({
      dir: values.dir ?? readDevDir(process.env) ?? DEFAULT_DEV_DIR,
      fresh: values.fresh ?? false,
      module: positionals[0],
      ports,
      say,
      onFatal,
    });
  } catch (error) {
    if (error instanceof AnvilNotFoundError) throw new DevError(error.message);
    throw error;
  }
  if (ending) return void (await stack.stop());
  say(banner(stack));
}
