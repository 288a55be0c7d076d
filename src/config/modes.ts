/** The run modes and log levels every reader shares (the registry's, the facilitator's, the clients'). */
export const LOG_LEVELS = ['debug', 'info', 'warn', 'error', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export const RUN_MODES = ['development', 'production', 'test'] as const;
export type RunMode = (typeof RUN_MODES)[number];
