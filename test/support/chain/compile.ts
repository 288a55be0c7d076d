/**
 * Compiles the test contracts in ./contracts, the token in src/chain/token, the x402 batch-settlement
 * contracts in src/chain/batch-settlement and the Permit2 and x402 `upto` contracts in src/chain/upto with solc-js and caches the result twice: in memory
 * per process, and on disk under node_modules/.cache keyed by a hash of the sources, the solc
 * version and the settings. Loading solc-js alone costs ~1 s, so a warm disk cache never imports it.
 */
import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, rename, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Abi, Hex } from 'viem';

export type CompiledContract = { abi: Abi; bytecode: Hex; deployedBytecode: Hex };
export type ContractName =
  | 'UsdCoin'
  | 'UsdCoin18'
  | 'TestSmartWallet'
  | 'Multicall3'
  | 'ReentrantCollector'
  | 'x402BatchSettlement'
  | 'ERC3009DepositCollector'
  | 'Permit2'
  | 'x402UptoPermit2Proxy';
export type CompiledContracts = Record<ContractName, CompiledContract>;

const CONTRACT_NAMES: readonly ContractName[] = [
  'UsdCoin',
  'UsdCoin18',
  'TestSmartWallet',
  'Multicall3',
  'ReentrantCollector',
  'x402BatchSettlement',
  'ERC3009DepositCollector',
  'Permit2',
  'x402UptoPermit2Proxy',
];
const CONTRACT_DIRS = [
  fileURLToPath(new URL('./contracts/', import.meta.url)),
  fileURLToPath(new URL('../../../src/chain/token/', import.meta.url)),
  fileURLToPath(new URL('../../../src/chain/batch-settlement/', import.meta.url)),
  fileURLToPath(new URL('../../../src/chain/upto/', import.meta.url)),
];
const CACHE_DIR = fileURLToPath(new URL('../../../node_modules/.cache/skill-market-contracts/', import.meta.url));
const SETTINGS = {
  optimizer: { enabled: true, runs: 200 },
  evmVersion: 'cancun',
  outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object', 'evm.deployedBytecode.object'] } },
} as const;

let memo: Promise<CompiledContracts> | undefined;

/** The compiled contracts; compiles at most once per process and once per source change. */
export function compileContracts(): Promise<CompiledContracts> {
  memo ??= load().catch((error: unknown) => {
    memo = undefined; // let a later call retry, e.g. after a source fix
    throw error;
  });
  return memo;
}

async function load(): Promise<CompiledContracts> {
  const sources = await readSources();
  const input = { language: 'Solidity', sources, settings: SETTINGS };
  const solcVersion = readSolcVersion();
  const key = createHash('sha256').update(solcVersion).update(JSON.stringify(input)).digest('hex').slice(0, 32);
  const cacheFile = join(CACHE_DIR, `${key}.json`);

  const cached = await readFile(cacheFile, 'utf8').then(parseCache, () => undefined);
  if (cached) return cached;

  const compiled = await compile(input);
  await writeCache(cacheFile, compiled).catch(() => {
    // A read-only checkout still works; it just compiles every time.
  });
  return compiled;
}

/** Every .sol file, keyed by its bare file name (imports are `./Name.sol`, so the folders merge). */
async function readSources(): Promise<Record<string, { content: string }>> {
  const entries = await Promise.all(
    CONTRACT_DIRS.map(async (dir) => {
      const files = (await readdir(dir)).filter((f) => f.endsWith('.sol'));
      return Promise.all(files.map(async (f) => [f, { content: await readFile(join(dir, f), 'utf8') }] as const));
    }),
  );
  const sources = Object.fromEntries(entries.flat());
  sources['UsdCoin18.sol'] = { content: eighteenDecimals(sources['UsdCoin.sol']!.content) };
  return Object.fromEntries(Object.entries(sources).sort(([a], [b]) => a.localeCompare(b)));
}

/** UsdCoin.sol as a token of 18 decimals (contract UsdCoin18): amounts beyond what 6 decimals hold. */
function eighteenDecimals(source: string): string {
  const renamed = source
    .replace(/\bcontract UsdCoin\b/, 'contract UsdCoin18')
    .replace(/uint8 public constant decimals = 6;/, 'uint8 public constant decimals = 18;');
  if (!renamed.includes('contract UsdCoin18') || !renamed.includes('decimals = 18;'))
    throw new Error('UsdCoin.sol changed: derive UsdCoin18 anew');
  return renamed;
}

function readSolcVersion(): string {
  const require = createRequire(import.meta.url);
  return (require('solc/package.json') as { version: string }).version;
}

type SolcOutput = {
  errors?: { severity: 'error' | 'warning' | 'info'; formattedMessage: string }[];
  contracts?: Record<string, Record<string, { abi: Abi; evm: { bytecode: { object: string }; deployedBytecode: { object: string } } }>>;
};

async function compile(input: object): Promise<CompiledContracts> {
  const solc = (await import('solc')).default as { compile(input: string): string };
  const output = JSON.parse(solc.compile(JSON.stringify(input))) as SolcOutput;
  const errors = (output.errors ?? []).filter((e) => e.severity === 'error');
  if (errors.length > 0) {
    throw new Error(`solc failed:\n${errors.map((e) => e.formattedMessage).join('\n')}`);
  }
  const result: Partial<CompiledContracts> = {};
  for (const name of CONTRACT_NAMES) {
    const artifact = output.contracts?.[`${name}.sol`]?.[name];
    if (!artifact) throw new Error(`solc produced no artifact for ${name}`);
    result[name] = {
      abi: artifact.abi,
      bytecode: `0x${artifact.evm.bytecode.object}`,
      deployedBytecode: `0x${artifact.evm.deployedBytecode.object}`,
    };
  }
  return result as CompiledContracts;
}

function parseCache(text: string): CompiledContracts | undefined {
  try {
    const parsed = JSON.parse(text) as Partial<CompiledContracts>;
    const complete = CONTRACT_NAMES.every(
      (n) => parsed[n]?.bytecode?.startsWith('0x') && parsed[n]?.deployedBytecode?.startsWith('0x') && Array.isArray(parsed[n]?.abi),
    );
    return complete ? (parsed as CompiledContracts) : undefined;
  } catch {
    return undefined; // a torn or foreign file: recompile and overwrite it
  }
}

async function writeCache(file: string, compiled: CompiledContracts): Promise<void> {
  await mkdir(CACHE_DIR, { recursive: true });
  // Write then rename, so a concurrent reader (another test process) never sees half a file.
  const temp = `${file}.${process.pid}.${Date.now()}.tmp`;
  await writeFile(temp, JSON.stringify(compiled));
  await rename(temp, file);
}
