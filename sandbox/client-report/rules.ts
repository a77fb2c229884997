import { OPERATIONS, type Operation, type OperationId } from '../../core/catalogue/operations.ts';
import { routes } from '../../core/catalogue/routes.ts';
import { validatorFor } from '../../core/validation/schemas.ts';
import { idKey } from '../domain/state.ts';
import type { ClientMemory } from './memory.ts';
import { keepLast } from './memory.ts';
import type { ObservedCallback, ObservedChaos, ObservedExchange } from './observed.ts';
import { CREDENTIAL_PARAMETER, decoded, redactorOf } from './redaction.ts';

/**
 * Every rule the client report holds a client to, by name, as the harness's checks are (harness/judging/
 * checks.ts): each is a named function with its id, its source (a clause of requirements/momo-api-spec.md, or a
 * documented integration practice and why it matters), its severity, what it puts at stake and the fix in one
 * sentence. A rule sees each event of one client (an exchange, a callback attempt, a chaos condition applied)
 * with what it remembers of that client, and says what it found, if anything.
 */

/** Where a rule comes from: the spec, or an integration practice with its reason. */
export type RuleSource = { kind: 'spec'; clause: string } | { kind: 'practice'; practice: string; reason: string };

/** violation: the client departs from the spec; practice: from a documented integration practice. */
export type Severity = 'violation' | 'practice';

/** What a finding of the rule puts at risk, when it is more than the client's own time: those lead the report. */
export type Stake = 'money' | 'security';

export type ClientEvent =
  | { kind: 'exchange'; exchange: ObservedExchange /** whether a rule before this one explained the refusal */; explained: boolean }
  | { kind: 'callback'; callback: ObservedCallback }
  | { kind: 'chaos'; chaos: ObservedChaos };

/** What a rule found in an event: which of its findings (a rule may have several, e.g. one per refusal), and what the client did. */
export interface Detection {
  /** Findings of one rule with different variants are counted apart; absent: the rule's one finding. */
  variant?: string;
  /** What the client did, in a sentence; it may quote what the client sent (the report masks and escapes it). */
  detail: string;
}

export interface Rule {
  id: string;
  title: string;
  source: RuleSource;
  severity: Severity;
  stake?: Stake;
  fix: string;
  /** A finding of this rule says why the sandbox refused the request, so request-refused does not report it again. */
  explainsRefusal?: true;
  check: (event: ClientEvent, memory: ClientMemory) => Detection | undefined;
}

/** Access tokens a client may ask for while it holds a valid one (a restart, a second process) before it is a finding. */
export const TOKEN_RENEWALS_ALLOWED = 2;
/** A token that expires within this long may be renewed: that is keeping it until it expires. */
export const TOKEN_RENEWAL_MARGIN_MS = 60_000;
/** Status reads of one transaction within a second beyond which the client polls too fast. */
export const STATUS_READS_PER_SECOND = 2;
/** Status reads of a transaction after one read a final state (SUCCESSFUL or FAILED) that are not yet a finding. */
export const READS_AFTER_FINAL_ALLOWED = 1;
/** A CIBA poll may come this share of bc-authorize's interval after the last one (clocks and networks jitter). */
export const CIBA_INTERVAL_TOLERANCE = 0.9;
/** How long after an unsettled creation a new one for the same payment under a new X-Reference-Id is a double-payment risk. */
export const DOUBLE_PAYMENT_WINDOW_MS = 10 * 60_000;
/** A callback answered after this share of the sandbox's --callback-timeout-ms is slow. */
export const SLOW_CALLBACK_SHARE = 0.5;

/** An answer's JSON, or undefined when it is none (a plugin may have changed it). */
function parsedJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

const spec = (clause: string): RuleSource => ({ kind: 'spec', clause });
const practice = (what: string, reason: string): RuleSource => ({ kind: 'practice', practice: what, reason });

const operationOf = (exchange: ObservedExchange): Operation | undefined =>
  exchange.operation === undefined ? undefined : OPERATIONS[exchange.operation];
const labelOf = (id: OperationId | undefined) => (id === undefined ? 'request' : OPERATIONS[id].label);
/** A text the client chose, quoted and cut short for a sentence. */
const quoted = (text: string) => JSON.stringify(text.length > 60 ? `${text.slice(0, 60)}…` : text);
const header = (exchange: ObservedExchange, name: string) => exchange.headers[name];
const seconds = (ms: number) => `${Math.round(ms / 100) / 10} s`;

// ---------------------------------------------------------------------------------------------------------------
// The request itself
// ---------------------------------------------------------------------------------------------------------------

/** A path segment the catalogue writes in lower case, sent in another case (MSISDN for msisdn): every route, both in a parameter's values and in the path's own words. */
export function pathValuesInTheirCase(event: ClientEvent): Detection | undefined {
  if (event.kind !== 'exchange') return undefined;
  const { exchange } = event;
  const operation = operationOf(exchange);
  if (operation) {
    for (const [name, schema] of Object.entries(operation.params ?? {})) {
      const allowed = (schema as { enum?: readonly unknown[] }).enum;
      const value = exchange.params[name];
      if (!allowed || value === undefined || allowed.includes(value) || !allowed.includes(value.toLowerCase())) continue;
      return { variant: name, detail: `sent the path parameter ${name} as ${quoted(value)}; the API takes ${quoted(value.toLowerCase())}` };
    }
    return undefined;
  }
  if (exchange.status !== 404 && exchange.status !== 405) return undefined;
  const path = exchange.url.split('?')[0]!;
  const route = routeIgnoringCase(exchange.method, path);
  return route ? { variant: route, detail: `sent ${quoted(path)}, which the API serves only in lower case: ${route}` } : undefined;
}

const ROUTE_PATTERNS = routes().map((route) => ({ method: route.method, path: route.path, segments: route.path.split('/') }));

/** The catalogue's path that this one is but for the case of its own words, if any. */
function routeIgnoringCase(method: string, path: string): string | undefined {
  const segments = path.split('/');
  const match = ROUTE_PATTERNS.find(
    (route) =>
      route.method === method &&
      route.segments.length === segments.length &&
      route.segments.every((word, i) =>
        word.startsWith('{') ? segments[i] !== '' : word.toLowerCase() === decoded(segments[i]!).toLowerCase(),
      ),
  );
  return match?.path;
}

const isUuidV4 = validatorFor('uuid-v4');
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-([0-9a-f])[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Each creation (and each API user) is named by a UUID version 4 the client makes. */
export function referenceIdIsUuidV4(event: ClientEvent): Detection | undefined {
  if (event.kind !== 'exchange') return undefined;
  const operation = operationOf(event.exchange);
  if (!operation?.headers.required.includes('x-reference-id')) return undefined;
  const value = header(event.exchange, 'x-reference-id');
  const what = `(${operation.label})`;
  if (value === undefined || value === '') return { variant: 'missing', detail: `sent no X-Reference-Id ${what}` };
  if (Array.isArray(value)) return { variant: 'repeated', detail: `sent X-Reference-Id ${value.length} times in one request ${what}` };
  if (isUuidV4(value)) return undefined;
  const version = UUID.exec(value)?.[1];
  return version
    ? { variant: 'other version', detail: `sent X-Reference-Id ${quoted(value)}, a UUID of version ${version} ${what}` }
    : { variant: 'not a UUID', detail: `sent X-Reference-Id ${quoted(value)}, which is not a UUID ${what}` };
}

/** An X-Reference-Id names one creation: sent again, it is for the same one (a retry), never for another. */
export function referenceIdNamesOneCreation(event: ClientEvent): Detection | undefined {
  if (event.kind !== 'exchange') return undefined;
  const { exchange } = event;
  if (exchange.status !== 409 || !exchange.fingerprint || !exchange.stored || exchange.stored.fingerprint === exchange.fingerprint)
    return undefined;
  return {
    detail: `sent the X-Reference-Id of an earlier, different creation again (${labelOf(exchange.operation)}); the sandbox answered 409, and the second was never made`,
  };
}

/** Credentials travel in headers, never in a URL. */
export function secretsStayOutOfUrls(event: ClientEvent): Detection | undefined {
  if (event.kind !== 'exchange') return undefined;
  const { exchange } = event;
  const query = exchange.url.indexOf('?');
  if (query >= 0) {
    for (const pair of exchange.url.slice(query + 1).split('&')) {
      const name = decoded(pair.split('=')[0]!);
      if (name.toLowerCase() === 'subscription-key')
        return { variant: 'subscription-key', detail: 'sent the subscription key in the query parameter subscription-key' };
      if (CREDENTIAL_PARAMETER.test(name))
        return { variant: 'credential parameter', detail: `sent a query parameter named ${quoted(name)}` };
    }
  }
  const seen = redactorOf(exchange.secrets).seen(exchange.url);
  if (seen.length > 0)
    return {
      variant: seen[0]!.kind,
      detail: `sent ${seen[0]!.kind === 'secret' ? 'a secret' : `its ${seen[0]!.kind}`} in the URL (${seen[0]!.encoding})`,
    };
  return /eyJ[\w-]{5,}\.[\w-]{5,}\./.test(exchange.url) ? { variant: 'token', detail: 'sent a token (a JWT) in the URL' } : undefined;
}

/** What the sandbox refused, in its own words: each reason its gateway, credential checks and validators give. */
export function requestsTheSandboxTakes(event: ClientEvent): Detection | undefined {
  if (event.kind !== 'exchange' || event.explained) return undefined;
  const { exchange } = event;
  const reason = refusalOf(exchange);
  if (reason === undefined) return undefined;
  const operation = operationOf(exchange);
  const where = operation ? `${exchange.method} (${operation.label})` : `${exchange.method} ${quoted(exchange.url.split('?')[0]!)}`;
  return {
    // Refusals of one kind count together whatever the client put in them: quoted values and numbers aside.
    variant: `${exchange.operation ?? 'no operation'} ${exchange.status} ${reason
      .replace(/"[^"]*"/g, '"…"')
      .replace(/\d+/g, '#')
      .slice(0, 160)}`,
    detail: `${where} answered ${exchange.status}: ${reason}`,
  };
}

/**
 * The sandbox's reason for refusing a request, or undefined when the answer is no refusal: a 4xx of the form
 * {statusCode, error, message} (the validators, the parsers, the router) or {statusCode, message} (the
 * gateway), and a refused credential (401, or the live sandbox's 500 login_failed), with its challenge.
 */
export function refusalOf(exchange: ObservedExchange): string | undefined {
  const { status, responseBody } = exchange;
  if (status === undefined || status < 400 || status > 500 || !responseBody) return undefined;
  const body = parsedJson(responseBody) as { statusCode?: unknown; message?: unknown; error?: unknown } | undefined;
  if (typeof body !== 'object' || body === null) return undefined;
  if (status < 500 && body.statusCode !== undefined && typeof body.message === 'string') return body.message;
  if (typeof body.error === 'string' && (status === 401 || body.error === 'login_failed')) {
    const description = /error_description="([^"]*)"/.exec(exchange.challenge ?? '')?.[1];
    const credential = /^Basic/i.test(exchange.challenge ?? '') || body.error === 'login_failed' ? 'Basic credential' : 'Bearer token';
    return `the ${credential} was refused (${body.error})${description ? `: ${description}` : ''}`;
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------------------------
// What the client does over time
// ---------------------------------------------------------------------------------------------------------------

/** An access token is kept, and used, until it is about to expire. */
export function tokensKeptUntilTheyExpire(event: ClientEvent, memory: ClientMemory): Detection | undefined {
  if (event.kind !== 'exchange') return undefined;
  const { exchange } = event;
  if (exchange.operation !== 'createAccessToken' || exchange.tokenExpiresAt === undefined) return undefined;
  const valid = memory.tokenExpiries.filter((expiry) => expiry - exchange.at > TOKEN_RENEWAL_MARGIN_MS);
  memory.tokenIssued(exchange.tokenExpiresAt);
  if (valid.length === 0) return undefined;
  memory.tokensWhileValid += 1;
  if (memory.tokensWhileValid <= TOKEN_RENEWALS_ALLOWED) return undefined;
  return {
    detail: `asked for a new access token while ${valid.length === 1 ? 'one it was given was' : `${valid.length} it was given were`} valid for another ${seconds(Math.max(...valid) - exchange.at)} (${memory.tokensWhileValid} times so far)`,
  };
}

/**
 * After a creation whose outcome it was not told (the connection cut, a 5xx, a 409 for the same payment), a client
 * makes it again under the SAME X-Reference-Id, or reads its status: the sandbox then answers 409 or the record,
 * and no payment is made twice. Under a new X-Reference-Id it is a second payment.
 */
export function retriesKeepTheReferenceId(event: ClientEvent, memory: ClientMemory): Detection | undefined {
  if (event.kind === 'chaos') {
    const { chaos } = event;
    // A condition on a request still being answered waits for its exchange, which says what the client got.
    if (!chaos.inFlight && chaos.store && chaos.stored && chaos.applied.referenceId) {
      memory.unsettle({
        store: chaos.store,
        referenceId: idKey(chaos.applied.referenceId),
        fingerprint: chaos.stored.fingerprint,
        at: chaos.applied.at,
        why: `chaos ${quoted(chaos.applied.condition)} (${chaos.applied.detail})`,
      });
    }
    return undefined;
  }
  if (event.kind !== 'exchange') return undefined;
  const { exchange } = event;
  const operation = operationOf(exchange);
  const referenceId = exchange.referenceId === undefined ? undefined : idKey(exchange.referenceId);
  if (operation?.reads && referenceId && (exchange.status === 200 || exchange.status === 404)) memory.settle(operation.reads, referenceId);
  const store = operation?.store;
  if (!store || !referenceId || !exchange.fingerprint) return undefined;
  const earlier = memory.unsettled.find(
    (u) =>
      u.store === store &&
      u.fingerprint === exchange.fingerprint &&
      u.referenceId !== referenceId &&
      exchange.at - u.at <= DOUBLE_PAYMENT_WINDOW_MS,
  );
  const unsettled = unsettledBy(exchange);
  if (unsettled) memory.unsettle({ store, referenceId, fingerprint: exchange.fingerprint, at: exchange.at, why: unsettled });
  else if (exchange.status !== undefined && exchange.status < 300) memory.settle(store, referenceId);
  if (!earlier) return undefined;
  return {
    detail: `made it again under a new X-Reference-Id (${operation.label}) ${seconds(exchange.at - earlier.at)} after ${earlier.why} for X-Reference-Id ${earlier.referenceId}: the same amount, currency, party and externalId`,
  };
}

/** Why a creation's outcome is unknown to the client, or undefined when it was told. */
function unsettledBy(exchange: ObservedExchange): string | undefined {
  const chaos = exchange.chaos?.length ? ` (chaos ${exchange.chaos.map((c) => quoted(c.condition)).join(', ')})` : '';
  if (exchange.status === undefined) return `the connection closed before the answer${chaos}`;
  if (exchange.status >= 500) return `a ${exchange.status} answer${chaos}`;
  if (exchange.status === 409 && exchange.stored?.fingerprint === exchange.fingerprint) return `a 409: it had been made already${chaos}`;
  return undefined;
}

/** A client reads a transaction's status at a measured pace (and waits for the callback where it gave one). */
export function statusReadsAtAMeasuredPace(event: ClientEvent, memory: ClientMemory): Detection | undefined {
  const read = statusRead(event);
  if (!read) return undefined;
  const history = memory.reads.of(read.key, () => ({ times: [], afterFinal: 0 }));
  keepLast(history.times, read.exchange.at, STATUS_READS_PER_SECOND + 1);
  if (history.times.length <= STATUS_READS_PER_SECOND || read.exchange.at - history.times[0]! >= 1000) return undefined;
  return {
    detail: `read the status of one ${read.label} ${history.times.length} times within ${read.exchange.at - history.times[0]!} ms`,
  };
}

/** A final state (SUCCESSFUL or FAILED) does not change: reading it again and again costs calls and tells nothing. */
export function noPollingAfterAFinalState(event: ClientEvent, memory: ClientMemory): Detection | undefined {
  const read = statusRead(event);
  if (!read) return undefined;
  const history = memory.reads.of(read.key, () => ({ times: [], afterFinal: 0 }));
  const { finalSeen } = history;
  const status = read.exchange.status === 200 ? read.exchange.stored?.status : undefined;
  if (finalSeen === undefined) {
    if (status === 'SUCCESSFUL' || status === 'FAILED') history.finalSeen = status;
    return undefined;
  }
  history.afterFinal += 1;
  if (history.afterFinal <= READS_AFTER_FINAL_ALLOWED) return undefined;
  return { detail: `read the status of a ${read.label} ${history.afterFinal} more times after it had read ${finalSeen}` };
}

function statusRead(event: ClientEvent): { exchange: ObservedExchange; key: string; label: string } | undefined {
  if (event.kind !== 'exchange') return undefined;
  const { exchange } = event;
  const store = operationOf(exchange)?.reads;
  if (!store || exchange.referenceId === undefined || exchange.status === undefined) return undefined;
  return { exchange, key: `${store} ${idKey(exchange.referenceId)}`, label: store === 'requesttopay' ? 'request to pay' : store };
}

const CIBA_GRANT = 'urn:openid:params:grant-type:ciba';

/** In the consent flow the client polls the token endpoint no faster than bc-authorize's interval. */
export function cibaPollsWaitTheInterval(event: ClientEvent, memory: ClientMemory): Detection | undefined {
  if (event.kind !== 'exchange') return undefined;
  const { exchange } = event;
  if (exchange.operation === 'bcAuthorize' && exchange.status === 200 && exchange.responseBody) {
    const answer = parsedJson(exchange.responseBody) as { auth_req_id?: unknown; interval?: unknown } | undefined;
    if (typeof answer?.auth_req_id === 'string' && typeof answer.interval === 'number')
      memory.consents.set(idKey(answer.auth_req_id), { intervalMs: answer.interval * 1000 });
    return undefined;
  }
  if (exchange.operation !== 'createOAuthToken') return undefined;
  const form = exchange.body as { grant_type?: unknown; auth_req_id?: unknown } | undefined;
  if (form?.grant_type !== CIBA_GRANT || typeof form.auth_req_id !== 'string') return undefined;
  const polls = memory.consents.get(idKey(form.auth_req_id));
  if (!polls) return undefined;
  const { lastPollAt } = polls;
  polls.lastPollAt = exchange.at;
  if (lastPollAt === undefined || exchange.at - lastPollAt >= polls.intervalMs * CIBA_INTERVAL_TOLERANCE) return undefined;
  return {
    detail: `polled the token endpoint ${exchange.at - lastPollAt} ms after its last poll for the same auth_req_id; bc-authorize gave an interval of ${seconds(polls.intervalMs)}`,
  };
}

// ---------------------------------------------------------------------------------------------------------------
// The client's callback listener
// ---------------------------------------------------------------------------------------------------------------

/** The callback listener answers 2xx once it has taken the callback. */
export function callbackListenerAnswers2xx(event: ClientEvent): Detection | undefined {
  if (event.kind !== 'callback') return undefined;
  const { attempt } = event.callback;
  const retry = attempt.willRetry ? '; the sandbox will try again' : '; the sandbox gave up';
  if (attempt.status !== undefined) {
    return attempt.status >= 200 && attempt.status < 300
      ? undefined
      : {
          variant: String(attempt.status),
          detail: `the callback listener answered ${attempt.status} to attempt ${attempt.attempt}${retry}`,
        };
  }
  return attempt.timedOut
    ? undefined
    : { variant: 'unreachable', detail: `the callback listener could not be reached: ${attempt.problem ?? ''}${retry}` };
}

/** The callback listener answers at once (and does its work after answering). */
export function callbackListenerAnswersInTime(event: ClientEvent): Detection | undefined {
  if (event.kind !== 'callback') return undefined;
  const { attempt, timeoutMs } = event.callback;
  if (attempt.timedOut) return { variant: 'timeout', detail: `the callback listener did not answer within the sandbox's ${timeoutMs} ms` };
  if (attempt.status === undefined || attempt.elapsedMs <= timeoutMs * SLOW_CALLBACK_SHARE) return undefined;
  return {
    variant: 'slow',
    detail: `the callback listener answered after ${Math.round(attempt.elapsedMs)} ms, more than ${SLOW_CALLBACK_SHARE * 100}% of the sandbox's ${timeoutMs} ms`,
  };
}

// ---------------------------------------------------------------------------------------------------------------
// The list
// ---------------------------------------------------------------------------------------------------------------

/** Every rule, in the order they see an event: those that explain a refusal before request-refused, which reports the rest. */
export const RULES: readonly Rule[] = [
  {
    id: 'double-payment-risk',
    title: `A creation whose outcome the client did not learn is retried under the same X-Reference-Id, or its status is read (the same payment under a new id within ${DOUBLE_PAYMENT_WINDOW_MS / 60_000} minutes is the finding)`,
    source: spec(
      '§2.5 and §7 rule 1: the X-Reference-Id names the transaction, and one sent again is answered 409 RESOURCE_ALREADY_EXIST; a new one makes a new transaction',
    ),
    severity: 'practice',
    stake: 'money',
    fix: 'After a cut connection, a 5xx or a 409 on a creation, send it again with the same X-Reference-Id or read its status; never make it again under a new id.',
    check: retriesKeepTheReferenceId,
  },
  {
    id: 'secret-in-url',
    title: 'Credentials travel in headers, never in a URL',
    source: practice(
      '§5 rule 1 puts the subscription key in Ocp-Apim-Subscription-Key, and §5 rules 2–3 the credentials in Authorization',
      'URLs are written to proxy, gateway and server logs and browser histories; RFC 6750 §5.3 says not to pass bearer tokens in URLs (the sandbox takes the subscription-key parameter, as the provider does)',
    ),
    severity: 'practice',
    stake: 'security',
    fix: 'Send the subscription key in Ocp-Apim-Subscription-Key and every credential in Authorization, and nothing secret in a path or query.',
    check: secretsStayOutOfUrls,
  },
  {
    id: 'account-holder-kind-case',
    title: 'Path values in the case the API gives them (an account holder kind in lower case)',
    source: spec('§4.2 #8 (and §4.3 #12): accountHolderIdType is one of msisdn, email, party_code, and must be lowercase'),
    severity: 'violation',
    fix: 'Send the kind of account holder, and every word of a path, in lower case: /accountholder/msisdn/{id}/active.',
    explainsRefusal: true,
    check: pathValuesInTheirCase,
  },
  {
    id: 'reference-id-v4',
    title: 'Each creation and each API user is named by a UUID version 4 in X-Reference-Id',
    source: spec('§2.5, §4.1 and §4.5 #14: X-Reference-Id is a UUID v4 the caller generates'),
    severity: 'violation',
    fix: 'Send a new UUID version 4 (crypto.randomUUID()) in X-Reference-Id with each creation.',
    explainsRefusal: true,
    check: referenceIdIsUuidV4,
  },
  {
    id: 'reference-id-reused',
    title: 'An X-Reference-Id is sent again only for the same creation',
    source: spec('§2.5 and §7 rule 1: a request that reuses an existing reference id is rejected with 409 RESOURCE_ALREADY_EXIST'),
    severity: 'violation',
    fix: 'Make a new UUID for each new creation, and reuse one only to retry the same creation.',
    check: referenceIdNamesOneCreation,
  },
  {
    id: 'request-refused',
    title: 'Requests the sandbox takes: what its gateway, credential checks and validators refused, in their words',
    source: spec(
      "§7 (400: invalid data; 401: unauthorized), §5 rules 1–3 (the subscription key and the credentials) and each operation's clause in §4",
    ),
    severity: 'violation',
    fix: "Send the request as the sandbox's answer says: it names the header, parameter or field and what it must be.",
    check: requestsTheSandboxTakes,
  },
  {
    id: 'token-reuse',
    title: `An access token is kept and used until it is about to expire (more than ${TOKEN_RENEWALS_ALLOWED} new ones while one is valid for another ${TOKEN_RENEWAL_MARGIN_MS / 1000} s is the finding)`,
    source: practice(
      '§2.6 and §8: a token is valid for expires_in seconds (3600 by default)',
      'a token per call doubles the calls, each token request carries the Basic credential again, and the token endpoint is rate-limited like the rest (§7: 429)',
    ),
    severity: 'practice',
    fix: 'Cache the access token per API user and product, and ask for a new one only when expires_in is nearly over or a call answers 401.',
    check: tokensKeptUntilTheyExpire,
  },
  {
    id: 'polling-rate',
    title: `Status reads come at a measured pace (at most ${STATUS_READS_PER_SECOND} a second on one transaction)`,
    source: practice(
      '§1: creations are asynchronous, read later with a GET; §6: a callback tells the outcome',
      'a transaction stays PENDING until the payer answers, which takes seconds to minutes; reading faster makes nothing sooner and spends the rate limit (§7: 429)',
    ),
    severity: 'practice',
    fix: `Read a pending status at most ${STATUS_READS_PER_SECOND} times a second, better every few seconds with backoff, and prefer the callback.`,
    check: statusReadsAtAMeasuredPace,
  },
  {
    id: 'polling-after-final',
    title: `No status reads after a final state (beyond ${READS_AFTER_FINAL_ALLOWED})`,
    source: practice(
      '§3: PENDING until the payer authorizes or declines, or it times out; SUCCESSFUL and FAILED end it',
      'a final state never changes, so each further read is a wasted call against the rate limit',
    ),
    severity: 'practice',
    fix: 'Stop reading a transaction once a read (or its callback) gives SUCCESSFUL or FAILED.',
    check: noPollingAfterAFinalState,
  },
  {
    id: 'ciba-interval',
    title: `The consent flow's token endpoint is polled no faster than bc-authorize's interval (${Math.round((1 - CIBA_INTERVAL_TOLERANCE) * 100)}% less is allowed for jitter)`,
    source: spec('§5 rule 4 and §2.8: bc-authorize returns interval, and the client waits interval between retries'),
    severity: 'violation',
    fix: 'Wait at least interval seconds between polls of the token endpoint for one auth_req_id (and longer after slow_down).',
    check: cibaPollsWaitTheInterval,
  },
  {
    id: 'callback-answer',
    title: 'The callback listener answers 2xx',
    source: practice(
      '§6: the service sends a callback to X-Callback-Url; its retries are not shown',
      'an answer other than 2xx, or none, makes the provider retry and at last give up: the client then learns the outcome only by reading the status',
    ),
    severity: 'practice',
    fix: 'Answer each callback 2xx as soon as it is stored, also for one already seen, and keep the listener reachable from the provider.',
    check: callbackListenerAnswers2xx,
  },
  {
    id: 'callback-time',
    title: `The callback listener answers at once (within ${SLOW_CALLBACK_SHARE * 100}% of the sandbox's --callback-timeout-ms)`,
    source: practice(
      '§6: callback timing and retries are not shown',
      "a slow listener runs into the provider's timeout, is counted as failed and is sent the callback again; the work belongs after the answer",
    ),
    severity: 'practice',
    fix: 'Answer the callback first and process it afterwards (a queue, a background task), well inside a second.',
    check: callbackListenerAnswersInTime,
  },
];

export type RuleId = (typeof RULES)[number]['id'];

export function ruleById(id: string): Rule | undefined {
  return RULES.find((rule) => rule.id === id);
}

/** A rule's source in words, as the report and the docs give it. */
export function describeRuleSource(source: RuleSource): string {
  return source.kind === 'spec' ? `spec ${source.clause}` : `practice: ${source.practice}. Why: ${source.reason}`;
}
