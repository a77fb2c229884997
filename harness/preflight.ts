import { randomUUID } from 'node:crypto';
import { PRODUCTS, type Product } from '../core/products.ts';
import type { OperationId } from '../core/catalogue/operations.ts';
import { TRANSACTIONS, bindingOf, isServedUnder } from '../core/catalogue/routes.ts';
import { clientSettingsOf, secretVariablesOf, type ApiUserCredentials, type HarnessConfig } from './config.ts';
import { MomoClient, wasCreated, type ApiResponse } from './client/momo-client.ts';
import { Redactor } from '../core/secrets/redact.ts';
import { reportSafe } from '../core/report-text.ts';
import type { PreflightRefusals, Refusal, RefusalScope } from './client/setting-refused.ts';

export type { PreflightRefusals, Refusal };

/**
 * Before any scenario, each product's settings are tried once, in the order a partner meets them: the subscription
 * key, an API user and its key (the configured one, or one provisioned), a token, the target environment, and the
 * host callbacks go to. A setting the target refuses would otherwise fail every scenario of the product as if the
 * provider were broken; instead the refusal names the setting, and the product's scenarios are not tested for that
 * reason (the client refuses to call it: harness/client/momo-client.ts). What the preflight cannot tell (no answer,
 * an unavailable target, an operation the target does not offer) it leaves to the scenarios.
 */

/** The most of the target's answer a refusal quotes. */
const QUOTED_ANSWER_CHARACTERS = 300;

/** Tries every product's settings against the target; the refusals, by product (none: all accepted). */
export async function preflight(config: HarnessConfig): Promise<PreflightRefusals> {
  const redactor = new Redactor();
  for (const key of Object.values(config.subscriptionKeys)) if (key) redactor.add(key, 'subscription key');
  for (const user of Object.values(config.apiUsers)) if (user) redactor.addBasicCredential(user.userId, user.apiKey);
  const client = new MomoClient({
    ...clientSettingsOf(config),
    redactor,
  });
  try {
    const refusals: PreflightRefusals = {};
    for (const product of PRODUCTS) {
      if (config.subscriptionKeys[product] === undefined) continue;
      const refusal = await tryProduct(client, product, config, redactor).catch(() => undefined);
      if (refusal) refusals[product] = refusal;
    }
    return refusals;
  } finally {
    await client.close();
  }
}

/** What a step of the preflight found: a refusal of a setting, nothing to say (undefined), or what the next step needs. */
type Found<T> = { refusal: Refusal } | { next: T } | undefined;

async function tryProduct(client: MomoClient, product: Product, config: HarnessConfig, redactor: Redactor): Promise<Refusal | undefined> {
  const check = new ProductCheck(client, product, config, redactor);
  const user = await check.apiUser();
  if (!user || 'refusal' in user) return user?.refusal;
  const token = await check.accessToken(user.next);
  if (!token || 'refusal' in token) return token?.refusal;
  return (await check.environmentRefusal(token.next)) ?? check.callbackHostRefusal(user.next);
}

interface CheckedUser {
  user: ApiUserCredentials;
  /** The configured API user's record, as read; none when the preflight provisioned one. */
  record?: ApiResponse;
}

/** The preflight of one product's settings: its key, its API user, its target environment, its callback host. */
class ProductCheck {
  private readonly names: ReturnType<typeof secretVariablesOf>;

  constructor(
    private readonly client: MomoClient,
    private readonly product: Product,
    private readonly config: HarnessConfig,
    private readonly redactor: Redactor,
  ) {
    this.names = secretVariablesOf(product);
  }

  private refuse(scope: RefusalScope, setting: string, what: string, answer: ApiResponse, advice = ''): { refusal: Refusal } {
    return {
      refusal: { scope, setting, message: reportSafe(`${what}: ${quoteAnswer(answer, this.redactor)}${advice ? `; ${advice}` : ''}`) },
    };
  }

  private keyRefused(answer: ApiResponse): { refusal: Refusal } {
    const { subscriptionKey } = this.names;
    return this.refuse(
      'product',
      subscriptionKey,
      `the gateway refused ${subscriptionKey}`,
      answer,
      `set it to the primary or secondary key of your ${this.product} subscription`,
    );
  }

  /**
   * A configured API user is read first: that needs only the key (one the target does not know is a 404, which says
   * the key passed), and its record says where its callbacks may go. Otherwise one is provisioned, which tries the
   * key the same way.
   */
  async apiUser(): Promise<Found<CheckedUser>> {
    const { client, product } = this;
    const configured = this.config.apiUsers[product];
    if (configured) {
      const record = await client.getApiUser(product, configured.userId);
      return isGatewayRefusal(record) ? this.keyRefused(record) : { next: { user: configured, record } };
    }
    const userId = randomUUID();
    const created = await client.createApiUser(product, userId, this.config.callbackHost);
    if (isGatewayRefusal(created)) return this.keyRefused(created);
    const key = wasCreated(created) ? await client.createApiKey(product, userId) : undefined;
    if (key && isGatewayRefusal(key)) return this.keyRefused(key);
    const apiKey = (key?.json as { apiKey?: unknown } | undefined)?.apiKey;
    // Any other answer is the target's to account for, in the provisioning scenarios: not a setting's fault.
    if (key?.status !== 201 || typeof apiKey !== 'string') return undefined;
    this.redactor.addBasicCredential(userId, apiKey);
    return { next: { user: { userId, apiKey } } };
  }

  /** An access token for the API user; a refusal names the setting to fix: the key, the user id or its API key. */
  async accessToken({ user, record }: CheckedUser): Promise<Found<string>> {
    const { names } = this;
    const token = await this.client.createAccessToken(
      this.product,
      `Basic ${Buffer.from(`${user.userId}:${user.apiKey}`).toString('base64')}`,
    );
    const accessToken = (token.json as { access_token?: unknown } | undefined)?.access_token;
    if (isGatewayRefusal(token)) return this.keyRefused(token);
    if (isCredentialRefusal(token)) {
      // An API user the target has just provisioned, under a key its gateway took, refused a token with the key the
      // target gave it: where provisioning and tokens are one server, no setting of the run's is at fault (a key of
      // another product the gateway would refuse), the target is (§4.5 #14–15, §4.2 #1), and the scenarios judge it.
      // Two servers may be two deployments that do not share their API users: MOMO_SANDBOX_URL is then to check.
      if (!record) {
        if (sameServer(this.config.baseUrl, this.config.sandboxUrl)) return undefined;
        return this.refuse(
          'product',
          'MOMO_SANDBOX_URL',
          `the target at MOMO_BASE_URL refused a token to an API user just provisioned at MOMO_SANDBOX_URL under ${names.subscriptionKey}`,
          token,
          'set MOMO_SANDBOX_URL to the provisioning of the same deployment as MOMO_BASE_URL',
        );
      }
      if (record.status === 404)
        return this.refuse(
          'product',
          names.userId,
          `the target does not know ${names.userId} (reading the API user gave 404), and refused it a token`,
          token,
          `set ${names.userId} and ${names.apiKey} to an API user provisioned under ${names.subscriptionKey}, or leave both unset to have one provisioned`,
        );
      return this.refuse(
        'product',
        names.apiKey,
        `the target refused ${names.apiKey} of ${names.userId} a token`,
        token,
        `set it to the API key of that API user (made with POST /v1_0/apiuser/{id}/apikey), or leave both unset to have one provisioned`,
      );
    }
    if (token.status !== 200 || typeof accessToken !== 'string') return undefined;
    this.redactor.add(accessToken, 'access token');
    return { next: accessToken };
  }

  /** The target environment: the status of a transaction that does not exist, which carries it and changes nothing. */
  async environmentRefusal(accessToken: string): Promise<Refusal | undefined> {
    const { product, names } = this;
    const read = await this.client.invoke(environmentProbe(product), product, {
      authorization: `Bearer ${accessToken}`,
      params: { referenceId: randomUUID() },
    });
    if ((read.json as { code?: unknown } | undefined)?.code === 'NOT_ALLOWED_TARGET_ENVIRONMENT') {
      const otherProduct = this.config.apiUsers[product] ? ` (or ${names.userId} was provisioned under another product's key)` : '';
      return this.refuse(
        'environment',
        'MOMO_TARGET_ENVIRONMENT',
        `the target refused MOMO_TARGET_ENVIRONMENT "${this.config.targetEnvironment}"${otherProduct}`,
        read,
        'set it to the X-Target-Environment your subscription is for ("sandbox" on the MTN sandbox)',
      ).refusal;
    }
    return isGatewayRefusal(read) ? this.keyRefused(read).refusal : undefined;
  }

  /** Callbacks go only to the host the API user is registered with (real-api-notes: INVALID_CALLBACK_URL_HOST). */
  callbackHostRefusal({ record }: CheckedUser): Refusal | undefined {
    const { config, names } = this;
    const registered = (record?.json as { providerCallbackHost?: unknown } | undefined)?.providerCallbackHost;
    if (record?.status !== 200 || typeof registered !== 'string' || registered === '') return undefined;
    if (registered.toLowerCase() === config.callbackHost.toLowerCase()) return undefined;
    return this.refuse(
      'callbacks',
      config.callbackUrl ? 'MOMO_CALLBACK_URL' : 'MOMO_CALLBACK_HOST',
      `${names.userId} is registered for callbacks to "${registered}", not to "${config.callbackHost}" where the harness receives them`,
      record,
      `set ${config.callbackUrl ? 'MOMO_CALLBACK_URL to a URL on that host' : 'MOMO_CALLBACK_HOST to that host'}, or use an API user registered for "${config.callbackHost}"`,
    ).refusal;
  }
}

/** Whether two base URLs name one server (scheme, host and port); an unset one is the other. */
function sameServer(a: string | undefined, b: string | undefined): boolean {
  if (a === undefined || b === undefined) return true;
  return new URL(a).origin === new URL(b).origin;
}

/** The status query the spec lists under the product: a read that carries X-Target-Environment. */
function environmentProbe(product: Product): OperationId {
  const queries = TRANSACTIONS.map((t) => t.status).filter((id) => isServedUnder(id, product));
  return queries.find((id) => bindingOf(id, product).beyondSpec === undefined) ?? queries[0]!;
}

/** The API gateway's refusal of a subscription key: 401 or 403 {statusCode, message} (real-api-notes). */
function isGatewayRefusal(answer: ApiResponse): boolean {
  const json = answer.json as { statusCode?: unknown } | undefined;
  return (
    (answer.status === 401 || answer.status === 403) &&
    (json?.statusCode !== undefined || answer.operation.id === 'getApiUser' || answer.operation.id === 'createApiUser')
  );
}

/**
 * The token operation refusing the API user's credential: 401 (§4.2 #1), or the live sandbox's 500
 * {"error":"login_failed"}, or its NOT_ALLOWED_TARGET_ENVIRONMENT for a user of another product (real-api-notes).
 */
function isCredentialRefusal(answer: ApiResponse): boolean {
  const json = answer.json as { error?: unknown; code?: unknown } | undefined;
  return (
    answer.status === 401 ||
    answer.status === 403 ||
    (answer.status === 500 && (json?.error === 'login_failed' || json?.code === 'NOT_ALLOWED_TARGET_ENVIRONMENT'))
  );
}

function quoteAnswer(answer: ApiResponse, redactor: Redactor): string {
  const body = redactor.body(answer.text).replace(/\s+/g, ' ').trim();
  const shown = body.length > QUOTED_ANSWER_CHARACTERS ? `${body.slice(0, QUOTED_ANSWER_CHARACTERS)}…` : body;
  return `${answer.status}${shown ? ` ${shown}` : ' (empty body)'}`;
}

/**
 * The lines a run begins with, one per refusal: the setting, the target's answer, what to do, and which scenarios it
 * stops. A refusal that is the same for several products (the target environment, say) is one line naming them all.
 */
export function refusalLines(refusals: PreflightRefusals): string[] {
  const byMessage = new Map<string, { refusal: Refusal; products: Product[] }>();
  for (const product of PRODUCTS) {
    const refusal = refusals[product];
    if (!refusal) continue;
    const key = `${refusal.scope} ${refusal.message}`;
    const entry = byMessage.get(key) ?? { refusal, products: [] };
    entry.products.push(product);
    byMessage.set(key, entry);
  }
  return [...byMessage.values()].map(({ refusal, products }) => {
    const which = `The ${listed(products)} scenarios`;
    const stopped = {
      product: which,
      environment: `${which} that call ${products.length === 1 ? 'its' : 'their'} API`,
      callbacks: `${which} that ask for callbacks`,
    }[refusal.scope];
    return `Preflight: ${refusal.message}. ${stopped} are not tested.`;
  });
}

function listed(words: readonly string[]): string {
  return words.length <= 1 ? words.join('') : `${words.slice(0, -1).join(', ')} and ${words.at(-1)}`;
}
