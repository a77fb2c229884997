import { randomUUID } from 'node:crypto';
import type { FastifyReply } from 'fastify';
import type { SandboxContext } from '../domain/context.ts';
import type { RequestOf, RouteHandlers } from '../http/serving.ts';
import { sendBusinessError, sendOAuthError, type OperationReply } from '../http/replies.ts';
import type { Product } from '../../core/products.ts';
import { idKey, type ConsentGrant, type ConsentRequest } from '../domain/state.ts';
import { scopesNamed } from '../domain/scopes.ts';
import { refuseCallbackUrl } from './callback-url.ts';
import { pingWhenGranted } from '../domain/callbacks.ts';

/**
 * The consent flow (§5.4): bc-authorize with an access token, then the OAuth 2.0 token operation with the
 * CIBA grant (authorization_pending until the holder consents after `interval`), then userinfo with the
 * consent token. Served under every product, so one API user completes it within its own product.
 */
export function consentHandlers(context: SandboxContext): Pick<RouteHandlers, 'bcAuthorize' | 'createOAuthToken' | 'userInfo'> {
  return {
    bcAuthorize: (product) => (request, reply) => bcAuthorize(context, product!, request, reply),
    createOAuthToken: () => (request, reply) => createOAuthToken(context, request, reply),
    userInfo: () => async (request, reply) => {
      const { msisdn = '0', scope = '' } = request.claims;
      const record = userInfoFor(msisdn, scope.split(' '), context.profile.genderCase === 'upper' ? 'MALE' : 'male');
      // The live sandbox gives every customer the same "Sand Box" record (core/profiles.ts userInfoPerCustomer).
      if (!context.profile.userInfoPerCustomer && 'sub' in record) record.sub = '0';
      return reply.send(record);
    },
  };
}

async function bcAuthorize(
  context: SandboxContext,
  product: Product,
  request: RequestOf<'bcAuthorize'>,
  reply: OperationReply<'bcAuthorize'>,
) {
  const { settings, state, clock } = context;
  const form = request.body;
  const scopes = scopesNamed(form.scope);
  if (scopes.length === 0) return sendBusinessError(reply, 400, 'MISSING_SCOPE_INSTRUCTION', 'scope names no scope.');
  const unknown = scopes.find((s) => !settings.scopes.includes(s));
  if (unknown)
    return sendBusinessError(
      reply,
      400,
      'UNSUPPORTED_SCOPE',
      `Scope "${unknown}" is not supported; this sandbox offers ${settings.scopes.join(', ')}.`,
    );
  const callbackUrl = request.headers['x-callback-url'];
  const refused = refuseCallbackUrl(context, reply, callbackUrl, request.caller);
  if (refused) return refused;
  const now = clock.now();
  const consent: ConsentRequest = {
    authReqId: randomUUID(),
    apiUserId: request.caller.id,
    product,
    msisdn: /^ID:\+?(\d+)\/MSISDN$/.exec(form.login_hint)![1]!,
    scope: scopes.join(' '),
    accessType: form.access_type,
    consentValidSeconds: form.consent_valid_in ? Number(form.consent_valid_in) : settings.consentValidSeconds,
    createdAt: now,
    grantedAt: now + settings.consentIntervalSeconds * 1000,
    expiresAt: now + settings.consentRequestLifetimeSeconds * 1000,
    callbackUrl,
  };
  state.consentRequests.add(consent.authReqId, consent);
  state.journal?.consentRequest(consent);
  pingWhenGranted(context.callbacks, consent, now);
  return reply.send({
    auth_req_id: consent.authReqId,
    interval: settings.consentIntervalSeconds,
    expires_in: settings.consentRequestLifetimeSeconds,
  });
}

async function createOAuthToken(context: SandboxContext, request: RequestOf<'createOAuthToken'>, reply: FastifyReply) {
  const user = request.caller;
  const form = request.body;
  return form.grant_type === 'refresh_token'
    ? refreshConsent(context, user.id, form.refresh_token!, reply)
    : redeemConsent(context, user.id, form.auth_req_id!, reply);
}

function redeemConsent(context: SandboxContext, apiUserId: string, authReqId: string, reply: FastifyReply) {
  const { state, clock, settings } = context;
  const consent = state.consentRequests.get(idKey(authReqId));
  const now = clock.now();
  // The API user that asked redeems it, under any product's token operation: the spec's flow asks under
  // collection (§4.2 #7) and redeems under disbursement (§4.3 #11).
  if (!consent || consent.apiUserId !== apiUserId) return sendOAuthError(reply, 400, 'invalid_grant');
  if (now >= consent.expiresAt) return sendOAuthError(reply, 400, 'expired_token');
  if (now < consent.grantedAt) return sendOAuthError(reply, 400, 'authorization_pending');
  // Redeemed once and for all: a second redemption finds nothing (invalid_grant), and the store has room.
  state.consentRequests.delete(idKey(authReqId));
  const grant: ConsentGrant = {
    refreshToken: randomUUID(),
    authReqId,
    apiUserId,
    // The consent token opens the product the consent was asked under, whose user information it reads (§4.2 #6).
    product: consent.product,
    msisdn: consent.msisdn,
    scope: consent.scope,
    refreshableUntil: consent.grantedAt + consent.consentValidSeconds * 1000,
  };
  state.consentGrants.add(grant.refreshToken, grant);
  state.journal?.consentGranted(grant);
  return sendConsentToken(context, grant, reply, now, settings.consentTokenLifetimeSeconds);
}

function refreshConsent(context: SandboxContext, apiUserId: string, refreshToken: string, reply: FastifyReply) {
  const { state, clock, settings } = context;
  const grant = state.consentGrants.get(idKey(refreshToken));
  const now = clock.now();
  if (!grant || grant.apiUserId !== apiUserId) return sendOAuthError(reply, 400, 'invalid_grant');
  if (now >= grant.refreshableUntil) return sendOAuthError(reply, 400, 'invalid_grant');
  return sendConsentToken(context, grant, reply, now, settings.consentTokenLifetimeSeconds);
}

function sendConsentToken(context: SandboxContext, grant: ConsentGrant, reply: FastifyReply, now: number, lifetimeSeconds: number) {
  const accessToken = context.tokens.issue(
    { sub: grant.apiUserId, prd: grant.product, use: 'consent', msisdn: grant.msisdn, scope: grant.scope },
    lifetimeSeconds,
  );
  reply.header('cache-control', 'no-store');
  return reply.send({
    access_token: accessToken,
    token_type: 'Bearer',
    expires_in: lifetimeSeconds,
    scope: grant.scope,
    refresh_token: grant.refreshToken,
    refresh_token_expired_in: Math.max(0, Math.floor((grant.refreshableUntil - now) / 1000)),
  });
}

const PROFILE_CLAIMS = ['name', 'given_name', 'family_name', 'middle_name', 'gender', 'locale', 'birthdate', 'updated_at'];

/** What the holder consented to share: openid gives the subject, profile adds the OpenID profile claims, all_info gives everything. */
function userInfoFor(msisdn: string, scopes: string[], gender: string): Record<string, unknown> {
  const everything: Record<string, unknown> = {
    sub: msisdn,
    name: 'Sand Box',
    given_name: 'Sand',
    family_name: 'Box',
    middle_name: '',
    email: 'sand.box@example.com',
    email_verified: true,
    gender,
    locale: 'sv_SE',
    phone_number: msisdn,
    phone_number_verified: true,
    address: 'Sandbox Street 1, Stockholm',
    updated_at: 1678355127,
    status: 'ACTIVE',
    birthdate: '1976-08-13',
    credit_score: '0',
    active: true,
    country_of_birth: 'SE',
    region_of_birth: 'Stockholm',
    city_of_birth: 'Stockholm',
    occupation: 'Tester',
    employer_name: 'Sandbox AB',
    identification_type: 'PASS',
    identification_value: 'SE0000000',
  };
  if (scopes.includes('all_info')) return everything;
  const shared = new Set(['sub', ...(scopes.includes('profile') ? PROFILE_CLAIMS : [])]);
  return Object.fromEntries(Object.entries(everything).filter(([claim]) => shared.has(claim)));
}
