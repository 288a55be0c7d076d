import { Elysia } from 'elysia';
import { listPublicSkillsOf } from '../skills';
import type { ServiceContext } from '../../context';
import { authPlugin } from '../auth';
import { AddressParam, Creator, CreatorWithSkills, ProfileUpdate } from 'skill-market/registry';
import { getCreatorByAddress, getUserById, toCreator, updateProfile } from '../users';
import { AppError } from '../../../http';

const tags = ['Creators'];

/**
 * Public creator profiles, and the signed-in user's own profile. A module of routes alone, above auth
 * and users: auth signs users in through the users module, so that one has no routes on auth.
 */
export function creatorRoutes(ctx: ServiceContext) {
  return new Elysia({ name: 'creator-routes' })
    .use(authPlugin(ctx))
    .get(
      '/creators/me',
      async ({ principal }) => {
        const user = await getUserById(ctx, principal.userId);
        if (!user) throw new AppError('NOT_FOUND', 'Creator not found');
        return toCreator(user);
      },
      { auth: 'consumer', response: Creator, detail: { tags, summary: 'Your own profile' } },
    )
    .patch('/creators/me', ({ principal, body }) => updateProfile(ctx, principal.userId, body), {
      auth: 'account',
      body: ProfileUpdate,
      response: Creator,
      detail: { tags, summary: 'Edit your name, avatar or bio (null clears a field)' },
    })
    .get(
      '/creators/:address',
      async ({ params }) => ({
        ...(await getCreatorByAddress(ctx, params.address)),
        skills: await listPublicSkillsOf(ctx, params.address),
      }),
      {
        params: AddressParam,
        response: CreatorWithSkills,
        detail: { tags, summary: 'A creator’s public profile with their active skills' },
      },
    );
}
