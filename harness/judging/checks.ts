import {
  describeSource,
  observed,
  reading,
  severityOf,
  spec,
  weightOf,
  type RunStrictness,
  type Severity,
  type Source,
} from '../../core/sources.ts';
import type { OperationId } from '../../core/catalogue/operations.ts';
import type { Product } from '../../core/products.ts';

/**
 * Every check the harness makes, by name. Each thing it judges about a target is one of these, as Schemathesis's
 * checks.py has one function per check: a report can group its findings by check, and a reader of a failure sees
 * which check it is and where that check comes from. Each check has a source of its own (core/sources.ts); a use
 * of a check whose case has a more precise clause (the status of a duplicate: §7 rule 1) cites that instead.
 * A finding's source decides its weight: only a definite one fails a target in the spec profile.
 */
export const CHECKS = {
  'status-code': {
    title: 'The status code is the one the spec gives for the case.',
    source: spec("§4 (each operation's statuses), §7"),
  },
  'body-schema': {
    title:
      'The body of a success is the record the operation gives, every field it names of its type. Records are open: a field the record does not name is never a failure.',
    source: spec('§2 (the records); per field, the "x-source" of schemas/*.schema.json'),
    general: true,
  },
  'error-body': {
    title: 'The body of an error is the error record of its operation: {code, message} with a code of its set, or {error} on a 401.',
    source: spec('§2.14, §7 (the error record and the code sets); per field, the "x-source" of schemas/*.schema.json'),
    general: true,
  },
  'media-type': {
    title: 'A JSON body says so in its Content-Type (application/json, or a +json type).',
    source: spec('§4.1: Content-Type is the media type of the body; §4: all payloads are JSON except where marked form-encoded'),
    general: true,
  },
  'error-code': {
    title: 'An error carries the code the spec names for the case, in code of {code, message} or error of {error}.',
    source: spec('§7 (its rules and code sets)'),
  },
  'unknown-field': {
    title: 'Under --strict: a field a record of the spec does not name is reported, never failed (records are open).',
    source: reading('the spec never closes a record, and RFC 6749 §5.1 and OIDC Core §5.1 tell clients to ignore members they do not know'),
    advisory: true,
    general: true,
  },
  'answer-bounded': {
    title: 'An answer fits within MOMO_MAX_RESPONSE_BYTES: no record of the API comes near it.',
    source: spec('§2: every record of the API is a few short fields'),
    general: true,
  },
  'secret-not-disclosed': {
    title: 'No answer gives out a secret of the partner outside the one operation that issues it, in any encoding.',
    source: spec(
      "§5 rules 1–3 and §4.5 #15: the subscription key, the API key and the tokens are the partner's credentials, each issued by one operation (OWASP API3:2023)",
    ),
    general: true,
  },
  'record-echoes-request': {
    title:
      'A record that names a field of what the partner sent shows it as sent: the amount as the same number, the party, texts and host unchanged.',
    source: spec('§2.2–§2.5, §2.12: the record is of the resource the partner created'),
    general: true,
  },
  'transaction-outcome': {
    title:
      "A transaction ends as its party's answer calls for: the test number that approves makes it SUCCESSFUL, one that declines FAILED, one that never answers keeps it PENDING.",
    source: spec(
      "§3: PENDING until the payer authorizes or declines it, or the system times it out; the payer's answer is the sandbox test number's (real-api-notes)",
    ),
  },
  'failure-reason': {
    title: 'A FAILED transaction gives the reason its test number is documented to give.',
    source: observed('real-api-notes, sandbox test numbers: the reason of each'),
  },
  'reason-shape': {
    title: 'The reason of a FAILED status record is a bare code string, as the live sandbox sends it.',
    source: observed('real-api-notes, status records: "reason" is a plain string code'),
    general: true,
  },
  'financial-transaction-id': {
    title: 'A SUCCESSFUL request to pay carries its financialTransactionId.',
    source: observed('real-api-notes, status records: financialTransactionId is present once SUCCESSFUL'),
    general: true,
  },
  'final-state-is-final': {
    title: 'A transaction that read SUCCESSFUL or FAILED never reads otherwise again.',
    source: spec('§3: PENDING until the payer answers or the system times it out; the outcome that ends PENDING is final'),
    general: true,
  },
  'token-type': {
    title: 'token_type names the kind of token, compared without regard to case.',
    source: reading(
      '§2.6 gives no value; §5.3 makes the access token a Bearer credential, and RFC 6749 §5.1 makes token_type case-insensitive',
    ),
    general: true,
  },
  'token-not-cached': {
    title: 'An answer that carries a token tells caches not to keep it (Cache-Control: no-store).',
    source: observed(
      'real-api-notes, provisioning and tokens: the token answer carries cache-control: no-store; RFC 6749 §5.1 asks it of every answer with a token, and the spec does not say',
    ),
    general: true,
  },
  'token-honoured-until-expiry': {
    title: 'An access token is honoured until its expires_in has passed, so a client that renews it in time is never refused.',
    source: spec('§5.3, §8: the token is valid for expires_in seconds'),
  },
  'consent-token-lifetime': {
    title: 'A consent access token is valid 3600 seconds by default, and its expires_in says so.',
    source: reading(
      "§2.7 and §8 give the consent access token 3600 s by default, but word expires_in as the seconds until the auth_req_id expires: that expires_in is the token's life is our reading",
    ),
  },
  'consent-refresh': {
    title: 'A refresh token gives a new consent token while the consent lasts, with grant_type=refresh_token.',
    source: reading(
      '§2.7 gives a refresh token and how long the consent can be refreshed, not how: RFC 6749 §6 (grant_type=refresh_token) is our reading',
    ),
  },
  'consent-scope-not-wider': {
    title: "A consent token's scope holds only scopes that were asked for.",
    source: spec('§2.7: scope is the scopes that belong to the authentication request ID'),
    general: true,
  },
  'callback-once': {
    title: 'A transaction whose callback the receiver answered 200 gets no second callback.',
    source: reading(
      '§6 leaves retries "not shown"; real-api-notes is uncertain whether the service retries; a second callback after a 200 makes a careless listener act twice',
    ),
  },
  'callback-record': {
    title: "The callback carries the transaction's status record, the same as the status query gives.",
    source: observed('real-api-notes, callbacks: "Body: the same record as the status GET" [documented]'),
    general: true,
  },
  'callback-solicited': {
    title: 'A callback goes only to the exact X-Callback-Url a transaction gave.',
    source: spec('§6: the service sends a callback to the server at the address given in X-Callback-Url'),
    general: true,
  },
  'callback-arrives': {
    title: 'A transaction or consent request that gave X-Callback-Url gets a callback there once it is final.',
    source: spec('§6: the service is to send a callback to the server there'),
  },
  'balance-in-currency': {
    title: "A balance is given in the currency asked for, or the partner's.",
    source: spec('§2.9, §4.2 #4'),
  },
  'balance-follows-payments': {
    title: "A successful payment credits the merchant's balance by its amount.",
    source: reading("the spec does not say when a balance moves; the reference sandbox's bookkeeping (@stateful)"),
  },
  'holder-status': {
    title: 'The account-holder check says true for a registered, active holder and false otherwise, as a bare boolean or {"result": …}.',
    source: spec('§4.2 #8: "true if the account holder is registered and active; false if it is not active or not found"'),
  },
  'consent-granted': {
    title: 'A consent the holder approves gives its consent token, through the OAuth 2.0 token operation with the CIBA grant.',
    source: spec('§5.4, §4.3 #11: the token operation with grant_type and auth_req_id returns a Bearer access token'),
  },
  'gender-case': {
    title: 'gender is written in the case the profile expects.',
    source: reading('§2.10 spells the values in lower case; §2.11 gives gender as a string'),
    general: true,
  },
  'refusal-changes-nothing': {
    title: 'A refused creation leaves nothing behind, and changes nothing that was there.',
    source: spec('§2.5, §7 rule 1: a reused reference id is rejected; a refused request creates nothing'),
  },
  'refund-to-payer': {
    title: 'A refund goes to the payer of the request to pay it refunds.',
    source: spec('§2.4: referenceIdToRefund identifies the request to pay that is refunded'),
  },
  'gateway-refusal-shape': {
    title: 'The gateway refuses a call without a valid subscription key with {statusCode: 401, message}.',
    source: observed("real-api-notes, provisioning and tokens: the gateway's 401 {statusCode, message}"),
  },
  'consent-pending': {
    title: 'A consent the holder has not answered yet gives no token: the CIBA grant is authorization_pending.',
    source: reading('§4.3 #11 lists only 200; CIBA Core §11 answers 400 authorization_pending while the holder has not answered'),
  },
  'consent-single-use': {
    title: 'A consent gives its token once: redeemed again, it is invalid_grant.',
    source: reading('§2.7 and §5.4 do not say; CIBA Core §11 and RFC 6749 §5.2 answer a used auth_req_id with invalid_grant'),
  },
} as const satisfies Record<string, { title: string; source: Source; advisory?: true; general?: true }>;

export type CheckName = keyof typeof CHECKS;

/**
 * Whether a check holds of every answer of its operation, whatever the case (a record's schema, a secret kept),
 * rather than of the case a scenario sets up (the status a duplicate gets): a failure of it fails every requirement
 * that cites it, not only those of the scenario that found it.
 */
export function isGeneral(check: CheckName): boolean {
  return 'general' in CHECKS[check];
}

export const CHECK_NAMES = Object.keys(CHECKS) as CheckName[];

/**
 * One thing a check found about an answer. `field` says where: a JSON pointer into the body ("/amount"), "status",
 * or a header. `expected` and `received` are short, and safe to show (the caller redacts what it quotes).
 */
export interface Finding {
  check: CheckName;
  source: Source;
  field?: string;
  expected: string;
  received: string;
}

/** A finding of a check, with the check's own source unless the case cites a more precise one. */
export function finding(check: CheckName, found: { field?: string; expected: string; received: string; source?: Source }): Finding {
  const source = found.source ?? CHECKS[check].source;
  return {
    check,
    source,
    ...(found.field !== undefined ? { field: found.field } : {}),
    expected: found.expected,
    received: found.received,
  };
}

export function severityOfFinding(f: Finding, run: RunStrictness): Severity {
  return severityOf(f.source, run, { advisory: 'advisory' in CHECKS[f.check] });
}

/** "amount: expected "12.5", got "13.5"": what a finding says, one line. */
export function describeDifference(f: Finding): string {
  return `${f.field !== undefined ? `${f.field}: ` : ''}expected ${f.expected}, got ${f.received}`;
}

/** "status-code (definite: §7 rule 1)": the check and its source. */
export function describeCheck(f: Finding): string {
  return `${f.check} (${describeSource(f.source)})`;
}

/**
 * That a check was made on an answer of an operation, and how it came out: failed (a finding this run weighs as a
 * failure), warned (only warnings), passed. A requirement's verdict comes from the checks that cite it.
 */
export interface Evaluation {
  check: CheckName;
  operation: OperationId;
  product: Product;
  verdict: 'passed' | 'warned' | 'failed';
}

/** The media type of a scenario's attachment that lists the checks it made (a JSON array of Evaluation). */
export const EVALUATIONS_MEDIA_TYPE = 'application/vnd.momo.checks+json';

/** How each check made came out, given its findings: every check named, and every check a finding is of. */
export function evaluationsOf(
  operation: OperationId,
  product: Product,
  checks: readonly CheckName[],
  findings: readonly Finding[],
  run: RunStrictness,
): Evaluation[] {
  const made = [...new Set([...checks, ...findings.map((f) => f.check)])];
  return made.map((check) => {
    const severities = findings.filter((f) => f.check === check).map((f) => severityOfFinding(f, run));
    return { check, operation, product, verdict: severities.includes('failure') ? 'failed' : severities.length > 0 ? 'warned' : 'passed' };
  });
}

/** The media type of a scenario's attachment that lists its warnings (a JSON array of Warning). */
export const WARNINGS_MEDIA_TYPE = 'application/vnd.momo.warnings+json';

/** A finding that weighs as a warning in this run, with where it was made: what the reports list apart. */
export interface Warning extends Finding {
  /** The operation and the case: "request to pay (collection) — §4.2 #2: …". */
  context: string;
  /** Why it is a warning rather than a failure, in this run. */
  weight: string;
}

export function warningOf(f: Finding, context: string, run: RunStrictness): Warning {
  return {
    ...f,
    context,
    weight: 'advisory' in CHECKS[f.check] ? 'a warning in every run: records are open' : weightOf(f.source, run, 'warning'),
  };
}

/** The findings of one judgement split by weight. */
export function weigh(findings: readonly Finding[], run: RunStrictness): { failures: Finding[]; warnings: Finding[] } {
  const failures: Finding[] = [];
  const warnings: Finding[] = [];
  for (const f of findings) (severityOfFinding(f, run) === 'failure' ? failures : warnings).push(f);
  return { failures, warnings };
}

/** The line of a failure that names its check, its source and, when it fails only because of the run, why. */
export function failureLine(f: Finding, run: RunStrictness): string {
  const because = f.source.kind === 'spec' ? '' : `; ${weightOf(f.source, run, 'failure')}`;
  return `  ✘ ${f.check} (${describeSource(f.source)}${because}): ${describeDifference(f)}`;
}
