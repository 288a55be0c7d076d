/**
 * The dev-only demo wallet API, mounted on the registry by `market dev` and never otherwise: a
 * browser without a wallet extension signs in and pays with the demo consumer wallet, or signs in
 * as the demo creator (who owns the example skills); both keys stay in this process.
 *
 *   GET  /dev/demo-wallet       → { address, label }   (its existence tells a page dev mode is on)
 *   GET  /dev/demo-creator      → { address, label }
 *   POST /dev/demo-wallet/sign  { method: 'personal_sign' | 'eth_signTypedData_v4', params } → { result: '0x…' }
 *                               (signed by whichever of the two the params name)
 *   POST /dev/fund              { address } → { address, balanceAtomic }: mints $10 of test USDC to
 *                               any wallet (the dashboard's spending wallets offer it in dev)
 *
 * params follow EIP-1193: personal_sign [message, address], eth_signTypedData_v4 [address, typedData
 * (JSON text or object)]. Only JSON bodies are read, and a request from another origin is refused,
 * so another site cannot have the wallet sign (a plain form post is not JSON; fetch from elsewhere
 * carries its Origin).
 */
import { Elysia } from 'elysia';
import { getAddress, isAddress, isAddressEqual, isHex, type Address, type Hex, type LocalAccount, type TypedDataDefinition } from 'viem';
import { ADDRESS_PATTERN } from 'skill-market/x402';
import { AppError } from '../http';

export const DEMO_WALLET_LABEL = 'demo wallet (test only, local chain)';
const DEMO_CREATOR_LABEL = 'demo creator (test only, owns the example skills)';

/** What `POST /dev/fund` mints: $10 of test USDC. */
const DEV_FUNDING = 10_000_000n;

export function demoWalletRoutes(
  account: LocalAccount,
  creator: LocalAccount,
  fund: (to: Address, amount: bigint) => Promise<bigint>,
  label = DEMO_WALLET_LABEL,
) {
  const signerFor = (address: unknown) =>
    typeof address === 'string' && isAddress(address) && isAddressEqual(address, creator.address) ? creator : account;
  return new Elysia({ name: 'dev-demo-wallet' })
    .get('/dev/demo-wallet', () => ({ address: account.address, label }))
    .get('/dev/demo-creator', () => ({ address: creator.address, label: DEMO_CREATOR_LABEL }))
    .post('/dev/fund', async ({ request, body }) => {
      checkOrigin(request);
      const address = (body ?? {}) as { address?: unknown };
      if (typeof address.address !== 'string' || !isAddress(address.address))
        throw new AppError('VALIDATION', 'address must be a 0x address');
      const to = getAddress(address.address);
      return { address: to, balanceAtomic: (await fund(to, DEV_FUNDING)).toString() };
    })
    .post('/dev/demo-wallet/sign', async ({ request, body }) => {
      checkOrigin(request);
      if (!(request.headers.get('content-type') ?? '').toLowerCase().startsWith('application/json')) {
        throw new AppError('VALIDATION', 'Send the request as application/json');
      }
      const { method, params } = (body ?? {}) as { method?: unknown; params?: unknown };
      if (!Array.isArray(params)) throw new AppError('VALIDATION', 'params must be an array');
      if (method === 'personal_sign') return { result: await personalSign(signerFor(params[1]), params) };
      if (method === 'eth_signTypedData_v4') return { result: await signTypedData(signerFor(params[0]), params) };
      throw new AppError('VALIDATION', "method must be 'personal_sign' or 'eth_signTypedData_v4'");
    });
}

function checkOrigin(request: Request): void {
  const origin = request.headers.get('origin');
  if (origin === null) return; // not a browser's cross-site request (curl, the CLI, same-origin GET-like fetches)
  let host: string;
  try {
    host = new URL(origin).host;
  } catch {
    throw new AppError('FORBIDDEN', 'The demo wallet signs only for pages of this marketplace');
  }
  if (host !== request.headers.get('host')) throw new AppError('FORBIDDEN', 'The demo wallet signs only for pages of this marketplace');
}

function checkSigner(account: LocalAccount, address: unknown): void {
  if (typeof address !== 'string' || !ADDRESS_PATTERN.test(address) || !isAddressEqual(address as Hex, account.address)) {
    throw new AppError('VALIDATION', `The demo wallet is ${account.address}; it cannot sign for ${String(address).slice(0, 42)}`);
  }
}

async function personalSign(account: LocalAccount, params: unknown[]): Promise<Hex> {
  const [message, address] = params;
  if (typeof message !== 'string') throw new AppError('VALIDATION', 'personal_sign needs [message, address]');
  checkSigner(account, address);
  // EIP-1193 wallets take hex as the raw bytes and anything else as UTF-8 text.
  return account.signMessage({ message: isHex(message) ? { raw: message } : message });
}

async function signTypedData(account: LocalAccount, params: unknown[]): Promise<Hex> {
  const [address, data] = params;
  checkSigner(account, address);
  let typed: unknown = data;
  if (typeof data === 'string') {
    try {
      typed = JSON.parse(data);
    } catch {
      throw new AppError('VALIDATION', 'eth_signTypedData_v4: the typed data is not JSON');
    }
  }
  const { domain, types, primaryType, message } = (typed ?? {}) as Record<string, unknown>;
  if (typeof types !== 'object' || types === null || typeof primaryType !== 'string' || typeof message !== 'object' || message === null) {
    throw new AppError('VALIDATION', 'eth_signTypedData_v4 needs [address, {domain, types, primaryType, message}]');
  }
  const { EIP712Domain: _, ...structs } = types as Record<string, { name: string; type: string }[]>;
  if (!(primaryType in structs)) throw new AppError('VALIDATION', `eth_signTypedData_v4: no type named ${primaryType}`);
  try {
    return await account.signTypedData({
      domain: integers(domain ?? {}, { chainId: 'uint256' }),
      types: structs,
      primaryType,
      message: integers(message, Object.fromEntries(structs[primaryType]!.map((f) => [f.name, f.type]))),
    } as unknown as TypedDataDefinition);
  } catch (error) {
    throw new AppError('VALIDATION', `eth_signTypedData_v4: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`);
  }
}

/** JSON carries uint256 values as decimal or hex strings; viem wants bigints for the integer fields. */
function integers(value: unknown, fieldTypes: Record<string, string>): Record<string, unknown> {
  const out = { ...(value as Record<string, unknown>) };
  for (const [name, type] of Object.entries(fieldTypes)) {
    const v = out[name];
    if (/^u?int\d*$/.test(type) && typeof v === 'string' && /^(0x[0-9a-fA-F]+|-?\d+)$/.test(v)) out[name] = BigInt(v);
  }
  return out;
}
