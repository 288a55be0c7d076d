export * from './users';
export * from './sessions';
export * from './auth-challenges';
export * from './api-keys';
export * from './rate-limits';
