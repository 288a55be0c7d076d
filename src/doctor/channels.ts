/**
 * `market doctor`'s checks of payment channels (x402 `batch-settlement`): the contracts have code
 * on the network, the facilitator offers the scheme there, and the registry reads the contract's
 * events from a sensible block (MARKET_CHANNELS_FROM_BLOCK): not block 0 on a public network, never
 * after the contract's first block. The contract's first block is found by bisection over the
 * node's past state, when the node serves it.
 */
import type { PublicClient } from 'viem';
import { BATCH_SETTLEMENT_SCHEME, parseCaip2 } from 'skill-market/x402';
import { BATCH_SETTLEMENT_ADDRESS, missingChannelContracts, missingText } from '../chain/batch-settlement';
import { isLocalNetwork, label, type CheckResult, type DoctorTarget } from './target';

/** Whether the channel contracts have code on the network: undefined when that could not be read. */
export type ContractPresence = boolean | undefined;

/** A kind of the facilitator's /supported, as far as the doctor reads it. */
export interface SupportedKindSeen {
  scheme?: string;
  network?: string;
  extra?: { receiverAuthorizer?: string };
}

/** Block explorers of the networks with built-in defaults, where a contract's creation block can be read. */
const EXPLORERS: Readonly<Record<number, string>> = { 8453: 'https://basescan.org', 84532: 'https://sepolia.basescan.org' };

export async function checkChannelContract(
  client: PublicClient | undefined,
  target: DoctorTarget,
): Promise<{ result: CheckResult; present: ContractPresence }> {
  const name = 'channel contract';
  if (!client) return { result: { name, status: 'skip', detail: 'not checked: the RPC is not usable' }, present: undefined };
  const missing = await missingChannelContracts(client).catch(() => undefined);
  if (missing === undefined) {
    return { result: { name, status: 'warn', detail: 'the channel contracts could not be read on the RPC' }, present: undefined };
  }
  if (missing.length > 0) {
    return {
      result: {
        name,
        status: 'fail',
        detail: `${missingText(missing)} on ${label(target.network)}: payment channels (batch-settlement, the default payment of cheap skills) cannot be paid on this network; settle on a network with x402BatchSettlement (Base, Base Sepolia) or deploy it at these addresses`,
      },
      present: false,
    };
  }
  return {
    result: {
      name,
      status: 'ok',
      detail: `x402BatchSettlement (${BATCH_SETTLEMENT_ADDRESS}) and its deposit collector have code on ${label(target.network)}`,
    },
    present: true,
  };
}

/** Whether the facilitator's /supported offers channels on the network; undefined when the facilitator was not read. */
export function checkFacilitatorChannels(
  kinds: readonly SupportedKindSeen[] | undefined,
  present: ContractPresence,
  target: DoctorTarget,
): CheckResult | undefined {
  if (kinds === undefined) return undefined;
  const name = 'facilitator channels';
  const offered = kinds.find((k) => k.scheme === BATCH_SETTLEMENT_SCHEME && k.network === target.network);
  if (offered && present === false) {
    return {
      name,
      status: 'warn',
      detail: `the facilitator offers batch-settlement on ${label(target.network)}, where the contract has no code: its channel payments would fail`,
    };
  }
  if (offered) {
    const authorizer = offered.extra?.receiverAuthorizer;
    return {
      name,
      status: 'ok',
      detail: `the facilitator offers batch-settlement on ${label(target.network)}${authorizer ? `, its receiver authorizer ${authorizer}` : ''}`,
    };
  }
  if (present === false) {
    return { name, status: 'skip', detail: `the facilitator does not offer batch-settlement, as the contract is not on this network` };
  }
  return {
    name,
    status: 'warn',
    detail: `the facilitator does not offer batch-settlement on ${label(target.network)}: channel payments are refused there; a facilitator that could not read the contract at its start offers channels once it can, one started before the contract was deployed needs a restart`,
  };
}

/** MARKET_CHANNELS_FROM_BLOCK against the chain: the registry reads x402BatchSettlement's events from that block. */
export async function checkChannelEvents(
  client: PublicClient | undefined,
  present: ContractPresence,
  target: DoctorTarget,
  timeoutMs: number,
): Promise<CheckResult> {
  const name = 'channel events';
  if (!client || !present) return { name, status: 'skip', detail: 'not checked: the channel contract is not on the network' };
  const from = target.channelsFromBlock ?? 0n;
  const latest = await client.getBlockNumber({ cacheTime: 0 }).catch(() => undefined);
  if (latest === undefined) return { name, status: 'warn', detail: 'the latest block could not be read' };
  const deadline = Date.now() + 4 * timeoutMs;
  const setting = `MARKET_CHANNELS_FROM_BLOCK=${from}`;

  if (from > latest) {
    return {
      name,
      status: 'fail',
      detail: `${setting} is past the latest block (${latest}): the registry reads no channel event before then; set it to x402BatchSettlement's first block`,
    };
  }
  if (from === 0n && isLocalNetwork(target.network)) {
    return { name, status: 'ok', detail: 'the registry reads channel events from block 0, which suits a local chain' };
  }
  if (from === 0n) {
    const first = await firstBlockWithCode(client, 0n, latest, deadline);
    if (first === 0n) {
      return {
        name,
        status: 'ok',
        detail: `the registry reads channel events from block 0, where x402BatchSettlement has code from the start`,
      };
    }
    const why = 'the registry reads channel events from block 0, which is slow, and many RPC providers refuse so wide a log range';
    if (first !== undefined) {
      return {
        name,
        status: 'warn',
        detail: `${setting} (or unset): ${why}; x402BatchSettlement has code from block ${first}: set MARKET_CHANNELS_FROM_BLOCK=${first}`,
      };
    }
    const explorer = EXPLORERS[parseCaip2(target.network)];
    const where = explorer ? `${explorer}/address/${BATCH_SETTLEMENT_ADDRESS}` : `the block explorer of ${label(target.network)}`;
    return {
      name,
      status: 'warn',
      detail: `${setting} (or unset): ${why}; set it to the block of the transaction that created x402BatchSettlement (${BATCH_SETTLEMENT_ADDRESS}): see its creation at ${where} (this RPC serves no past state to find it)`,
    };
  }
  // Events are missed when the contract had code before `from`.
  const before = await hasCode(client, from - 1n).catch(() => undefined);
  if (before === undefined) {
    return {
      name,
      status: 'ok',
      detail: `the registry reads channel events from block ${from} (not compared with the contract's first block: this RPC serves no past state)`,
    };
  }
  if (!before)
    return {
      name,
      status: 'ok',
      detail: `the registry reads channel events from block ${from}, not after x402BatchSettlement's first block`,
    };
  const first = await firstBlockWithCode(client, 0n, from - 1n, deadline);
  return {
    name,
    status: 'fail',
    detail: `${setting} is after x402BatchSettlement's first block${first === undefined ? '' : ` (${first})`}: the channel events before block ${from} (deposits, claims) are never read; set it to ${first ?? "the block of the contract's creation"}`,
  };
}

async function hasCode(client: PublicClient, blockNumber: bigint): Promise<boolean> {
  const code = await client.getCode({ address: BATCH_SETTLEMENT_ADDRESS, blockNumber });
  return code !== undefined && code !== '0x';
}

/**
 * The first block from `low` to `high` at which x402BatchSettlement has code (it has code at
 * `high`), by bisection over past state; undefined when the node serves no past state (it answers
 * an error, as a node without archive does) or time runs out.
 */
async function firstBlockWithCode(client: PublicClient, low: bigint, high: bigint, deadline: number): Promise<bigint | undefined> {
  try {
    if (await hasCode(client, low)) return low;
    // Invariant: no code at `low`, code at `high`.
    while (high - low > 1n) {
      if (Date.now() > deadline) return undefined;
      const middle = (low + high) / 2n;
      if (await hasCode(client, middle)) high = middle;
      else low = middle;
    }
    return high;
  } catch {
    return undefined;
  }
}
