import { STATUS_CODES } from 'node:http';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import type { BusinessCodeOf, BusinessStatusOf, OperationId } from '../../core/catalogue/operations.ts';
import { describeErrors } from '../../core/validation/schemas.ts';

declare const answersFor: unique symbol;

/**
 * A reply that answers for one of the operations Ids: what a handler of an operation is given (RouteHandlers), and
 * what a helper shared by several operations takes. The mark exists only in types; any FastifyReply is one, and a
 * reply marked for no operation answers for any of them.
 */
export type OperationReply<Ids extends OperationId> = FastifyReply & { readonly [answersFor]?: Ids };

/**
 * A business error of §7: {code, message}. Its status and code are a pair the catalogue documents for every operation
 * the reply answers for (core/catalogue/operations.ts, BusinessErrorOf): a pair it does not document is a type error
 * here. A reply of no known operation (a guard's, the error handler's) sends only what any operation may answer.
 */
export function sendBusinessError<Ids extends OperationId = OperationId, Status extends BusinessStatusOf<Ids> = BusinessStatusOf<Ids>>(
  reply: OperationReply<Ids>,
  status: Status,
  code: BusinessCodeOf<Ids, Status>,
  message: string,
): FastifyReply {
  // Fastify types a reply by its status when the status is a type parameter; the pair is checked above.
  const statusCode: number = status;
  return reply.code(statusCode).send({ code, message });
}

/** The {error} body of token and basic-info failures (§2.14, §7 rule 4). */
export function sendOAuthError(
  reply: FastifyReply,
  status: number,
  error: string,
  challenge: { scheme?: 'Bearer' | 'Basic'; description?: string } = {},
): FastifyReply {
  if (status === 401) {
    const { scheme = 'Bearer', description } = challenge;
    reply.header(
      'www-authenticate',
      scheme === 'Basic'
        ? 'Basic realm="MoMo API user"'
        : `Bearer error="${error}"${description ? `, error_description="${description}"` : ''}`,
    );
  }
  return reply.code(status).send({ error });
}

/** A request rejected for its form: {statusCode, error, message}, saying what to fix. */
export function sendBadRequest(reply: FastifyReply, message: string, status = 400): FastifyReply {
  return reply.code(status).send({ statusCode: status, error: STATUS_CODES[status] ?? 'Bad Request', message });
}

const GATEWAY_MESSAGES = {
  missing: 'Access denied due to missing subscription key. Make sure to include subscription key when making requests to an API.',
  invalid: 'Access denied due to invalid subscription key. Make sure to provide a valid key for an active subscription.',
};

/** The API gateway's own 401, as the live service sends it (real-api-notes). */
export function sendGatewayError(reply: FastifyReply, why: keyof typeof GATEWAY_MESSAGES): FastifyReply {
  return reply.code(401).send({ statusCode: 401, message: GATEWAY_MESSAGES[why] });
}

const HEADER_NAMES: Record<string, string> = {
  'x-reference-id': 'X-Reference-Id',
  'x-target-environment': 'X-Target-Environment',
  'x-callback-url': 'X-Callback-Url',
  'ocp-apim-subscription-key': 'Ocp-Apim-Subscription-Key',
  language: 'Language',
};

/** Turns ajv's errors on one part of a request into a sentence a person can act on. */
export function validationMessage(error: FastifyError): string {
  const part = error.validationContext ?? 'request';
  const lines = describeErrors(error.validation as never).map((line) => {
    if (part === 'headers') {
      const missing = /^\/ must have required property '([^']+)'$/.exec(line);
      if (missing) return `header ${HEADER_NAMES[missing[1]!] ?? missing[1]} is required`;
      const [pointer, ...rest] = line.split(' ');
      const name = pointer!.slice(1);
      return `header ${HEADER_NAMES[name] ?? name} ${rest.join(' ')}`;
    }
    if (part === 'params') return `path parameter ${line.slice(1)}`;
    return `${part}${line.startsWith('/ ') ? line.slice(1) : line}`;
  });
  return `Invalid request: ${lines.join('; ')}.`;
}

/** Fastify's own 4xx errors (parsing, size, media type), reworded to say what to fix. */
export function frameworkErrorMessage(error: FastifyError, request: FastifyRequest): string {
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return `Content-Type "${request.headers['content-type'] ?? ''}" is not accepted by this operation; send ${expectedMediaType(request)}.`;
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return 'The body is larger than the 64 KiB this sandbox accepts.';
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return 'Content-Length does not match the length of the body.';
    default:
      return error.message;
  }
}

function expectedMediaType(request: FastifyRequest): string {
  const config = request.routeOptions.config as { mediaType?: string } | undefined;
  return config?.mediaType ?? 'application/json';
}
