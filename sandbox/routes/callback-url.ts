import type { FastifyReply } from 'fastify';
import type { CallbackUrlId } from '../../core/catalogue/operations.ts';
import type { SandboxContext } from '../domain/context.ts';
import type { ApiUser } from '../domain/state.ts';
import { callbackHostMatches, isCallbackUrl } from '../domain/callbacks.ts';
import { sendBadRequest, sendBusinessError, type OperationReply } from '../http/replies.ts';

/**
 * The answer to a creation whose X-Callback-Url cannot be taken, or undefined when it can (or none came): not a
 * URL is 400; a host other than the API user's providerCallbackHost is 500 INVALID_CALLBACK_URL_HOST, as live;
 * a host the destination rules refuse (docs/callbacks.md) is answered the same way, saying why. Shared by the
 * operations that take X-Callback-Url, whose every one documents that answer.
 */
export function refuseCallbackUrl(
  context: SandboxContext,
  reply: OperationReply<CallbackUrlId>,
  callbackUrl: string | undefined,
  caller: ApiUser,
): FastifyReply | undefined {
  if (callbackUrl === undefined) return undefined;
  if (!isCallbackUrl(callbackUrl)) {
    return sendBadRequest(reply, 'Invalid request: header X-Callback-Url is not an absolute http(s) URL with a host and a valid port.');
  }
  if (!callbackHostMatches(callbackUrl, caller.providerCallbackHost)) {
    return sendBusinessError(reply, 500, 'INVALID_CALLBACK_URL_HOST', 'Callback URL does not match the configured value.');
  }
  const refusal = context.destinations.refusalOfUrl(callbackUrl);
  if (refusal)
    return sendBusinessError(reply, 500, 'INVALID_CALLBACK_URL_HOST', `Callback URL host is refused: ${refusal} (docs/callbacks.md).`);
  return undefined;
}
