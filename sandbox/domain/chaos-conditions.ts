/**
 * The sandbox's chaos (--chaos): adverse conditions a client meets on the live service, each with the clause or
 * observation that allows it, or the rule it breaks. Most are spec-legal: a conforming server may show them, and a
 * client must cope (`all` names these). A few are live conditions only: the live service shows them, or a network
 * does, but from outside they break a definite rule of the spec, so the harness fails them, once, naming the rule
 * (a lost callback: in the mtn-sandbox profile, whose live service calls back within seconds; in the spec profile,
 * which gives no time, the case is not tested); they are
 * there for client resilience, and a run names them one by one. This is what the settings, --help,
 * --list-chaos and docs/sandbox.md know of them; sandbox/chaos/ carries them out.
 */
export interface ChaosConditionDefinition {
  /** One line: what the sandbox does under the condition. */
  summary: string;
  /**
   * spec-legal: no rule of the spec is broken (why: allowedBy); live: seen on the live service or a network, but a
   * definite rule is broken (which: breaks), so a conformance run fails it.
   */
  legality: 'spec-legal' | 'live';
  /** Why a server may do it (spec-legal), or why a client meets it all the same (live). */
  allowedBy: string;
  /** For a live condition: the rule it breaks, and the harness check (harness/checks) that finds it. */
  breaks?: { rule: string; check: string };
  /** The share of the occasions it applies to when --chaos names it without one. */
  defaultShare: number;
}

export const CHAOS_CONDITIONS = {
  latency: {
    legality: 'spec-legal',
    summary: 'An answer of the API waits a random time within --chaos-latency-ms before it is sent.',
    allowedBy: '§8 gives no response time; real-api-notes: the live sandbox has slow periods [observed]',
    defaultShare: 0.2,
  },
  '500': {
    legality: 'spec-legal',
    summary:
      'A request is answered 500 {"code":"INTERNAL_PROCESSING_ERROR"} instead of being carried out (nothing is stored), on the operations whose status list has 500.',
    allowedBy:
      '§4: 500 in the status list of each such operation (of the status queries, §7 rule 3; not bc-authorize or user information with consent, §4.2 #6–7, which list only 200), with INTERNAL_PROCESSING_ERROR the code shown for request to pay (§4.2 #2) and in sets A and B; §7 rule 5 leaves the code of a status open; real-api-notes: frequent transient 500s [observed]',
    defaultShare: 0.05,
  },
  '503': {
    legality: 'spec-legal',
    summary:
      'A request is answered 503 {"code":"SERVICE_UNAVAILABLE"} with Retry-After instead of being carried out (nothing is stored), where its error set has the code.',
    allowedBy:
      'real-api-notes: frequent transient 503s [observed]; SERVICE_UNAVAILABLE is a code of sets A and B (§7); RFC 9110 §15.6.4 (503, Retry-After)',
    defaultShare: 0.05,
  },
  'cut-before-store': {
    legality: 'spec-legal',
    summary:
      'A creation of a transaction has its connection closed without an answer before it is stored: its status query answers 404, and the same X-Reference-Id may be sent again.',
    allowedBy:
      '§2.5: the caller makes the reference id, so it can ask for the status of a creation it heard no answer to (404 RESOURCE_NOT_FOUND for an unknown id, real-api-notes [observed]); any connection may close before its answer',
    defaultShare: 0.05,
  },
  'cut-after-store': {
    legality: 'spec-legal',
    summary:
      'A creation of a transaction has its connection closed without an answer after it is stored: its status query with the same X-Reference-Id reads it, and sending it again is refused 409.',
    allowedBy:
      '§2.5 and §7 rule 1: the stored transaction is found by its status query under the caller-made reference id, and a creation that reuses the id gives 409 RESOURCE_ALREADY_EXIST; any connection may close before its answer',
    defaultShare: 0.05,
  },
  'long-pending': {
    legality: 'spec-legal',
    summary: 'A transaction stays PENDING --chaos-long-pending-ms longer than its test number says, then settles as it would have.',
    allowedBy:
      '§3: PENDING until the payer answers or the system times it out; §8: the pending time is not shown; real-api-notes: PENDING for over 40 s [observed]',
    defaultShare: 0.1,
  },
  'callback-delayed': {
    legality: 'spec-legal',
    summary:
      'A callback (of a transaction, or the consent ping) is sent a random time within --chaos-callback-delay-ms later than it would have been.',
    allowedBy: '§6: callback timing is not shown',
    defaultShare: 0.2,
  },
  'callback-repeated': {
    legality: 'spec-legal',
    summary: 'A callback is sent a second time a second later, although the first was delivered.',
    allowedBy:
      '§6: callback retries are not shown; real-api-notes: newer docs describe retries [uncertain], so a listener may hear one twice',
    defaultShare: 0.1,
  },
  'callback-lost': {
    legality: 'live',
    summary:
      'A callback is lost on its way and never reaches the listener; the status query (or the consent token operation) still gives the outcome.',
    allowedBy:
      'a network loses what is sent; the status query is there for it (§1: the status is read with a GET), which a careful client reads',
    breaks: {
      rule: '§6: the service is to send a callback to the server at X-Callback-Url; from outside a callback lost is one not sent',
      check: 'callback-arrives',
    },
    defaultShare: 0.05,
  },
  'token-refused-early': {
    legality: 'live',
    summary:
      'A valid access or consent token is refused 401 {"error":"invalid_token"} before its expires_in has passed, and on every later use; a new token works.',
    allowedBy:
      'real-api-notes: an invalid or expired token gets 401, and clients get a new one and retry [documented]; RFC 6750 §3.1: invalid_token covers a revoked token',
    breaks: { rule: '§2.6, §8: expires_in is the validity of the token in seconds', check: 'token-honoured-until-expiry' },
    defaultShare: 0.02,
  },
} as const satisfies Record<string, ChaosConditionDefinition>;

export type ChaosCondition = keyof typeof CHAOS_CONDITIONS;

/** The conditions in the order they are listed (an object's keys would put "500" and "503" first). */
export const CHAOS_CONDITION_NAMES = [
  'latency',
  '500',
  '503',
  'cut-before-store',
  'cut-after-store',
  'long-pending',
  'callback-delayed',
  'callback-repeated',
  'callback-lost',
  'token-refused-early',
] as const satisfies readonly ChaosCondition[];

// A condition defined above and missing from the list fails the type check here.
type Unlisted = Exclude<ChaosCondition, (typeof CHAOS_CONDITION_NAMES)[number]>;
const everyConditionListed: [Unlisted] extends [never] ? true : Unlisted = true;
void everyConditionListed;

/** The conditions a sandbox is started with, each with its share (0 to 1) of the occasions it applies to. */
export type ChaosShares = Readonly<Partial<Record<ChaosCondition, number>>>;

/** A range of milliseconds, both ends included. */
export interface MsRange {
  min: number;
  max: number;
}

const isCondition = (name: string): name is ChaosCondition => Object.hasOwn(CHAOS_CONDITIONS, name);

/** The spec-legal conditions, which `all` names: a conforming server may show every one of them. */
export const SPEC_LEGAL_CONDITIONS = CHAOS_CONDITION_NAMES.filter((name) => CHAOS_CONDITIONS[name].legality === 'spec-legal');

/**
 * --chaos as written: a comma-separated list of conditions, each with `=share` (a number from 0 to 1) or without
 * (its default share); `all` names every spec-legal condition at its default share (a live one is named on its own),
 * and a condition named beside it takes the share given there. Throws an Error whose message says what to fix.
 */
export function parseChaosShares(raw: string): ChaosShares {
  const shares: Partial<Record<ChaosCondition, number>> = {};
  const explicit = new Set<ChaosCondition>();
  const items = raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const item of items) {
    const [name = '', share, ...rest] = item.split('=').map((s) => s.trim());
    if (name === 'all') {
      if (share !== undefined) throw new Error(`gives "${item}": all takes no share; give a condition its own beside it, e.g. all,500=0.1`);
      for (const condition of SPEC_LEGAL_CONDITIONS)
        if (!explicit.has(condition)) shares[condition] = CHAOS_CONDITIONS[condition].defaultShare;
      continue;
    }
    if (!isCondition(name))
      throw new Error(
        `names "${name}", which is no chaos condition; name one or more of ${CHAOS_CONDITION_NAMES.join(', ')} or all, each with an optional =share (--list-chaos says what each does)`,
      );
    if (rest.length > 0 || (share !== undefined && !/^(?:0|1)?(?:\.\d+)?$/.test(share)) || share === '' || Number(share) > 1)
      throw new Error(`gives "${item}": a share is a number from 0 to 1, e.g. ${name}=0.1`);
    shares[name] = share === undefined ? CHAOS_CONDITIONS[name].defaultShare : Number(share);
    explicit.add(name);
  }
  return shares;
}

/** The conditions with a share above 0, as --chaos would name them again. */
export function chaosSummary(shares: ChaosShares): string {
  return CHAOS_CONDITION_NAMES.filter((name) => (shares[name] ?? 0) > 0)
    .map((name) => `${name}=${shares[name]}`)
    .join(',');
}

/** Whether any condition is on. */
export function hasChaos(shares: ChaosShares): boolean {
  return CHAOS_CONDITION_NAMES.some((name) => (shares[name] ?? 0) > 0);
}

/** "100-2000" (ms, both ends included), or "500" for exactly that; throws an Error whose message says what to fix. */
export function parseMsRange(raw: string, maxMs: number): MsRange {
  const match = /^\s*(\d{1,9})\s*(?:-\s*(\d{1,9})\s*)?$/.exec(raw);
  if (!match) throw new Error(`must be a range of ms such as "100-2000", or one number of ms, got "${raw}"`);
  const min = Number(match[1]);
  const max = match[2] === undefined ? min : Number(match[2]);
  if (min > max) throw new Error(`must give the shorter time first, got "${raw}"`);
  if (max > maxMs) throw new Error(`must end at ${maxMs} ms at most, got "${raw}"`);
  return { min, max };
}
