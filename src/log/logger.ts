import type { LogLevel } from '../config';

/** Structured one-line JSON logger. Fields named like secrets are masked before writing. */
export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  child(fields: Record<string, unknown>): Logger;
}

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

/** Keys whose values never reach a log, whatever the caller passes. */
const SECRET_KEY = /(authorization|cookie|password|passphrase|secret|token|private.?key|mnemonic|api.?key|signature)/i;

export type LogSink = (line: string) => void;

const stdoutSink: LogSink = (line) => process.stdout.write(`${line}\n`);

export function createLogger(level: LogLevel, sink: LogSink = stdoutSink, base: Record<string, unknown> = {}): Logger {
  const threshold = RANK[level];
  const write = (lvl: Exclude<LogLevel, 'silent'>, msg: string, fields?: Record<string, unknown>) => {
    if (RANK[lvl] < threshold) return;
    const entry = { level: lvl, time: new Date().toISOString(), msg, ...base, ...fields };
    sink(JSON.stringify(entry, redact));
  };
  return {
    debug: (msg, fields) => write('debug', msg, fields),
    info: (msg, fields) => write('info', msg, fields),
    warn: (msg, fields) => write('warn', msg, fields),
    error: (msg, fields) => write('error', msg, fields),
    child: (fields) => createLogger(level, sink, { ...base, ...fields }),
  };
}

function redact(key: string, value: unknown): unknown {
  if (key !== '' && SECRET_KEY.test(key) && value !== undefined && value !== null) return '[redacted]';
  if (value instanceof Error) return { name: value.name, message: value.message, stack: value.stack };
  if (typeof value === 'bigint') return value.toString();
  return value;
}
