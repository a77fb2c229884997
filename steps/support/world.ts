import { World, setWorldConstructor, type IWorldOptions } from '@cucumber/cucumber';
import type { ApiResponse, Exchange, PaymentBody } from '../../harness/client/momo-client.ts';
import { eventually } from '../../harness/eventually.ts';
import { judge, type Expectation } from '../../harness/judging/judge.ts';
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
}

/** A consent being claimed through bc-authorize and the OAuth 2.0 token operation. */
export interface Consent {
  account: Account;
  msisdn: string;
  authReqId?: string;
  interval?: number;
  accessToken?: string;
  refreshToken?: string;
  /** expires_in of the last consent token (§2.7). */
  tokenExpiresIn?: number;
  /** The receiver's key of the X-Callback-Url the consent request gave, if it gave one. */
  callbackKey?: string;
  /** When the partner last asked for the consent or its token (ms since the epoch), so the next ask keeps to `interval`. */
  lastAskedAt?: number;
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
  /** The partner acting in this scenario (an API user of one product). */
  partner?: Account;
  /** Another partner, for scenarios about what one may not do with another's resources. */
  otherPartner?: Account;
  /** The last answer of the target: what a "Then it is …" step judges. */
  response?: ApiResponse;
  payment?: Payment;
  readonly payments: Payment[] = [];
  consent?: Consent;
  /** An access token the partner holds itself, e.g. to present it after it expired. */
  accessToken?: IssuedToken;
  /** The calls of a caching client over more than one token lifetime. */
  clientCalls?: ClientCall[];
  /** The API user this scenario registered through provisioning. */
  registeredUserId?: string;
  /** A balance read earlier in the scenario, to compare with. */
  balanceBefore?: string;

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

  /** Keeps the answer as the scenario's last one and returns it. */
  remember(response: ApiResponse): ApiResponse {
    this.response = response;
    return response;
  }

  /** Judges the last answer against what the spec says; a departure fails the step with the details. */
  expect(expectation: Expectation, response: ApiResponse | undefined = this.response): ApiResponse {
    if (!response) throw new Error('No answer to judge: a When step must call the target first.');
    judge(response, expectation, this.harness.behaviour, this.harness.redactor);
    return response;
  }

  /** Polls with the configured deadline; `slow` allows for the test numbers whose outcome is delayed. */
  eventually<T>(description: string, probe: () => Promise<T | undefined>, options: { slow?: boolean } = {}): Promise<T> {
    const timeoutMs = options.slow ? this.config.slowOutcomeTimeoutMs : this.config.pollTimeoutMs;
    return eventually(probe, { description, timeoutMs, intervalMs: this.config.pollIntervalMs });
  }

  get lastPayment(): Payment {
    if (!this.payment) throw new Error('No payment in this scenario yet.');
    return this.payment;
  }
}

setWorldConstructor(MomoWorld);
