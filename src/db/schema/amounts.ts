import { numeric } from 'drizzle-orm/pg-core';

/**
 * An amount in a token's atomic units: up to a uint256, exact, read as a bigint. A signed 64-bit
 * column holds only about 9.2 whole tokens of 18 decimals, so money columns are numeric.
 */
export const atomicAmount = (name: string) => numeric(name, { precision: 78, scale: 0, mode: 'bigint' });
