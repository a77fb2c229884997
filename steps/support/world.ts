import type { PreparedCall } from './every-operation.ts';
import { World, setWorldConstructor, type IWorldOptions } from '@cucumber/cucumber';
import type { ApiResponse, Exchange, PaymentBody } from '../../harness/client/momo-client.ts';
import { DeadlineExceededError, eventually } from '../../harness/eventually.ts';
import { NotObservable, PremiseNotHeld, headerOf, type Expectation } from '../../harness/judging/judge.ts';
import { deadlineFinding, describeCheck, describeDifference, type CheckName, type Finding } from '../../harness/checks/index.ts';
import type { PremiseName } from '../../harness/checks/premises.ts';
import type { Source } from '../../core/sources.ts';
import type { Product } from '../../core/products.ts';
import type { OperationId } from '../../core/catalogue/operations.ts';
import type { Account, Harness } from './harness.ts';
import type { Party } from './parties.ts';
import { currentHarness } from './hooks-state.ts';

/** A transaction this scenario created, and how it was asked for. */
export interface Payment {
  /** The operation that created it and the product it was made under: the catalogue gives its status query. */
  create: OperationId;
  product: Product;
  /** How messages name it: the operation's label, e.g. "request to pay" or "transfer". */
  kind: string;
  referenceId: string;
  body: PaymentBody;
  account: Account;
  callbackUrl?: string;
  /** The test party whose number decides the outcome, when the scenario chose one. */
  party?: Party;
  /** The final status it was read to end in, where the scenario lets the target decide (a limit, a lack of funds). */
  endedAs?: string;
  /** The answer to its creation: taken (202, or a 409 to a retry whose first attempt made it), or a refusal. */
  answer?: ApiResponse;
}

/** Under which product each step of the consent flow is called. */
export interface ConsentFlow {
  ask: Product;
  redeem: Product;
  read: Product;
}

/** A consent being claimed through bc-authorize and the OAuth 2.0 token operation. */
export interface Consent {
  /** The API user that asked for the consent. */
  account: Account;
  /** The API user that redeems it: the asker, or another of the redeeming product (steps/support/consent.ts). */
  redeemer: Account;
  /** The premise the way it is redeemed and read rests on, until the user information is read with its token. */
  way?: PremiseName;
  flow: ConsentFlow;
  msisdn: string;
  /** The scope asked for, space-separated. */
  scope: string;
  authReqId?: string;
  interval?: number;
  /** expires_in of the consent request (§2.8), and when it was asked for (ms since the epoch): its life runs from then. */
  requestExpiresIn?: number;
  askedAt?: number;
  accessToken?: string;
  refreshToken?: string;
  /** expires_in of the last consent token (§2.7). */
  tokenExpiresIn?: number;
  /** When the consent can no longer be refreshed, as the last consent token put it (refresh_token_expired_in, ms since the epoch). */
  endsAt?: number;
  /** When it ended as the consent's first token put it, to compare each refresh's with. */
  endedAtBefore?: number;
  /** Who the user information read with its token was about, the first time (checks/consent.ts customerIn). */
  customerRead?: string;
  /** The phone_number the first read of its user information gave, when it gave one: another identity of the customer. */
  phoneRead?: string;
  /** Who another customer's consent, given to the partner since, read as (customerIn). */
  otherCustomerRead?: string;
  /** Whether its token was refreshed (the refresh_token grant answered with a new token). */
  refreshed?: boolean;
  /** Whether a refresh was then sent without any credential, whose answer is the scenario's to judge. */
  refreshedWithoutCredential?: boolean;
  /** The answer that gave the last consent token. */
  tokenAnswer?: ApiResponse;
  /** The receiver's key of the X-Callback-Url the consent request gave, if it gave one. */
  callbackKey?: string;
  /** When the partner last asked for the consent or its token (ms since the epoch), so the next ask keeps to `interval`. */
  lastAskedAt?: number;
  /** When the answer to the last call of the token operation for its auth_req_id arrived (ms since the epoch). */
  lastPolledAt?: number;
  /** The answer to the consent request (bc-authorize). */
  askAnswer?: ApiResponse;
  /** The answers to the consent redeemed with a wrong API key, one a way that did not stay pending. */
  /** What the token operation answered the consent redeemed with a wrong API key, each way tried (its premise). */
  wrongKeyAnswers?: { way: PremiseName | undefined; answer: ApiResponse }[];
}

/** An access token the partner asked for itself (not through the harness's token cache). */
export interface IssuedToken {
  account: Account;
  accessToken: string;
  expiresIn: number;
  /** When the answer arrived (ms since the epoch): the token lives expires_in seconds from no later than this. */
  receivedAt: number;
}

/** One call of a client that keeps its token in the cache, and what it got. */
export interface ClientCall {
  /** ms since the client started calling. */
  atMs: number;
  credential: string;
  response: ApiResponse;
}

/**
 * The state of one scenario, and the few things every step needs: the shared harness, the acting
 * partner, the last answer, and judging it. Domain behaviour lives in steps/support/<noun>.ts.
 */
export class MomoWorld extends World {
  readonly harness: Harness;
  readonly evidence: Exchange[] = [];
  /** The error of the step that failed, as the step threw it (hooks.ts keeps it: the After hook's own is lost). */
  failedStepError: unknown;
  /** The partner acting in this scenario (an API user of one product). */
  partner?: Account;
  /** Another partner, for scenarios about what one may not do with another's resources. */
  otherPartner?: Account;
  /** The last answer of the target: what a "Then it is …" step judges. */
  response?: ApiResponse;
  payment?: Payment;
  readonly payments: Payment[] = [];
  /** The key of the one callback address several of the scenario's payments gave. */
  sharedCallback?: string;
  /** A transaction asked for again under its reference id, at a callback address of its own, and whether it was refused. */
  askedAgain?: { address: string; refused: boolean };
  /** Refunds of parts of the scenario's payment, each with the answer to its creation (taken or refused). */
  partsRefunded?: { refund: Payment; response: ApiResponse }[];
  consent?: Consent;
  /** An access token the partner holds itself, e.g. to present it after it expired. */
  accessToken?: IssuedToken;
  /** The calls of a caching client over more than one token lifetime. */
  clientCalls?: ClientCall[];
  /** The API user this scenario registered through provisioning. */
  registeredUserId?: string;
  /** A call of any operation, set up and ready to be made with one thing wrong (every-operation.ts). */
  preparedCall?: PreparedCall;
  /** A balance read earlier in the scenario, to compare with. */
  balanceBefore?: string;
  /** A creation made and left to end in its own time, while the scenario goes on. */
  underWay?: Payment;
  /** The key of the callback address a refused consent request gave (callbacks.ts). */
  refusedConsentCallbackKey?: string;
  /** Two delivery notifications of the payment sent at once, as they were answered. */
  notifiedTwice?: ApiResponse[];
  /** The same creation sent twice at once under one reference id, as both were answered. */
  sentTwice?: [Payment, Payment];
  /** How many of the scenario's payments were made when that balance was read: those after it are what moved it. */
  paymentsBeforeBalance = 0;
  /** The target was seen to keep balances in this scenario: a first transaction moved one by exactly its amount. */
  balancesKept = false;
  /**
   * The rule the scenario's last request breaks on purpose, when its When step knows it better than the catalogue
   * does: what a "Then it is refused …" step cites (an observed bound, a strict reading).
   */
  rule?: Source;
  /** The consent flow runs within the partner's own product (beyond the spec) rather than on the spec's paths. */
  consentWithinProduct?: boolean;
  /**
   * The premises the scenario's last request rests on (harness/checks/premises.ts), as its When step knows them: the
   * payment it refunds ended as taken, the target refuses the currency. Every judgement of the answers that follow
   * rests on them while the scenario assumes them; a new request forgets them.
   */
  restsOn: PremiseName[] = [];

  constructor(options: IWorldOptions) {
    super(options);
    this.harness = currentHarness();
  }

  get config() {
    return this.harness.config;
  }

  get client() {
    return this.harness.client;
  }

  /** The acting partner, who must have been introduced by a Given step. */
  get actor(): Account {
    if (!this.partner) throw new Error('No partner in this scenario: start it with "Given a partner subscribed to <product>".');
    return this.partner;
  }

  async actAs(product: Product, options: { fresh?: boolean } = {}): Promise<Account> {
    this.partner = options.fresh ? await this.harness.provision(product) : await this.harness.account(product);
    return this.partner;
  }

  bearer(account: Account = this.actor): Promise<string> {
    return this.harness.bearer(account);
  }

  /** Keeps the answer as the scenario's last one and returns it; the premises of the request before are forgotten. */
  remember(response: ApiResponse): ApiResponse {
    this.response = response;
    this.restsOn = [];
    return response;
  }

  /** Judges the last answer against what the spec says; a departure fails the step with the details. */
  expect(expectation: Expectation, response: ApiResponse | undefined = this.response): ApiResponse {
    if (!response) throw new Error('No answer to judge: a When step must call the target first.');
    const premises = [...new Set([...(expectation.premises ?? []), ...this.restsOn])];
    return this.harness.judge(response, premises.length > 0 ? { ...expectation, premises } : expectation);
  }

  /** The scenario takes a premise for granted from here on (harness/checks/premises.ts). */
  assume(premise: PremiseName): void {
    this.harness.assume(premise);
  }

  /** The scenario saw a premise hold. */
  held(premise: PremiseName): void {
    this.harness.held(premise);
  }

  /**
   * Sets up the scenario's case one way after another, each resting on its own premise, until one holds: a way whose
   * answers would fail only because its premise does not hold for this target (PremiseNotHeld) gives way to the next.
   * The way that held is returned; when none did, the scenario is not tested, naming every premise tried.
   */
  async eitherWay<T>(
    ways: readonly { premise: PremiseName; attempt: () => Promise<T> }[],
    options: { holdsWhenDone?: boolean } = {},
  ): Promise<T> {
    const unheld: PremiseNotHeld[] = [];
    for (const way of ways) {
      this.assume(way.premise);
      // The checks a way made before it turned out not to hold verified nothing: they do not count.
      const checkpoint = this.harness.checkpoint();
      try {
        const result = await way.attempt();
        // A way whose premise the scenario has yet to see hold further on (a consent token that must also read the
        // user information) stays assumed: the step that sees it hold says so.
        if (options.holdsWhenDone !== false) this.held(way.premise);
        return result;
      } catch (error) {
        if (!(error instanceof PremiseNotHeld)) throw error;
        this.harness.rollback(checkpoint);
        this.harness.drop(way.premise);
        unheld.push(error);
        this.log(`Tried another way: ${error.message.split('\n')[0]}`);
      }
    }
    if (unheld.length === 1) throw unheld[0]!;
    throw new PremiseNotHeld(
      unheld.map((e) => e.premise).join(', '),
      [
        `Premises not held, so not tested: none of ${ways.length} ways to set up the case holds on this target (${unheld.map((e) => e.premise).join('; ')}).`,
        ...unheld.map((e) => e.message.replace(/^/gm, '  ')),
      ].join('\n'),
    );
  }

  /**
   * Weighs what a step's own checks of an answer found (harness/checks/index.ts): a failure fails the step, naming
   * each failed check, its source and the field; a warning is reported apart; either way the checks count as made.
   */
  check(
    checks: CheckName | readonly CheckName[],
    response: ApiResponse,
    what: string,
    findings: readonly Finding[],
    premises: readonly PremiseName[] = [],
  ): void {
    this.harness.conclude({
      header: headerOf(response, what),
      operation: response.operation.id,
      product: response.operation.product,
      checks: typeof checks === 'string' ? [checks] : checks,
      findings,
      response,
      premises: [...new Set([...premises, ...this.restsOn])],
    });
  }

  /**
   * Waits, with the configured deadline, for a state that `check` expects. The spec gives no time for any of them,
   * so a deadline passed weighs as `timing` says (the live service's pace, an observation, by default): in the
   * mtn-sandbox profile a failure of the check; in the spec profile the run could not observe it (not tested),
   * saying which deadline to raise.
   */
  async awaitState<T>(
    check: CheckName,
    description: string,
    probe: () => Promise<T | undefined>,
    options: { slow?: boolean; readsTarget?: boolean; timing: Source; where: string; operation: OperationId; product: Product },
  ): Promise<T> {
    try {
      const state = await this.eventually(description, probe, options);
      this.harness.evaluated([{ check, operation: options.operation, product: options.product, verdict: 'passed' }]);
      return state;
    } catch (error) {
      if (!(error instanceof DeadlineExceededError)) throw error;
      const setting = options.slow ? 'MOMO_SLOW_OUTCOME_TIMEOUT_MS' : 'MOMO_POLL_TIMEOUT_MS';
      const last =
        error.lastProblem instanceof Error
          ? error.lastProblem.message
          : error.lastProblem === undefined
            ? 'nothing'
            : String(error.lastProblem);
      const found = deadlineFinding(check, { description, timeoutMs: error.timeoutMs, setting, last, timing: options.timing });
      this.harness.conclude({
        header: options.where,
        operation: options.operation,
        product: options.product,
        checks: [check],
        findings: [found],
      });
      throw new NotObservable(
        `${options.where}\n  ${describeCheck(found)}: ${describeDifference(found)}\n  The spec gives no time for this; if the target is slower than ${error.timeoutMs} ms here, raise ${setting}.`,
      );
    }
  }

  /**
   * Polls with the configured deadline; `slow` allows for the test numbers whose outcome is delayed. A probe that reads
   * the target (`readsTarget`: a status query) looks at most twice a second, as the sandbox's client report asks of a
   * client (polling-rate); one that looks at what the harness holds (the callbacks heard) looks as often as configured.
   */
  eventually<T>(
    description: string,
    probe: () => Promise<T | undefined>,
    options: { slow?: boolean; readsTarget?: boolean } = {},
  ): Promise<T> {
    const timeoutMs = options.slow ? this.config.slowOutcomeTimeoutMs : this.config.pollTimeoutMs;
    const intervalMs = options.readsTarget ? Math.max(this.config.pollIntervalMs, STATUS_READ_INTERVAL_MS) : this.config.pollIntervalMs;
    return eventually(probe, { description, timeoutMs, intervalMs });
  }

  get lastPayment(): Payment {
    if (!this.payment) throw new Error('No payment in this scenario yet.');
    return this.payment;
  }
}

/** The least time between two reads of one transaction's status: at most two a second (the client report's polling-rate). */
const STATUS_READ_INTERVAL_MS = 500;

setWorldConstructor(MomoWorld);
