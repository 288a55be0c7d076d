import { findPrivateKeyMaterial, PRIVATE_KEY_REFUSAL, TOO_DEEP } from 'skill-market/wallet';
import { AppError } from '../../../http';

/**
 * Refuses a request carrying anything shaped like a private key or recovery phrase, in any body
 * field, path parameter or query value, before validation, services or storage see it. The
 * answer names the field, never the value.
 */
export function refusePrivateKeys({ body, params, query }: { body: unknown; params: unknown; query: unknown }): void {
  const parts: [string, unknown][] = [
    ['', body],
    ['params', params],
    ['query', query],
  ];
  for (const [root, value] of parts) {
    const field = findPrivateKeyMaterial(value, root);
    if (field === TOO_DEEP) throw new AppError('VALIDATION', 'Invalid request: the body is nested too deeply');
    if (field !== undefined)
      throw new AppError('VALIDATION', PRIVATE_KEY_REFUSAL, [{ field, message: 'looks like a private key or recovery phrase' }]);
  }
}
