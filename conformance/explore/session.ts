import { randomUUID } from 'node:crypto';
import { MomoClient, basicCredential, type ApiResponse, type CallOptions, type Exchange } from '../../harness/client/momo-client.ts';
import { TokenCache } from '../../harness/client/token-cache.ts';
import { CallbackReceiver, type ReceivedCallback } from '../../harness/callbacks/receiver.ts';
import { DEFAULT_RETRY_POLICY } from '../../harness/client/careful.ts';
import { clientSettingsOf, type HarnessConfig } from '../../harness/config.ts';
import {
  conclude,
  judge,
  judgeAnswer,
  refuseRedirect,
  headerOf,
  type AssumedPremise,
  type Expectation,
  type JudgingContext,
} from '../../harness/judging/judge.ts';
import { FinalStatusWatch } from '../../harness/judging/final-statuses.ts';
import { PREMISES, concerns, premiseSource, type PremiseName } from '../../harness/checks/premises.ts';
import { statusSourceOf } from '../../harness/checks/contract.ts';
import { codeSourceFor } from '../../harness/checks/answers.ts';
import type { CheckName, Evaluation, Finding, Warning } from '../../harness/checks/index.ts';
import { TRANSACTIONS, hostOf, operation, pathOf, type PathParams } from '../../core/catalogue/routes.ts';
import type { OperationId } from '../../core/catalogue/operations.ts';
import type { Product } from '../../core/products.ts';
import { behaviourOf, type ProfileBehaviour } from '../../core/profiles.ts';
import { Redactor } from '../../core/secrets/redact.ts';
import { severityOf, type Source } from '../../core/sources.ts';
import type { ReplayCall, ReplayCheck, ReplayWeight } from './replay-plan.ts';

const STATUS_QUERIES: ReadonlySet<string> = new Set(TRANSACTIONS.map((t) => t.status));

/** An API user the exploration holds: the run's own of a product, or one a command registered (with its key once made). */
export interface ApiUser {
  userId: string;
  apiKey?: string;
  /** The name the replay gives its id (and its key), so that a new one is made there. */
  name?: string;
}

/** How one call authenticates: the run's access token of a product, an API user's Basic credential, or nothing. */
export type Credential = { bearer: Product } | { basic: ApiUser } | 'none';

/** One call a command makes, in the terms the replay can make it again in. */
export interface CallSpec {
  operation: OperationId;
  product: Product;
  params?: PathParams;
  /** The product's own subscription key (the default), or none at all. */
  key?: 'own' | 'none';
  auth: Credential;
  /** The X-Reference-Id to send; none is sent without it. */
  referenceId?: string;
  /** Leave X-Target-Environment out where the operation takes it. */
  withoutTargetEnvironment?: true;
  body?: unknown;
  /** The call reuses a reference id on purpose: its 409 is the case's answer, not an earlier attempt's creation. */
  reusesReference?: true;
  /** Give X-Callback-Url on the exploration's receiver, for the call's reference id. */
  callback?: true;
}

/** The exploration stops calling: its cap on calls is spent, or its time is up. */
export class ExplorationStopped extends Error {
  override readonly name = 'ExplorationStopped';
}

/** The errors that say the target could not be tested (no answer, a gateway's 5xx, a redirect, a refused setting). */
const COULD_NOT_TEST = new Set(['TargetUnavailableError', 'TargetUnavailableAnswer', 'TargetRedirected', 'SettingRefusedError']);

export interface SessionLimits {
  /** The most calls the whole exploration may make, shrinking included: a hard cap. */
  maxCalls: number;
  /** When it stops (ms since the epoch). */
  deadline: number;
}

/**
 * The system the exploration's commands drive: the target through the careful client, judged by the project's named
 * checks (harness/judging/judge.ts) with the sources they carry, under the run's profile. It records each call of the
 * sequence under way in terms a replay can make again, without a secret, and keeps the cap on calls and the time limit.
 */
export class ExplorationSession implements JudgingContext {
  readonly run: JudgingContext['run'];
  readonly behaviour: ProfileBehaviour;
  readonly redactor = new Redactor();
  readonly client: MomoClient;
  /** Where the transactions that ask for a callback are called back, as the run's receiver does it. */
  readonly receiver: CallbackReceiver;
  private readonly tokens: TokenCache;
  private readonly accounts = new Map<Product, ApiUser>();
  /** Every attempt of every call, setup and shrinking included: what the cap counts. */
  calls = 0;
  /** Why the exploration stopped calling before its runs were done (the cap, the time), if it did. */
  stopped: string | undefined;
  /** Why the target could not be tested, if it could not. */
  unavailable: string | undefined;
  /** A fault of the harness itself: the exploration ends with it rather than taking it for the target's. */
  crashed: Error | undefined;
  /** Findings this run weighs as warnings, each once, and the checks made by name. */
  readonly warnings = new Map<string, Warning>();
  readonly checksMade = new Map<CheckName, number>();
  /** Cases left untested because a premise of theirs did not hold for this target. */
  readonly unheldPremises = new Map<string, number>();
  /** The ids the exploration created on the target: only what it tracks. */
  readonly created = { transactions: 0, apiUsers: [] as string[] };
  private sequence = newSequence();
  private readonly replayCalls = new WeakMap<ApiResponse, ReplayCall>();
  private assumedPremises: readonly PremiseName[] = [];

  constructor(
    readonly config: HarnessConfig,
    private readonly limits: SessionLimits,
  ) {
    this.behaviour = behaviourOf(config.profile);
    this.run = { profile: config.profile, strict: config.strict };
    for (const key of Object.values(config.subscriptionKeys)) this.redactor.add(key, 'subscription key');
    for (const [product, user] of Object.entries(config.apiUsers))
      if (user) this.redactor.addBasicCredential(user.userId, user.apiKey, product as Product);
    this.client = new MomoClient({
      ...clientSettingsOf(config),
      redactor: this.redactor,
      onExchange: (exchange) => {
        this.calls += 1;
        this.sequence.exchanges.push(exchange);
      },
      onResponse: (response) => this.checkEveryAnswer(response),
      retry: { ...DEFAULT_RETRY_POLICY, attempts: config.callRetries + 1, budgetMs: config.callRetryBudgetMs },
      renewCredential: (authorization) => this.renew(authorization),
    });
    this.tokens = new TokenCache({ fetch: (product) => this.fetchToken(product as Product) });
    this.receiver = new CallbackReceiver(config.callbackHost, { bind: config.callbackBind, publicBaseUrl: config.callbackUrl });
  }

  /** The API users of collection and disbursement that the commands call as: the configured ones, or new ones. */
  async prepare(): Promise<void> {
    await this.receiver.start(this.config.callbackPort);
    for (const product of ['collection', 'disbursement'] as const) {
      const configured = this.config.apiUsers[product];
      this.accounts.set(product, configured ?? (await this.provision(product)));
    }
  }

  async close(): Promise<void> {
    await this.receiver.stop();
    await this.client.close();
  }

  /**
   * The callbacks a transaction got, once at least one came or `waitMs` passed: a callback that does not come in time
   * is weather the spec allows (§6 gives no time), so only those that came are judged.
   */
  async callbacksOf(referenceId: string, waitMs: number): Promise<ReceivedCallback[]> {
    const until = Date.now() + waitMs;
    while (this.receiver.callbacksFor(referenceId).length === 0 && Date.now() < until)
      await new Promise((resolve) => setTimeout(resolve, 50));
    return this.receiver.callbacksFor(referenceId);
  }

  /** A new sequence of commands begins (one run of fast-check, or one it tries while shrinking). */
  beginSequence(): this {
    this.sequence = newSequence();
    this.finalStatuses.clear();
    return this;
  }

  /** What the sequence under way did: its commands and calls as the replay makes them, and its exchanges (redacted). */
  get current(): Readonly<Sequence> {
    return this.sequence;
  }

  /** Whether the exploration has stopped calling: its cap or its time spent, the target unavailable, or a fault of its own. */
  get halted(): boolean {
    if (this.stopped === undefined && Date.now() >= this.limits.deadline) this.stopped = 'the time limit (--time-limit) was reached';
    return this.stopped !== undefined || this.unavailable !== undefined || this.crashed !== undefined;
  }

  /** A command of the sequence begins; false when the exploration has stopped calling. */
  beginCommand(description: string): boolean {
    if (this.halted) return false;
    this.sequence.commands.push(description);
    return true;
  }

  /**
   * What a command's error means for the exploration: true when it is taken in (the calls stopped, the target could not
   * be tested, a premise did not hold, a fault of the harness), false for a departure of the target, which fast-check
   * is to see and shrink.
   */
  absorb(error: unknown): boolean {
    const name = (error as Error | undefined)?.name ?? '';
    if (name === 'ConformanceFailure') return false;
    if (error instanceof ExplorationStopped) this.stopped ??= error.message;
    else if (name === 'PremiseNotHeld') {
      const premise = (error as { premise: string }).premise;
      this.unheldPremises.set(premise, (this.unheldPremises.get(premise) ?? 0) + 1);
    } else if (COULD_NOT_TEST.has(name)) this.unavailable ??= (error as Error).message;
    else this.crashed ??= error instanceof Error ? error : new Error(String(error));
    return true;
  }

  /** A fresh UUID v4 the exploration makes, named for the replay (which makes its own in its place): r1, u2, … */
  newId(prefix: string): string {
    return this.generated(randomUUID(), prefix);
  }

  /** A value of a case (a UUID of another version) that the replay makes afresh, of the same form. */
  generated(value: string, prefix: string): string {
    if (!this.sequence.generated.has(value)) this.sequence.generated.set(value, `${prefix}${this.sequence.generated.size + 1}`);
    return value;
  }

  /** The name the replay gives a value the exploration made. */
  nameOf(value: string): string | undefined {
    return this.sequence.generated.get(value);
  }

  /** One call of a command, recorded for the replay; throws ExplorationStopped once the cap on calls is spent. */
  async call(spec: CallSpec): Promise<ApiResponse> {
    if (this.calls >= this.limits.maxCalls)
      throw new ExplorationStopped(`the cap of ${this.limits.maxCalls} calls (--max-calls) was reached`);
    const replay = this.replayCallOf(spec);
    this.sequence.calls.push(replay);
    const response = await this.client.invoke(spec.operation, spec.product, await this.callOptionsOf(spec));
    this.replayCalls.set(response, replay);
    return response;
  }

  /**
   * Judges an answer against an expectation with the project's judge: a finding that weighs as a failure in this run
   * throws ConformanceFailure. The replay checks the same status (and code) with the same weight.
   */
  expect(response: ApiResponse, expectation: Expectation): ApiResponse {
    const statuses = typeof expectation.status === 'number' ? [expectation.status] : [...expectation.status];
    const statusSource = expectation.source ?? statusSourceOf(response.operation.id, response.operation.product, statuses);
    this.replayChecks(response).push({
      kind: 'status',
      statuses,
      weight: this.weightOf(statusSource, expectation.premises),
      why: expectation.what,
    });
    if (expectation.code !== undefined) {
      const { id, product } = response.operation;
      const codeSource = expectation.codeSource ?? codeSourceFor(id, product, statuses[0]!, expectation.source);
      this.replayChecks(response).push({
        kind: 'code',
        code: expectation.code,
        when: statuses,
        weight: this.weightOf(codeSource),
        why: expectation.what,
      });
    }
    this.assumedPremises = expectation.premises ?? [];
    try {
      judge(response, expectation, this);
    } finally {
      this.assumedPremises = [];
    }
    return response;
  }

  /** Weighs what a named check found on an answer; the replay checks the same fields, as `checks` says them. */
  check(check: CheckName, response: ApiResponse, what: string, findings: readonly Finding[], checks: readonly ReplayCheck[]): void {
    this.replayChecks(response).push(...checks);
    conclude(
      {
        header: headerOf(response, what),
        operation: response.operation.id,
        product: response.operation.product,
        checks: [check],
        findings,
        response,
      },
      this,
    );
  }

  /** What a departure from a source weighs in the replay: the run's failure, a premise the case stood on, or a note. */
  weightOf(source: Source, premises: readonly PremiseName[] = []): ReplayWeight {
    if (premises.some((p) => severityOf(premiseSource(PREMISES[p], this.run.profile), this.run) === 'warning')) return 'premise';
    return severityOf(source, this.run) === 'failure' ? 'departure' : 'note';
  }

  /** The replay keeps a value of this answer under a name (an API key), for the calls after it. */
  keep(response: ApiResponse, name: string, pointer: string): void {
    const call = this.replayCalls.get(response);
    if (call) call.keep = { name, pointer };
  }

  warn(warning: Warning): void {
    const key = JSON.stringify([warning.check, warning.context.split(' — ')[0], warning.field, warning.expected]);
    if (!this.warnings.has(key)) this.warnings.set(key, warning);
  }

  evaluated(evaluations: readonly Evaluation[]): void {
    for (const e of evaluations) this.checksMade.set(e.check, (this.checksMade.get(e.check) ?? 0) + 1);
  }

  assumed(operation: OperationId): AssumedPremise[] {
    return this.assumedPremises
      .filter((name) => concerns(PREMISES[name], operation))
      .map((name) => ({ name, ...PREMISES[name], source: premiseSource(PREMISES[name], this.run.profile) }));
  }

  private replayChecks(response: ApiResponse): ReplayCheck[] {
    // An answer no call of a command asked for (a token the cache fetched) has nothing for the replay to check.
    return this.replayCalls.get(response)?.checks ?? [];
  }

  private replayCallOf(spec: CallSpec): ReplayCall {
    const { auth, operation: id } = spec;
    const { headers, method } = operation(id);
    const takesEnvironment = headers.required.includes('x-target-environment') || headers.optional.includes('x-target-environment');
    return {
      command: this.sequence.commands.at(-1) ?? '',
      operation: id,
      product: spec.product,
      method,
      host: hostOf(id, spec.product),
      path: pathOf(id, spec.product, spec.params),
      key: spec.key ?? 'own',
      auth: auth === 'none' ? 'none' : 'bearer' in auth ? { bearer: auth.bearer } : { basic: basicOf(auth.basic) },
      ...(spec.referenceId !== undefined ? { referenceId: spec.referenceId } : {}),
      targetEnvironment: takesEnvironment && !spec.withoutTargetEnvironment,
      ...(spec.body !== undefined ? { body: spec.body } : {}),
      ...(STATUS_QUERIES.has(id) ? { statusQuery: true as const } : {}),
      ...(spec.callback ? { callback: true as const } : {}),
      checks: [],
    };
  }

  private async callOptionsOf(spec: CallSpec): Promise<CallOptions & { params?: PathParams }> {
    const auth = spec.auth;
    const authorization =
      auth === 'none'
        ? undefined
        : 'bearer' in auth
          ? await this.bearer(auth.bearer)
          : basicCredential(auth.basic.userId, auth.basic.apiKey ?? '');
    return {
      ...(spec.params ? { params: spec.params } : {}),
      ...(spec.key === 'none' ? { subscriptionKey: 'none' as const } : {}),
      ...(authorization ? { authorization } : {}),
      // A token the case presents with a registered user's key is the case's: a 401 to it is its answer.
      ...(auth !== 'none' && 'basic' in auth ? { renew: false } : {}),
      ...(spec.referenceId !== undefined ? { referenceId: spec.referenceId } : {}),
      ...(spec.withoutTargetEnvironment ? { targetEnvironment: null } : {}),
      ...(spec.body !== undefined ? { body: spec.body } : {}),
      ...(spec.reusesReference ? { reusesReference: true } : {}),
      ...(spec.callback && spec.referenceId !== undefined ? { callbackUrl: this.receiver.urlFor(spec.referenceId) } : {}),
    };
  }

  /** The run's access token of a product, from the cache. */
  private async bearer(product: Product): Promise<string> {
    return `Bearer ${await this.tokens.get(product)}`;
  }

  private async renew(authorization: string): Promise<string | undefined> {
    const token = /^Bearer (.+)$/i.exec(authorization)?.[1];
    const held = token === undefined ? undefined : this.tokens.heldAs(token);
    if (!held) return undefined;
    this.tokens.invalidate(held.key);
    return `Bearer ${await this.tokens.get(held.key)}`;
  }

  /** No call once the cap is reached (a call the careful client makes again may pass it by its own retries). */
  private refuseOverCap(): void {
    if (this.calls >= this.limits.maxCalls)
      throw new ExplorationStopped(`the cap of ${this.limits.maxCalls} calls (--max-calls) was reached`);
  }

  private async fetchToken(product: Product): Promise<{ accessToken: string; lifetimeSeconds: number }> {
    this.refuseOverCap();
    const account = this.accounts.get(product);
    if (!account?.apiKey) throw new Error(`the exploration holds no API user of ${product}`);
    const response = await this.client.createAccessToken(product, basicCredential(account.userId, account.apiKey));
    judge(response, { status: 200, what: 'an access token for the exploration' }, this);
    const body = response.json as { access_token: string; expires_in: number };
    this.redactor.add(body.access_token, 'access token');
    return { accessToken: body.access_token, lifetimeSeconds: body.expires_in };
  }

  /** A new API user of a product for the exploration's own calls, as a partner provisions one. */
  private async provision(product: Product): Promise<ApiUser> {
    const userId = randomUUID();
    this.created.apiUsers.push(userId);
    const created = await this.client.createApiUser(product, userId, this.config.callbackHost);
    judge(created, { status: 201, what: 'provisioning an API user for the exploration' }, this);
    const key = await this.client.createApiKey(product, userId);
    judge(key, { status: 201, what: 'creating the API key of an API user for the exploration' }, this);
    const apiKey = (key.json as { apiKey: string }).apiKey;
    this.redactor.addBasicCredential(userId, apiKey, product);
    return { userId, apiKey };
  }

  /** The secrets a report of this exploration must not hold: subscription keys, API keys, Basic credentials. */
  secrets(): string[] {
    return [...this.redactor.known];
  }

  /** The final status each transaction of the sequence was first read in (harness/judging/final-statuses.ts). */
  private readonly finalStatuses = new FinalStatusWatch();

  /**
   * Every answer as it comes: one that no answer may be (a redirect, too long, giving out a secret) ends the command at
   * once; and §3: a transaction read in a final status reads in it again, for the rest of the sequence.
   */
  private checkEveryAnswer(response: ApiResponse): void {
    refuseRedirect(response);
    judgeAnswer(response, this);
    this.finalStatuses.judge(response, this);
  }
}

/** One sequence of commands as it ran: what the replay and the report are made of. */
export interface Sequence {
  commands: string[];
  calls: ReplayCall[];
  exchanges: Exchange[];
  /** The values the exploration made (reference ids, API user ids) and the names the replay makes new ones under. */
  generated: Map<string, string>;
}

/** An API user's Basic credential in the replay: its id (a placeholder once planned) and the key an answer gave it. */
function basicOf(user: ApiUser): { user: string; key: string } {
  return { user: user.userId, key: `{{kept:${keyNameOf(user)}}}` };
}

/** The name the replay keeps an API user's key under. */
export const keyNameOf = (user: ApiUser): string => `${user.name ?? 'user'}_key`;

function newSequence(): Sequence {
  return { commands: [], calls: [], exchanges: [], generated: new Map() };
}
