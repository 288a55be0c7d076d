/** Skill groups: a creator's named groups, at least one per skill. */
import { type Static, Type as T } from '@sinclair/typebox';
import { ADDRESS_PATTERN, Nullable, Timestamp, Uuid } from './common';
import { SkillView } from './skills';
import { Creator } from './users';

const Name = T.String({ minLength: 1, maxLength: 60, pattern: '\\S', description: 'unique among your groups (case-insensitive)' });
const Description = T.String({ maxLength: 500 });
const Icon = T.String({ minLength: 1, maxLength: 2048, description: 'an emoji, or an http(s) image URL' });

/**
 * `POST /groups` body (creator credentials): a new group of the caller's. `name` is 1–60
 * characters, unique among the caller's groups regardless of case (409 otherwise); `description`
 * at most 500; `icon` an emoji or an http(s) image URL. Answered 201 with {@link GroupView}; the
 * registry derives the slug from the name.
 */
export const CreateGroup = T.Object({ name: Name, description: T.Optional(Description), icon: T.Optional(Icon) });
/** The {@link CreateGroup} schema's type. */
export type CreateGroup = Static<typeof CreateGroup>;

/**
 * `PATCH /groups/:slug` body (the group's creator): any of `name`, `description`, `icon`; a field
 * left out is kept, `null` clears `description` or `icon`. The slug does not change. Answered with
 * {@link GroupView}.
 */
export const UpdateGroup = T.Object({
  name: T.Optional(Name),
  description: T.Optional(Nullable(Description)),
  icon: T.Optional(Nullable(Icon)),
});
/** The {@link UpdateGroup} schema's type. */
export type UpdateGroup = Static<typeof UpdateGroup>;

/**
 * A group as the registry answers it: `POST /groups`, `PATCH /groups/:slug`, the items of
 * `GET /groups`, and the base of {@link GroupDetail}. `slug` (unique across the registry) names it
 * in URLs; `description` and `icon` are null when unset.
 */
export const GroupView = T.Object({
  id: Uuid(),
  slug: T.String(),
  name: T.String(),
  description: Nullable(T.String()),
  icon: Nullable(T.String()),
  creatorId: Uuid(),
  isActive: T.Boolean(),
  createdAt: Timestamp(),
  updatedAt: Timestamp(),
});
/** The {@link GroupView} schema's type. */
export type GroupView = Static<typeof GroupView>;
/**
 * Answer of `GET /groups` (public): every group, or with `?creator=` one creator's
 * ({@link CreatorQuery}), as {@link GroupView}.
 */
export const GroupList = T.Array(GroupView);

/** `GET /groups/:slug`: the group, its creator's public profile and its active skills. */
export const GroupDetail = T.Composite([GroupView, T.Object({ creator: Creator, skills: T.Array(SkillView) })]);
/** The {@link GroupDetail} schema's type. */
export type GroupDetail = Static<typeof GroupDetail>;

/** `GET /creators/:address`: a creator's public profile with their active skills. */
export const CreatorWithSkills = T.Composite([Creator, T.Object({ skills: T.Array(SkillView) })]);
/** The {@link CreatorWithSkills} schema's type. */
export type CreatorWithSkills = Static<typeof CreatorWithSkills>;

/**
 * Path parameters of `GET`, `PATCH` and `DELETE /groups/:slug`: the group's slug (1–80 characters).
 */
export const GroupSlugParam = T.Object({ slug: T.String({ minLength: 1, maxLength: 80 }) });
/**
 * Query of `GET /groups` and `GET /groups/:slug`: `creator`, a 0x wallet address (any case), keeps
 * only that creator's groups; on `GET /groups/:slug` a group of someone else's is then 404.
 */
export const CreatorQuery = T.Object({ creator: T.Optional(T.String({ pattern: ADDRESS_PATTERN })) });
