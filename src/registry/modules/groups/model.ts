import { t, type Static } from 'elysia';
import { SkillView } from '../skills/model';
import { Creator } from '../users/model';

const Name = t.String({ minLength: 1, maxLength: 60, pattern: '\\S', description: 'unique among your groups (case-insensitive)' });
const Description = t.String({ maxLength: 500 });
const Icon = t.String({ minLength: 1, maxLength: 2048, description: 'an emoji, or an http(s) image URL' });

export const CreateGroup = t.Object({ name: Name, description: t.Optional(Description), icon: t.Optional(Icon) });
export type CreateGroup = Static<typeof CreateGroup>;

export const UpdateGroup = t.Object({
  name: t.Optional(Name),
  description: t.Optional(t.Union([Description, t.Null()])),
  icon: t.Optional(t.Union([Icon, t.Null()])),
});
export type UpdateGroup = Static<typeof UpdateGroup>;

export const GroupView = t.Object({
  id: t.String({ format: 'uuid' }),
  slug: t.String(),
  name: t.String(),
  description: t.Union([t.String(), t.Null()]),
  icon: t.Union([t.String(), t.Null()]),
  creatorId: t.String({ format: 'uuid' }),
  isActive: t.Boolean(),
  createdAt: t.String({ format: 'date-time' }),
  updatedAt: t.String({ format: 'date-time' }),
});
export type GroupView = Static<typeof GroupView>;

/** `GET /groups/:slug`: the group, its creator's public profile and its active skills. */
export const GroupDetail = t.Composite([GroupView, t.Object({ creator: Creator, skills: t.Array(SkillView) })]);
export type GroupDetail = Static<typeof GroupDetail>;

export const SlugParam = t.Object({ slug: t.String({ minLength: 1, maxLength: 80 }) });
export const CreatorQuery = t.Object({ creator: t.Optional(t.String({ pattern: '^0x[0-9a-fA-F]{40}$' })) });
