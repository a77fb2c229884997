import { timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { BasicCredentialId } from '../../core/catalogue/operations.ts';
import type { Product } from '../../core/products.ts';
import type { SandboxContext } from '../domain/context.ts';
import { idKey, type ApiUser } from '../domain/state.ts';
import { sendBusinessError, sendOAuthError, type OperationReply } from './replies.ts';

/**
 * The API user behind a Basic credential, or the answer to send when there is none: the failure status
 * is the profile's (401 by the spec, 500 on the live sandbox), and a user of another product than `product`
 * is refused with NOT_ALLOWED_TARGET_ENVIRONMENT as observed live (`product` undefined: any product's user). It runs
 * before the handler, on the operations a Basic credential opens, whose every one documents that answer.
 */
export function authenticateBasic(
  context: SandboxContext,
  request: FastifyRequest,
  reply: OperationReply<BasicCredentialId>,
  product: Product | undefined,
): ApiUser | undefined {
  const credential = basicCredentialOf(request.headers.authorization);
  const user = credential ? context.state.apiUsers.get(idKey(credential.userId)) : undefined;
  if (!credential || !user || user.apiKey === undefined || !sameSecret(user.apiKey, credential.apiKey)) {
    sendOAuthError(reply, context.profile.tokenFailureStatus, 'login_failed', { scheme: 'Basic' });
    return undefined;
  }
  if (product !== undefined && user.product !== product) {
    sendBusinessError(
      reply,
      500,
      'NOT_ALLOWED_TARGET_ENVIRONMENT',
      `This API user was provisioned for the ${user.product} product and cannot be used with ${product}.`,
    );
    return undefined;
  }
  return user;
}

/** The API user id and key of an Authorization: Basic header, or undefined when it is not one. */
export function basicCredentialOf(header: string | undefined): { userId: string; apiKey: string } | undefined {
  const match = typeof header === 'string' ? /^Basic ([A-Za-z0-9+/=]+)$/i.exec(header) : null;
  if (!match) return undefined;
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon > 0 ? { userId: decoded.slice(0, colon), apiKey: decoded.slice(colon + 1) } : undefined;
}

function sameSecret(expected: string, given: string): boolean {
  const a = Buffer.from(expected);
  const b = Buffer.from(given);
  return a.length === b.length && timingSafeEqual(a, b);
}
