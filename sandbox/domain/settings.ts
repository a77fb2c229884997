import { randomBytes, randomInt } from 'node:crypto';
import { PROFILES, type ProfileName } from '../../core/profiles.ts';
import { PRODUCTS, type Product } from '../../core/products.ts';
import { parseCallbackHostRule, type CallbackHostRule } from './callback-destinations.ts';
import { CommandLineError, parseCommandLine, type OptionSpecs } from '../../core/command-line.ts';
import {
  CHAOS_CONDITIONS,
  type ChaosConditionDefinition,
  CHAOS_CONDITION_NAMES,
  parseChaosShares,
  parseMsRange,
  type ChaosShares,
  type MsRange,
} from './chaos-conditions.ts';

/** Every setting of the reference sandbox. Each has a flag, an environment variable and a default. */
export interface SandboxSettings {
  host: string;
  port: number;
  profile: ProfileName;
  subscriptionKeys: Record<Product, string>;
  tokenLifetimeSeconds: number;
  currencies: string[];
  targetEnvironments: string[];
  outcomesFile: string | undefined;
  delayedSuccessMs: number;
  pendingTimeoutMs: number;
  /** documented: each operation's own (core/catalogue), else one method for every callback. */
  callbackMethod: 'documented' | 'PUT' | 'POST';
  callbackTimeoutMs: number;
  /** any: every host but those always refused (docs/callbacks.md); else only the names, addresses and ranges listed. */
  callbackHosts: 'any' | CallbackHostRule[];
  callbackRetryDelaysMs: number[];
  notificationWindowMs: number;
  notificationCooldownMs: number;
  openingBalance: string;
  retentionMaxEntries: number;
  retentionMaxAgeMs: number;
  /** Every record of every store together may take at most this many estimated bytes (sandbox/domain/store.ts). */
  retentionMaxBytes: number;
  maxApiUsers: number;
  consentIntervalSeconds: number;
  consentRequestLifetimeSeconds: number;
  consentTokenLifetimeSeconds: number;
  consentValidSeconds: number;
  scopes: string[];
  /**
   * The HMAC secret of tokens. Empty only with dataDir and no secret configured: the data directory's own then
   * signs them (sandbox/domain/persistence.ts), so tokens stay valid across restarts.
   */
  jwtSecret: string;
  /** Where the sandbox keeps its state across restarts (--data); undefined: in memory only. */
  dataDir: string | undefined;
  logLevel: string;
  /** A caller that has not sent its request's headers within this many ms (from its first byte) is dropped. */
  headersTimeoutMs: number;
  /** A caller that has not sent its whole request, body included, within this many ms is answered 408 and dropped. */
  requestTimeoutMs: number;
  /** An idle kept-alive connection is closed after this many ms. */
  keepAliveTimeoutMs: number;
  /** Connections beyond this many open at once are closed as soon as they are accepted. */
  maxConnections: number;
  /** Refuse what the strict readings refuse (STRICT_READINGS in core/profiles.ts); off: accept what the live service accepts. */
  strict: boolean;
  /** The folder the client report is written to (sandbox/client-report); undefined: no client report is kept. */
  clientReport: string | undefined;
  /** The spec-legal chaos conditions to apply (./chaos-conditions.ts), each with its share; none: the sandbox as it is. */
  chaos: ChaosShares;
  /** Seeds the chaos's draws: the same seed and the same requests give the same conditions. */
  chaosSeed: number;
  /** How long the latency condition holds an answer back. */
  chaosLatencyMs: MsRange;
  /** How much longer the long-pending condition keeps a transaction PENDING. */
  chaosLongPendingMs: number;
  /** How much later the callback-delayed condition sends a callback. */
  chaosCallbackDelayMs: MsRange;
}

/** The documented development keys, used when no key is configured. They guard nothing of value. */
export const DEVELOPMENT_KEYS: Readonly<Record<Product, string>> = {
  collection: 'sandbox-collection-key',
  disbursement: 'sandbox-disbursement-key',
  remittance: 'sandbox-remittance-key',
};

export class SettingsError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid sandbox settings:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'SettingsError';
  }
}

/** Parses one raw setting; throws InvalidSetting with what is wrong. */
type Parse<T> = (raw: string) => T;

class InvalidSetting extends Error {}
const invalid = (message: string): never => {
  throw new InvalidSetting(message);
};

interface SettingSpec<K extends keyof SandboxSettings> {
  key: K;
  flag: string;
  env: string;
  fallback: string;
  describe: string;
  parse: Parse<SandboxSettings[K]>;
  /** A flag that takes no value (--strict); its environment variable takes true or false. */
  switch?: boolean;
  /** What --help shows as the default, when not the fallback (a value drawn at random when unset). */
  shownDefault?: string;
}

const integer =
  (min: number, max: number, unit = ''): Parse<number> =>
  (raw) => {
    if (!/^-?\d+$/.test(raw.trim())) invalid(`must be a whole number${unit}, got "${raw}"`);
    const value = Number(raw);
    return value >= min && value <= max ? value : invalid(`must be between ${min} and ${max}${unit}, got ${value}`);
  };
const text =
  (max = 256): Parse<string> =>
  (raw) =>
    raw.length > 0 && raw.length <= max ? raw : invalid(`must be 1 to ${max} characters`);
const list =
  (item: RegExp, what: string): Parse<string[]> =>
  (raw) => {
    const items = raw
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    if (items.length === 0) invalid(`must list at least one ${what}`);
    const bad = items.find((s) => !item.test(s));
    return bad === undefined ? items : invalid(`"${bad}" is not a valid ${what}`);
  };
const boolean: Parse<boolean> = (raw) =>
  ['true', '1', 'yes'].includes(raw.trim().toLowerCase())
    ? true
    : ['false', '0', 'no', ''].includes(raw.trim().toLowerCase())
      ? false
      : invalid(`must be true or false, got "${raw}"`);
const oneOf =
  <T extends string>(values: readonly T[]): Parse<T> =>
  (raw) =>
    (values as readonly string[]).includes(raw) ? (raw as T) : invalid(`must be one of ${values.join(', ')}, got "${raw}"`);

const msRange =
  (maxMs: number): Parse<MsRange> =>
  (raw) => {
    try {
      return parseMsRange(raw, maxMs);
    } catch (error) {
      return invalid((error as Error).message);
    }
  };

const HOUR = 3_600_000;
const MIB = 1024 * 1024;

const SPECS = [
  spec({ key: 'host', flag: 'host', env: 'MOMO_SANDBOX_HOST', fallback: '127.0.0.1', describe: 'Address to listen on.', parse: text(255) }),
  spec({
    key: 'port',
    flag: 'port',
    env: 'PORT',
    fallback: '8080',
    describe: 'Port to listen on (0 picks a free one).',
    parse: integer(0, 65535),
  }),
  spec({
    key: 'profile',
    flag: 'profile',
    env: 'MOMO_PROFILE',
    fallback: 'spec',
    describe: `Behaviour profile: ${PROFILES.join(' or ')} (see --list-differences).`,
    parse: oneOf(PROFILES),
  }),
  spec({
    key: 'tokenLifetimeSeconds',
    flag: 'token-lifetime',
    env: 'MOMO_SANDBOX_TOKEN_LIFETIME',
    fallback: '3600',
    describe: 'expires_in of access tokens, in seconds.',
    parse: integer(1, 31_536_000, ' seconds'),
  }),
  spec({
    key: 'currencies',
    flag: 'currencies',
    env: 'MOMO_SANDBOX_CURRENCIES',
    fallback: 'EUR',
    describe: 'Comma-separated ISO 4217 codes accepted in payments (others: INVALID_CURRENCY).',
    parse: list(/^[A-Z]{3}$/, 'ISO 4217 code'),
  }),
  spec({
    key: 'targetEnvironments',
    flag: 'target-environments',
    env: 'MOMO_SANDBOX_TARGET_ENVIRONMENTS',
    fallback: 'sandbox',
    describe: 'Comma-separated X-Target-Environment values accepted (others: NOT_ALLOWED_TARGET_ENVIRONMENT).',
    parse: list(/^[A-Za-z0-9_.-]{1,64}$/, 'target environment'),
  }),
  spec({
    key: 'outcomesFile',
    flag: 'outcomes',
    env: 'MOMO_SANDBOX_OUTCOMES',
    fallback: '',
    describe: 'JSON file of test-number outcomes that replace or extend the built-in table.',
    parse: (raw) => raw || undefined,
  }),
  spec({
    key: 'delayedSuccessMs',
    flag: 'delayed-success-ms',
    env: 'MOMO_SANDBOX_DELAYED_SUCCESS_MS',
    fallback: '25000',
    describe: 'How long the delayed-success test number (46733123454) stays PENDING, in ms.',
    parse: integer(0, 24 * HOUR, ' ms'),
  }),
  spec({
    key: 'pendingTimeoutMs',
    flag: 'pending-timeout-ms',
    env: 'MOMO_SANDBOX_PENDING_TIMEOUT_MS',
    fallback: '120000',
    describe: 'After this many ms a PENDING transaction times out: FAILED with reason EXPIRED.',
    parse: integer(1, 24 * HOUR, ' ms'),
  }),
  spec({
    key: 'callbackMethod',
    flag: 'callback-method',
    env: 'MOMO_SANDBOX_CALLBACK_METHOD',
    fallback: 'documented',
    describe:
      "HTTP method of transaction callbacks: documented (each operation's own: PUT for request to pay, POST for v1 deposits and refunds, ...), PUT or POST.",
    parse: oneOf(['documented', 'PUT', 'POST'] as const),
  }),
  spec({
    key: 'callbackHosts',
    flag: 'callback-hosts',
    env: 'MOMO_SANDBOX_CALLBACK_HOSTS',
    fallback: 'any',
    describe:
      'Where callbacks may go: "any" host, or a comma-separated list of host names ("*.example.com" for a suffix), IP addresses and CIDR ranges. Link-local and cloud metadata addresses are refused whatever it says (docs/callbacks.md).',
    parse: callbackHosts,
  }),
  spec({
    key: 'callbackTimeoutMs',
    flag: 'callback-timeout-ms',
    env: 'MOMO_SANDBOX_CALLBACK_TIMEOUT_MS',
    fallback: '2000',
    describe: 'Timeout of one callback attempt, in ms.',
    parse: integer(1, 60_000, ' ms'),
  }),
  spec({
    key: 'callbackRetryDelaysMs',
    flag: 'callback-retry-delays-ms',
    env: 'MOMO_SANDBOX_CALLBACK_RETRY_DELAYS_MS',
    fallback: '1000,5000',
    describe: 'Comma-separated waits before each retry of a failed callback, in ms; "none" sends once.',
    parse: retryDelays,
  }),
  spec({
    key: 'notificationWindowMs',
    flag: 'notification-window-ms',
    env: 'MOMO_SANDBOX_NOTIFICATION_WINDOW_MS',
    fallback: String(HOUR / 2),
    describe: 'How long after completion a delivery notification may be sent (then 410), in ms; must end inside the retention age.',
    parse: integer(1, 30 * 24 * HOUR, ' ms'),
  }),
  spec({
    key: 'notificationCooldownMs',
    flag: 'notification-cooldown-ms',
    env: 'MOMO_SANDBOX_NOTIFICATION_COOLDOWN_MS',
    fallback: '60000',
    describe: 'After a delivery notification, repeats for the same id within this many ms get 429.',
    parse: integer(0, 24 * HOUR, ' ms'),
  }),
  spec({
    key: 'openingBalance',
    flag: 'opening-balance',
    env: 'MOMO_SANDBOX_OPENING_BALANCE',
    fallback: '1000000',
    describe: 'Opening balance of every account (API user, product, currency), a decimal string.',
    parse: (raw) =>
      /^(?:0|[1-9]\d{0,14})(?:\.\d{1,4})?$/.test(raw)
        ? raw
        : invalid(`must be a non-negative decimal string such as "1000000", got "${raw}"`),
  }),
  spec({
    key: 'retentionMaxEntries',
    flag: 'retention-max-entries',
    env: 'MOMO_SANDBOX_RETENTION_MAX_ENTRIES',
    fallback: '500000',
    describe: 'At most this many transactions of each kind are kept; when full and none is older than the age limit, creations get 503.',
    parse: integer(1, 50_000_000),
  }),
  spec({
    key: 'retentionMaxAgeMs',
    flag: 'retention-max-age-ms',
    env: 'MOMO_SANDBOX_RETENTION_MAX_AGE_MS',
    fallback: String(HOUR),
    describe:
      'Transactions older than this many ms are forgotten; consent requests and grants live as long as they can be redeemed or refreshed.',
    parse: integer(1000, 30 * 24 * HOUR, ' ms'),
  }),
  spec({
    key: 'retentionMaxBytes',
    flag: 'retention-max-bytes',
    env: 'MOMO_SANDBOX_RETENTION_MAX_BYTES',
    fallback: String(256 * MIB),
    describe:
      'All records together (transactions, consents, API users) may take at most this many estimated bytes, whatever they carry (long callback URLs, say); when full and none has expired, creations get 503. The default fits the default heap of Node.',
    parse: integer(MIB, 64 * 1024 * MIB, ' bytes'),
  }),
  spec({
    key: 'maxApiUsers',
    flag: 'max-api-users',
    env: 'MOMO_SANDBOX_MAX_API_USERS',
    fallback: '10000',
    describe: 'At most this many API users (they do not expire).',
    parse: integer(1, 10_000_000),
  }),
  spec({
    key: 'consentIntervalSeconds',
    flag: 'consent-interval',
    env: 'MOMO_SANDBOX_CONSENT_INTERVAL',
    fallback: '2',
    describe: 'bc-authorize interval; the consent is granted after it, in seconds.',
    parse: integer(0, 3600, ' seconds'),
  }),
  spec({
    key: 'consentRequestLifetimeSeconds',
    flag: 'consent-request-lifetime',
    env: 'MOMO_SANDBOX_CONSENT_REQUEST_LIFETIME',
    fallback: '600',
    describe: 'expires_in of an auth_req_id, in seconds.',
    parse: integer(1, 86_400, ' seconds'),
  }),
  spec({
    key: 'consentTokenLifetimeSeconds',
    flag: 'consent-token-lifetime',
    env: 'MOMO_SANDBOX_CONSENT_TOKEN_LIFETIME',
    fallback: '3600',
    describe: 'expires_in of consent access tokens, in seconds (spec default 3600).',
    parse: integer(1, 31_536_000, ' seconds'),
  }),
  spec({
    key: 'consentValidSeconds',
    flag: 'consent-valid-in',
    env: 'MOMO_SANDBOX_CONSENT_VALID_IN',
    fallback: '86400',
    describe: 'Default refresh validity of a consent when bc-authorize names no consent_valid_in, in seconds.',
    parse: integer(1, 31_536_000, ' seconds'),
  }),
  spec({
    key: 'scopes',
    flag: 'scopes',
    env: 'MOMO_SANDBOX_SCOPES',
    fallback: 'profile,openid,all_info',
    describe: 'Comma-separated consent scopes bc-authorize accepts (others: UNSUPPORTED_SCOPE).',
    parse: list(/^[A-Za-z0-9_:.-]{1,64}$/, 'scope'),
  }),
  spec({
    key: 'jwtSecret',
    flag: 'jwt-secret',
    env: 'MOMO_SANDBOX_JWT_SECRET',
    fallback: '',
    describe:
      "HMAC secret that signs tokens (when unset: random per start, or with --data the data directory's own, so tokens stay valid across restarts).",
    // Drawn once every setting is known (resolveSettingsWith): with --data the directory's secret is used instead.
    parse: (raw) => raw,
    shownDefault: '(random)',
  }),
  spec({
    key: 'dataDir',
    flag: 'data',
    env: 'MOMO_SANDBOX_DATA',
    fallback: '',
    describe:
      'Directory where API users, keys, transactions, balances, consents and pending outcomes are kept across restarts and crashes (docs/sandbox.md#state-that-survives-a-restart---data); unset: in memory only.',
    parse: (raw) => raw || undefined,
  }),
  spec({
    key: 'strict',
    flag: 'strict',
    env: 'MOMO_SANDBOX_STRICT',
    fallback: 'false',
    describe:
      'Refuse what the strict readings refuse (--list-differences lists them): unknown body fields, a body where an operation defines none, empty optional headers, a providerCallbackHost that is not a host name, JSON on form operations.',
    parse: boolean,
    switch: true,
  }),
  spec({
    key: 'clientReport',
    flag: 'client-report',
    env: 'MOMO_SANDBOX_CLIENT_REPORT',
    fallback: '',
    describe:
      'Folder to write the client report to: what each client (API user, or subscription key before provisioning) did against the API rules and integration practices, as HTML, JSON and JUnit, when the sandbox stops and on POST /client-report/write (docs/sandbox.md). Unset: none is kept.',
    parse: (raw) => raw || undefined,
  }),
  spec({
    key: 'chaos',
    flag: 'chaos',
    env: 'MOMO_SANDBOX_CHAOS',
    fallback: '',
    describe:
      'Spec-legal chaos: comma-separated conditions, each with an optional =share from 0 to 1 (else its default), or "all", e.g. "500=0.1,latency,cut-after-store=0.05"; see --list-chaos. None by default.',
    parse: (raw) => {
      try {
        return parseChaosShares(raw);
      } catch (error) {
        return invalid((error as Error).message);
      }
    },
  }),
  spec({
    key: 'chaosSeed',
    flag: 'chaos-seed',
    env: 'MOMO_SANDBOX_CHAOS_SEED',
    fallback: '',
    describe: 'Seed of the chaos: the same seed and the same requests give the same conditions (random per start when unset, and printed).',
    parse: (raw) => (raw.trim() === '' ? randomInt(0, 2 ** 32) : integer(0, 2 ** 32 - 1)(raw)),
    shownDefault: '(random)',
  }),
  spec({
    key: 'chaosLatencyMs',
    flag: 'chaos-latency-ms',
    env: 'MOMO_SANDBOX_CHAOS_LATENCY_MS',
    fallback: '50-1500',
    describe: 'The latency chaos condition holds an answer back a random time in this range, in ms ("min-max").',
    parse: msRange(60_000),
  }),
  spec({
    key: 'chaosLongPendingMs',
    flag: 'chaos-long-pending-ms',
    env: 'MOMO_SANDBOX_CHAOS_LONG_PENDING_MS',
    fallback: '5000',
    describe: 'The long-pending chaos condition keeps a transaction PENDING this many ms longer than its test number says.',
    parse: integer(1000, 24 * HOUR, ' ms'),
  }),
  spec({
    key: 'chaosCallbackDelayMs',
    flag: 'chaos-callback-delay-ms',
    env: 'MOMO_SANDBOX_CHAOS_CALLBACK_DELAY_MS',
    fallback: '1000-5000',
    describe: 'The callback-delayed chaos condition sends a callback a random time in this range later, in ms ("min-max").',
    parse: msRange(HOUR),
  }),
  spec({
    key: 'headersTimeoutMs',
    flag: 'headers-timeout-ms',
    env: 'MOMO_SANDBOX_HEADERS_TIMEOUT_MS',
    fallback: '10000',
    describe: 'A connection that has not sent its request headers within this many ms is dropped (slow or stalled callers).',
    parse: integer(100, 600_000, ' ms'),
  }),
  spec({
    key: 'requestTimeoutMs',
    flag: 'request-timeout-ms',
    env: 'MOMO_SANDBOX_REQUEST_TIMEOUT_MS',
    fallback: '30000',
    describe:
      'A connection that has not sent its whole request, body included, within this many ms is answered 408 and dropped; nothing of it is stored. At least --headers-timeout-ms.',
    parse: integer(100, 600_000, ' ms'),
  }),
  spec({
    key: 'keepAliveTimeoutMs',
    flag: 'keep-alive-timeout-ms',
    env: 'MOMO_SANDBOX_KEEP_ALIVE_TIMEOUT_MS',
    fallback: '5000',
    describe: 'An idle kept-alive connection is closed after this many ms.',
    parse: integer(1, 600_000, ' ms'),
  }),
  spec({
    key: 'maxConnections',
    flag: 'max-connections',
    env: 'MOMO_SANDBOX_MAX_CONNECTIONS',
    fallback: '1024',
    describe: 'At most this many connections are open at once; one more is closed as soon as it is accepted.',
    parse: integer(1, 1_000_000),
  }),
  spec({
    key: 'logLevel',
    flag: 'log-level',
    env: 'MOMO_SANDBOX_LOG_LEVEL',
    fallback: 'info',
    describe: 'pino log level: fatal, error, warn, info, debug, trace or silent.',
    parse: oneOf(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const),
  }),
] as const;

const KEY_SPECS = PRODUCTS.map((product) => ({
  product,
  flag: `${product}-key`,
  env: `MOMO_${product.toUpperCase()}_KEY`,
}));

function spec<K extends keyof SandboxSettings>(s: SettingSpec<K>): SettingSpec<K> {
  return s;
}

function callbackHosts(raw: string): 'any' | CallbackHostRule[] {
  if (raw.trim().toLowerCase() === 'any') return 'any';
  const entries = raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (entries.length === 0) invalid('must be "any" or list at least one host name, address or CIDR range');
  return entries.map((entry) => {
    const rule = parseCallbackHostRule(entry);
    return typeof rule === 'string'
      ? invalid(`${rule}; list host names, IP addresses or CIDR ranges such as 10.0.0.0/8, or say "any"`)
      : rule;
  });
}

function retryDelays(raw: string): number[] {
  if (raw.trim() === 'none') return [];
  const parts = raw.split(',').map((s) => s.trim());
  if (parts.some((p) => !/^\d{1,7}$/.test(p)))
    invalid(`must be "none" or comma-separated whole numbers of ms such as "1000,5000", got "${raw}"`);
  if (parts.length > 10) invalid('allows at most 10 retries');
  return parts.map(Number);
}

/**
 * A setting that whoever starts the sandbox reads besides the sandbox's own, with a flag and an environment
 * variable (the command line's --deviations, say): parsed, checked and listed in --help with the rest.
 */
export interface ExtraSetting {
  flag: string;
  env?: string;
  type: 'string' | 'boolean';
  fallback: string;
  describe: string;
}

export interface SettingsOptions {
  argv?: string[];
  env?: NodeJS.ProcessEnv;
  overrides?: Partial<SandboxSettings>;
}

/** Settings from defaults, then environment, then flags; an override object wins over all (tests use it). */
export function resolveSettings(options: SettingsOptions = {}): SandboxSettings {
  return resolveSettingsWith(options, []).settings;
}

/** resolveSettings, with the values of the caller's own extra settings (by flag) beside the sandbox's. */
export function resolveSettingsWith(
  options: SettingsOptions,
  extras: readonly ExtraSetting[],
): { settings: SandboxSettings; extras: Record<string, string | boolean> } {
  const env = options.env ?? {};
  const { values } = parseFlags(options.argv ?? [], extras, env);
  const extraValues: Record<string, string | boolean> = {};
  for (const extra of extras) {
    const fromFlag = values[extra.flag];
    extraValues[extra.flag] = fromFlag ?? (extra.env ? env[extra.env] : undefined) ?? (extra.type === 'boolean' ? false : extra.fallback);
  }
  const problems: string[] = [];
  const settings: Record<string, unknown> = {};
  for (const s of SPECS) {
    const fromFlag = values[s.flag];
    const raw = typeof fromFlag === 'string' ? fromFlag : fromFlag === true ? 'true' : (env[s.env] ?? s.fallback);
    try {
      settings[s.key] = (s.parse as Parse<unknown>)(raw);
    } catch (error) {
      if (!(error instanceof InvalidSetting)) throw error;
      problems.push(`--${s.flag} (${s.env}) ${error.message}`);
    }
  }
  const keys: Record<string, string> = {};
  for (const k of KEY_SPECS) {
    const fromFlag = values[k.flag];
    const raw = typeof fromFlag === 'string' ? fromFlag : env[k.env] || DEVELOPMENT_KEYS[k.product];
    if (!/^[\x21-\x7e]{8,256}$/.test(raw)) problems.push(`--${k.flag} (${k.env}) must be 8 to 256 printable characters without spaces`);
    keys[k.product] = raw;
  }
  settings.subscriptionKeys = keys;
  for (const [i, a] of KEY_SPECS.entries()) {
    const b = KEY_SPECS.slice(i + 1).find((other) => keys[other.product] === keys[a.product]);
    // The gateway tells products apart by their keys, so two products cannot share one.
    if (b) problems.push(`--${a.flag} (${a.env}) and --${b.flag} (${b.env}) are the same key; each product needs its own`);
  }
  const merged = { ...settings, ...options.overrides } as SandboxSettings;
  if (!merged.jwtSecret && merged.dataDir === undefined) merged.jwtSecret = randomBytes(32).toString('base64url');
  if (problems.length === 0) problems.push(...crossChecks(merged));
  if (problems.length > 0) throw new SettingsError(problems);
  return { settings: merged, extras: extraValues };
}

function crossChecks(s: SandboxSettings): string[] {
  const problems: string[] = [];
  const chaosHold = chaosHoldMs(s);
  const longest =
    Math.max(s.pendingTimeoutMs, s.delayedSuccessMs) +
    s.callbackRetryDelaysMs.reduce((a, b) => a + b, 0) +
    s.callbackTimeoutMs * (s.callbackRetryDelaysMs.length + 1) +
    chaosHold;
  if (s.retentionMaxAgeMs <= longest + s.notificationWindowMs) {
    problems.push(
      `--retention-max-age-ms (MOMO_SANDBOX_RETENTION_MAX_AGE_MS) is ${s.retentionMaxAgeMs} ms but must exceed the longest life of a transaction, ${longest + s.notificationWindowMs} ms: the longer of the pending timeout (--pending-timeout-ms) and the delayed success (--delayed-success-ms), every callback attempt (--callback-timeout-ms, --callback-retry-delays-ms)${chaosHold > 0 ? ", what the chaos conditions add (--chaos-long-pending-ms, --chaos-callback-delay-ms and a repeated callback's second)" : ''} and --notification-window-ms; otherwise records would be forgotten while still in use`,
    );
  }
  // Node refuses to start a server whose headers may take longer than its whole request.
  if (s.headersTimeoutMs > s.requestTimeoutMs) {
    problems.push(
      `--headers-timeout-ms (MOMO_SANDBOX_HEADERS_TIMEOUT_MS) is ${s.headersTimeoutMs} ms but must not exceed --request-timeout-ms (MOMO_SANDBOX_REQUEST_TIMEOUT_MS), ${s.requestTimeoutMs} ms: the headers are part of the request`,
    );
  }
  return problems;
}

/** How much longer the chaos conditions that are on may keep a transaction in use: held PENDING, its callback later. */
function chaosHoldMs(s: SandboxSettings): number {
  const on = (condition: keyof SandboxSettings['chaos']) => (s.chaos[condition] ?? 0) > 0;
  return (
    (on('long-pending') ? s.chaosLongPendingMs : 0) +
    (on('callback-delayed') ? s.chaosCallbackDelayMs.max : 0) +
    (on('callback-repeated') ? REPEATED_CALLBACK_AFTER_MS : 0)
  );
}

/** How long after a callback the callback-repeated chaos condition sends it again. */
export const REPEATED_CALLBACK_AFTER_MS = 1000;

/**
 * The flags of `momo-harness sandbox` in the model every command declares its options in (core/command-line.ts):
 * one per setting, the key of each product, the caller's extras and the listings, each with its variable, default
 * and meaning, so that the usage text below and docs/reference.md are written from them. They are adapted from SPECS
 * here rather than SPECS being written in that model, the smaller and clearer change: a setting is read from its
 * flag, else its variable, else its default, and its value is checked wherever it came from, naming the flag and
 * the variable (resolveSettingsWith, which says every problem at once), whereas the model parses flags only. So
 * these options carry no parse.
 */
export function sandboxOptions(extras: readonly ExtraSetting[]): OptionSpecs {
  const options: OptionSpecs = {};
  for (const s of SPECS)
    options[s.flag] = {
      type: 'switch' in s && s.switch ? 'boolean' : 'string',
      env: s.env,
      default: ('shownDefault' in s && s.shownDefault) || s.fallback || '(none)',
      describe: s.describe,
    };
  for (const k of KEY_SPECS)
    options[k.flag] = {
      type: 'string',
      env: k.env,
      default: DEVELOPMENT_KEYS[k.product],
      describe: `Subscription key (Ocp-Apim-Subscription-Key) of the ${k.product} product.`,
    };
  for (const e of extras)
    options[e.flag] = {
      type: e.type,
      ...(e.env ? { env: e.env } : {}),
      ...(e.type === 'boolean' ? {} : { default: e.fallback || '(none)' }),
      describe: e.describe,
    };
  return { ...options, ...LISTINGS };
}

/** The flags that print something and exit, and take no setting. */
const LISTINGS: OptionSpecs = {
  'list-differences': {
    type: 'boolean',
    describe: 'Print what the two profiles change, the readings and the strict readings, and exit.',
  },
  'list-chaos': {
    type: 'boolean',
    describe:
      'Print the spec-legal chaos conditions, each with where it happens and the clause that allows it, and exit (docs/sandbox.md#chaos).',
  },
  help: { type: 'boolean', describe: 'Print every setting, its flag, environment variable and default, and exit.' },
};

function parseFlags(argv: string[], extras: readonly ExtraSetting[], env: NodeJS.ProcessEnv) {
  try {
    return parseCommandLine(argv, sandboxOptions(extras), { env });
  } catch (error) {
    if (!(error instanceof CommandLineError)) throw error;
    throw new SettingsError([`${error.message} (--help lists every setting)`]);
  }
}

export function wantsHelp(argv: string[]): 'help' | 'differences' | 'chaos' | undefined {
  if (argv.includes('--help') || argv.includes('-h')) return 'help';
  if (argv.includes('--list-differences')) return 'differences';
  if (argv.includes('--list-chaos')) return 'chaos';
  return undefined;
}

export function helpText(extras: readonly ExtraSetting[] = [], usage: readonly string[] = []): string {
  const rows = Object.entries(sandboxOptions(extras))
    .filter(([flag]) => !(flag in LISTINGS))
    .map(([flag, o]) => [`--${flag}`, o.env ?? '', o.default ?? '', o.describe]);
  const width = (i: number) => Math.max(...rows.map((r) => r[i]!.length));
  const lines = rows.map((r) => `  ${r[0]!.padEnd(width(0))}  ${r[1]!.padEnd(width(1))}  ${r[2]!.padEnd(Math.min(width(2), 24))}  ${r[3]}`);
  return [
    'Reference MoMo sandbox: the whole Mobile-Money API, stateful, in memory.',
    '',
    'Usage: momo-harness sandbox [--flag value ...]        (in a clone: npm run sandbox -- ...)',
    '       momo-harness sandbox --list-differences   (what the profiles change)',
    '       momo-harness sandbox --list-chaos         (chaos: adverse conditions to start it with)',
    ...usage,
    '',
    'Each setting is read from its flag, else its environment variable, else the default:',
    `  ${'flag'.padEnd(width(0))}  ${'environment'.padEnd(width(1))}  ${'default'.padEnd(Math.min(width(2), 24))}  meaning`,
    ...lines,
    '',
    'Chaos conditions (--chaos name[=share],...; default share in brackets; all names the spec-legal ones), each with what allows it:',
    ...CHAOS_CONDITION_NAMES.map((name) => {
      const { defaultShare, legality, allowedBy, breaks } = CHAOS_CONDITIONS[name] as ChaosConditionDefinition;
      return legality === 'spec-legal'
        ? `  ${name} [${defaultShare}]: allowed by ${allowedBy}`
        : `  ${name} [${defaultShare}]: live only, it breaks ${breaks?.rule ?? 'a rule of the spec'} (${breaks?.check}); met on the live service: ${allowedBy}`;
    }),
  ].join('\n');
}
