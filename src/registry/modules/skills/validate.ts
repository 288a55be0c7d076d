import { schemaProblem } from 'skill-market/json-schema';
import { endpointProblem } from 'skill-market/registry';
import { ADDRESS_PATTERN, checksumAddress, isX402Error, parsePrice, USDC_DECIMALS } from 'skill-market/x402';
import type { RegistryConfig } from '../../../config';
import { AppError } from '../../../http';

const invalid = (field: string, why: string) => new AppError('VALIDATION', `Invalid request: field "${field}": ${why}`);

/**
 * Exact atomic units from "$0.001", "0.001" or 0.001: micro-USDC (a listing price) unless a
 * token's `decimals` are given; > 0, no more decimals than that. A bad one is named as `field`.
 */
export function priceToAtomic(price: string | number, field = 'price', decimals = USDC_DECIMALS): bigint {
  try {
    return parsePrice(price, decimals);
  } catch (error) {
    if (isX402Error(error)) throw invalid(field, error.message);
    throw error;
  }
}

/** An EIP-55 checksummed address; a mixed-case address with a bad checksum is refused. */
export function paymentAddressOf(address: string, field = 'paymentAddress'): string {
  if (!ADDRESS_PATTERN.test(address)) throw invalid(field, 'must be a 42-character 0x address');
  const checksummed = checksumAddress(address);
  if (!checksummed) throw invalid(field, 'has an invalid EIP-55 checksum');
  return checksummed;
}

/**
 * The full call URL: a plain absolute http(s) URL as `endpointProblem` (the SDK's shared rule)
 * says, https unless http endpoints are allowed; a URL already ending in `/<name>` is kept,
 * otherwise `/<name>` is appended.
 */
export function callUrlOf(endpoint: string, name: string, config: RegistryConfig): string {
  const problem = endpointProblem(endpoint);
  if (problem) throw invalid('endpoint', problem);
  const url = new URL(endpoint);
  if (url.protocol === 'http:' && !config.catalogue.allowHttpEndpoints) throw invalid('endpoint', 'must use https');
  const path = url.pathname.replace(/\/+$/, '');
  url.pathname = path.endsWith(`/${name}`) ? path : `${path}/${name}`;
  return url.toString();
}

/** A JSON object that is a valid JSON Schema, or null; a string, array, number or boolean is refused, never stored. */
export function schemaOf(field: 'inputSchema' | 'outputSchema', schema: unknown): Record<string, unknown> | null {
  if (schema === undefined || schema === null) return null;
  const problem = schemaProblem(schema);
  if (problem) throw invalid(field, `is not a valid JSON Schema (${problem})`);
  return schema as Record<string, unknown>;
}

/**
 * Registered volume prices, checked: steps by growing `after`, each price below the one before
 * (the skill's price first). Stored with atomic prices.
 */
export function tiersOf(
  tiers: { period: 'day' | 'week' | 'month'; steps: { after: number; price: string | number }[] } | null | undefined,
  priceAtomic: bigint,
): { period: 'day' | 'week' | 'month'; steps: { after: number; priceAtomic: string }[] } | null {
  if (!tiers) return null;
  let after = 0;
  let price = priceAtomic;
  const steps = tiers.steps.map((step, i) => {
    const atomic = priceToAtomic(step.price, `tiers.steps.${i}.price`);
    if (step.after <= after) throw invalid(`tiers.steps.${i}.after`, 'must be larger than the step before');
    if (atomic >= price) throw invalid(`tiers.steps.${i}.price`, 'must be lower than the price before it');
    after = step.after;
    price = atomic;
    return { after: step.after, priceAtomic: atomic.toString() };
  });
  return { period: tiers.period, steps };
}
