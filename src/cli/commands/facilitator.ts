import { NotAvailableError } from '../errors';

/** `market facilitator`: verifies and settles x402 payments over HTTP. */
export async function facilitatorCommand(_args: string[]): Promise<void> {
  throw new NotAvailableError('facilitator', 'the facilitator arrives with the payments core');
}
