/**
 * Checks of one term of an offer, shared by the listing checks (terms.ts) and the schemes' own:
 * each says what was expected and what was offered, for TermsMismatchError.
 */
import { MarketError } from '../http/errors';
import { isRecord } from '../http/exchange';
import type { Skill } from '../registry/read';
import type { AcceptedAsset } from './assets';
import type { TermsPolicy, TermsProblem } from './scheme';

/** An offered value, short, for a message. */
export const text = (value: unknown) =>
  typeof value === 'string' || typeof value === 'number' ? String(value).slice(0, 80) : JSON.stringify(value ?? null).slice(0, 80);

/**
 * The problem with an offer's EIP-712 token domain (`extra.name`, `extra.version`): the accepted
 * asset's own when it names one, else the server's, which must be present.
 */
export function tokenDomainProblem(extra: unknown, asset: AcceptedAsset): TermsProblem | undefined {
  const e = isRecord(extra) ? extra : {};
  const name = asset.name ?? (typeof e.name === 'string' && e.name !== '' ? e.name : undefined);
  const version = asset.version ?? (typeof e.version === 'string' && e.version !== '' ? e.version : undefined);
  if (name !== undefined && version !== undefined && e.name === name && e.version === version) return undefined;
  return {
    field: 'asset',
    expected: `EIP-712 domain ${asset.name ?? '?'} v${asset.version ?? '?'}`,
    actual: `EIP-712 domain ${text(e.name)} v${text(e.version)}`,
  };
}

/** The problem with an offer's validity window, when it is not 1 to `policy.maxTimeoutSeconds` seconds. */
export function windowProblem(seconds: unknown, policy: TermsPolicy): TermsProblem | undefined {
  if (typeof seconds === 'number' && Number.isInteger(seconds) && seconds >= 1 && seconds <= policy.maxTimeoutSeconds) return undefined;
  return { field: 'maxTimeoutSeconds', expected: `at most ${policy.maxTimeoutSeconds} (option maxTimeoutSeconds)`, actual: text(seconds) };
}

/** Offered terms the codec cannot parse although the checks passed: the server's fault. */
export function malformedTerms(skill: Skill, error: unknown): MarketError {
  return new MarketError('invalid_response', `${skill.slug} offered malformed payment terms: ${(error as Error).message}`, {
    status: 402,
    slug: skill.slug,
  });
}
