/**
 * Counting what the facilitator verifies and settles: a wrapper of its service (as discovery's
 * is), so every way in (HTTP or in process) is counted once. Labels stay few: the scheme (one of
 * those settled here, else `other`), the network (this facilitator's, else `other`), the asset
 * (one of its accepted tokens, else `other`), the outcome and the reason code; never a payer.
 */
import { Counter, Histogram, type Registry } from 'prom-client';
import { FACILITATOR_REASONS, normalizeNetwork } from 'skill-market/x402';
import { LATENCY_BUCKETS } from '../../metrics';
import type { FacilitatorService } from '../service';

/** What one settle came to. */
type Outcome = 'settled' | 'pending' | 'failed' | 'invalid_request';

export interface SettlementLabelling {
  schemes: readonly string[];
  network: string;
  assets: readonly string[];
}

/** A reason code as a label: codes are snake_case constants; anything else is `other`. */
const reasonLabel = (reason: unknown) => (typeof reason === 'string' && /^[a-z0-9_]{1,100}$/.test(reason) ? reason : 'other');

export function withSettlementMetrics(service: FacilitatorService, registry: Registry, labelling: SettlementLabelling): FacilitatorService {
  const registers = [registry];
  const verifications = new Counter({
    name: 'market_verifications_total',
    help: 'Payments verified, by scheme, network and result (valid, invalid, invalid_request)',
    labelNames: ['scheme', 'network', 'result'] as const,
    registers,
  });
  const settlements = new Counter({
    name: 'market_settlements_total',
    help: 'Settle requests by scheme, network, outcome (settled, pending: sent, receipt not seen in time; failed; invalid_request) and reason code',
    labelNames: ['scheme', 'network', 'outcome', 'reason'] as const,
    registers,
  });
  const duration = new Histogram({
    name: 'market_settlement_duration_seconds',
    help: 'Time to answer a settle request, by scheme, network and outcome',
    labelNames: ['scheme', 'network', 'outcome'] as const,
    buckets: LATENCY_BUCKETS,
    registers,
  });
  const paidCalls = new Counter({
    name: 'market_paid_calls_total',
    help: 'Paid calls settled (exact: one settled payment each), by scheme and network',
    labelNames: ['scheme', 'network'] as const,
    registers,
  });
  const charged = new Counter({
    name: 'market_charged_atomic_total',
    help: 'Amounts settled for paid calls, in the asset’s atomic units (USDC: millionths of a dollar), by scheme, network and asset',
    labelNames: ['scheme', 'network', 'asset'] as const,
    registers,
  });
  const assets = new Map(labelling.assets.map((asset) => [asset.toLowerCase(), asset]));
  const labelsOf = (body: unknown) => {
    const request = fields(body);
    return {
      scheme: labelling.schemes.includes(request.scheme ?? '') ? (request.scheme as string) : 'other',
      network: networkOf(request.network) === labelling.network ? labelling.network : 'other',
      asset: assets.get(request.asset?.toLowerCase() ?? '') ?? 'other',
      amount: request.amount,
    };
  };

  return {
    ...service,
    async verify(body) {
      const { scheme, network } = labelsOf(body);
      try {
        const verdict = await service.verify(body);
        verifications.inc({ scheme, network, result: verdict.isValid ? 'valid' : 'invalid' });
        return verdict;
      } catch (error) {
        verifications.inc({ scheme, network, result: 'invalid_request' });
        throw error;
      }
    },
    async settle(body, options) {
      const started = performance.now();
      const { scheme, network, asset, amount } = labelsOf(body);
      const count = (outcome: Outcome, reason: string) => {
        settlements.inc({ scheme, network, outcome, reason });
        duration.observe({ scheme, network, outcome }, (performance.now() - started) / 1000);
      };
      try {
        const answer = await service.settle(body, options);
        if (answer.success) {
          count('settled', 'none');
          // A channel's settle moves deposits and claims, not the price of one call.
          if (scheme !== 'batch-settlement') {
            paidCalls.inc({ scheme, network });
            if (amount !== undefined) charged.inc({ scheme, network, asset }, Number(amount));
          }
        } else {
          const pending = answer.errorReason === FACILITATOR_REASONS.settlementPending;
          count(pending ? 'pending' : 'failed', reasonLabel(answer.errorReason));
        }
        return answer;
      } catch (error) {
        count('invalid_request', 'invalid_request');
        throw error;
      }
    },
  };
}

/** The scheme, network, asset and amount a facilitator request names, read without trusting its shape. */
function fields(body: unknown): { scheme?: string; network?: string; asset?: string; amount?: string } {
  const request = record(body);
  const payload = record(request?.paymentPayload);
  const accepted = record(payload?.accepted) ?? record(request?.paymentRequirements);
  const authorization = record(record(payload?.payload)?.authorization);
  const value = authorization?.value ?? accepted?.amount ?? accepted?.maxAmountRequired;
  return {
    ...(typeof accepted?.scheme === 'string' ? { scheme: accepted.scheme } : {}),
    ...(typeof accepted?.network === 'string' ? { network: accepted.network } : {}),
    ...(typeof accepted?.asset === 'string' ? { asset: accepted.asset } : {}),
    ...(typeof value === 'string' && /^\d{1,78}$/.test(value) ? { amount: value } : {}),
  };
}

/** A network id as CAIP-2 (a v1 request names `base-sepolia`); undefined when it is none. */
function networkOf(network: string | undefined): string | undefined {
  if (network === undefined) return undefined;
  try {
    return normalizeNetwork(network);
  } catch {
    return undefined;
  }
}

function record(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}
