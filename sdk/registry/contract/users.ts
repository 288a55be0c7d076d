/** Creators: public profiles and the signed-in user's own. */
import { type Static, Type as T } from '@sinclair/typebox';
import { AddressString, Nullable, Timestamp, Uuid } from './common';

/**
 * A user's public profile, as existing clients read it: the answer of `GET /creators/me` and
 * `PATCH /creators/me`, `creator` in {@link SessionResponse} and {@link GroupDetail}, and the base
 * of {@link CreatorWithSkills}. `walletAddress` is the EIP-55 checksummed address the account signs
 * in with; `name`, `avatar` (an http(s) image URL) and `bio` are null until set.
 */
export const Creator = T.Object({
  id: Uuid(),
  walletAddress: T.String(),
  name: Nullable(T.String()),
  avatar: Nullable(T.String()),
  bio: Nullable(T.String()),
  createdAt: Timestamp(),
});
/** The {@link Creator} schema's type. */
export type Creator = Static<typeof Creator>;

/**
 * `PATCH /creators/me` body (a signed-in session): any of `name` (1–80 characters), `avatar` (an
 * http(s) URL) and `bio` (at most 1000); a field left out is kept, `null` clears it, any other
 * field is refused with 400. Answered with the {@link Creator}.
 */
export const ProfileUpdate = T.Object(
  {
    name: T.Optional(Nullable(T.String({ minLength: 1, maxLength: 80 }))),
    avatar: T.Optional(Nullable(T.String({ format: 'uri', maxLength: 2048, pattern: '^https?://' }))),
    bio: T.Optional(Nullable(T.String({ maxLength: 1000 }))),
  },
  { additionalProperties: false },
);
/** The {@link ProfileUpdate} schema's type. */
export type ProfileUpdate = Static<typeof ProfileUpdate>;

/**
 * Path parameters of `GET /creators/:address`: the creator's 0x wallet address (any case); 404 when
 * no account has it.
 */
export const AddressParam = T.Object({ address: AddressString('0x address') });
