import { isIP } from 'node:net';
import { PRODUCTS, type Product } from '../core/products.ts';
import { PROFILES, type ProfileName } from '../core/profiles.ts';
import { DEFAULT_MAX_RESPONSE_BYTES } from './client/momo-client.ts';

/** An existing API user to test with, instead of provisioning one. */
export interface ApiUserCredentials {
  userId: string;
  apiKey: string;
}

/** Everything the conformance harness needs to know about its target: read once, from the environment. */
export interface HarnessConfig {
  /** Undefined: start the embedded reference sandbox. */
  baseUrl: string | undefined;
  sandboxUrl: string | undefined;
  subscriptionKeys: Record<Product, string | undefined>;
  apiUsers: Record<Product, ApiUserCredentials | undefined>;
  targetEnvironment: string;
  currency: string;
  /**
   * A currency the target refuses (INVALID_CURRENCY): what the scenarios of a currency the service does not take
   * pay in. By default USD, or XOF when the target's currency is USD; a target that takes both names another.
   */
  refusedCurrency: string;
  /** Whether MOMO_REFUSED_CURRENCY was set: then the run was told the target refuses it, not left to assume so. */
  refusedCurrencySet: boolean;
  /**
   * The host the target reaches callbacks at, registered as providerCallbackHost for provisioned API users:
   * the host name of callbackUrl when that is set, else MOMO_CALLBACK_HOST.
   */
  callbackHost: string;
  /** The port the callback receiver listens on; 0: a free port (each worker its own). */
  callbackPort: number;
  /** The address the callback receiver listens on. */
  callbackBind: string;
  /** The receiver's public base URL as the target sees it (e.g. a tunnel); callbacks go to <callbackUrl>/callbacks/<secret>/<id>. */
  callbackUrl: string | undefined;
  profile: ProfileName;
  /**
   * Hold the target to the strict readings too (STRICT_READINGS in core/profiles.ts): the @strict scenarios run,
   * and the embedded sandbox refuses what they refuse. Off: only what the spec or the live service makes definite.
   */
  strict: boolean;
  /**
   * Per-request timeouts: a slow real sandbox can be given more. The whole answer, headers and body, must have
   * come within connectTimeoutMs + requestTimeoutMs, however the target spaces its bytes.
   */
  connectTimeoutMs: number;
  requestTimeoutMs: number;
  /**
   * The most of one response body the harness reads: beyond it the target is answering with more than any
   * answer of the API needs, which is a failure to conform, and the rest is not read (memory stays bounded).
   */
  maxResponseBytes: number;
  /**
   * How much evidence (redacted exchanges) the reports of one run hold, shared by its workers; past it, each
   * exchange is recorded as omitted, with its call and outcome only. The reports hold it several times over.
   */
  evidenceBudgetBytes: number;
  /** How long a scenario waits for an asynchronous state, and how often it looks. */
  pollTimeoutMs: number;
  pollIntervalMs: number;
  /** The longest a test number's delayed outcome may take (the live sandbox: ~30 s). */
  slowOutcomeTimeoutMs: number;
  /** After a callback, how long to watch for a duplicate. */
  callbackQuietMs: number;
  /** The waivers file of the certification (MOMO_WAIVERS), relative to the project folder; unset: waivers.json if there is one. */
  waiversFile: string | undefined;
  /**
   * How many times a failed scenario is run again (cucumber's retry). One that passes on a rerun is FLAKY:
   * counted apart, never PASS. 0: no rerun.
   */
  retries: number;
  /** How many times a call that met bad weather is made again (MOMO_CALL_RETRIES; harness/client/careful.ts). */
  callRetries: number;
  /** How long all of one call's attempts may take (MOMO_CALL_RETRY_BUDGET_MS). */
  callRetryBudgetMs: number;
  /** Deliberate deviations the embedded sandbox is started with (MOMO_SANDBOX_DEVIATIONS, checked by the sandbox); `npm run mutation` sets it. */
  embeddedDeviations: string | undefined;
  /** Conforming variations the embedded sandbox is started with (MOMO_SANDBOX_VARIATIONS); `npm run mutation` sets it. */
  embeddedVariations: string | undefined;
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`The harness configuration is wrong:\n${problems.map((p) => `  - ${p}`).join('\n')}\nSee .env.example for every setting.`);
    this.name = 'ConfigError';
  }
}

/** The environment variables the harness reads, with what each means; .env.example lists the same. */
export const CONFIG_VARIABLES = {
  MOMO_BASE_URL: 'Base URL of the target ({base_url}); unset: the embedded reference sandbox.',
  MOMO_SANDBOX_URL: 'Host of provisioning and the other {sandbox_url} operations; defaults to MOMO_BASE_URL.',
  MOMO_COLLECTION_KEY: 'Subscription key of the collection product.',
  MOMO_DISBURSEMENT_KEY: 'Subscription key of the disbursement product.',
  MOMO_REMITTANCE_KEY: 'Subscription key of the remittance product.',
  MOMO_COLLECTION_USER_ID: 'Optional existing API user of collection (with MOMO_COLLECTION_API_KEY); else one is provisioned.',
  MOMO_COLLECTION_API_KEY: 'API key of MOMO_COLLECTION_USER_ID.',
  MOMO_DISBURSEMENT_USER_ID: 'Optional existing API user of disbursement (with MOMO_DISBURSEMENT_API_KEY).',
  MOMO_DISBURSEMENT_API_KEY: 'API key of MOMO_DISBURSEMENT_USER_ID.',
  MOMO_REMITTANCE_USER_ID: 'Optional existing API user of remittance (with MOMO_REMITTANCE_API_KEY).',
  MOMO_REMITTANCE_API_KEY: 'API key of MOMO_REMITTANCE_USER_ID.',
  MOMO_TARGET_ENVIRONMENT: 'X-Target-Environment to send (default sandbox).',
  MOMO_CURRENCY: 'Currency the target accepts (default EUR).',
  MOMO_REFUSED_CURRENCY:
    'A currency the target refuses (INVALID_CURRENCY), for the scenarios of a currency the service does not take: an ISO 4217 code other than MOMO_CURRENCY (default USD, or XOF when MOMO_CURRENCY is USD).',
  MOMO_CALLBACK_HOST:
    "Host at which the target can reach the harness's callback receiver (default 127.0.0.1); with MOMO_CALLBACK_URL, its host.",
  MOMO_CALLBACK_PORT:
    'Port the callback receiver listens on (default 0: a free port per worker; a fixed port makes the run use one process).',
  MOMO_CALLBACK_BIND: 'Address the callback receiver listens on (default 127.0.0.1 when the callback host is loopback, else 0.0.0.0).',
  MOMO_CALLBACK_URL:
    'Public base URL of the callback receiver as the target sees it, e.g. a tunnel such as https://abc.example.app; its host is registered as providerCallbackHost.',
  MOMO_PROFILE: `Which behaviour to expect where spec and live sandbox differ: ${PROFILES.join(' or ')} (default spec).`,
  MOMO_STRICT:
    'true: hold the target to the strict readings too (npm run sandbox -- --list-differences lists them) and run the @strict scenarios; the embedded sandbox then refuses what they refuse (default false, as npm start -- --strict sets it).',
  MOMO_CONNECT_TIMEOUT_MS: 'Connect timeout of one request (default 5000).',
  MOMO_REQUEST_TIMEOUT_MS:
    'Timeout of one request, headers and body (default 15000); the whole answer must have come within this plus MOMO_CONNECT_TIMEOUT_MS.',
  MOMO_MAX_RESPONSE_BYTES:
    'The most of one response body the harness reads; a longer body fails as "the body exceeded" that size and is read no further (default 1048576, 1 MiB).',
  MOMO_EVIDENCE_BUDGET_BYTES:
    'How much evidence (redacted requests and responses) the reports of one run hold, shared by its workers; past it, exchanges are recorded as omitted (default 33554432, 32 MiB; at most 67108864).',
  MOMO_POLL_TIMEOUT_MS: 'How long to wait for an asynchronous state (default 10000).',
  MOMO_POLL_INTERVAL_MS: 'How often to look while waiting (default 100).',
  MOMO_SLOW_OUTCOME_TIMEOUT_MS: 'How long to wait for a delayed test-number outcome (default 45000).',
  MOMO_CALLBACK_QUIET_MS:
    "After a callback arrives, how long to watch for a duplicate (default 3000; at least the target's longest retry delay).",
  MOMO_WAIVERS:
    'The waivers file of the certification report: accepted failures (default waivers.json in the project folder, if there is one).',
  MOMO_CALL_RETRIES:
    'How many times the harness makes a call again that met bad weather: a transient 500 or 503, a gateway error, no answer where the call is safe to repeat (default 4; 0: never); a call it made again is an observation of availability, never a failure.',
  MOMO_CALL_RETRY_BUDGET_MS:
    "How long all of one call's attempts and the waits between them may take, Retry-After included (default 20000).",
  MOMO_RETRIES:
    'How many times a failed scenario is run again (default 1; 0: never); one that passes on a rerun is FLAKY, reported apart and never PASS (npm start -- --retries sets it).',
  MOMO_SANDBOX_DEVIATIONS:
    'Comma-separated deliberate deviations to start the embedded sandbox with, to see the suite fail (npm run sandbox -- --list-deviations); unset: a faithful sandbox.',
  MOMO_SANDBOX_VARIATIONS:
    'Comma-separated conforming variations to start the embedded sandbox with: answers the spec allows that it does not give by default, which the suite must pass (npm run sandbox -- --list-variations); unset: none.',
} as const;

type Variable = keyof typeof CONFIG_VARIABLES;

/**
 * The variables that hold a product's secrets: its subscription key, and the id and API key of an existing API
 * user. A reproduction (harness/reproduction/) names them in place of the values.
 */
export function secretVariablesOf(product: Product): { subscriptionKey: Variable; userId: Variable; apiKey: Variable } {
  const upper = product.toUpperCase();
  return {
    subscriptionKey: `MOMO_${upper}_KEY` as Variable,
    userId: `MOMO_${upper}_USER_ID` as Variable,
    apiKey: `MOMO_${upper}_API_KEY` as Variable,
  };
}

/** What a client of the target (harness/client/momo-client.ts) takes from the settings: where it is, its keys, its bounds. */
export function clientSettingsOf(config: HarnessConfig) {
  return {
    baseUrl: config.baseUrl!,
    sandboxUrl: config.sandboxUrl!,
    subscriptionKeys: config.subscriptionKeys,
    targetEnvironment: config.targetEnvironment,
    connectTimeoutMs: config.connectTimeoutMs,
    requestTimeoutMs: config.requestTimeoutMs,
    maxResponseBytes: config.maxResponseBytes,
  };
}

/** Reads settings from the environment, and gathers every problem with them, to be said at once. */
class SettingsReader {
  readonly problems: string[] = [];
  constructor(private readonly env: Record<string, string | undefined>) {}

  read(name: Variable): string | undefined {
    const value = this.env[name]?.trim();
    return value ? value : undefined;
  }

  url(name: Variable): string | undefined {
    const value = this.read(name);
    if (value === undefined) return undefined;
    try {
      const parsed = new URL(value);
      if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error('not http(s)');
      return value.replace(/\/+$/, '');
    } catch {
      this.problems.push(`${name} must be an http(s) URL such as https://sandbox.momodeveloper.mtn.com, got "${value}"`);
      return undefined;
    }
  }

  integer(name: Variable, fallback: number, min: number, max: number): number {
    const value = this.read(name);
    if (value === undefined) return fallback;
    const n = Number(value);
    if (!Number.isInteger(n) || n < min || n > max) {
      this.problems.push(`${name} must be a whole number from ${min} to ${max}, got "${value}"`);
      return fallback;
    }
    return n;
  }
}

export function loadConfig(env: Record<string, string | undefined>): HarnessConfig {
  const r = new SettingsReader(env);
  const target = targetOf(r);
  const config: HarnessConfig = {
    ...target,
    ...credentialsOf(r, target.baseUrl),
    ...currenciesOf(r),
    ...callbacksOf(r),
    ...timingsOf(r),
    waiversFile: r.read('MOMO_WAIVERS'),
    retries: r.integer('MOMO_RETRIES', 1, 0, 5),
    ...embeddedOf(r, target.baseUrl),
  };
  if (r.problems.length > 0) throw new ConfigError(r.problems);
  return config;
}

/** The target's URLs, environment, profile and strictness. */
function targetOf(r: SettingsReader): Pick<HarnessConfig, 'baseUrl' | 'sandboxUrl' | 'targetEnvironment' | 'profile' | 'strict'> {
  const baseUrl = r.url('MOMO_BASE_URL');
  if (baseUrl === undefined && r.read('MOMO_SANDBOX_URL') !== undefined)
    r.problems.push('MOMO_SANDBOX_URL is set without MOMO_BASE_URL: set MOMO_BASE_URL too, or neither to test the embedded sandbox');
  const sandboxUrl = r.url('MOMO_SANDBOX_URL') ?? baseUrl;
  const profile = r.read('MOMO_PROFILE') ?? 'spec';
  if (!(PROFILES as readonly string[]).includes(profile))
    r.problems.push(`MOMO_PROFILE must be ${PROFILES.join(' or ')}, got "${profile}"`);
  const strict = r.read('MOMO_STRICT') ?? 'false';
  if (!/^(true|false|1|0)$/i.test(strict)) r.problems.push(`MOMO_STRICT must be true or false, got "${strict}"`);
  return {
    baseUrl,
    sandboxUrl,
    targetEnvironment: r.read('MOMO_TARGET_ENVIRONMENT') ?? 'sandbox',
    profile: profile as ProfileName,
    strict: /^(true|1)$/i.test(strict),
  };
}

/** The currency the target takes, and one it refuses. */
function currenciesOf(r: SettingsReader): Pick<HarnessConfig, 'currency' | 'refusedCurrency' | 'refusedCurrencySet'> {
  const currency = r.read('MOMO_CURRENCY') ?? 'EUR';
  if (!/^[A-Z]{3}$/.test(currency)) r.problems.push(`MOMO_CURRENCY must be an ISO 4217 code such as EUR, got "${currency}"`);
  const refusedCurrency = r.read('MOMO_REFUSED_CURRENCY') ?? (currency === 'USD' ? 'XOF' : 'USD');
  if (!/^[A-Z]{3}$/.test(refusedCurrency))
    r.problems.push(`MOMO_REFUSED_CURRENCY must be an ISO 4217 code such as USD (three capital letters), got "${refusedCurrency}"`);
  else if (refusedCurrency === currency)
    r.problems.push(
      `MOMO_REFUSED_CURRENCY must be a currency the target refuses, not MOMO_CURRENCY itself ("${currency}"), the one it takes`,
    );
  return { currency, refusedCurrency, refusedCurrencySet: r.read('MOMO_REFUSED_CURRENCY') !== undefined };
}

/** Where callbacks are sent, and where the receiver listens. */
function callbacksOf(r: SettingsReader): Pick<HarnessConfig, 'callbackHost' | 'callbackPort' | 'callbackBind' | 'callbackUrl'> {
  const callbackHostSetting = r.read('MOMO_CALLBACK_HOST');
  if (callbackHostSetting !== undefined && !HOST_NAME.test(callbackHostSetting))
    r.problems.push(`MOMO_CALLBACK_HOST must be a host name or IPv4 address without scheme or port, got "${callbackHostSetting}"`);
  const callbackUrl = publicBaseUrl(r.read('MOMO_CALLBACK_URL'), r.problems);
  const callbackUrlHost = callbackUrl === undefined ? undefined : new URL(callbackUrl).hostname;
  if (callbackUrlHost !== undefined && callbackHostSetting !== undefined && callbackHostSetting.toLowerCase() !== callbackUrlHost)
    r.problems.push(
      `MOMO_CALLBACK_HOST ("${callbackHostSetting}") is not the host of MOMO_CALLBACK_URL ("${callbackUrlHost}"): callbacks must go to the host registered for them; set MOMO_CALLBACK_URL alone`,
    );
  const callbackHost = callbackUrlHost ?? callbackHostSetting ?? '127.0.0.1';
  // A receiver for a loopback host need not be reachable from elsewhere; one for another host must be
  // (behind a tunnel, whose agent forwards to loopback, MOMO_CALLBACK_BIND=127.0.0.1 is enough).
  const callbackBind = r.read('MOMO_CALLBACK_BIND') ?? (isLoopback(callbackHost) ? '127.0.0.1' : '0.0.0.0');
  if (isIP(callbackBind) === 0)
    r.problems.push(`MOMO_CALLBACK_BIND must be an IP address of this machine such as 127.0.0.1, 0.0.0.0 or ::, got "${callbackBind}"`);
  return { callbackHost, callbackPort: r.integer('MOMO_CALLBACK_PORT', 0, 0, 65_535), callbackBind, callbackUrl };
}

/** The subscription keys and API users of each product; a remote target needs every key. */
function credentialsOf(r: SettingsReader, baseUrl: string | undefined): Pick<HarnessConfig, 'subscriptionKeys' | 'apiUsers'> {
  const subscriptionKeys = {} as Record<Product, string | undefined>;
  const apiUsers = {} as Record<Product, ApiUserCredentials | undefined>;
  for (const product of PRODUCTS) {
    const names = secretVariablesOf(product);
    subscriptionKeys[product] = r.read(names.subscriptionKey);
    const userId = r.read(names.userId);
    const apiKey = r.read(names.apiKey);
    if ((userId === undefined) !== (apiKey === undefined)) {
      r.problems.push(`${names.userId} and ${names.apiKey} go together: set both or neither`);
    } else if (userId && apiKey) {
      if (!/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i.test(userId))
        r.problems.push(`${names.userId} must be a UUID v4`);
      apiUsers[product] = { userId, apiKey };
    }
  }
  const missing = PRODUCTS.filter((p) => subscriptionKeys[p] === undefined).map((p) => secretVariablesOf(p).subscriptionKey);
  if (baseUrl !== undefined && missing.length > 0)
    r.problems.push(
      `with MOMO_BASE_URL set, the subscription keys are needed too: ${missing.join(', ')} (a product without a key cannot be tested; select the others with --tags)`,
    );
  return { subscriptionKeys, apiUsers };
}

/** How long the harness waits, how much it reads and keeps, and how it makes a call again. */
function timingsOf(r: SettingsReader) {
  return {
    connectTimeoutMs: r.integer('MOMO_CONNECT_TIMEOUT_MS', 5_000, 100, 120_000),
    requestTimeoutMs: r.integer('MOMO_REQUEST_TIMEOUT_MS', 15_000, 100, 300_000),
    maxResponseBytes: r.integer('MOMO_MAX_RESPONSE_BYTES', DEFAULT_MAX_RESPONSE_BYTES, 1024, 256 * MiB),
    // Each report holds the evidence again (the bundle all of them), and verify reads at most 512 MiB of it.
    evidenceBudgetBytes: r.integer('MOMO_EVIDENCE_BUDGET_BYTES', 32 * MiB, 0, 64 * MiB),
    pollTimeoutMs: r.integer('MOMO_POLL_TIMEOUT_MS', 10_000, 100, 600_000),
    pollIntervalMs: r.integer('MOMO_POLL_INTERVAL_MS', 100, 10, 60_000),
    slowOutcomeTimeoutMs: r.integer('MOMO_SLOW_OUTCOME_TIMEOUT_MS', 45_000, 100, 600_000),
    callbackQuietMs: r.integer('MOMO_CALLBACK_QUIET_MS', 3_000, 0, 600_000),
    callRetries: r.integer('MOMO_CALL_RETRIES', 4, 0, 10),
    callRetryBudgetMs: r.integer('MOMO_CALL_RETRY_BUDGET_MS', 20_000, 0, 300_000),
  } satisfies Partial<HarnessConfig>;
}

/** The deviations and variations of the embedded sandbox, which a remote target cannot take. */
function embeddedOf(r: SettingsReader, baseUrl: string | undefined): Pick<HarnessConfig, 'embeddedDeviations' | 'embeddedVariations'> {
  const embeddedDeviations = r.read('MOMO_SANDBOX_DEVIATIONS');
  const embeddedVariations = r.read('MOMO_SANDBOX_VARIATIONS');
  if (embeddedDeviations !== undefined && baseUrl !== undefined)
    r.problems.push(
      'MOMO_SANDBOX_DEVIATIONS starts the embedded sandbox with deliberate deviations; it cannot apply to the server MOMO_BASE_URL names: unset one of them',
    );
  if (embeddedVariations !== undefined && baseUrl !== undefined)
    r.problems.push(
      'MOMO_SANDBOX_VARIATIONS starts the embedded sandbox with conforming variations; it cannot apply to the server MOMO_BASE_URL names: unset one of them',
    );
  return { embeddedDeviations, embeddedVariations };
}

const MiB = 1024 * 1024;

/** A host name or IPv4 address, as providerCallbackHost takes it (schemas/api-user-create.schema.json). */
const HOST_NAME = /^[A-Za-z0-9.-]+$/;

/** 127.x.x.x, localhost or ::1: an address only this machine reaches. */
export function isLoopback(host: string): boolean {
  return /^(127\.\d+\.\d+\.\d+|localhost|\[?::1\]?)$/i.test(host);
}

/** MOMO_CALLBACK_URL: an http(s) origin with a host name or IPv4 address, no path, query or credentials; without a trailing slash. */
function publicBaseUrl(value: string | undefined, problems: string[]): string | undefined {
  if (value === undefined) return undefined;
  const wrong = (why: string) => {
    problems.push(
      `MOMO_CALLBACK_URL must be the receiver's public base URL, such as https://abc.example.app or http://callbacks.example.com:8090, ${why}; got "${value}"`,
    );
    return undefined;
  };
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return wrong('an absolute http(s) URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return wrong('with the scheme http or https');
  if (!HOST_NAME.test(url.hostname)) return wrong('with a host name or IPv4 address (the target registers it as providerCallbackHost)');
  if (url.username || url.password || url.search || url.hash || url.pathname !== '/')
    return wrong('without a path, query or credentials (callbacks go to <URL>/callbacks/<secret>/<id>)');
  return url.origin;
}
