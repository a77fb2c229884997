import { randomUUID } from 'node:crypto';
import type { OperationId } from '../../core/catalogue/operations.ts';
import { pathOf } from '../../core/catalogue/routes.ts';
import { SUBSCRIPTION_KEY_HEADER } from '../../core/catalogue/headers.ts';
import type { Product } from '../../core/products.ts';
import type { Sandbox } from '../../sandbox/app.ts';
import type { CallbackSink } from '../../sandbox/domain/callbacks.ts';
import type { SandboxPlugin } from '../../sandbox/domain/plugins.ts';

/**
 * Fills every store of a sandbox with records as large as the schemas allow (2048-character callback URLs and
 * providerCallbackHosts, 1024-character externalIds, 160-character texts, 254-character parties, the texts in
 * two-byte strings) until each
 * creation answers 503: the attack of issue 12, where long callback URLs exhausted the heap before the count
 * caps were reached. The test of retention runs it under a small --retention-max-bytes, the measurement of
 * docs/sandbox.md's "Reliability" under the defaults.
 */

/** Callbacks go nowhere: the fill measures what the stores hold, not sockets to a listener. */
export const SILENT_CALLBACKS: SandboxPlugin = {
  name: 'silent-callbacks',
  wrap: {
    callbacks: (): CallbackSink => ({ send() {}, sendLater() {}, settled: async () => {}, close: async () => {} }),
  },
};

/** Unreachable on purpose (port 1), and as long as X-Callback-Url may be. */
const CALLBACK_HOST = '127.0.0.1:1';
const LONG_URL = (() => {
  const head = `http://${CALLBACK_HOST}/`;
  return head + 'c'.repeat(2048 - head.length);
})();
/**
 * A copy of the URL in a string of its own, as a header parsed off a socket is: fastify.inject hands the same
 * string to every request, which would let every record share one URL and the measurement look smaller than
 * what a network caller costs.
 */
const ownCopy = (text: string) => Buffer.from(text, 'latin1').toString('latin1');
// A character beyond Latin-1 makes V8 keep the whole string in two bytes a character: the costliest texts.
const TEXT = `${'t'.repeat(159)}€`;
const EXTERNAL_ID = `${'e'.repeat(1023)}€`;
const EMAIL = `${'m'.repeat(64)}@${'d'.repeat(254 - 64 - 1 - 4)}.com`;
const PENDING_MSISDN = '46733123453';

export interface FillResult {
  /** Creations answered, by the store they fill: how many succeeded, and how many were 503 with Retry-After. */
  byStore: Record<string, { stored: number; full: number }>;
  /** Answers other than success or 503 with Retry-After: each is a failure of the sandbox. */
  unexpected: string[];
  requests: number;
}

interface Credentials {
  key: string;
  authorization: string;
  userId: string;
  apiKey: string;
}

/**
 * Creates records round by round, one of each kind a round, until a whole round is refused with 503 and every
 * kind has been refused at least once, or until maxRounds.
 */
export async function fillEveryStore(sandbox: Sandbox, options: { maxRounds?: number } = {}): Promise<FillResult> {
  const filler = new StoreFiller(sandbox);
  const kinds = await filler.kinds();
  const byStore = Object.fromEntries(Object.keys(kinds).map((k) => [k, { stored: 0, full: 0 }]));
  const unexpected: string[] = [];
  for (let round = 0; round < (options.maxRounds ?? Number.MAX_SAFE_INTEGER); round += 1) {
    let storedThisRound = 0;
    for (const [name, make] of Object.entries(kinds)) {
      const res = await make();
      if (res.statusCode >= 200 && res.statusCode < 300) {
        byStore[name]!.stored += 1;
        storedThisRound += 1;
      } else if (res.statusCode === 503 && res.headers['retry-after'] !== undefined) {
        byStore[name]!.full += 1;
      } else if (unexpected.length < 20) {
        unexpected.push(`${name}: ${res.statusCode} ${res.body.slice(0, 200)}`);
      }
    }
    if (storedThisRound === 0 && Object.values(byStore).every((s) => s.full > 0)) break;
  }
  return { byStore, unexpected, requests: filler.requests };
}

type Answer = Awaited<ReturnType<Sandbox['app']['inject']>>;

/** Makes records of every kind the sandbox stores, each as large as its schema allows, through the sandbox's routes. */
class StoreFiller {
  requests = 0;
  private readonly keys: Sandbox['context']['settings']['subscriptionKeys'];
  private alternate = 0;
  private readonly unredeemed: string[] = [];

  constructor(private readonly sandbox: Sandbox) {
    this.keys = sandbox.context.settings.subscriptionKeys;
  }

  /** Each kind of record, and how to create one more. */
  async kinds(): Promise<Record<string, () => Promise<Answer>>> {
    const collection = await this.provision('collection');
    const disbursement = await this.provision('disbursement');
    return {
      'API user': () => this.createUser('remittance'),
      'request-to-pay': () => this.create('requestToPay', collection, 'collection', { ...this.money(), payer: this.party() }),
      'request-to-withdraw': () => this.create('requestToWithdraw', collection, 'collection', { ...this.money(), payer: this.party() }),
      deposit: () => this.create('deposit', disbursement, 'disbursement', { ...this.money(), payee: this.party() }),
      refund: () => this.create('refund', disbursement, 'disbursement', { ...this.money(), referenceIdToRefund: randomUUID() }),
      transfer: () => this.create('transfer', disbursement, 'disbursement', { ...this.money(), payee: this.party() }),
      'consent request': () => this.authorize(collection),
      'consent grant': () => this.grant(collection),
    };
  }

  private call(method: 'GET' | 'POST', url: string, headers: Record<string, string>, payload?: unknown): Promise<Answer> {
    this.requests += 1;
    const form = typeof payload === 'string';
    return this.sandbox.app.inject({
      method,
      url,
      headers: {
        ...headers,
        ...(payload === undefined ? {} : { 'content-type': form ? 'application/x-www-form-urlencoded' : 'application/json' }),
      },
      ...(payload === undefined ? {} : { payload: form ? payload : JSON.stringify(payload) }),
    });
  }

  private createUser(product: Product, userId = randomUUID()): Promise<Answer> {
    return this.call(
      'POST',
      pathOf('createApiUser'),
      { [SUBSCRIPTION_KEY_HEADER]: this.keys[product], 'x-reference-id': userId },
      { providerCallbackHost: `http://${CALLBACK_HOST}/${'h'.repeat(2048 - CALLBACK_HOST.length - 8)}` },
    );
  }

  private async provision(product: Product): Promise<Credentials> {
    const userId = randomUUID();
    const created = await this.createUser(product, userId);
    const key = await this.call('POST', pathOf('createApiKey', undefined, { referenceId: userId }), {
      [SUBSCRIPTION_KEY_HEADER]: this.keys[product],
    });
    const apiKey = (key.json() as { apiKey: string }).apiKey;
    const token = await this.call('POST', pathOf('createAccessToken', product), {
      [SUBSCRIPTION_KEY_HEADER]: this.keys[product],
      authorization: `Basic ${Buffer.from(`${userId}:${apiKey}`).toString('base64')}`,
    });
    if (token.statusCode !== 200)
      throw new Error(
        `could not provision a ${product} caller: ${created.statusCode}, ${key.statusCode}, ${token.statusCode} ${token.body}`,
      );
    return { key: this.keys[product], authorization: `Bearer ${(token.json() as { access_token: string }).access_token}`, userId, apiKey };
  }

  private business(c: Credentials, extra: Record<string, string> = {}): Record<string, string> {
    return {
      [SUBSCRIPTION_KEY_HEADER]: c.key,
      authorization: c.authorization,
      'x-target-environment': this.sandbox.context.settings.targetEnvironments[0]!,
      ...extra,
    };
  }

  private party() {
    return this.alternate++ % 2 === 0 ? { partyIdType: 'EMAIL', partyId: EMAIL } : { partyIdType: 'MSISDN', partyId: PENDING_MSISDN };
  }

  private money() {
    return {
      amount: '1',
      currency: this.sandbox.context.settings.currencies[0]!,
      externalId: EXTERNAL_ID,
      payerMessage: TEXT,
      payeeNote: TEXT,
    };
  }

  private create(id: OperationId, c: Credentials, product: Product, body: unknown): Promise<Answer> {
    return this.call(
      'POST',
      pathOf(id, product),
      this.business(c, { 'x-reference-id': randomUUID(), 'x-callback-url': ownCopy(LONG_URL) }),
      body,
    );
  }

  private async authorize(c: Credentials): Promise<Answer> {
    const form = 'login_hint=ID:46733123450/MSISDN&scope=profile&access_type=offline';
    const res = await this.call(
      'POST',
      pathOf('bcAuthorize', 'collection'),
      this.business(c, { 'x-callback-url': ownCopy(LONG_URL) }),
      form,
    );
    if (res.statusCode === 200) this.unredeemed.push((res.json() as { auth_req_id: string }).auth_req_id);
    return res;
  }

  /** A consent redeemed, which stores a consent token; a new request when none is waiting. */
  private grant(c: Credentials): Promise<Answer> {
    const authReqId = this.unredeemed.shift();
    if (authReqId === undefined) return this.authorize(c);
    return this.call(
      'POST',
      pathOf('createOAuthToken', 'collection'),
      {
        [SUBSCRIPTION_KEY_HEADER]: c.key,
        authorization: `Basic ${Buffer.from(`${c.userId}:${c.apiKey}`).toString('base64')}`,
        'x-target-environment': this.sandbox.context.settings.targetEnvironments[0]!,
      },
      `grant_type=urn:openid:params:grant-type:ciba&auth_req_id=${authReqId}`,
    );
  }
}
