/** Creators: public profiles and the signed-in user's own. */
import { type Static, Type as T } from '@sinclair/typebox';
import { AddressString, Nullable, Timestamp, Uuid } from './common';

/** A creator's public profile, as existing clients read it. */
export const Creator = T.Object({
  id: Uuid(),
  walletAddress: T.String(),
  name: Nullable(T.String()),
  avatar: Nullable(T.String()),
  bio: Nullable(T.String()),
  createdAt: Timestamp(),
});
export type Creator = Static<typeof Creator>;

/** `PATCH /creators/me`: null clears a field. */
export const ProfileUpdate = T.Object(
  {
    name: T.Optional(Nullable(T.String({ minLength: 1, maxLength: 80 }))),
    avatar: T.Optional(Nullable(T.String({ format: 'uri', maxLength: 2048, pattern: '^https?://' }))),
    bio: T.Optional(Nullable(T.String({ maxLength: 1000 }))),
  },
  { additionalProperties: false },
);
export type ProfileUpdate = Static<typeof ProfileUpdate>;

export const AddressParam = T.Object({ address: AddressString('0x address') });
