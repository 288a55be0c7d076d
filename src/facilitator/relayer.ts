/**
 * Relayers: the accounts that pay gas and submit transfers. Each key is one lane that owns its
 * transaction nonces: sign and broadcast run one at a time per lane (a node round trip each), so
 * nonces never collide or leave gaps, while receipt waits run in parallel; a pool of keys adds
 * lanes. The hash is known once signed, so the caller stores it before anything is broadcast.
 */
import {
  BaseError,
  HttpRequestError,
  SocketClosedError,
  TimeoutError,
  WebSocketRequestError,
  keccak256,
  type Address,
  type Hex,
  type PrivateKeyAccount,
  type PublicClient,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';

/** Sends after a nonce or fee race are retried with a fresh nonce this many times. */
export const MAX_SEND_ATTEMPTS = 3;

/**
 * Thrown by a `beforeBroadcast` record, so nothing is broadcast, when what it would send is no
 * longer free: another transaction (another instance's, resuming what it took for orphaned) has it.
 */
export class AlreadySent extends Error {
  constructor() {
    super('an authorization of this transaction is already in another');
  }
}

/** A transaction to send: target, calldata and gas limit. */
interface RelayerCall {
  to: Address;
  data: Hex;
  gas: bigint;
}

export type SendResult =
  /** The node accepted the transaction. */
  | { type: 'sent'; hash: Hex; nonce: number }
  /** The node refused it: nothing is out, the nonce stays free. Retryable refusals are nonce or fee races. */
  | { type: 'rejected'; hash: Hex; retryable: boolean; error: unknown }
  /** The request failed in transit: the transaction may be out. Reconcile it; never re-send it. */
  | { type: 'unknown'; hash: Hex; nonce: number; error: unknown };

/** Runs with the hash and nonce of the signed transaction, before it is broadcast. */
type BeforeBroadcast = (hash: Hex, nonce: number) => Promise<void>;

interface Relayer {
  readonly address: Address;
  /** Transactions waiting for (or in) this lane. */
  readonly queued: number;
  send(call: RelayerCall, beforeBroadcast: BeforeBroadcast): Promise<SendResult>;
  /** Forgets the local nonce; the next send reads the pending nonce from the chain. */
  resync(): void;
}

export interface RelayerPool {
  readonly relayers: readonly Relayer[];
  readonly addresses: readonly Address[];
  /** The lane with the shortest queue (round robin among equals). */
  pick(): Relayer;
  byAddress(address: string): Relayer | undefined;
}

export interface RelayerPoolOptions {
  privateKeys: readonly Hex[];
  client: PublicClient;
  chainId: number;
  /** How long fee estimates are reused; default 1000 ms. */
  feeCacheMs?: number;
}

interface Fees {
  maxFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
}

export function createRelayerPool({ privateKeys, client, chainId, feeCacheMs = 1000 }: RelayerPoolOptions): RelayerPool {
  if (privateKeys.length === 0) throw new Error('createRelayerPool: at least one relayer key is required');
  const fees = createFeeSource(client, feeCacheMs);
  const relayers = privateKeys.map((key) => createRelayer(privateKeyToAccount(key), client, chainId, fees));
  let turn = 0;
  return {
    relayers,
    addresses: relayers.map((r) => r.address),
    pick() {
      turn = (turn + 1) % relayers.length;
      let best = relayers[turn] as Relayer;
      for (const r of relayers) if (r.queued < best.queued) best = r;
      return best;
    },
    byAddress: (address) => relayers.find((r) => r.address.toLowerCase() === address.toLowerCase()),
  };
}

function createRelayer(account: PrivateKeyAccount, client: PublicClient, chainId: number, fees: FeeSource): Relayer {
  let nextNonce: number | undefined;
  let tail: Promise<unknown> = Promise.resolve();
  let queued = 0;

  async function sendNow(call: RelayerCall, beforeBroadcast: BeforeBroadcast): Promise<SendResult> {
    const fee = await fees.get();
    nextNonce ??= await client.getTransactionCount({ address: account.address, blockTag: 'pending' });
    const nonce = nextNonce;
    const serializedTransaction = await account.signTransaction({ chainId, type: 'eip1559', nonce, ...call, ...fee });
    const hash = keccak256(serializedTransaction);
    await beforeBroadcast(hash, nonce);
    try {
      await client.sendRawTransaction({ serializedTransaction });
      nextNonce = nonce + 1;
      return { type: 'sent', hash, nonce };
    } catch (error) {
      const text = errorText(error);
      if (/already (known|imported)|known transaction/i.test(text)) {
        nextNonce = nonce + 1; // this very transaction is already in the pool
        return { type: 'sent', hash, nonce };
      }
      if (isTransportError(error)) {
        nextNonce = undefined; // it may or may not have arrived: ask the chain next time
        return { type: 'unknown', hash, nonce, error };
      }
      const nonceRace = /nonce too (low|high)|replacement transaction underpriced|nonce.*(lower|higher) than/i.test(text);
      const feeRace = /underpriced|fee.*(too low|less than)|base fee/i.test(text);
      if (nonceRace) nextNonce = undefined; // e.g. another process used this key
      if (feeRace) fees.invalidate();
      return { type: 'rejected', hash, retryable: nonceRace || feeRace, error };
    }
  }

  return {
    address: account.address,
    get queued() {
      return queued;
    },
    send(call, beforeBroadcast) {
      queued++;
      const run = tail.then(() => sendNow(call, beforeBroadcast));
      tail = run.catch(() => undefined);
      return run.finally(() => {
        queued--;
      });
    },
    resync() {
      nextNonce = undefined;
    },
  };
}

interface FeeSource {
  get(): Promise<Fees>;
  invalidate(): void;
}

/** EIP-1559 fee estimates shared by all lanes, refreshed at most every `ttlMs`. */
function createFeeSource(client: PublicClient, ttlMs: number): FeeSource {
  let cached: { at: number; fees: Promise<Fees> } | undefined;
  return {
    get() {
      if (!cached || performance.now() - cached.at > ttlMs) {
        const fees = client.estimateFeesPerGas({ chain: null, type: 'eip1559' }).then(({ maxFeePerGas, maxPriorityFeePerGas }) => ({
          maxFeePerGas,
          maxPriorityFeePerGas,
        }));
        const entry = { at: performance.now(), fees };
        cached = entry;
        fees.catch(() => {
          if (cached === entry) cached = undefined;
        });
      }
      return cached.fees;
    },
    invalidate() {
      cached = undefined;
    },
  };
}

function isTransportError(error: unknown): boolean {
  if (!(error instanceof BaseError)) return true; // not a node answer (e.g. fetch failed): assume the worst
  return (
    error.walk(
      (e) =>
        e instanceof HttpRequestError || e instanceof TimeoutError || e instanceof SocketClosedError || e instanceof WebSocketRequestError,
    ) !== null
  );
}

function errorText(error: unknown): string {
  return error instanceof BaseError ? `${error.shortMessage} ${error.details}` : String(error);
}
