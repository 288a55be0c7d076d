const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A value PostgreSQL's uuid type takes in its canonical text form (anything else fails the cast: 500). */
export const isUuid = (value: unknown): value is string => typeof value === 'string' && UUID.test(value);
