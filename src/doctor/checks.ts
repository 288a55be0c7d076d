/**
 * `market doctor`: checks a deployment from the outside and says in plain words what is wrong.
 * Each check is independent and bounded in time; one that cannot run (nothing to check it
 * against) is skipped with the flag that would enable it. Nothing here writes anywhere.
 */
import { createPublicClient, erc20Abi, formatEther, http, isAddress, type Address, type PublicClient } from 'viem';
import { eip3009Abi, getKnownNetwork, parseCaip2 } from 'skill-market/x402';
import { checkChannelContract, checkChannelEvents, checkFacilitatorChannels, type SupportedKindSeen } from './channels';
import { checkCatalogueLimits } from './catalogue';
import { checkOpenClaims } from './claims';
import { label, type CheckResult, type DoctorTarget } from './target';

export type { CheckResult, DoctorTarget } from './target';

/**
 * Gas of one settlement as BENCHMARKS.md measures it (a first transfer to a payee, the dearest
 * case, plus headroom): the basis of "how many settlements the relayer's ETH covers".
 */
const GAS_PER_SETTLEMENT = 80_000n;
/** Fewer settlements covered than this is a warning: top the relayer up soon. */
const LOW_SETTLEMENTS = 1_000n;

const tokenAbi = [...erc20Abi, ...eip3009Abi] as const;

/** Runs every check; resolves with one result each, in a fixed order. */
export async function runDoctor(target: DoctorTarget): Promise<CheckResult[]> {
  const timeoutMs = target.timeoutMs ?? 5_000;
  const results: CheckResult[] = [];
  const chainId = parseCaip2(target.network);
  const rpcUrl = target.rpcUrl ?? defaultRpc(chainId);
  let client: PublicClient | undefined;

  if (!rpcUrl) {
    results.push({ name: 'rpc', status: 'fail', detail: `no RPC URL for ${label(target.network)}: pass --rpc-url (or MARKET_RPC_URL)` });
  } else {
    client = createPublicClient({ transport: http(rpcUrl, { timeout: timeoutMs, retryCount: 0 }) });
    const actual = await client.getChainId().catch(() => undefined);
    if (actual === undefined) {
      results.push({
        name: 'rpc',
        status: 'fail',
        detail: `the RPC at ${hostOf(rpcUrl)} does not answer: check the URL, the network, or the provider's status`,
      });
      client = undefined;
    } else if (actual !== chainId) {
      results.push({
        name: 'rpc',
        status: 'fail',
        detail: `the RPC at ${hostOf(rpcUrl)} serves chain ${actual}, but the deployment settles on ${label(target.network)}: use an RPC of that chain`,
      });
      client = undefined;
    } else {
      results.push({ name: 'rpc', status: 'ok', detail: `the RPC at ${hostOf(rpcUrl)} answers on ${label(target.network)}` });
    }
  }

  results.push(await checkToken(client, target));
  const channels = await checkChannelContract(client, target);
  results.push(channels.result);
  const facilitator = await checkFacilitator(target, timeoutMs, results);
  const offered = checkFacilitatorChannels(facilitator?.kinds, channels.present, target);
  if (offered) results.push(offered);
  const claims =
    facilitator && target.facilitatorUrl ? await checkOpenClaims(target.facilitatorUrl, facilitator.kinds, target, timeoutMs) : undefined;
  if (claims) results.push(claims);
  results.push(await checkRelayers(client, facilitator?.signers, target));
  results.push(await checkChannelEvents(client, channels.present, target, timeoutMs));
  results.push(...(await checkRegistry(target, timeoutMs)));
  results.push(await checkEndpoint(target, timeoutMs));
  results.push(await checkCatalogueLimits(target, timeoutMs));
  return results;
}

function defaultRpc(chainId: number): string | undefined {
  if (chainId === 8453) return 'https://mainnet.base.org';
  if (chainId === 84532) return 'https://sepolia.base.org';
  return undefined;
}

/** The host of a URL, never its path or query (a provider key often sits there). */
function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return 'the given URL';
  }
}

async function checkToken(client: PublicClient | undefined, target: DoctorTarget): Promise<CheckResult> {
  const asset = target.asset ?? getKnownNetwork(target.network)?.usdc.address;
  if (!asset) return { name: 'token', status: 'fail', detail: `no token for ${label(target.network)}: pass --asset <address>` };
  if (!isAddress(asset)) return { name: 'token', status: 'fail', detail: `--asset ${asset} is not an address` };
  if (!client) return { name: 'token', status: 'skip', detail: 'not checked: the RPC is not usable' };
  const code = await client.getCode({ address: asset }).catch(() => undefined);
  if (!code || code === '0x') {
    return {
      name: 'token',
      status: 'fail',
      detail: `no contract at ${asset} on ${label(target.network)}: a wrong token address, or the wrong network`,
    };
  }
  const read = <T>(functionName: 'name' | 'version' | 'decimals') =>
    client.readContract({ address: asset, abi: tokenAbi, functionName }).catch(() => undefined) as Promise<T | undefined>;
  const [name, version, decimals, eip3009] = await Promise.all([
    read<string>('name'),
    read<string>('version'),
    read<number>('decimals'),
    client
      .readContract({ address: asset, abi: tokenAbi, functionName: 'authorizationState', args: [asset, `0x${'00'.repeat(32)}`] })
      .then(() => true)
      .catch(() => false),
  ]);
  if (name === undefined || version === undefined || !eip3009) {
    return {
      name: 'token',
      status: 'fail',
      detail: `the contract at ${asset} is not an EIP-3009 token with an EIP-712 name and version: x402 payments cannot be signed for it`,
    };
  }
  if (decimals !== 6)
    return {
      name: 'token',
      status: 'warn',
      detail: `${name} (EIP-712 "${name}" v${version}) has ${decimals} decimals, not USDC's 6: serve it with --asset-decimals ${decimals}`,
    };
  return { name: 'token', status: 'ok', detail: `${asset} is "${name}" version ${version}, 6 decimals, with EIP-3009 transfers` };
}

/** Pushes the facilitator's results; returns its /supported kinds and relayer addresses (the signers). */
async function checkFacilitator(
  target: DoctorTarget,
  timeoutMs: number,
  results: CheckResult[],
): Promise<{ kinds: SupportedKindSeen[]; signers: Address[] } | undefined> {
  if (!target.facilitatorUrl) {
    results.push({ name: 'facilitator', status: 'skip', detail: 'not checked: pass --facilitator <url>' });
    return undefined;
  }
  const base = target.facilitatorUrl.replace(/\/+$/, '');
  const supported = await getJson<{
    kinds?: (SupportedKindSeen & { x402Version?: number })[];
    signers?: Record<string, string[]>;
  }>(`${base}/supported`, timeoutMs);
  if (!supported.ok) {
    results.push({
      name: 'facilitator',
      status: 'fail',
      detail: `the facilitator at ${hostOf(base)} does not answer /supported (${supported.error})`,
    });
    return undefined;
  }
  const kinds = supported.body.kinds ?? [];
  if (!kinds.some((k) => k.network === target.network && k.scheme === 'exact')) {
    const listed = [...new Set(kinds.map((k) => k.network))].join(', ') || 'nothing';
    results.push({
      name: 'facilitator',
      status: 'fail',
      detail: `the facilitator at ${hostOf(base)} does not settle ${label(target.network)} (it lists ${listed})`,
    });
  } else {
    results.push({
      name: 'facilitator',
      status: 'ok',
      detail: `the facilitator at ${hostOf(base)} settles exact payments on ${label(target.network)}`,
    });
  }
  const health = await getJson<{ status?: string; rpc?: { error?: string } }>(`${base}/health`, timeoutMs, true);
  if (health.ok && health.body.status !== 'ok') {
    results.push({
      name: 'facilitator health',
      status: 'fail',
      detail: `the facilitator reports itself unavailable${health.body.rpc?.error ? `: ${health.body.rpc.error}` : ' (its database or RPC)'}`,
    });
  }
  const signers = Object.values(supported.body.signers ?? {}).flat();
  return { kinds, signers: signers.filter((s): s is Address => isAddress(s)) };
}

async function checkRelayers(client: PublicClient | undefined, signers: Address[] | undefined, target: DoctorTarget): Promise<CheckResult> {
  if (!signers) return { name: 'relayer', status: 'skip', detail: 'not checked: the facilitator names no relayer' };
  if (signers.length === 0)
    return { name: 'relayer', status: 'warn', detail: 'the facilitator lists no signer addresses: its relayers cannot be checked' };
  if (!client) return { name: 'relayer', status: 'skip', detail: 'not checked: the RPC is not usable' };
  const [gasPrice, balances] = await Promise.all([
    client.getGasPrice().catch(() => undefined),
    Promise.all(signers.map((s) => client.getBalance({ address: s }).catch(() => undefined))),
  ]);
  if (gasPrice === undefined || balances.some((b) => b === undefined)) {
    return { name: 'relayer', status: 'warn', detail: 'the relayer balances or the gas price could not be read' };
  }
  const perSettlement = GAS_PER_SETTLEMENT * gasPrice;
  const parts = signers.map((s, i) => {
    const balance = balances[i] as bigint;
    const covered = perSettlement > 0n ? balance / perSettlement : 0n;
    return { s, balance, covered };
  });
  const text = parts.map((p) => `${p.s} holds ${formatEther(p.balance)} ETH (about ${p.covered} settlements)`).join('; ');
  if (parts.some((p) => p.balance === 0n || p.covered === 0n)) {
    return {
      name: 'relayer',
      status: 'fail',
      detail: `${text}: an unfunded relayer cannot send settlements on ${label(target.network)}; send it ETH`,
    };
  }
  const low = parts.some((p) => p.covered < LOW_SETTLEMENTS);
  return {
    name: 'relayer',
    status: low ? 'warn' : 'ok',
    detail: `${text} at ${formatEther(gasPrice, 'gwei')} gwei and ${GAS_PER_SETTLEMENT} gas each${low ? ': top it up soon' : ''}`,
  };
}

async function checkRegistry(target: DoctorTarget, timeoutMs: number): Promise<CheckResult[]> {
  if (!target.registryUrl) return [{ name: 'registry', status: 'skip', detail: 'not checked: pass --registry <url> (or MARKET_API_URL)' }];
  const base = target.registryUrl.replace(/\/+$/, '');
  const health = await getJson<{ status?: string }>(`${base}/health`, timeoutMs, true);
  const results: CheckResult[] = [
    health.ok && health.body.status === 'ok'
      ? { name: 'registry', status: 'ok', detail: `the registry at ${hostOf(base)} is up` }
      : {
          name: 'registry',
          status: 'fail',
          detail: `the registry at ${hostOf(base)} is not healthy (${health.ok ? 'it reports unavailable' : health.error})`,
        },
  ];
  if (target.apiKey) {
    const me = await getJson<{ skills?: unknown[] }>(`${base}/creators/me/skills`, timeoutMs, false, {
      authorization: `Bearer ${target.apiKey}`,
    });
    results.push(
      me.ok
        ? { name: 'creator key', status: 'ok', detail: 'the creator key is accepted by the registry' }
        : {
            name: 'creator key',
            status: 'fail',
            detail: `the registry refuses the creator key (${me.error}): make a new one in the dashboard`,
          },
    );
  }
  return results;
}

async function checkEndpoint(target: DoctorTarget, timeoutMs: number): Promise<CheckResult> {
  if (!target.endpoint) return { name: 'endpoint', status: 'skip', detail: 'not checked: pass --endpoint <skill server URL>' };
  let url: URL;
  try {
    url = new URL(target.endpoint);
  } catch {
    return { name: 'endpoint', status: 'fail', detail: `${target.endpoint} is not a URL` };
  }
  const health = await getJson<{ status?: string }>(new URL('/health', url).href, timeoutMs, true);
  if (!health.ok)
    return { name: 'endpoint', status: 'fail', detail: `the skill server at ${url.host} does not answer /health (${health.error})` };
  if (isLocal(url.hostname)) {
    return {
      name: 'endpoint',
      status: 'warn',
      detail: `the skill server answers here, but ${url.host} is a private address: nobody outside this machine can call it`,
    };
  }
  if (url.protocol !== 'https:')
    return { name: 'endpoint', status: 'warn', detail: `the skill server answers, but over http: put it behind HTTPS` };
  return { name: 'endpoint', status: 'ok', detail: `the skill server at ${url.host} answers over HTTPS` };
}

function isLocal(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '');
  return (
    h === 'localhost' ||
    h === '::1' ||
    /^127\./.test(h) ||
    /^10\./.test(h) ||
    /^192\.168\./.test(h) ||
    /^172\.(1[6-9]|2\d|3[01])\./.test(h) ||
    /^(fc|fd)[0-9a-f]{2}:/i.test(h)
  );
}

type Fetched<T> = { ok: true; body: T } | { ok: false; error: string };

/** GET as JSON; `anyStatus` takes a JSON body of any status (a 503 /health says why). */
async function getJson<T>(url: string, timeoutMs: number, anyStatus = false, headers: Record<string, string> = {}): Promise<Fetched<T>> {
  try {
    const res = await fetch(url, { headers, signal: AbortSignal.timeout(timeoutMs), redirect: 'manual' });
    if (!res.ok && !anyStatus) return { ok: false, error: `HTTP ${res.status}` };
    return { ok: true, body: (await res.json()) as T };
  } catch (error) {
    return { ok: false, error: error instanceof Error && error.name === 'TimeoutError' ? 'no answer in time' : 'unreachable' };
  }
}
