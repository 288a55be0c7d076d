import { parseArgs } from 'node:util';
import { readChannelsFromBlock } from '../../config';
import { readDevProfile } from '../../dev/profile';
import { runDoctor, type CheckResult, type DoctorTarget } from '../../doctor/checks';
import { UsageError } from '../errors';
import { terminalText } from '../terminal';

const MARK: Record<CheckResult['status'], string> = { ok: 'ok  ', warn: 'warn', fail: 'FAIL', skip: 'skip' };

/**
 * `market doctor [--dev [dir]] [--network N] [--rpc-url U] [--asset A] [--facilitator U]
 * [--registry U] [--api-key K] [--endpoint U] [--channels-from-block B] [--json]`: checks a
 * deployment (RPC and chain, the token, the payment-channel contracts, the facilitator, the
 * channels it offers and its relayers' ETH, the block channel events are read from, the registry
 * and a creator key, a skill server) and says what is wrong; exit code 1 when a check fails.
 * `--dev` checks the local marketplace `market dev` runs.
 */
export async function doctorCommand(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    strict: true,
    allowPositionals: false,
    options: {
      dev: { type: 'string' },
      network: { type: 'string' },
      'rpc-url': { type: 'string' },
      asset: { type: 'string' },
      facilitator: { type: 'string' },
      registry: { type: 'string' },
      'api-key': { type: 'string' },
      endpoint: { type: 'string' },
      'channels-from-block': { type: 'string' },
      json: { type: 'boolean' },
    },
  });
  const env = process.env;
  // --dev arrives as --dev=<dir> (dev-flag.ts).
  const target: DoctorTarget = values.dev !== undefined ? devTarget(values.dev) : { network: '' };
  const pick = (flag: string | undefined, variable: string | undefined, fallback: string | undefined) => flag ?? variable ?? fallback;
  target.network = pick(values.network, values.dev ? undefined : env.MARKET_NETWORK, target.network || 'eip155:8453') as string;
  if (!/^eip155:[0-9]{1,12}$/.test(target.network)) throw new UsageError('--network must be a CAIP-2 id such as eip155:84532');
  target.rpcUrl = pick(values['rpc-url'], values.dev ? undefined : env.MARKET_RPC_URL, target.rpcUrl);
  target.asset = pick(values.asset, undefined, target.asset);
  target.facilitatorUrl = pick(values.facilitator, values.dev ? undefined : env.MARKET_FACILITATOR_URL, target.facilitatorUrl);
  target.registryUrl = pick(values.registry, values.dev ? undefined : env.MARKET_API_URL, target.registryUrl);
  target.apiKey = pick(values['api-key'], values.dev ? undefined : env.MARKET_API_KEY, target.apiKey);
  target.endpoint = pick(values.endpoint, undefined, target.endpoint);
  // The registry's MARKET_CHANNELS_FROM_BLOCK, checked against the chain (the flag names it when it is not in this shell).
  const fromBlock = values['channels-from-block'];
  if (fromBlock !== undefined && !/^[0-9]{1,16}$/.test(fromBlock)) throw new UsageError('--channels-from-block must be a block number');
  target.channelsFromBlock = fromBlock !== undefined ? BigInt(fromBlock) : values.dev ? undefined : readChannelsFromBlock(env);

  const results = await runDoctor(target);
  if (values.json) process.stdout.write(`${JSON.stringify({ network: target.network, results }, null, 2)}\n`);
  else for (const r of results) process.stdout.write(`${MARK[r.status]}  ${r.name}: ${terminalText(r.detail)}\n`);
  const failed = results.filter((r) => r.status === 'fail').length;
  if (!values.json) process.stdout.write(failed ? `\n${failed} problem${failed > 1 ? 's' : ''} found\n` : '\nno problem found\n');
  if (failed) process.exitCode = 1;
}

/** What `market dev` on `dir` runs, from its profile: the chain, the token, the facilitator, the registry and the demo creator's key. */
function devTarget(dir: string): DoctorTarget {
  const profile = readDevProfile(dir);
  return {
    network: profile.network,
    asset: profile.asset,
    registryUrl: profile.apiUrl,
    rpcUrl: profile.rpcUrl,
    facilitatorUrl: profile.facilitatorUrl,
    apiKey: profile.creatorKey,
  };
}
