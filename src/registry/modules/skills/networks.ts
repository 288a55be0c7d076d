/**
 * Which networks a skill may be listed on (RegistryConfig.skillNetworks): a skill on a network no
 * facilitator of this marketplace settles could never be paid, so registering it is refused with
 * what is supported. The facilitator's /supported is asked at most once a minute.
 */
import type { ServiceContext } from '../../context';
import { AppError } from '../../../http';

const FACILITATOR_CACHE_MS = 60_000;
const FACILITATOR_TIMEOUT_MS = 5_000;

interface Cached {
  at: number;
  networks: Promise<string[] | undefined>;
}
/** Per configuration (one registry's), so registries in one process do not share answers. */
const cache = new WeakMap<object, Cached>();

/** The v2 networks of the facilitator's `exact` kinds; undefined when it cannot be asked now. */
async function facilitatorNetworks(ctx: ServiceContext, url: URL): Promise<string[] | undefined> {
  const key = url;
  const hit = cache.get(key);
  if (hit && ctx.clock.now().getTime() - hit.at < FACILITATOR_CACHE_MS) return hit.networks;
  const networks = fetch(new URL('supported', url.href.endsWith('/') ? url : `${url.href}/`), {
    signal: AbortSignal.timeout(FACILITATOR_TIMEOUT_MS),
  })
    .then(async (res) => {
      if (!res.ok) throw new Error(`HTTP ${res.status}`);
      const body = (await res.json()) as { kinds?: { x402Version?: number; network?: unknown }[] };
      return (body.kinds ?? []).filter((k) => k.x402Version === 2 && typeof k.network === 'string').map((k) => k.network as string);
    })
    .catch((error: unknown) => {
      ctx.logger.warn('the facilitator did not list its networks; skill networks unchecked against it', { error: String(error) });
      cache.delete(key); // ask again next time
      return undefined;
    });
  cache.set(key, { at: ctx.clock.now().getTime(), networks });
  return networks;
}

/** Throws a 400 naming the supported networks when `network` is not one of them. */
export async function checkSkillNetwork(ctx: ServiceContext, network: string): Promise<void> {
  const policy = ctx.config.skillNetworks;
  if (!policy) return;
  const supported = new Set<string>(policy.networks ?? []);
  if (policy.facilitatorUrl) for (const n of (await facilitatorNetworks(ctx, policy.facilitatorUrl)) ?? []) supported.add(n);
  if (supported.size === 0) return; // nothing configured answered: cannot tell, and the payment will say
  if (supported.has(network)) return;
  const list = [...supported].sort();
  throw new AppError(
    'VALIDATION',
    `This marketplace settles payments on ${list.join(', ')}; a skill on ${network} could not be paid. Register it on one of those networks.`,
    { network, supported: list },
  );
}
