export { createLogger, type Logger, type LogSink } from './logger';
