/** Skill groups: a creator's named groups, at least one per skill. */
import { type Static, Type as T } from '@sinclair/typebox';
import { ADDRESS_PATTERN, Nullable, Timestamp, Uuid } from './common';
import { SkillView } from './skills';
import { Creator } from './users';

const Name = T.String({ minLength: 1, maxLength: 60, pattern: '\\S', description: 'unique among your groups (case-insensitive)' });
const Description = T.String({ maxLength: 500 });
const Icon = T.String({ minLength: 1, maxLength: 2048, description: 'an emoji, or an http(s) image URL' });

export const CreateGroup = T.Object({ name: Name, description: T.Optional(Description), icon: T.Optional(Icon) });
export type CreateGroup = Static<typeof CreateGroup>;

export const UpdateGroup = T.Object({
  name: T.Optional(Name),
  description: T.Optional(Nullable(Description)),
  icon: T.Optional(Nullable(Icon)),
});
export type UpdateGroup = Static<typeof UpdateGroup>;

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
export type GroupView = Static<typeof GroupView>;
export const GroupList = T.Array(GroupView);

/** `GET /groups/:slug`: the group, its creator's public profile and its active skills. */
export const GroupDetail = T.Composite([GroupView, T.Object({ creator: Creator, skills: T.Array(SkillView) })]);
export type GroupDetail = Static<typeof GroupDetail>;

/** `GET /creators/:address`: a creator's public profile with their active skills. */
export const CreatorWithSkills = T.Composite([Creator, T.Object({ skills: T.Array(SkillView) })]);
export type CreatorWithSkills = Static<typeof CreatorWithSkills>;

export const GroupSlugParam = T.Object({ slug: T.String({ minLength: 1, maxLength: 80 }) });
export const CreatorQuery = T.Object({ creator: T.Optional(T.String({ pattern: ADDRESS_PATTERN })) });
