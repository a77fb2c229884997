import { SettingRefusedError, type PreflightRefusals } from './setting-refused.ts';
import { Agent, request, type Dispatcher } from 'undici';
import type { Product } from '../../core/products.ts';
import { OPERATIONS, type OperationId } from '../../core/catalogue/operations.ts';
import { bindingOf, isServedUnder, labelOf, operation, urlOf, type PathParams } from '../../core/catalogue/routes.ts';
import type { Redactor, SecretKind } from '../../core/secrets/redact.ts';
import { reportSafe } from '../../core/report-text.ts';
import { explainTransportError } from './transport-errors.ts';
import { bodyForEvidence, type BodyCut } from './evidence-budget.ts';
import {
  CallAttempts,
  DEFAULT_RETRY_POLICY,
  isTransientAnswer,
  mayAskAgain,
  retryAfterMs,
  type AttemptOutcome,
  type RetriedCall,
  type RetryPolicy,
} from './careful.ts';

/**
 * One exchange with the target, as evidence: what was sent and what came back, secrets redacted, every text
 * safe for any report, and each body bounded (evidence.ts).
 */
export interface Exchange {
  operation: string;
  /** When the request was sent (ISO 8601): where a HAR entry starts. */
  startedAt?: string;
  /** Whose secrets the request carried, never their values: what a reproduction names as environment variables. */
  credentials?: ExchangeCredentials;
  request: { method: string; url: string; headers: Record<string, string>; body?: string; bodyCut?: BodyCut };
  response?: { status: number; headers: Record<string, string>; body: string; durationMs: number; bodyCut?: BodyCut };
  /** Set when no response came: the target could not be reached or did not answer in time. */
  transportError?: string;
  /** Set when the run's evidence budget was spent: the call and its outcome, and why nothing more is kept. */
  omitted?: string;
}

/**
 * Whose secrets a request carried, so that a reproduction (harness/reproduction/curl.ts) can name the variables
 * that hold them (harness/config.ts secretVariablesOf) where the evidence shows [REDACTED].
 */
export interface ExchangeCredentials {
  /** The product whose subscription key was sent. */
  subscriptionKey?: Product;
  /** Authorization: Basic, with the API user of this product. */
  basic?: Product;
  /** Authorization: Basic, with a credential of no API user of the run (a wrong key, say). */
  otherBasic?: true;
  /** Authorization: Bearer, with an access token of this product's API user, which the token operation at `tokenUrl` issues. */
  accessToken?: { product: Product; tokenUrl: string };
  /**
   * Authorization: Bearer, with a token that fetching one for the API user would not give: a consent token, or one
   * the run did not fetch (forged, say).
   */
  otherToken?: true;
}

/** Which operation a call is, and for which product: the key to its contract. */
export interface OperationRef {
  id: OperationId;
  product: Product;
  /** "request to pay (collection)": how messages name it. */
  label: string;
  /** Where the spec defines it. */
  section: string;
}

function op(id: OperationId, product: Product): OperationRef {
  return { id, product, label: labelOf(id, product), section: bindingOf(id, product).section };
}

export interface ApiResponse {
  operation: OperationRef;
  status: number;
  headers: Record<string, string>;
  /** The parsed JSON body, or undefined when the body is empty or not JSON. */
  json: unknown;
  /** The body as read: all of it, or its first maxResponseBytes when it exceeded them. */
  text: string;
  /** Set when the careful client made the call more than once (harness/client/careful.ts): every attempt, and how it ended. */
  retried?: RetriedCall;
  /**
   * Set on a creation made again after an attempt whose outcome was unknown, refused then as a duplicate (409): the
   * earlier attempt created it, which is what the caller asked for.
   */
  createdEarlier?: true;
  /** Set when the body exceeded maxResponseBytes (this many): the rest was not read. */
  exceededLimit?: number;
  durationMs: number;
  /** The exchange as the evidence holds it (redacted): what a failure's reproduction is made from. */
  exchange?: Exchange;
}

/** Whether a creation was carried out: accepted (201, 202), or made again and refused as a duplicate of an earlier attempt. */
export function wasCreated(response: ApiResponse): boolean {
  return response.status === 201 || response.status === 202 || response.createdEarlier === true;
}

/** How messages tell an accepted creation: "HTTP 202", or "HTTP 409 to a retry: an earlier attempt created it". */
export function acceptedAs(response: ApiResponse): string {
  return response.createdEarlier ? `HTTP ${response.status} to a retry: an earlier attempt created it` : `HTTP ${response.status}`;
}

/** The target could not be reached or did not answer: the run could not test, which is not a failure to conform. */
export class TargetUnavailableError extends Error {
  readonly fatal = true;
  /** `explanation` says why there was no answer; with `called: false` the request was not sent, and the message names no call. */
  constructor(
    readonly operation: string,
    readonly url: string,
    override readonly cause: Error,
    explanation: string,
    { called = true } = {},
  ) {
    // The explanation may quote what the server sent (a parser's complaint, a TLS alert): safe for every report.
    super(reportSafe(called ? `${operation}: the target did not answer ${url}: ${explanation}` : explanation));
    this.name = 'TargetUnavailableError';
    this.called = called;
    this.explanation = reportSafe(explanation);
  }
  /** Whether the request was sent (false: the client had stopped calling a target that did not answer). */
  readonly called: boolean;
  /** Why there was no answer, without the call. */
  readonly explanation: string;
}

export interface ClientOptions {
  baseUrl: string;
  sandboxUrl: string;
  subscriptionKeys: Record<Product, string | undefined>;
  targetEnvironment: string;
  connectTimeoutMs: number;
  requestTimeoutMs: number;
  /** The most of one body the client reads (MOMO_MAX_RESPONSE_BYTES; DEFAULT_MAX_RESPONSE_BYTES when not given); a longer one is read that far and no further. */
  maxResponseBytes?: number;
  redactor: Redactor;
  /** Receives every exchange (the scenario's evidence). */
  onExchange?: (exchange: Exchange) => void;
  /** Receives every response as it came, before any step sees it (to check every body against its schema). */
  onResponse?: (response: ApiResponse) => void;
  /** Injected by unit tests (undici MockAgent); otherwise one keep-alive Agent. */
  dispatcher?: Dispatcher;
  /** Settings the preflight found refused, by product: the calls they stop are not made (SettingRefusedError). */
  refusals?: PreflightRefusals;
  /** How the careful client makes a call again (harness/client/careful.ts); DEFAULT_RETRY_POLICY when not given. */
  retry?: RetryPolicy;
  /**
   * A fresh credential in place of one the target refused (401), or undefined when it is not one to renew (a token the
   * scenario presents on purpose): the harness's token cache drops the refused token and fetches another.
   */
  renewCredential?: (authorization: string, refused: ApiResponse) => Promise<string | undefined>;
  /**
   * A credential of the product that the harness holds as good now (its own cached token), for the control call that
   * tells a steady 5xx from an outage; undefined when it has none. The call's own token may be the case (an expired or
   * forged one), and the target's answer to it says nothing of whether the target answers others.
   */
  controlCredential?: (product: Product) => Promise<string | undefined>;
  /** Told of every call made more than once, as it ends: the run's availability observations. */
  onRetried?: (call: RetriedCall) => void;
  /** Injected by unit tests: how the client waits between attempts. */
  sleep?: (ms: number) => Promise<void>;
}

/** What a single call may vary, beyond what the client fills in from its configuration. */
export interface CallOptions {
  /** Which subscription key to send: a product's own, another's (`key`), or none. */
  subscriptionKey?: { product: Product } | { key: string } | 'none';
  authorization?: string;
  referenceId?: string;
  callbackUrl?: string;
  targetEnvironment?: string | null;
  language?: string;
  /** A JSON value, or a ready string with its own content type. */
  body?: unknown;
  rawBody?: { text: string; contentType?: string };
  form?: Record<string, string>;
  /** Sends the body without its Content-Type, which every listing makes optional. */
  omitContentType?: boolean;
  /** Names the body's media type in capitals ("APPLICATION/JSON"), which HTTP reads as the same (RFC 9110 §8.3.1). */
  mediaTypeInCapitals?: boolean;
  /** Writes every header name in lower case ("x-callback-url"), as HTTP/2 does and many clients do (RFC 9110 §5.1). */
  headerNamesInLowerCase?: boolean;
  /**
   * The request reuses a reference id on purpose (a scenario about duplicates): a 409 it gets is the case's own answer,
   * never taken for an earlier attempt's creation.
   */
  reusesReference?: boolean;
  /**
   * false: a 401 is the case's own answer (a token presented where it does not belong, on purpose), not a token to
   * renew and send again.
   */
  renew?: boolean;
}

export interface PaymentBody {
  amount: string;
  currency: string;
  externalId?: string;
  payer?: { partyIdType: string; partyId: string };
  payee?: { partyIdType: string; partyId: string };
  payerMessage?: string;
  payeeNote?: string;
  referenceIdToRefund?: string;
}

/** The most of one response body the client reads unless told otherwise: far more than any answer of the API. */
export const DEFAULT_MAX_RESPONSE_BYTES = 1024 * 1024;

/**
 * After this many calls in a row without an answer (each after all its attempts) the target is taken as gone, and
 * the client stops calling it: each remaining scenario then ends at once as not tested, rather than waiting out its
 * own timeouts. A run against a target that dies or turns slow mid-run so takes about this many retry budgets per
 * worker, not one per scenario. Any answer, even an error status, resets the count.
 */
export const GIVE_UP_AFTER_UNANSWERED = 3;

/**
 * The MoMo API on undici: one method per operation, each returning the raw outcome for the steps to judge.
 * URLs, headers and keys live here and nowhere else.
 */
export class MomoClient {
  private readonly dispatcher: Dispatcher;
  /** Calls in a row that got no answer, and why the last one did not. */
  private unanswered = 0;
  private lastUnanswered: { error: Error; explanation: string } | undefined;

  constructor(private readonly options: ClientOptions) {
    this.dispatcher =
      options.dispatcher ??
      new Agent({
        connect: { timeout: options.connectTimeoutMs },
        headersTimeout: options.requestTimeoutMs,
        bodyTimeout: options.requestTimeoutMs,
        keepAliveTimeout: 10_000,
      });
  }

  // Provisioning (§4.5): the product names whose subscription key is sent (any product's opens it).
  createApiUser(product: Product, referenceId: string, providerCallbackHost: string, extra: CallOptions = {}) {
    return this.invoke('createApiUser', product, { referenceId, body: { providerCallbackHost }, ...extra });
  }
  createApiKey(product: Product, userId: string, extra: CallOptions = {}) {
    return this.invoke('createApiKey', product, { params: { referenceId: userId }, ...extra });
  }
  getApiUser(product: Product, userId: string, extra: CallOptions = {}) {
    return this.invoke('getApiUser', product, { params: { referenceId: userId }, ...extra });
  }

  // Tokens (§4.2 #1, §4.3 #11).
  createAccessToken(product: Product, basic: string, extra: CallOptions = {}) {
    return this.invoke('createAccessToken', product, { authorization: basic, ...extra });
  }
  createOAuthToken(product: Product, basic: string, form: Record<string, string>, extra: CallOptions = {}) {
    return this.invoke('createOAuthToken', product, { authorization: basic, form, ...extra });
  }

  // Payments (§4.2 #2–3, §4.3 #9–10, §4.6); the creations beyond the spec (transfer, request to withdraw, v2) go through invoke.
  requestToPay(bearer: string, referenceId: string, body: PaymentBody, extra: CallOptions = {}) {
    return this.invoke('requestToPay', 'collection', { authorization: bearer, referenceId, body, ...extra });
  }
  getRequestToPayStatus(bearer: string, referenceId: string, extra: CallOptions = {}) {
    return this.invoke('getRequestToPayStatus', 'collection', { authorization: bearer, params: { referenceId }, ...extra });
  }
  deliveryNotification(
    bearer: string,
    referenceId: string,
    /** Undefined: the body {} without its message. */
    notificationMessage: string | undefined,
    extra: CallOptions = {},
    product: Product = 'collection',
  ) {
    return this.invoke('deliveryNotification', product, {
      authorization: bearer,
      params: { referenceId },
      body: notificationMessage === undefined ? {} : { notificationMessage },
      ...extra,
    });
  }
  deposit(bearer: string, referenceId: string, body: PaymentBody, extra: CallOptions = {}) {
    return this.invoke('deposit', 'disbursement', { authorization: bearer, referenceId, body, ...extra });
  }
  getDepositStatus(bearer: string, referenceId: string, extra: CallOptions = {}) {
    return this.invoke('getDepositStatus', 'disbursement', { authorization: bearer, params: { referenceId }, ...extra });
  }
  refund(bearer: string, referenceId: string, body: PaymentBody, extra: CallOptions = {}) {
    return this.invoke('refund', 'disbursement', { authorization: bearer, referenceId, body, ...extra });
  }
  getRefundStatus(bearer: string, referenceId: string, extra: CallOptions = {}) {
    return this.invoke('getRefundStatus', 'disbursement', { authorization: bearer, params: { referenceId }, ...extra });
  }

  // Accounts (§4.2 #4–5, #8, §4.3 #12, §4.4 #13).
  getBalance(product: Product, bearer: string, currency?: string, extra: CallOptions = {}) {
    return currency === undefined
      ? this.invoke('getBalance', product, { authorization: bearer, ...extra })
      : this.invoke('getBalanceInCurrency', product, { authorization: bearer, params: { currency }, ...extra });
  }
  accountHolderActive(product: Product, bearer: string, idType: string, id: string, extra: CallOptions = {}) {
    return this.invoke('accountHolderActive', product, {
      authorization: bearer,
      params: { accountHolderIdType: idType, accountHolderId: id },
      ...extra,
    });
  }
  basicUserInfo(bearer: string, msisdn: string, extra: CallOptions = {}, product: Product = 'collection') {
    return this.invoke('basicUserInfo', product, { authorization: bearer, params: { accountHolderMSISDN: msisdn }, ...extra });
  }

  // Consent (§4.2 #6–7).
  bcAuthorize(product: Product, bearer: string, form: Record<string, string>, extra: CallOptions = {}) {
    return this.invoke('bcAuthorize', product, { authorization: bearer, form, ...extra });
  }
  userInfo(product: Product, bearer: string, extra: CallOptions = {}) {
    return this.invoke('userInfo', product, { authorization: bearer, ...extra });
  }

  /**
   * Calls any operation of the catalogue under a product: its URL on the host the catalogue gives, the
   * product's subscription key, and X-Target-Environment where the operation takes one. `extra` may change each.
   */
  invoke(id: OperationId, product: Product, o: CallOptions & { params?: PathParams } = {}): Promise<ApiResponse> {
    const bases = { gateway: this.options.baseUrl, provisioning: this.options.sandboxUrl };
    const { headers } = operation(id);
    const takesEnvironment = headers.required.includes('x-target-environment') || headers.optional.includes('x-target-environment');
    return this.call(op(id, product), operation(id).method, urlOf(id, product, bases, o.params), {
      subscriptionKey: { product },
      ...(takesEnvironment ? {} : { targetEnvironment: null }),
      ...o,
    });
  }

  async close(): Promise<void> {
    if (!this.options.dispatcher) await this.dispatcher.close();
  }

  /**
   * A call that needs a setting the preflight found refused is not made: with the product's own key or API user,
   * with the target environment, or asking for a callback, as the refusal's scope says. A call that sends another
   * key on purpose (a wrong one, or none) still goes.
   */
  private refuseUnusable(operation: OperationRef, o: CallOptions): void {
    const refusals = this.options.refusals;
    if (!refusals) return;
    const keyOf =
      o.subscriptionKey !== undefined && o.subscriptionKey !== 'none' && 'product' in o.subscriptionKey
        ? o.subscriptionKey.product
        : undefined;
    const keyRefusal = keyOf === undefined ? undefined : refusals[keyOf];
    if (keyRefusal?.scope === 'product') throw new SettingRefusedError(keyRefusal);
    const refusal = refusals[operation.product];
    if (!refusal) return;
    const stops = { product: keyOf !== undefined, environment: o.targetEnvironment !== null, callbacks: o.callbackUrl !== undefined }[
      refusal.scope
    ];
    if (stops) throw new SettingRefusedError(refusal);
  }

  /** Whose secrets a call sends: the product of its subscription key, and of the API user behind its Authorization. */
  private credentialsOf(
    operation: OperationRef,
    key: CallOptions['subscriptionKey'],
    authorization: string | undefined,
  ): ExchangeCredentials | undefined {
    const credentials: ExchangeCredentials = {};
    if (key !== undefined && key !== 'none' && 'product' in key) credentials.subscriptionKey = key.product;
    const [scheme, value = ''] = (authorization ?? '').split(' ');
    // Only a credential the run holds (an API user's, a token it fetched) can be had again from the variables.
    const held = (kind: SecretKind) => this.options.redactor.seen(value).some((seen) => seen.kind === kind);
    if (scheme?.toLowerCase() === 'basic') {
      // An API user of another product may call (the consent flow across products): its variables are its product's.
      if (held('Basic credential')) credentials.basic = this.options.redactor.ownerOfBasic(value) ?? operation.product;
      else credentials.otherBasic = true;
    }
    if (scheme?.toLowerCase() === 'bearer') {
      // The catalogue says which credential the operation takes: an API user's access token, or a consent token.
      if (
        OPERATIONS[operation.id].credential === 'bearer' &&
        isServedUnder('createAccessToken', operation.product) &&
        held('access token')
      ) {
        const bases = { gateway: this.options.baseUrl, provisioning: this.options.sandboxUrl };
        credentials.accessToken = { product: operation.product, tokenUrl: urlOf('createAccessToken', operation.product, bases) };
      } else {
        credentials.otherToken = true;
      }
    }
    return Object.keys(credentials).length > 0 ? credentials : undefined;
  }

  /**
   * A call as a careful client makes it (harness/client/careful.ts): a refused token is renewed and the call made once
   * more; a transient answer (a gateway's 502–504, a 500 that answers nothing) is asked again after the wait the
   * target asks for (Retry-After) or a backoff, within the policy's attempts and time; so is a call that got no answer,
   * when it is safe to repeat (a read, a creation under the same reference id). A creation made again and refused as a
   * duplicate was created by an earlier attempt. Every attempt is evidence; a call made more than once is told to
   * onRetried, an observation of the target's availability, never a failure.
   */
  private async call(operation: OperationRef, method: 'GET' | 'POST', url: string, first: CallOptions): Promise<ApiResponse> {
    const attempts = new CallAttempts(operation, this.options.retry ?? DEFAULT_RETRY_POLICY, first.referenceId !== undefined);
    let o = first;
    for (;;) {
      let response: ApiResponse;
      try {
        response = await this.callOnce(operation, method, url, o);
      } catch (error) {
        await this.waitAfterNoAnswer(attempts, error);
        continue;
      }
      const fresh = await this.renewedCredential(attempts, response, o);
      if (fresh !== undefined) {
        o = { ...o, authorization: fresh };
        continue;
      }
      if (await this.waitedAfterTransient(attempts, response)) continue;
      return this.lastAnswer(attempts, response, o);
    }
  }

  /** After no answer: waits to make the call again when that is safe and allowed, or gives up, throwing the error. */
  private async waitAfterNoAnswer(attempts: CallAttempts, error: unknown): Promise<void> {
    const called = error instanceof TargetUnavailableError && error.called;
    const delay = called && attempts.repeatable !== 'once' ? attempts.nextWait() : undefined;
    if (delay === undefined || this.unanswered >= GIVE_UP_AFTER_UNANSWERED) {
      if (attempts.count > 0)
        this.options.onRetried?.(attempts.told('gave-up', { error: this.options.redactor.text((error as Error).message) }));
      // A call counts towards taking the target as gone once all its attempts went unanswered: under a weather
      // of cut connections, attempts (of every worker) fail in a row far more often than calls do.
      if (called) this.unanswered += 1;
      throw error;
    }
    attempts.metWeather({ error: this.options.redactor.text((error as TargetUnavailableError).explanation), waitedMs: delay });
    await this.sleep(delay);
  }

  /** A new token for one the target refused (401), once per call, when the client holds it; undefined otherwise. */
  private async renewedCredential(attempts: CallAttempts, response: ApiResponse, o: CallOptions): Promise<string | undefined> {
    const renew = this.options.renewCredential;
    if (response.status !== 401 || attempts.renewed || !o.authorization || !renew || !refusesTheToken(response, response.operation, o))
      return undefined;
    const fresh = await renew(o.authorization, response);
    if (fresh !== undefined) attempts.renewedToken(this.attemptCode(response.json));
    return fresh;
  }

  /** After a transient answer: waits to make the call again, when the answer and the policy allow it. */
  private async waitedAfterTransient(attempts: CallAttempts, response: ApiResponse): Promise<boolean> {
    if (!mayAskAgain(response.status, response.json, attempts.repeatable)) return false;
    const delay = attempts.nextWait(retryAfterMs(response.headers['retry-after']));
    if (delay === undefined) return false;
    const code = this.attemptCode(response.json);
    attempts.metWeather({ status: response.status, ...(code ? { code } : {}), waitedMs: delay });
    await this.sleep(delay);
    return true;
  }

  /** The answer the call ends with, told as retried when it took more than one attempt. */
  private async lastAnswer(attempts: CallAttempts, response: ApiResponse, o: CallOptions): Promise<ApiResponse> {
    if (attempts.count === 0) return response;
    const code = this.attemptCode(response.json);
    const last: AttemptOutcome = { status: response.status, ...(code ? { code } : {}) };
    const outcome = attempts.outcomeOf(response, o.reusesReference === true);
    // The same transient answer at every attempt: the case's own answer if the target answers another call now.
    const answeredOthers =
      outcome === 'gave-up' && attempts.steadyWith(last) ? await this.answersAnotherCall(response.operation, o) : undefined;
    const retried = attempts.told(outcome, last, answeredOthers);
    this.options.onRetried?.(retried);
    return { ...response, retried, ...(outcome === 'created-earlier' ? { createdEarlier: true as const } : {}) };
  }

  private sleep(ms: number): Promise<void> {
    return this.options.sleep ? this.options.sleep(ms) : new Promise<void>((resolve) => setTimeout(resolve, ms));
  }

  /**
   * Whether the target answers another call now, once: its balance, which every product has and which changes nothing,
   * with a token the harness holds as good (controlCredential), else the call's own. A 5xx that persists for one case while the target answers other calls is that case's answer
   * (a server that answers 500 to an unknown id has a bug); while the target answers nothing, it is an outage.
   * Undefined where there is no other call to make (no Bearer token, or the balance was the call).
   */
  private async answersAnotherCall(operation: OperationRef, o: CallOptions): Promise<boolean | undefined> {
    const product = operation.product;
    if (!o.authorization?.startsWith('Bearer ') || operation.id === 'getBalance') return undefined;
    const bases = { gateway: this.options.baseUrl, provisioning: this.options.sandboxUrl };
    try {
      const authorization = (await this.controlCredential(product)) ?? o.authorization;
      const response = await this.callOnce(op('getBalance', product), 'GET', urlOf('getBalance', product, bases, undefined), {
        subscriptionKey: { product },
        authorization,
      });
      return !isTransientAnswer(response.status, response.json);
    } catch (error) {
      if (error instanceof TargetUnavailableError) return false;
      throw error;
    }
  }

  /** The harness's good credential for the control call, or undefined: one it cannot give leaves the call's own. */
  private async controlCredential(product: Product): Promise<string | undefined> {
    try {
      return await this.options.controlCredential?.(product);
    } catch {
      return undefined;
    }
  }

  /** An attempt's error code as the availability report quotes it: the target's text, so redacted and kept short. */
  private attemptCode(json: unknown): string | undefined {
    const code = codeOf(json);
    if (code === undefined) return undefined;
    const safe = this.options.redactor.text(code);
    if (/^[A-Za-z0-9_.:-]+$/.test(safe) && safe.length <= MAX_QUOTED_CODE) return safe;
    // Anything but a plain code is quoted, so that no line break or markup of the target's reaches a report's layout.
    return JSON.stringify(safe.length > MAX_QUOTED_CODE ? `${safe.slice(0, MAX_QUOTED_CODE)}…` : safe);
  }

  /** One attempt: the request built from the options, sent with one deadline, its answer read within the bound. */
  private async callOnce(operation: OperationRef, method: 'GET' | 'POST', url: string, o: CallOptions): Promise<ApiResponse> {
    this.refuseWhileGone(operation, url);
    this.refuseUnusable(operation, o);
    const { headers, body } = this.requestOf(o);
    const evidence = this.requestEvidence(operation, method, url, { headers, body }, o);
    const started = performance.now();
    const { response, read } = await this.send(operation, method, url, { headers, body }, evidence);
    this.unanswered = 0;
    return this.answerOf(operation, response, read, evidence, Math.round(performance.now() - started));
  }

  /** A target that left the last calls unanswered is not called again: the run could not test it. */
  private refuseWhileGone(operation: OperationRef, url: string): void {
    if (this.unanswered < GIVE_UP_AFTER_UNANSWERED || !this.lastUnanswered) return;
    const { error, explanation } = this.lastUnanswered;
    const why = `Not called: the last ${this.unanswered} calls to the target got no answer, so the harness stopped calling it (the last: ${explanation})`;
    throw new TargetUnavailableError(operation.label, url, error, why, { called: false });
  }

  /** The headers and body the options ask for, the header names in lower case if they ask so. */
  private requestOf(o: CallOptions): { headers: Record<string, string>; body: string | undefined } {
    const request = this.requestParts(o);
    if (!o.headerNamesInLowerCase) return request;
    return { ...request, headers: Object.fromEntries(Object.entries(request.headers).map(([name, value]) => [name.toLowerCase(), value])) };
  }

  private requestParts(o: CallOptions): { headers: Record<string, string>; body: string | undefined } {
    const headers: Record<string, string> = {};
    const key = o.subscriptionKey ?? 'none';
    if (key !== 'none') {
      const value = 'key' in key ? key.key : this.options.subscriptionKeys[key.product];
      if (value !== undefined) headers['Ocp-Apim-Subscription-Key'] = value;
    }
    if (o.authorization) headers.Authorization = o.authorization;
    if (o.referenceId !== undefined) headers['X-Reference-Id'] = o.referenceId;
    if (o.callbackUrl !== undefined) headers['X-Callback-Url'] = o.callbackUrl;
    if (o.language !== undefined) headers.Language = o.language;
    if (o.targetEnvironment !== null) headers['X-Target-Environment'] = o.targetEnvironment ?? this.options.targetEnvironment;
    if (o.rawBody) {
      if (o.rawBody.contentType) headers['Content-Type'] = o.rawBody.contentType;
      return { headers, body: o.rawBody.text };
    }
    const typed = (contentType: string) =>
      o.omitContentType ? headers : { ...headers, 'Content-Type': o.mediaTypeInCapitals ? contentType.toUpperCase() : contentType };
    if (o.form) return { headers: typed('application/x-www-form-urlencoded'), body: new URLSearchParams(o.form).toString() };
    if (o.body !== undefined) return { headers: typed('application/json'), body: JSON.stringify(o.body) };
    return { headers, body: undefined };
  }

  /** The request as evidence, secrets redacted. */
  private requestEvidence(
    operation: OperationRef,
    method: string,
    url: string,
    { headers, body }: { headers: Record<string, string>; body: string | undefined },
    o: CallOptions,
  ): Exchange {
    const redact = this.options.redactor;
    const credentials = this.credentialsOf(operation, o.subscriptionKey ?? 'none', o.authorization);
    return {
      operation: operation.label,
      startedAt: new Date().toISOString(),
      ...(credentials ? { credentials } : {}),
      request: {
        method,
        url,
        headers: redact.headers(headers),
        ...(body !== undefined ? requestBodyEvidence(redact.body(body), body) : {}),
      },
    };
  }

  /** Sends the request and reads its answer, both within one deadline; no answer is a TargetUnavailableError. */
  private async send(
    operation: OperationRef,
    method: 'GET' | 'POST',
    url: string,
    { headers, body }: { headers: Record<string, string>; body: string | undefined },
    evidence: Exchange,
  ): Promise<{ response: Dispatcher.ResponseData; read: BoundedBody }> {
    const { connectTimeoutMs, requestTimeoutMs, maxResponseBytes = DEFAULT_MAX_RESPONSE_BYTES } = this.options;
    let response: Dispatcher.ResponseData | undefined;
    try {
      // One deadline for the whole answer, headers and body: undici's own timeouts wait for a next byte, so a
      // target that drips one byte a second would never trip them. (undici also checks them only about once a
      // second; the signal makes short ones exact.)
      const signal = AbortSignal.timeout(connectTimeoutMs + requestTimeoutMs);
      response = await request(url, { method, headers, body, dispatcher: this.dispatcher, signal });
      return { response, read: await readBounded(response.body, maxResponseBytes) };
    } catch (error) {
      const explanation =
        response === undefined
          ? explainTransportError(error, { url, connectTimeoutMs, requestTimeoutMs })
          : explainUnfinishedBody(error, response.statusCode, { url, connectTimeoutMs, requestTimeoutMs });
      this.lastUnanswered = { error: error as Error, explanation };
      evidence.transportError = this.options.redactor.text(explanation);
      this.options.onExchange?.(evidence);
      throw new TargetUnavailableError(operation.label, url, error as Error, explanation);
    }
  }

  /** The answer as the steps see it, and as evidence. */
  private answerOf(
    operation: OperationRef,
    response: Dispatcher.ResponseData,
    read: BoundedBody,
    evidence: Exchange,
    durationMs: number,
  ): ApiResponse {
    const redact = this.options.redactor;
    const responseHeaders = flattenHeaders(response.headers);
    const exceeded = read.exceeded ? { exceededLimit: this.options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES } : {};
    evidence.response = {
      status: response.statusCode,
      headers: redact.headers(responseHeaders),
      ...bodyForEvidence(redact.body(read.text), { bytes: read.bytes, ...exceeded }),
      durationMs,
    };
    this.options.onExchange?.(evidence);
    const result: ApiResponse = {
      operation,
      status: response.statusCode,
      headers: responseHeaders,
      json: parseJson(read.text),
      text: read.text,
      ...exceeded,
      durationMs,
      exchange: evidence,
    };
    this.options.onResponse?.(result);
    return result;
  }
}

/**
 * Whether a 401 refuses the token (an OAuth error body, {error}) of a call sent with its product's own subscription key,
 * rather than the gateway turning the key away ({statusCode, message}) or a call that sends a wrong key on purpose.
 */
function refusesTheToken(response: ApiResponse, operation: OperationRef, o: CallOptions): boolean {
  const body = response.json as { error?: unknown; statusCode?: unknown } | undefined;
  if (o.renew === false) return false;
  const ownKey =
    o.subscriptionKey !== undefined &&
    o.subscriptionKey !== 'none' &&
    'product' in o.subscriptionKey &&
    o.subscriptionKey.product === operation.product;
  return ownKey && typeof body?.error === 'string' && body.statusCode === undefined;
}

/** The code of an error body: `code` of {code, message}, or `error` of {error}. */
/** The longest error code an availability record quotes; a code of the API is far shorter. */
const MAX_QUOTED_CODE = 80;

/** The error code an answer gives, in {code} or OAuth's {error}. */
export function codeOf(json: unknown): string | undefined {
  const body = json as { code?: unknown; error?: unknown } | undefined;
  const code = body?.code ?? body?.error;
  return typeof code === 'string' ? code : undefined;
}

interface BoundedBody {
  text: string;
  bytes: number;
  /** The target sent more than the limit; what is read is the first `limit` bytes. */
  exceeded: boolean;
}

/**
 * A body read up to `limit` bytes, and not a byte further: a target may answer with more than memory holds, or
 * with no end at all. Past the limit the stream is destroyed, which closes the connection rather than reading
 * the rest of it. Bytes that are not UTF-8 (or a character the limit cuts) are read as U+FFFD.
 */
async function readBounded(body: Dispatcher.ResponseData['body'], limit: number): Promise<BoundedBody> {
  const chunks: Buffer[] = [];
  let bytes = 0;
  let exceeded = false;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    if (bytes + chunk.length > limit) {
      chunks.push(chunk.subarray(0, limit - bytes));
      bytes = limit;
      exceeded = true;
      break;
    }
    chunks.push(chunk);
    bytes += chunk.length;
  }
  if (exceeded) body.destroy();
  return { text: new TextDecoder().decode(Buffer.concat(chunks, bytes)), bytes, exceeded };
}

/**
 * Why an answer whose status came did not finish: its body did not end in time (a slow drip, or no end), or the
 * connection broke. Either way the target did not answer, as when the status does not come.
 */
function explainUnfinishedBody(error: unknown, status: number, context: Parameters<typeof explainTransportError>[1]): string {
  const e = error as Error & { code?: unknown };
  if (e.name === 'TimeoutError' || e.code === 'UND_ERR_BODY_TIMEOUT') {
    return `timed out: HTTP ${status} came, but its body did not end within ${context.connectTimeoutMs + context.requestTimeoutMs} ms (MOMO_CONNECT_TIMEOUT_MS + MOMO_REQUEST_TIMEOUT_MS); a target that answers this slowly, or without end, cannot be tested: raise MOMO_REQUEST_TIMEOUT_MS (now ${context.requestTimeoutMs}) if it is only slow`;
  }
  return `HTTP ${status} came, but its body broke off: ${explainTransportError(error, context)}`;
}

/** Our own request body in the evidence: redacted, and bounded like a response's. */
function requestBodyEvidence(redacted: string, sent: string): { body: string; bodyCut?: BodyCut } {
  return bodyForEvidence(redacted, { bytes: Buffer.byteLength(sent) });
}

function flattenHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) if (value !== undefined) out[name] = Array.isArray(value) ? value.join(', ') : value;
  return out;
}

function parseJson(text: string): unknown {
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

export function basicCredential(userId: string, apiKey: string): string {
  return `Basic ${Buffer.from(`${userId}:${apiKey}`).toString('base64')}`;
}
