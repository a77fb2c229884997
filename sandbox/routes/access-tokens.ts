import type { FastifyReply, FastifyRequest } from 'fastify';
import type { SandboxContext } from '../app.ts';
import { sendBusinessError, sendOAuthError } from '../http.ts';
import { PRODUCTS, type Product } from '../../core/products.ts';
import { idKey, type ApiUser } from '../state.ts';
import { timingSafeEqual } from 'node:crypto';

/**
 * The API user behind a Basic credential, or the answer to send when there is none: the failure status
 * is the profile's (401 by the spec, 500 on the live sandbox), and a user of another product is refused
 * with NOT_ALLOWED_TARGET_ENVIRONMENT as observed live.
 */
export function authenticateBasic(context: SandboxContext, request: FastifyRequest, reply: FastifyReply, product: Product): ApiUser | undefined {
  const header = request.headers.authorization;
  const match = typeof header === 'string' ? /^Basic ([A-Za-z0-9+/=]+)$/i.exec(header) : null;
  const decoded = match ? Buffer.from(match[1]!, 'base64').toString('utf8') : '';
  const colon = decoded.indexOf(':');
  const user = colon > 0 ? context.state.apiUsers.get(idKey(decoded.slice(0, colon))) : undefined;
  const keyChecked = !context.deviations.has('token-wrong-api-key-accepted');
  if (!user || user.apiKey === undefined || (keyChecked && !sameSecret(user.apiKey, decoded.slice(colon + 1)))) {
    sendOAuthError(reply, context.profile.tokenFailureStatus, 'login_failed', { scheme: 'Basic' });
    return undefined;
  }
  if (user.product !== product && !context.deviations.has('token-for-other-product-user')) {
    sendBusinessError(reply, 500, 'NOT_ALLOWED_TARGET_ENVIRONMENT', `This API user was provisioned for the ${user.product} product and cannot be used with ${product}.`);
    return undefined;
  }
  return user;
}

function sameSecret(expected: string, given: string): boolean {
  const a = Buffer.from(expected);
  const b = Buffer.from(given);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Access tokens (§4.2 #1), one operation per product as the live service has them. */
export function registerAccessTokens(context: SandboxContext): void {
  const { catalogue, settings, profile, tokens } = context;
  for (const product of PRODUCTS) {
    catalogue.define({
      id: `${product}.createAccessToken`,
      summary: `Create an access token (${product})`,
      specSection: product === 'collection' ? '§4.2 #1' : '§4.2 #1 (the live service has one per product)',
      method: 'POST',
      url: `/${product}/token/`,
      product,
      credential: 'basic',
      noBody: true,
      responses: {
        200: { description: 'An access token.', schema: 'access-token' },
        401: { description: 'Unknown API user or wrong key (spec profile).', schema: 'oauth-error' },
        500: { description: 'login_failed for an unknown API user or a wrong key (mtn-sandbox profile), or NOT_ALLOWED_TARGET_ENVIRONMENT for an API user of another product.', schema: ['oauth-error', product === 'collection' ? 'error-set-a' : 'error-set-b'] },
      },
    }, async (request, reply) => {
      const user = authenticateBasic(context, request, reply, product);
      if (!user) return reply;
      const accessToken = tokens.issue({ sub: user.id, prd: product, use: 'access' }, settings.tokenLifetimeSeconds);
      reply.header('cache-control', 'no-store');
      return reply.send({ access_token: accessToken, token_type: profile.tokenType, expires_in: settings.tokenLifetimeSeconds });
    });
  }
}
