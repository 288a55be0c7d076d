import { NotAvailableError } from '../errors';

/** `market serve <module>`: loads a creator's module and runs the paid skill server. */
export async function serveCommand(_args: string[]): Promise<void> {
  throw new NotAvailableError('serve', 'the paid skill server arrives with the creator SDK');
}
