import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { OperationId } from '../../core/catalogue/operations.ts';
import type { Product } from '../../core/products.ts';
import type { SandboxContext } from '../../sandbox/domain/context.ts';
import type { TokenClaims } from '../../sandbox/domain/tokens.ts';
import type { CallbackSink } from '../../sandbox/domain/callbacks.ts';
import type { TransactionKind } from '../../sandbox/domain/state.ts';
import type { SandboxPlugin } from '../../sandbox/domain/plugins.ts';
import { TRANSACTIONS } from '../../core/catalogue/routes.ts';

/**
 * The edges where a fault (faults.ts) or a conforming variation (../variations) takes hold of the sandbox: requests
 * on their way in, answers on their way out, and the components a plugin wraps. Nothing here is reached by a
 * sandbox started without them.
 */

export const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Whether an answer is of one of the operations, with the status. */
export const is = (answer: OutgoingAnswer, operations: OperationId | readonly OperationId[], status: number) =>
  answer.status === status && (typeof operations === 'string' ? answer.operation === operations : operations.includes(answer.operation));

/** Every kind of transaction the sandbox keeps, whose callbacks carry its status record. */
const TRANSACTION_KINDS: ReadonlySet<string> = new Set<TransactionKind>(TRANSACTIONS.map((t) => t.store));

/** A callback sink that sends a transaction's callback (not the consent ping) the given way, and the rest as before. */
export const transactionCallbacks =
  (send: (sink: CallbackSink, ...callback: Parameters<CallbackSink['send']>) => void) =>
  (sink: CallbackSink): CallbackSink => ({
    send: (url, method, body, context) =>
      TRANSACTION_KINDS.has(context.kind ?? '') ? send(sink, url, method, body, context) : sink.send(url, method, body, context),
    sendLater: (delayMs, url, method, body, context) => sink.sendLater(delayMs, url, method, body, context),
    settled: () => sink.settled(),
    close: () => sink.close(),
    observe: (observer) => sink.observe?.(observer),
  });

/** The catalogue operation of a request, and the product it was called under, if it is an operation of the API. */
export function routeOf(request: FastifyRequest): { operation: OperationId; product: Product | undefined; credential: string } | undefined {
  const route = request.routeOptions.config.route;
  return route ? { operation: route.operation.id, product: route.product, credential: route.operation.credential } : undefined;
}

/** An answer about to be sent, which a fault may change. */
export interface OutgoingAnswer {
  /** The catalogue operation id, e.g. "requestToPay". */
  readonly operation: OperationId;
  readonly product: Product | undefined;
  readonly request: FastifyRequest;
  readonly reply: FastifyReply;
  status: number;
  /** The parsed JSON body, or undefined when there is none. */
  body: unknown;
  contentType: string | undefined;
}

export type AnswerRewrite = (answer: OutgoingAnswer, context: SandboxContext) => void;

/** Rewrites the answers of the API's operations on their way out (a Fastify onSend hook). */
export function rewriteAnswers(app: FastifyInstance, context: SandboxContext, rewrite: AnswerRewrite): void {
  app.addHook('onSend', (request, reply, payload, done) => {
    const route = routeOf(request);
    if (!route || (payload !== null && payload !== undefined && typeof payload !== 'string')) return done(null, payload);
    const contentType = reply.getHeader('content-type') as string | undefined;
    const text = typeof payload === 'string' ? payload : '';
    let body: unknown;
    try {
      body = text === '' ? undefined : contentType?.startsWith('application/json') ? JSON.parse(text) : text;
    } catch {
      return done(null, payload);
    }
    const answer: OutgoingAnswer = {
      operation: route.operation,
      product: route.product,
      request,
      reply,
      status: reply.statusCode,
      body,
      contentType,
    };
    rewrite(answer, context);
    reply.code(answer.status);
    if (answer.contentType !== contentType && answer.contentType) reply.header('content-type', answer.contentType);
    if (answer.body === undefined) reply.removeHeader('content-type');
    else if (answer.contentType === undefined) reply.header('content-type', 'application/json; charset=utf-8');
    done(null, answer.body === undefined ? '' : typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body));
  });
}

export type RequestStage = 'onRequest' | 'preValidation' | 'preHandler';

/**
 * Changes requests of some operations on their way in: at onRequest (before the sandbox's guards, as the
 * client sent them), preValidation (parsed, not yet validated) or preHandler (validated, the caller known).
 */
export function onRequests(
  app: FastifyInstance,
  context: SandboxContext,
  stage: RequestStage,
  operations: readonly OperationId[] | ((route: NonNullable<ReturnType<typeof routeOf>>) => boolean),
  change: (request: FastifyRequest, context: SandboxContext, route: NonNullable<ReturnType<typeof routeOf>>) => void,
): void {
  const applies =
    typeof operations === 'function'
      ? operations
      : (route: NonNullable<ReturnType<typeof routeOf>>) => operations.includes(route.operation);
  app.addHook(stage as 'onRequest', (request, _reply, done) => {
    const route = routeOf(request);
    if (route && applies(route)) change(request, context, route);
    done();
  });
}

/**
 * Answers requests of some operations in their stead, when `decide` gives an answer (a status and a JSON body), at
 * preHandler (validated, the caller known); the others go on to their handler.
 */
export function answerInstead(
  app: FastifyInstance,
  context: SandboxContext,
  operations: readonly OperationId[],
  decide: (request: FastifyRequest, context: SandboxContext) => { status: number; body: unknown } | undefined,
): void {
  app.addHook('preHandler', (request, reply, done) => {
    const route = routeOf(request);
    const answer = route && operations.includes(route.operation) ? decide(request, context) : undefined;
    if (!answer) return done();
    reply.code(answer.status).header('content-type', 'application/json; charset=utf-8').send(JSON.stringify(answer.body));
  });
}

/** The token of an Authorization: Bearer header, if there is one. */
export function bearerOf(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  return typeof header === 'string' && /^Bearer [^\s]+$/i.test(header) ? header.slice(7) : undefined;
}

/** The claims of a JWT read without checking its signature, as a careless server reads them. */
export function unverifiedClaims(token: string): TokenClaims | undefined {
  const payload = token.split('.')[1];
  if (!payload) return undefined;
  try {
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Partial<TokenClaims>;
    return typeof claims.sub === 'string' &&
      typeof claims.prd === 'string' &&
      typeof claims.use === 'string' &&
      typeof claims.exp === 'number'
      ? (claims as TokenClaims)
      : undefined;
  } catch {
    return undefined;
  }
}

/** A token the sandbox signs with `claims`, living as long as the original has left (at least a second). */
export function reissue(context: SandboxContext, claims: TokenClaims, change: Partial<Pick<TokenClaims, 'prd' | 'use'>>): string {
  const { sub, msisdn, scope } = claims;
  return context.tokens.issue(
    { sub, prd: change.prd ?? claims.prd, use: change.use ?? claims.use, ...(msisdn ? { msisdn } : {}), ...(scope ? { scope } : {}) },
    Math.max(1, Math.ceil(context.tokens.secondsLeft(claims))),
  );
}

/**
 * A catalogue of named plugins (the faults, the variations): its names, a guard, and the plugins a list of names asks
 * for, each once; an unknown name throws, saying which flag lists the known ones.
 */
export function pluginCatalogue<Name extends string>(
  entries: Readonly<Record<Name, { plugin: Omit<SandboxPlugin, 'name'> }>>,
  noun: string,
  listFlag: string,
) {
  const names = Object.keys(entries) as Name[];
  const isName = (name: string): name is Name => Object.hasOwn(entries, name);
  const plugins = (list: readonly string[]): SandboxPlugin[] => {
    const unknown = list.find((name) => !isName(name));
    if (unknown !== undefined) throw new Error(`"${unknown}" is not ${noun}; --${listFlag} shows the ${names.length} there are`);
    return [...new Set(list as Name[])].map((name) => ({ name, ...entries[name].plugin }));
  };
  return { names, isName, plugins };
}
