import type { PreflightRefusals } from '../../harness/client/setting-refused.ts';
import { randomUUID } from 'node:crypto';
import { CallbackReceiver } from '../../harness/callbacks/receiver.ts';
import { MomoClient, basicCredential, type ApiResponse, type Exchange } from '../../harness/client/momo-client.ts';
import { TokenCache } from '../../harness/client/token-cache.ts';
import { clientSettingsOf, type HarnessConfig } from '../../harness/config.ts';
import { EvidenceBudget, size } from '../../harness/client/evidence-budget.ts';
import {
  conclude,
  judge,
  judgeAnswer,
  refuseRedirect,
  unjudgedHeader,
  type AssumedPremise,
  type Expectation,
  type Judgement,
  type JudgingContext,
} from '../../harness/judging/judge.ts';
import { ConformanceFailure } from '../../harness/judging/judge.ts';
import { bodyChecksOf, bodyFindings, retriedFindings } from '../../harness/checks/answers.ts';
import { refusedEarlyFindings } from '../../harness/checks/credentials.ts';
import { DEFAULT_RETRY_POLICY, type RetriedCall } from '../../harness/client/careful.ts';
import { FinalStatusWatch } from '../../harness/judging/final-statuses.ts';
import { PREMISES, concerns, premiseSource, type PremiseName } from '../../harness/checks/premises.ts';
import type { Evaluation, Warning } from '../../harness/checks/index.ts';
import { behaviourOf, type ProfileBehaviour } from '../../core/profiles.ts';
import type { OperationId } from '../../core/catalogue/operations.ts';
import { PRODUCTS, type Product } from '../../core/products.ts';
import { Redactor } from '../../core/secrets/redact.ts';

const UNAVAILABLE_STATUSES: ReadonlySet<number> = new Set([502, 503, 504]);

/** An API user of one product, as the partner holds it. */
export interface Account {
  product: Product;
  userId: string;
  apiKey: string;
}

/**
 * What every scenario of one worker process shares: configuration, the client and its keep-alive
 * connections, the token cache, the callback receiver and the API users provisioned for the run.
 * Scenarios stay independent: each uses its own reference ids, and one that needs an API user to itself
 * asks for a fresh one.
 */
export class Harness implements JudgingContext {
  readonly config: HarnessConfig;
  readonly behaviour: ProfileBehaviour;
  readonly run: JudgingContext['run'];
  readonly redactor = new Redactor();
  readonly client: MomoClient;
  readonly receiver: CallbackReceiver;
  readonly tokens: TokenCache;
  private readonly accounts = new Map<Product, Promise<Account>>();
  private readonly tokensToExpire = new Map<Product, ReturnType<Harness['issueTokenToExpire']>>();
  /**
   * What this worker found out about the target that the spec leaves open, to use in every later scenario: the way a
   * premise held (who redeems a consent, who may refund), by name.
   */
  readonly discovered = new Map<string, unknown>();
  private readonly accountsById = new Map<string, Account>();
  /** Where the current scenario's evidence goes; scenarios of one worker run one at a time. */
  private recordExchange: ((exchange: Exchange) => void) | undefined;
  /** This worker's share of the run's evidence budget: what it records once the share is spent is only the call. */
  private readonly evidenceBudget: EvidenceBudget;

  /** How many worker processes run the scenarios: API users given in the settings are shared by all of them. */
  private readonly workers: number;

  /**
   * `workers`: how many worker processes share the run's evidence budget; `refusals`: the settings the preflight
   * found refused (harness/preflight.ts), whose calls are not made. Both are cucumber world parameters.
   */
  constructor(config: HarnessConfig, { workers = 1, refusals }: { workers?: number; refusals?: PreflightRefusals } = {}) {
    this.config = config;
    this.workers = workers;
    if (!this.config.baseUrl || !this.config.sandboxUrl)
      throw new Error('MOMO_BASE_URL is not set: run the suite with npm start, which starts the embedded sandbox when no target is given.');
    this.behaviour = behaviourOf(this.config.profile);
    this.run = { profile: this.config.profile, strict: this.config.strict };
    // Each secret with its kind, which says the one operation that may give it out (harness/secrets/disclosure.ts).
    for (const key of Object.values(this.config.subscriptionKeys)) this.redactor.add(key, 'subscription key');
    for (const [product, user] of Object.entries(this.config.apiUsers))
      if (user) this.redactor.addBasicCredential(user.userId, user.apiKey, product as Product);
    const budget = this.config.evidenceBudgetBytes;
    this.evidenceBudget = new EvidenceBudget(
      Math.floor(budget / workers),
      workers > 1 ? `${size(budget)} shared by ${workers} workers` : size(budget),
    );
    this.client = new MomoClient({
      ...clientSettingsOf(this.config),
      redactor: this.redactor,
      onExchange: (exchange) => {
        this.calls.set(exchange.operation, (this.calls.get(exchange.operation) ?? 0) + 1);
        this.recordExchange?.(this.evidenceBudget.admit(exchange));
      },
      onResponse: (response) => this.checkAnswer(response),
      retry: { ...DEFAULT_RETRY_POLICY, attempts: config.callRetries + 1, budgetMs: config.callRetryBudgetMs },
      renewCredential: (authorization, refused) => this.renew(authorization, refused),
      controlCredential: (product) => this.controlCredential(product),
      onRetried: (call) => this.retried.push(call),
      ...(refusals ? { refusals } : {}),
    });
    this.receiver = new CallbackReceiver(this.config.callbackHost, {
      bind: this.config.callbackBind,
      publicBaseUrl: this.config.callbackUrl,
    });
    this.tokens = new TokenCache({ fetch: (key) => this.fetchToken(key) });
  }

  async start(): Promise<void> {
    await this.receiver.start(this.config.callbackPort);
  }

  async stop(): Promise<void> {
    await this.receiver.stop();
    await this.client.close();
  }

  recordInto(sink: ((exchange: Exchange) => void) | undefined): void {
    this.recordExchange = sink;
    this.bodyFailures = [];
    this.warnings = new Map();
    this.evaluations = new Map();
    this.finalStatuses.clear();
    this.premises = new Map();
    this.calls = new Map();
    this.retried = [];
  }

  /**
   * What this scenario saw of the target's availability: its calls by operation, and each call the careful client made
   * again (harness/client/careful.ts), each also a warning naming the weather it met. Taken once, at the scenario's end.
   */
  takeAvailability(): { calls: Record<string, number>; retried: RetriedCall[] } {
    const availability = { calls: Object.fromEntries(this.calls), retried: this.retried };
    for (const call of this.retried) {
      conclude(
        {
          header: `${call.operation} (${call.product}): the call met bad weather, and the harness made it again`,
          operation: call.operation,
          product: call.product as Product,
          checks: ['answered-first-try'],
          findings: retriedFindings(call),
        },
        this,
      );
    }
    this.calls = new Map();
    this.retried = [];
    return availability;
  }

  /** The calls of this scenario by operation label, and the calls made again. */
  private calls = new Map<string, number>();
  private retried: RetriedCall[] = [];
  /** When a token was last issued to each API user by this worker, by `product:userId`: what tells a superseded token. */
  private readonly lastIssued = new Map<string, number>();

  /** A token issued to an API user outside the cache (a scenario asking for one): it may supersede the cache's. */
  noteIssued(product: Product, userId: string, at = Date.now()): void {
    this.lastIssued.set(`${product}:${userId}`, at);
  }

  /**
   * A fresh credential for a cached token the target refused (401): the cache drops it and fetches another, which the
   * client sends the call again with. A token refused before its expires_in had passed departs from §2.6 unless a newer
   * token was issued to the API user since, or other workers may have asked for one (API users given in the settings
   * are shared by every worker of the run): that is judged here, once, as the token is renewed. A token the cache does
   * not hold (one a scenario presents on purpose) is not renewed.
   */
  private async renew(authorization: string, refused: ApiResponse): Promise<string | undefined> {
    const token = /^Bearer (.+)$/i.exec(authorization)?.[1];
    const held = token === undefined ? undefined : this.tokens.heldAs(token);
    if (!held) return undefined;
    // A token of one product presented to another's operation (on purpose, or as a premise): its refusal is the
    // case's answer, not a token to renew, nor one refused before its expiry.
    const [heldProduct] = held.key.split(':') as [Product];
    if (heldProduct !== refused.operation.product) return undefined;
    this.tokens.invalidate(held.key);
    const now = Date.now();
    // A token lives up to a second past its expires_in (whole-second JWT expiry) and a few seconds of clock skew.
    if (now < held.expiresAt - 2_000) {
      const shared = this.config.apiUsers[heldProduct] !== undefined && this.workers > 1;
      const superseded = shared || (this.lastIssued.get(held.key) ?? 0) > held.issuedAt;
      try {
        conclude(
          {
            header: `${refused.operation.label} — §2.6, §8: a token is honoured until its expires_in has passed`,
            operation: refused.operation.id,
            product: refused.operation.product,
            checks: ['token-honoured-until-expiry'],
            findings: refusedEarlyFindings(held, now, superseded),
            response: refused,
          },
          this,
        );
      } catch (failure) {
        // Fatal: a wait that polls would otherwise take it for "not yet", and its next call, with a new token, would pass.
        throw Object.assign(failure as Error, { fatal: true });
      }
    }
    return `Bearer ${await this.tokens.get(held.key)}`;
  }

  /**
   * The run's own token of a product, for the client's control call (is the target answering others, or is it an
   * outage?), once the run has an API user of the product; none is provisioned for it. Getting it is no finding of the
   * scenario's: a token the target will not issue now leaves the control to the call's own credential.
   */
  private async controlCredential(product: Product): Promise<string | undefined> {
    const account = this.accounts.get(product);
    if (!account) return undefined;
    const checkpoint = this.checkpoint();
    try {
      return await this.bearer(await account);
    } catch {
      this.rollback(checkpoint);
      return undefined;
    }
  }

  /**
   * The scenario takes a premise for granted from here on (harness/checks/premises.ts): a finding about an operation
   * it concerns rests on it until the scenario sees it hold.
   */
  assume(name: PremiseName): void {
    this.premises.set(name, 'assumed');
  }

  /** The scenario saw a premise hold: nothing rests on it any longer. */
  held(name: PremiseName): void {
    this.premises.set(name, 'held');
  }

  /** The scenario no longer takes a premise for granted (it tries another way instead). */
  drop(name: PremiseName): void {
    this.premises.delete(name);
  }

  /** Where the checks this scenario made stand now: what rollback returns to. */
  checkpoint(): ReadonlySet<string> {
    return new Set(this.evaluations.keys());
  }

  /** Forgets the checks made since a checkpoint (a way to set up a case that did not hold verified nothing). */
  rollback(checkpoint: ReadonlySet<string>): void {
    for (const key of [...this.evaluations.keys()]) if (!checkpoint.has(key)) this.evaluations.delete(key);
  }

  /**
   * Runs work (finding out something of the target for every later scenario) on no premise of the current scenario's:
   * its findings stand or fall on their own and on the premises it assumes itself. The scenario's premises come back after.
   */
  async apart<T>(work: () => Promise<T>): Promise<T> {
    const own = this.premises;
    this.premises = new Map();
    try {
      return await work();
    } finally {
      this.premises = own;
    }
  }

  assumed(operation: OperationId): AssumedPremise[] {
    return [...this.premises]
      .filter(([name, state]) => state === 'assumed' && concerns(PREMISES[name], operation))
      .map(([name]) => ({ name, ...PREMISES[name], source: premiseSource(PREMISES[name], this.run.profile) }));
  }

  /** Answers of this scenario whose bodies depart from their schemas, whether or not a step looked at them. */
  takeBodyFailures(): ConformanceFailure[] {
    const failures = this.bodyFailures;
    this.bodyFailures = [];
    return failures;
  }

  /** The warnings of this scenario: findings this run weighs as warnings (core/sources.ts), each once. */
  takeWarnings(): Warning[] {
    const warnings = [...this.warnings.values()];
    this.warnings = new Map();
    return warnings;
  }

  /** The checks this scenario made and how each came out (each check, operation and outcome once). */
  takeEvaluations(): Evaluation[] {
    const evaluations = [...this.evaluations.values()];
    this.evaluations = new Map();
    return evaluations;
  }

  private bodyFailures: ConformanceFailure[] = [];
  private warnings = new Map<string, Warning>();
  private evaluations = new Map<string, Evaluation>();
  /** The final status each transaction of this scenario was first read in, by its status query's URL. */
  private readonly finalStatuses = new FinalStatusWatch();

  /** A refund of the transaction was asked for: its status may move on from the final one it was read in (§3). */
  refundedFrom(referenceId: string): void {
    this.finalStatuses.mayLeaveFinal(referenceId);
  }
  /** The premises of this scenario (harness/checks/premises.ts): assumed, or seen to hold. */
  private premises = new Map<PremiseName, 'assumed' | 'held'>();

  warn(warning: Warning): void {
    // The same departure seen by a step and by the check of every answer is one warning.
    const key = JSON.stringify([warning.check, warning.context.split(' — ')[0], warning.field, warning.expected, warning.received]);
    if (!this.warnings.has(key)) this.warnings.set(key, warning);
  }

  evaluated(evaluations: readonly Evaluation[]): void {
    for (const e of evaluations) this.evaluations.set(`${e.check} ${e.operation} ${e.product} ${e.verdict}`, e);
  }

  /** Judges an answer against an expectation (harness/judging/judge.ts); a departure throws, a warning is kept. */
  judge(response: ApiResponse, expectation: Expectation): ApiResponse {
    judge(response, expectation, this);
    return response;
  }

  /** Weighs what checks a step made found: a failure throws, naming each; a warning is kept; each check made is recorded. */
  conclude(judgement: Judgement): void {
    conclude(judgement, this);
  }

  /**
   * Every answer as it comes: one that no answer may be (too long, or giving out a secret) fails the step at once
   * (judgeAnswer); a body that departs from its schema is noted, and fails the scenario at its end if no step did.
   */
  private checkAnswer(response: ApiResponse): void {
    refuseRedirect(response);
    judgeAnswer(response, this);
    this.checkFinalStaysFinal(response);
    // A gateway's 502, 503 or 504 says the target could not serve: a step that needed the answer says not tested.
    if (UNAVAILABLE_STATUSES.has(response.status)) return;
    try {
      conclude(
        {
          header: unjudgedHeader(response),
          operation: response.operation.id,
          product: response.operation.product,
          checks: bodyChecksOf(response, this.behaviour),
          findings: bodyFindings(response, this.behaviour, this.run),
          response,
        },
        this,
      );
    } catch (failure) {
      if (!(failure instanceof ConformanceFailure)) throw failure;
      this.bodyFailures.push(failure);
    }
  }

  /** §3: a transaction read in a final status reads in it again, for the rest of the scenario (harness/judging/final-statuses.ts). */
  private checkFinalStaysFinal(response: ApiResponse): void {
    try {
      this.finalStatuses.judge(response, this);
    } catch (failure) {
      throw Object.assign(failure as Error, { fatal: true });
    }
  }

  /** The run's API user of a product: the configured one, or one provisioned on first use. */
  account(product: Product): Promise<Account> {
    let account = this.accounts.get(product);
    if (!account) {
      const configured = this.config.apiUsers[product];
      account = configured ? Promise.resolve({ product, ...configured }) : this.provision(product);
      this.accounts.set(product, account);
      account.catch(() => this.accounts.delete(product));
    }
    return account;
  }

  /** A new API user of a product, for a scenario that must not share one (ownership, balances). */
  async provision(product: Product, providerCallbackHost = this.config.callbackHost): Promise<Account> {
    const userId = randomUUID();
    this.judge(await this.client.createApiUser(product, userId, providerCallbackHost), {
      status: 201,
      what: 'provisioning an API user for the run',
    });
    const keyResponse = this.judge(await this.client.createApiKey(product, userId), {
      status: 201,
      what: 'creating the API key of an API user for the run',
    });
    const account = { product, userId, apiKey: (keyResponse.json as { apiKey: string }).apiKey };
    this.redactor.addBasicCredential(userId, account.apiKey, product);
    this.accountsById.set(`${product}:${userId}`, account);
    return account;
  }

  /**
   * An access token of an API user of its own, issued at most once per worker and product, to be presented after it has
   * expired: the first scenario to need one waits out its lifetime, and every later one finds it expired already. Its
   * own API user, so that issuing it revokes no token the run's other scenarios hold.
   */
  tokenToExpire(product: Product): Promise<{ accessToken: string; expiresIn: number; receivedAt: number } | undefined> {
    // Every configured product's at once, so that their lifetimes pass together and a worker waits once, not per product.
    if (!this.tokensToExpire.has(product))
      for (const each of [
        product,
        ...PRODUCTS.filter((p) => p !== product && !this.tokensToExpire.has(p) && this.config.subscriptionKeys[p]),
      ]) {
        const token = this.issueTokenToExpire(each);
        this.tokensToExpire.set(each, token);
        token.catch(() => this.tokensToExpire.delete(each));
      }
    return this.tokensToExpire.get(product)!;
  }

  private async issueTokenToExpire(product: Product) {
    const account = await this.provision(product);
    const response = this.judge(await this.client.createAccessToken(product, this.basic(account)), {
      status: 200,
      what: 'an access token to let expire',
    });
    const body = response.json as { access_token?: unknown; expires_in?: unknown } | undefined;
    if (typeof body?.access_token !== 'string' || typeof body.expires_in !== 'number') return undefined;
    this.redactor.add(body.access_token, 'access token');
    return { accessToken: body.access_token, expiresIn: body.expires_in, receivedAt: Date.now() };
  }

  /** Drops the account's cached token, so that its next Bearer credential is a new token. */
  renewToken(account: Account): void {
    this.tokens.invalidate(`${account.product}:${account.userId}`);
  }

  /** A Bearer credential of an account, from the cache: fetched once, refreshed before it expires. */
  async bearer(account: Account): Promise<string> {
    this.accountsById.set(`${account.product}:${account.userId}`, account);
    return `Bearer ${await this.tokens.get(`${account.product}:${account.userId}`)}`;
  }

  basic(account: Account): string {
    return basicCredential(account.userId, account.apiKey);
  }

  private async fetchToken(key: string): Promise<{ accessToken: string; lifetimeSeconds: number }> {
    const account = this.accountsById.get(key);
    if (!account) throw new Error(`no account for ${key}`);
    const response = await this.client.createAccessToken(account.product, this.basic(account));
    this.judge(response, { status: 200, what: 'getting an access token for the run' });
    const body = response.json as { access_token: string; expires_in: number };
    this.redactor.add(body.access_token, 'access token');
    return { accessToken: body.access_token, lifetimeSeconds: body.expires_in };
  }
}
