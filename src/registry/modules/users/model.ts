import { t, type Static } from 'elysia';

/** A creator's public profile, as existing clients read it. */
export const Creator = t.Object({
  id: t.String({ format: 'uuid' }),
  walletAddress: t.String(),
  name: t.Union([t.String(), t.Null()]),
  avatar: t.Union([t.String(), t.Null()]),
  bio: t.Union([t.String(), t.Null()]),
  createdAt: t.String({ format: 'date-time' }),
});
export type Creator = Static<typeof Creator>;

export const ProfileUpdate = t.Object(
  {
    name: t.Optional(t.Union([t.String({ minLength: 1, maxLength: 80 }), t.Null()])),
    avatar: t.Optional(t.Union([t.String({ format: 'uri', maxLength: 2048, pattern: '^https?://' }), t.Null()])),
    bio: t.Optional(t.Union([t.String({ maxLength: 1000 }), t.Null()])),
  },
  { additionalProperties: false },
);
export type ProfileUpdate = Static<typeof ProfileUpdate>;

export const AddressParam = t.Object({ address: t.String({ pattern: '^0x[0-9a-fA-F]{40}$', description: '0x address' }) });
