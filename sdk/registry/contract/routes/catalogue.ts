/** The catalogue's routes: skills, groups, creators' profiles, reviews and the x402 Bazaar discovery API. */
import { SlugParam, Success } from '../common';
import { DiscoveryResourcesAnswer, DiscoveryResourcesQuery, DiscoverySearchAnswer, DiscoverySearchQuery } from '../discovery';
import { CreateGroup, CreatorQuery, CreatorWithSkills, GroupDetail, GroupList, GroupSlugParam, GroupView, UpdateGroup } from '../groups';
import { PostReview, ReplyBody, ReviewIdParam, ReviewList, ReviewsQuery, ReviewView } from '../reviews';
import { RegisterSkill, SearchQuery, SkillList, SkillView, UpdateSkill } from '../skills';
import { AddressParam, Creator, ProfileUpdate } from '../users';
import type { Route } from './route';

export const skillRoutes = {
  registerSkill: {
    method: 'POST',
    path: '/skills',
    access: 'creator',
    body: RegisterSkill as typeof RegisterSkill,
    response: { 200: SkillView as typeof SkillView, 201: SkillView as typeof SkillView },
    idempotent: true,
    tag: 'Skills',
    summary: 'Register a skill, or update yours of the same name (201 created, 200 updated)',
  },
  search: {
    method: 'GET',
    path: '/skills',
    access: 'public',
    query: SearchQuery as typeof SearchQuery,
    response: SkillList as typeof SkillList,
    tag: 'Skills',
    summary: 'Search active skills; the next page’s cursor is in the X-Next-Cursor header',
  },
  skill: {
    method: 'GET',
    path: '/skills/:slug',
    access: 'public',
    params: SlugParam as typeof SlugParam,
    response: SkillView as typeof SkillView,
    tag: 'Skills',
    summary: 'One skill with its groups and analytics counters (inactive ones too)',
  },
  updateSkill: {
    method: 'PATCH',
    path: '/skills/:slug',
    access: 'creator',
    params: SlugParam as typeof SlugParam,
    body: UpdateSkill as typeof UpdateSkill,
    response: SkillView as typeof SkillView,
    idempotent: true,
    tag: 'Skills',
    summary: 'Update your skill; groups replace the whole set',
  },
  ownSkills: {
    method: 'GET',
    path: '/creators/me/skills',
    access: 'creator',
    response: SkillList as typeof SkillList,
    tag: 'Creators',
    summary: 'All your skills, inactive ones included, with their analytics',
  },
} satisfies Record<string, Route>;

export const groupRoutes = {
  createGroup: {
    method: 'POST',
    path: '/groups',
    access: 'creator',
    body: CreateGroup as typeof CreateGroup,
    response: { 201: GroupView as typeof GroupView },
    tag: 'Groups',
    summary: 'Create a group',
  },
  groups: {
    method: 'GET',
    path: '/groups',
    access: 'public',
    query: CreatorQuery as typeof CreatorQuery,
    response: GroupList as typeof GroupList,
    tag: 'Groups',
    summary: 'All groups, or one creator’s (by wallet address)',
  },
  group: {
    method: 'GET',
    path: '/groups/:slug',
    access: 'public',
    params: GroupSlugParam as typeof GroupSlugParam,
    query: CreatorQuery as typeof CreatorQuery,
    response: GroupDetail as typeof GroupDetail,
    tag: 'Groups',
    summary: 'A group with its creator and its active skills',
  },
  updateGroup: {
    method: 'PATCH',
    path: '/groups/:slug',
    access: 'creator',
    params: GroupSlugParam as typeof GroupSlugParam,
    body: UpdateGroup as typeof UpdateGroup,
    response: GroupView as typeof GroupView,
    idempotent: true,
    tag: 'Groups',
    summary: 'Rename your group, or change its description or icon',
  },
  deleteGroup: {
    method: 'DELETE',
    path: '/groups/:slug',
    access: 'creator',
    params: GroupSlugParam as typeof GroupSlugParam,
    response: Success as typeof Success,
    tag: 'Groups',
    summary: 'Delete your group (409 while a skill uses it)',
  },
} satisfies Record<string, Route>;

export const creatorRoutes = {
  me: {
    method: 'GET',
    path: '/creators/me',
    access: 'consumer',
    response: Creator as typeof Creator,
    tag: 'Creators',
    summary: 'Your own profile',
  },
  updateProfile: {
    method: 'PATCH',
    path: '/creators/me',
    access: 'account',
    body: ProfileUpdate as typeof ProfileUpdate,
    response: Creator as typeof Creator,
    idempotent: true,
    tag: 'Creators',
    summary: 'Edit your name, avatar or bio (null clears a field)',
  },
  creator: {
    method: 'GET',
    path: '/creators/:address',
    access: 'public',
    params: AddressParam as typeof AddressParam,
    response: CreatorWithSkills as typeof CreatorWithSkills,
    tag: 'Creators',
    summary: 'A creator’s public profile with their active skills',
  },
} satisfies Record<string, Route>;

export const reviewRoutes = {
  postReview: {
    method: 'POST',
    path: '/reviews',
    access: 'consumer',
    body: PostReview as typeof PostReview,
    response: { 200: ReviewView as typeof ReviewView, 201: ReviewView as typeof ReviewView },
    tag: 'Reviews',
    summary: 'Review a skill you paid for (verified on chain): 201 new, 200 your review updated; 403 without a payment',
  },
  reviews: {
    method: 'GET',
    path: '/skills/:slug/reviews',
    access: 'public',
    params: SlugParam as typeof SlugParam,
    query: ReviewsQuery as typeof ReviewsQuery,
    response: ReviewList as typeof ReviewList,
    tag: 'Reviews',
    summary: 'A skill’s reviews, newest first; the next page’s cursor is in X-Next-Cursor',
  },
  replyToReview: {
    method: 'POST',
    path: '/reviews/:id/reply',
    access: 'creator',
    params: ReviewIdParam as typeof ReviewIdParam,
    body: ReplyBody as typeof ReplyBody,
    response: ReviewView as typeof ReviewView,
    tag: 'Reviews',
    summary: 'Answer a review of your skill, once (409 the second time)',
  },
} satisfies Record<string, Route>;

export const discoveryRoutes = {
  discoveryResources: {
    method: 'GET',
    path: '/discovery/resources',
    access: 'public',
    query: DiscoveryResourcesQuery as typeof DiscoveryResourcesQuery,
    response: DiscoveryResourcesAnswer as typeof DiscoveryResourcesAnswer,
    tag: 'Discovery',
    summary: 'x402 Bazaar: the skills on offer as x402 resources with their payment terms, oldest first, by limit and offset',
  },
  discoverySearch: {
    method: 'GET',
    path: '/discovery/search',
    access: 'public',
    query: DiscoverySearchQuery as typeof DiscoverySearchQuery,
    response: DiscoverySearchAnswer as typeof DiscoverySearchAnswer,
    tag: 'Discovery',
    summary: 'x402 Bazaar: search the skills on offer (ranked, typo-tolerant); the next page by pagination.cursor',
  },
} satisfies Record<string, Route>;
