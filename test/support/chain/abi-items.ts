import type { Abi } from 'viem';

type Param = { type: string; name?: string; indexed?: boolean; components?: readonly Param[] };

const params = (list: readonly Param[] = []): string =>
  list.map((p) => `${p.type}${p.components ? `{${params(p.components)}}` : ''}${p.indexed ? ' indexed' : ''} ${p.name ?? ''}`).join(',');

/**
 * One comparable line per ABI item: kind, name, inputs and outputs with their names (structs
 * expanded), `indexed` and state mutability; sorted. Ignores solc-only details such as internalType.
 */
export function abiSignatures(abi: Abi): string[] {
  return abi
    .map((item) => {
      const name = 'name' in item ? item.name : '';
      const inputs = 'inputs' in item ? params(item.inputs) : '';
      const outputs = 'outputs' in item ? params(item.outputs) : '';
      const mutability = 'stateMutability' in item ? item.stateMutability : '';
      return `${item.type} ${name}(${inputs}) ${mutability} -> (${outputs})`;
    })
    .sort();
}
