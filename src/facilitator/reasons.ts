/** The reasons the service answers itself, before any scheme sees a request (each scheme's own are in its folder). */
export const DISPATCH_REASONS = {
  /** The request names a scheme this facilitator does not settle (the x402 specification's `unsupported_scheme`). */
  unsupportedScheme: 'unsupported_scheme',
} as const;
