/**
 * `market doctor`'s check of what crawling catalogues would drop or refuse of a running skill
 * server: each paid operation of its OpenAPI document is asked without payment, and its 402 is held
 * to the limits catalogues apply (the x402 Bazaar's service name, tags and icon; a header a crawler
 * reads whole; CDP's facilitator's longest description and least amount).
 */
import {
  catalogueIconUrl,
  catalogueTags,
  decodePaymentRequired,
  isCatalogueText,
  MAX_HEADER_LENGTH,
  PAYMENT_REQUIRED_HEADER,
} from 'skill-market/x402';
import type { CheckResult, DoctorTarget } from './target';

/** CDP's facilitator refuses a longer `resource.description`. */
const MAX_DESCRIPTION = 500;
/** The least CDP's facilitator settles: $0.001 in USDC's atomic units. */
const CDP_MINIMUM_ATOMIC = 1000n;

const isCdp = (url: string | undefined) => {
  try {
    return url !== undefined && new URL(url).hostname.endsWith('cdp.coinbase.com');
  } catch {
    return false;
  }
};

/** The paid operations a skill server's `/openapi.json` lists: `POST /<name>` paths. */
async function paidPaths(base: URL, timeoutMs: number): Promise<string[] | string> {
  try {
    const res = await fetch(new URL('/openapi.json', base), { signal: AbortSignal.timeout(timeoutMs), redirect: 'manual' });
    if (!res.ok) return `/openapi.json answers HTTP ${res.status}`;
    const doc = (await res.json()) as { paths?: Record<string, Record<string, unknown>> };
    return Object.entries(doc.paths ?? {})
      .filter(([, operations]) => operations && typeof operations === 'object' && 'post' in operations)
      .map(([path]) => path);
  } catch {
    return '/openapi.json cannot be read';
  }
}

/** What one skill's 402 breaks of the catalogues' limits. */
function problemsOf(path: string, header: string, cdp: boolean): string[] {
  if (header.length > MAX_HEADER_LENGTH)
    return [`${path}: its PAYMENT-REQUIRED header is ${header.length} characters, over the 16 KB a crawler reads`];
  const required = decodePaymentRequired(header);
  const problems: string[] = [];
  const resource = required.resource as { description?: string; serviceName?: string; tags?: string[]; iconUrl?: string } | undefined;
  if ((resource?.description?.length ?? 0) > MAX_DESCRIPTION)
    problems.push(`${path}: its description is over ${MAX_DESCRIPTION} characters, which CDP's facilitator refuses`);
  if (resource?.serviceName !== undefined && !isCatalogueText(resource.serviceName))
    problems.push(`${path}: serviceName is not printable ASCII of at most 32 characters, which the x402 Bazaar drops`);
  if (resource?.tags && catalogueTags(resource.tags).length !== resource.tags.length)
    problems.push(`${path}: the x402 Bazaar keeps at most 5 tags, each printable ASCII of at most 32 characters`);
  if (resource?.iconUrl !== undefined && catalogueIconUrl(resource.iconUrl) === undefined)
    problems.push(`${path}: iconUrl is not https at a named host, which catalogues do not show`);
  if (cdp) {
    if (required.accepts.some((a) => BigInt(a.amount) < CDP_MINIMUM_ATOMIC))
      problems.push(`${path}: asks less than $0.001, the least CDP's facilitator settles`);
  }
  return problems;
}

/** The catalogue limits of the skill server at `target.endpoint`, asked without payment. */
export async function checkCatalogueLimits(target: DoctorTarget, timeoutMs: number): Promise<CheckResult> {
  const name = 'catalogue limits';
  if (!target.endpoint) return { name, status: 'skip', detail: 'not checked: pass --endpoint <skill server URL>' };
  let base: URL;
  try {
    base = new URL(target.endpoint);
  } catch {
    return { name, status: 'skip', detail: 'not checked: the endpoint is not a URL' };
  }
  const paths = await paidPaths(base, timeoutMs);
  if (typeof paths === 'string')
    return { name, status: 'warn', detail: `${paths}: crawlers that discover through it will not find the skills` };
  if (paths.length === 0) return { name, status: 'warn', detail: '/openapi.json lists no paid operation' };
  const problems: string[] = [];
  for (const path of paths) {
    try {
      const res = await fetch(new URL(path, base), { method: 'POST', signal: AbortSignal.timeout(timeoutMs), redirect: 'manual' });
      await res.body?.cancel();
      const header = res.headers.get(PAYMENT_REQUIRED_HEADER);
      if (res.status !== 402 || !header) problems.push(`${path}: an unpaid POST answers ${res.status} without a payment challenge`);
      else problems.push(...problemsOf(path, header, isCdp(target.facilitatorUrl)));
    } catch {
      problems.push(`${path}: no answer to an unpaid POST`);
    }
  }
  if (problems.length > 0) return { name, status: 'warn', detail: problems.join('; ') };
  return { name, status: 'ok', detail: `${paths.length} paid operation(s) answer a 402 within the catalogues' limits` };
}
