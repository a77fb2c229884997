import { Agent, request } from 'undici';
import type { FastifyBaseLogger } from 'fastify';
import type { CallbackDestinations } from './callback-destinations.ts';
import { systemClock, type Clock, type Timer } from './clock.ts';
import type { ConsentRequest } from './state.ts';

export interface CallbackPolicy {
  timeoutMs: number;
  retryDelaysMs: readonly number[];
  /** Checked again when each attempt connects: the URL's host, and every address its name resolves to. */
  destinations: CallbackDestinations;
}

/** A callback whose destination the rules refuse: sent never, retried never. */
class RefusedDestination extends Error {}

/** One attempt to deliver a callback, as it ended: how the client's listener answered, or why it did not. */
export interface CallbackAttempt {
  url: string;
  method: 'PUT' | 'POST';
  /** What send() was told the callback is about: its kind, and its referenceId or authReqId. */
  context: Readonly<Record<string, string>>;
  /** 1 for the first attempt. */
  attempt: number;
  /** The listener's status, when it answered. */
  status?: number;
  /** Why no answer came (a timeout, a refused connection), when none did. */
  problem?: string;
  /** Whether the attempt ran out of time (--callback-timeout-ms). */
  timedOut: boolean;
  /** How long it took, in ms of real time: its timeout is real time too. */
  elapsedMs: number;
  /** Whether another attempt follows. */
  willRetry: boolean;
}

export type CallbackObserver = (attempt: CallbackAttempt) => void;

/** Where the sandbox sends what it has to tell a client: transaction callbacks and the consent ping. */
export interface CallbackSink {
  send(url: string, method: 'PUT' | 'POST', body: unknown, context: Record<string, string>): void;
  sendLater(delayMs: number, url: string, method: 'PUT' | 'POST', body: unknown, context: Record<string, string>): void;
  /** Resolves once no attempt is under way. */
  settled(): Promise<void>;
  close(): Promise<void>;
  /**
   * Tells the observer how each attempt ends, from now on: what the client report (--client-report) says of a
   * client's callback listener. A sink that sends nothing itself passes it to the one it wraps, if any.
   */
  observe?(observer: CallbackObserver): void;
}

/**
 * Sends callbacks: one attempt, then a retry after each configured delay until one is answered with 2xx.
 * Attempts are bounded by the timeout, and nothing waits for them: a slow listener never slows the API.
 */
export class CallbackSender implements CallbackSink {
  private readonly agent: Agent;
  private readonly inFlight = new Set<Promise<void>>();
  private readonly timers = new Set<Timer>();
  private readonly observers: CallbackObserver[] = [];
  private closed = false;

  constructor(
    private readonly policy: CallbackPolicy,
    private readonly log: FastifyBaseLogger,
    private readonly clock: Clock = systemClock,
  ) {
    this.agent = new Agent({
      connectTimeout: policy.timeoutMs,
      headersTimeout: policy.timeoutMs,
      bodyTimeout: policy.timeoutMs,
      keepAliveTimeout: 4_000,
      // Names are resolved here, at each connection, and refused when an address is: a name that resolved to
      // an allowed address when the callback was accepted may resolve elsewhere now (DNS rebinding).
      connect: { lookup: policy.destinations.lookup },
    });
  }

  send(url: string, method: 'PUT' | 'POST', body: unknown, context: Record<string, string>): void {
    if (this.closed) return;
    this.attempt(url, method, JSON.stringify(body), context, 0);
  }

  sendLater(delayMs: number, url: string, method: 'PUT' | 'POST', body: unknown, context: Record<string, string>): void {
    if (this.closed) return;
    const timer = this.clock.setTimer(delayMs, () => {
      this.timers.delete(timer);
      this.send(url, method, body, context);
    });
    this.timers.add(timer);
  }

  observe(observer: CallbackObserver): void {
    this.observers.push(observer);
  }

  private attempt(url: string, method: 'PUT' | 'POST', payload: string, context: Record<string, string>, index: number): void {
    const attempt = index + 1;
    // Timed only when someone is told: a sandbox without observers does as it always did.
    const started = this.observers.length > 0 ? performance.now() : 0;
    const tell = (ended: Pick<CallbackAttempt, 'status' | 'problem' | 'timedOut'>, willRetry: boolean) => {
      for (const observer of this.observers)
        observer({ url, method, context, attempt, ...ended, elapsedMs: performance.now() - started, willRetry });
    };
    const done = this.deliver(url, method, payload).then(
      (status) => {
        if (status >= 200 && status < 300) {
          this.log.info({ ...context, callbackUrl: url, attempt, status }, 'callback delivered');
          if (this.observers.length > 0) tell({ status, timedOut: false }, false);
          return;
        }
        const willRetry = this.retryOrGiveUp(url, method, payload, context, index, `answered ${status}`);
        if (this.observers.length > 0) tell({ status, timedOut: false }, willRetry);
      },
      (error: Error & { code?: string; cause?: { code?: string } }) => {
        const refused =
          error instanceof RefusedDestination || error.code === 'MOMO_CALLBACK_REFUSED' || error.cause?.code === 'MOMO_CALLBACK_REFUSED';
        if (refused) {
          this.log.warn({ ...context, callbackUrl: url, problem: error.message }, 'callback destination refused; not sent');
          return;
        }
        const willRetry = this.retryOrGiveUp(url, method, payload, context, index, error.message);
        if (this.observers.length > 0) tell({ problem: error.message, timedOut: isTimeout(error) }, willRetry);
      },
    );
    this.inFlight.add(done);
    void done.finally(() => this.inFlight.delete(done));
  }

  private retryOrGiveUp(
    url: string,
    method: 'PUT' | 'POST',
    payload: string,
    context: Record<string, string>,
    index: number,
    problem: string,
  ): boolean {
    const delay = this.policy.retryDelaysMs[index];
    if (delay === undefined || this.closed) {
      this.log.warn({ ...context, callbackUrl: url, attempts: index + 1, problem }, 'callback not delivered; giving up');
      return false;
    }
    this.log.info({ ...context, callbackUrl: url, attempt: index + 1, problem, retryInMs: delay }, 'callback failed; will retry');
    const timer = this.clock.setTimer(delay, () => {
      this.timers.delete(timer);
      this.attempt(url, method, payload, context, index + 1);
    });
    this.timers.add(timer);
    return true;
  }

  private async deliver(url: string, method: 'PUT' | 'POST', payload: string): Promise<number> {
    // An address written in the URL is never looked up, so the connector's check does not see it.
    const refusal = this.policy.destinations.refusalOfUrl(url);
    if (refusal) throw new RefusedDestination(`callback destination refused: ${refusal}`);
    const signal = AbortSignal.timeout(this.policy.timeoutMs);
    const response = await request(url, {
      method,
      body: payload,
      headers: { 'content-type': 'application/json' },
      dispatcher: this.agent,
      signal,
    });
    await response.body.dump();
    return response.statusCode;
  }

  /** Resolves once no attempt is under way (those started meanwhile included): what a test awaits after moving time. */
  async settled(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  /** Stops retries and waits for attempts under way (each bounded by the timeout). */
  async close(): Promise<void> {
    this.closed = true;
    for (const timer of this.timers) timer.cancel();
    this.timers.clear();
    await Promise.allSettled([...this.inFlight]);
    await this.agent.close();
  }
}

const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

/** Whether an attempt failed for want of time: the attempt's own signal, or one of undici's timeouts. */
function isTimeout(error: Error & { code?: string; cause?: { code?: string } }): boolean {
  return error.name === 'TimeoutError' || TIMEOUT_CODES.has(error.code ?? '') || TIMEOUT_CODES.has(error.cause?.code ?? '');
}

/** The ping of a consent request made with a callback URL (§5.4): {auth_req_id} by POST once the holder has consented. */
export function pingWhenGranted(callbacks: CallbackSink, consent: ConsentRequest, now: number): void {
  if (consent.callbackUrl === undefined) return;
  callbacks.sendLater(
    Math.max(0, consent.grantedAt - now),
    consent.callbackUrl,
    'POST',
    { auth_req_id: consent.authReqId },
    { kind: 'bc-authorize', authReqId: consent.authReqId },
  );
}

/** An absolute http(s) URL with a host and a valid port: what a callback can be sent to. */
export function isCallbackUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname.length > 0;
  } catch {
    return false;
  }
}

/**
 * A callback URL must name the API user's providerCallbackHost (real-api-notes: observed): by host name,
 * and by port too when the host was registered with one. A providerCallbackHost registered as a URL counts by
 * its host (and port, when the URL gives one).
 */
export function callbackHostMatches(callbackUrl: string, providerCallbackHost: string): boolean {
  let url: URL;
  try {
    url = new URL(callbackUrl);
  } catch {
    return false;
  }
  const registered =
    /^https?:\/\//i.test(providerCallbackHost) && URL.canParse(providerCallbackHost)
      ? new URL(providerCallbackHost).host
      : providerCallbackHost;
  const expected = registered.toLowerCase();
  return expected.includes(':') ? url.host.toLowerCase() === expected : url.hostname.toLowerCase() === expected;
}
