import type { Exchange } from '../client/momo-client.ts';
import { PRODUCTS, type Product } from '../../core/products.ts';
import { urlOf, type TargetBases } from '../../core/catalogue/routes.ts';
import { HEADERS } from '../../core/catalogue/headers.ts';
import { SUBSCRIPTION_KEY_HEADER } from '../../core/catalogue/headers.ts';
import { describeSource, type Source } from '../../core/sources.ts';
import { secretVariablesOf } from '../config.ts';
import { REDACTED } from '../../core/secrets/redact.ts';
import { quote } from './curl.ts';

/**
 * A failed scenario as a shell script that replays it by itself: it obtains what the calls need from the same
 * MOMO_* variables the run read (the configured API user and key, or a new one provisioned; a token), sends the
 * scenario's calls again in order, with fresh reference ids and the run's pauses, then the call that failed, and
 * prints its answer beside the one the run got. Secrets stay variables: the evidence it is made from is redacted,
 * and every value it needs at run time (an id, a token, an auth_req_id) is read from the answer that gave it.
 *
 * Calls the run repeated while waiting (a read with the same answer, a refused request sent again) are sent once;
 * the pause before the next call keeps the time they took, so a state that takes time to come still comes. Everything the evidence
 * says is in single quotes, so no text of the target's can run in the shell.
 */

/** What a failed check found, as the script's header says it (harness/checks/index.ts makes them). */
export interface FoundDifference {
  check: string;
  source: Source;
  field?: string;
  expected: string;
  received: string;
}

export interface ScenarioToReproduce {
  /** "Payments › A customer who approves pays what was asked" */
  title: string;
  exchanges: readonly Exchange[];
  /** Which exchange's answer the failure is about; none: the failure came after the last (a callback, a wait). */
  failedAt?: number;
  findings: readonly FoundDifference[];
  /** Where the run found the target: what the script's MOMO_BASE_URL and MOMO_SANDBOX_URL default to. */
  bases: TargetBases;
  /** The run's callback host, registered for an API user the script provisions. */
  callbackHost: string;
}

/** The longest pause the script keeps between two calls: a run that waited longer was waiting for nothing it replays. */
const LONGEST_PAUSE_SECONDS = 120;
/** Shorter pauses are the harness's own pace, not a wait for the target. */
const SHORTEST_PAUSE_SECONDS = 0.3;
const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;
/** A value of an answer that a later request sends is taken from the answer at run time when it is at least this long. */
const SHORTEST_CARRIED_VALUE = 8;

/** How the script introduces the answer the run got; what comes before it is the new answer. */
export const RUN_GOT = 'The run got (redacted):';
/** How the script introduces the new answer to the call that failed. */
export const NEW_ANSWER = 'The call that failed, and its answer:';
const LONGEST_ANSWER_SHOWN = 4000;

/** Where a path takes the id of the API user the script provisions. */
const USER_PLACEHOLDER = 'the-api-user-id';

/** A word of the script: literal text (quoted) and shell variables (double-quoted expansions), in order. */
type Part = { text: string } | { variable: string };

/** The script, or undefined when the evidence holds no call of the scenario to send. */
export function reproductionScriptOf(scenario: ScenarioToReproduce): string | undefined {
  const { exchanges } = scenario;
  const failedAt = scenario.failedAt ?? lastSent(exchanges);
  if (failedAt === undefined || exchanges[failedAt]?.omitted !== undefined) return undefined;
  const calls = replayed(exchanges, failedAt);
  return new ScriptWriter(scenario).write(calls, failedAt);
}

function lastSent(exchanges: readonly Exchange[]): number | undefined {
  for (let i = exchanges.length - 1; i >= 0; i -= 1) if (exchanges[i]!.omitted === undefined) return i;
  return undefined;
}

/** The indexes of the exchanges to send, up to and with the failing one: each once, less repeats while waiting. */
function replayed(exchanges: readonly Exchange[], failedAt: number): number[] {
  const kept: number[] = [];
  for (let i = 0; i <= failedAt; i += 1) {
    const exchange = exchanges[i]!;
    if (exchange.omitted !== undefined) continue;
    const next = exchanges[i + 1];
    if (i < failedAt && next !== undefined && next.omitted === undefined && sameCall(exchange, next)) continue;
    kept.push(i);
  }
  return kept;
}

/**
 * A poll the run made while waiting, which the script sends once: a read that saw nothing new (the same answer), or
 * a request the target refused and the run sent again as it was (a consent token asked for while authorization is
 * pending, a call retried after a 503). A refused request changes nothing, so the script sends only the last of them:
 * its own timing differs from the run's, and an early poll it sent could take what the run got later (a consent
 * redeemed by the first poll leaves nothing for the second). A creation or notification that succeeded twice was
 * sent twice on purpose.
 */
function sameCall(a: Exchange, b: Exchange): boolean {
  const sameRequest = a.request.method === b.request.method && a.request.url === b.request.url && a.request.body === b.request.body;
  const refused = a.response === undefined || a.response.status < 200 || a.response.status > 299;
  const sameAnswer = a.response?.status === b.response?.status && a.response?.body === b.response?.body;
  return sameRequest && (refused || (a.request.method === 'GET' && sameAnswer));
}

class ScriptWriter {
  /** Literal text of the evidence → the variable that holds its value at run time, longest first when applied. */
  private readonly substitutions = new Map<string, string>();
  private readonly tokens = new Map<Product, string>();
  private readonly users = new Set<Product>();
  private readonly keys = new Set<Product>();
  private ids = 0;

  constructor(private readonly scenario: ScenarioToReproduce) {
    this.substitutions.set(scenario.bases.gateway, 'BASE');
    if (scenario.bases.provisioning !== scenario.bases.gateway) this.substitutions.set(scenario.bases.provisioning, 'SANDBOX');
  }

  write(calls: readonly number[], failedAt: number): string {
    const { exchanges } = this.scenario;
    const body: string[] = [];
    let previous: Exchange | undefined;
    for (const index of calls) {
      const exchange = exchanges[index]!;
      body.push(...this.pause(previous, exchange));
      body.push(...this.call(exchange, index, index === failedAt));
      previous = exchange;
    }
    return [...this.header(failedAt), ...this.preamble(), ...body, ...this.received(exchanges[failedAt]!), ''].join('\n');
  }

  private header(failedAt: number): string[] {
    const { scenario } = this;
    const failing = scenario.exchanges[failedAt]!;
    const about =
      scenario.failedAt === undefined
        ? `# The failure came after its last call (a callback, or a state that did not come): this sends the calls and\n# prints the last answer; watch what follows.`
        : `# The failure is about the answer to its call ${failedAt + 1}, ${comment(failing.operation)}.`;
    const products = [...new Set(scenario.exchanges.flatMap((e) => productsOf(e)))];
    return [
      '#!/bin/sh',
      `# Reproduces a failure of the MoMo conformance run: ${comment(scenario.title)}`,
      ...scenario.findings.map(
        (f) =>
          `#   ${comment(`${f.check} (${describeSource(f.source)}): ${f.field !== undefined ? `${f.field}: ` : ''}expected ${f.expected}, got ${f.received}`)}`,
      ),
      about,
      '#',
      "# It needs curl and node, and the MOMO_* variables of .env.example (the run's own settings):",
      `#   MOMO_BASE_URL (default: the run's target, ${comment(scenario.bases.gateway)}; for the embedded sandbox, start one`,
      '#   with "npm run sandbox" and give its address), MOMO_SANDBOX_URL (default: MOMO_BASE_URL),',
      ...products.map((p) => {
        const names = secretVariablesOf(p);
        return `#   ${names.subscriptionKey}; ${names.userId} and ${names.apiKey}, or leave them unset and an API user is provisioned`;
      }),
      "# Run it with sh; it prints each call's status, then the whole answer to the call that failed.",
      'set -eu',
    ];
  }

  private preamble(): string[] {
    const lines = [
      `BASE="\${MOMO_BASE_URL:-${this.scenario.bases.gateway.replace(/[^A-Za-z0-9:/._-]/g, '')}}"`,
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell parameter expansion, for the script to make
      'SANDBOX="${MOMO_SANDBOX_URL:-$BASE}"',
      'work=$(mktemp -d)',
      'trap \'rm -rf "$work"\' EXIT',
      '# A fresh UUID v4, as the run made one for each reference id.',
      "uuid() { node -e 'console.log(crypto.randomUUID())'; }",
      '# A string or number of a JSON answer by its pointer (/access_token); it fails when the answer has none.',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: JavaScript for node -e, a template it evaluates itself
      'field() { node -e \'const [file, pointer] = process.argv.slice(1); let v = JSON.parse(require("fs").readFileSync(file, "utf8")); for (const k of pointer.split("/").slice(1)) v = v?.[k]; if (typeof v !== "string" && typeof v !== "number") { console.error(`no ${pointer} in the answer in ${file}`); process.exit(1); } console.log(v);\' "$1" "$2"; }',
      '# A call: its status on a line, its answer kept in $work/<name>.',
      'send() { name=$1; shift; status=$(curl -sS -o "$work/$name" -w \'%{http_code}\' "$@"); echo "$name: HTTP $status"; }',
    ];
    for (const product of this.keys) {
      const names = secretVariablesOf(product);
      lines.push(`: "\${${names.subscriptionKey}:?set ${names.subscriptionKey} to the ${product} subscription key the run used}"`);
    }
    for (const product of this.users) lines.push(...this.apiUser(product));
    for (const [product, variable] of this.tokens) lines.push(...this.token(product, variable));
    return lines;
  }

  /** The product's API user: the configured one, or one provisioned as the run would (harness/config.ts). */
  private apiUser(product: Product): string[] {
    const names = secretVariablesOf(product);
    const bases = this.scenario.bases;
    const user = `"$${names.userId}"`;
    return [
      `# The ${product} API user: ${names.userId} and ${names.apiKey}, or a new one registered for callbacks to MOMO_CALLBACK_HOST.`,
      `if [ -z "\${${names.userId}:-}" ]; then`,
      `  ${names.userId}=$(uuid)`,
      `  send ${product}-api-user -X POST -H ${quote(`${HEADERS['x-reference-id'].name}: `)}${user} -H ${quote(`${SUBSCRIPTION_KEY_HEADER}: `)}"$${names.subscriptionKey}" -H 'Content-Type: application/json' --data-binary '{"providerCallbackHost":"'"\${MOMO_CALLBACK_HOST:-${this.scenario.callbackHost.replace(/[^A-Za-z0-9.:-]/g, '')}}"'"}' ${this.word(urlOf('createApiUser', product, bases))}`,
      `  send ${product}-api-key -X POST -H ${quote(`${SUBSCRIPTION_KEY_HEADER}: `)}"$${names.subscriptionKey}" ${this.word(urlOf('createApiKey', product, bases, { referenceId: USER_PLACEHOLDER }), new Map([[USER_PLACEHOLDER, names.userId]]))}`,
      `  ${names.apiKey}=$(field "$work/${product}-api-key" /apiKey)`,
      'fi',
    ];
  }

  private token(product: Product, variable: string): string[] {
    const names = secretVariablesOf(product);
    return [
      `# An access token of the ${product} API user.`,
      `send ${product}-token -X POST -u "$${names.userId}:$${names.apiKey}" -H ${quote(`${SUBSCRIPTION_KEY_HEADER}: `)}"$${names.subscriptionKey}" ${this.word(urlOf('createAccessToken', product, this.scenario.bases))}`,
      `${variable}=$(field "$work/${product}-token" /access_token)`,
    ];
  }

  /** A pause as long as the run's between the end of the call before and this one, when it waited for something. */
  private pause(previous: Exchange | undefined, exchange: Exchange): string[] {
    if (!previous?.startedAt || !exchange.startedAt) return [];
    const ended = Date.parse(previous.startedAt) + (previous.response?.durationMs ?? 0);
    const seconds = Math.min(LONGEST_PAUSE_SECONDS, (Date.parse(exchange.startedAt) - ended) / 1000);
    if (!(seconds >= SHORTEST_PAUSE_SECONDS)) return [];
    return [`sleep ${seconds.toFixed(1)}  # the run's pause before this call (waiting for a state, a callback or an expiry)`];
  }

  private call(exchange: Exchange, index: number, failing: boolean): string[] {
    const lines = [`# ${index + 1}. ${comment(exchange.operation)}${failing ? ': the call that failed' : ''}`];
    const { request, credentials } = exchange;
    // A reference id the run made is made fresh, and every later mention of it follows.
    for (const [name, value] of Object.entries(request.headers)) {
      if (name.toLowerCase() === 'x-reference-id' && UUID_V4.test(value) && !this.substitutions.has(value)) {
        const variable = `ID_${(this.ids += 1)}`;
        this.substitutions.set(value, variable);
        lines.push(`${variable}=$(uuid)`);
      }
    }
    const args: string[] = ['-X', quote(request.method)];
    for (const [name, value] of Object.entries(request.headers)) {
      const lower = name.toLowerCase();
      if (lower === SUBSCRIPTION_KEY_HEADER.toLowerCase() && value.includes(REDACTED) && credentials?.subscriptionKey) {
        this.keys.add(credentials.subscriptionKey);
        args.push('-H', `${quote(`${name}: `)}"$${secretVariablesOf(credentials.subscriptionKey).subscriptionKey}"`);
      } else if (lower === 'authorization' && value.includes(REDACTED)) {
        args.push(...this.authorization(name, value, exchange, index, lines));
      } else {
        if (value.includes(REDACTED)) lines.push(`# ${comment(name)}: the run's value is redacted; this sends the redacted text`);
        args.push('-H', this.word(`${name}: ${value}`));
      }
    }
    if (request.body !== undefined) {
      if (request.bodyCut) lines.push('# the evidence cut the request body short: this sends the part it kept');
      args.push('--data-binary', this.word(request.body));
    }
    args.push(this.word(request.url));
    if (failing) {
      lines.push(`echo ${quote(NEW_ANSWER)}`, `curl -sS -i ${args.join(' ')}`, 'echo');
    } else {
      lines.push(`send call-${index + 1} ${args.join(' ')}`, ...this.carryValues(exchange, index));
    }
    return lines;
  }

  private authorization(name: string, value: string, exchange: Exchange, index: number, lines: string[]): string[] {
    const credentials = exchange.credentials;
    const scheme = value.split(' ')[0] ?? 'Bearer';
    if (credentials?.basic) {
      this.keys.add(credentials.basic);
      this.users.add(credentials.basic);
      const names = secretVariablesOf(credentials.basic);
      return ['-u', `"$${names.userId}:$${names.apiKey}"`];
    }
    if (credentials?.otherBasic) {
      lines.push('# the run sent the credential of no API user of its own (redacted); this sends another such');
      return ['-u', quote(`${'0'.repeat(8)}-0000-4000-8000-${'0'.repeat(12)}:not-its-key`)];
    }
    if (credentials?.accessToken) {
      const product = credentials.accessToken.product;
      // A token the scenario fetched is the one it sent (an expired one, say); else one fetched for the script.
      const fetched = this.tokenFetchedBefore(product, index);
      if (fetched) return ['-H', `${quote(`${name}: ${scheme} `)}"$${fetched}"`];
      this.keys.add(product);
      this.users.add(product);
      const variable = `TOKEN_${product.toUpperCase()}`;
      this.tokens.set(product, variable);
      return ['-H', `${quote(`${name}: ${scheme} `)}"$${variable}"`];
    }
    // A consent token, or one the run made up: the last token an answer of the scenario gave, if any.
    const consent = this.lastTokenBefore(index);
    if (consent) return ['-H', `${quote(`${name}: ${scheme} `)}"$${consent}"`];
    lines.push('# the run sent a token of its own making (redacted): this sends the redacted text, which no target accepts either');
    return ['-H', quote(`${name}: ${value}`)];
  }

  private readonly tokenAnswers: { index: number; variable: string; product?: Product }[] = [];

  private tokenFetchedBefore(product: Product, index: number): string | undefined {
    return this.tokenAnswers.filter((t) => t.index < index && t.product === product).at(-1)?.variable;
  }

  private lastTokenBefore(index: number): string | undefined {
    return this.tokenAnswers.filter((t) => t.index < index && t.product === undefined).at(-1)?.variable;
  }

  /**
   * What a later request sends that this answer gave (an auth_req_id, a token) is read from this answer when the
   * script runs, not copied from the run: a new answer gives new values.
   */
  private carryValues(exchange: Exchange, index: number): string[] {
    const answer = exchange.response;
    if (!answer || answer.status < 200 || answer.status > 299) return [];
    let json: unknown;
    try {
      json = JSON.parse(answer.body);
    } catch {
      return [];
    }
    const lines: string[] = [];
    const tokenProduct = PRODUCTS.find((p) => exchange.request.url === urlOf('createAccessToken', p, this.scenario.bases));
    if (typeof (json as { access_token?: unknown })?.access_token === 'string') {
      const variable = `ANSWER_${index + 1}_TOKEN`;
      lines.push(`${variable}=$(field "$work/call-${index + 1}" /access_token)`);
      this.tokenAnswers.push({ index, variable, ...(tokenProduct ? { product: tokenProduct } : {}) });
    }
    const later = this.scenario.exchanges
      .slice(index + 1)
      .map((e) => `${e.request.url}\n${Object.values(e.request.headers).join('\n')}\n${e.request.body ?? ''}`)
      .join('\n');
    for (const [pointer, value] of leaves(json)) {
      if (value === REDACTED || value.length < SHORTEST_CARRIED_VALUE || this.substitutions.has(value) || !later.includes(value)) continue;
      const variable = `ANSWER_${index + 1}_${
        pointer
          .replace(/[^A-Za-z0-9]/g, '_')
          .replace(/^_+/, '')
          .toUpperCase() || 'VALUE'
      }`;
      lines.push(`${variable}=$(field "$work/call-${index + 1}" ${quote(pointer)})`);
      this.substitutions.set(value, variable);
    }
    return lines;
  }

  /** The text as one shell word, each substituted value a variable (and `also`'s, for this word only). */
  private word(text: string, also: ReadonlyMap<string, string> = new Map()): string {
    return render(split(text, new Map([...this.substitutions, ...also])));
  }

  /** What the run got from the call that failed (redacted, as the evidence holds it), printed beside the new answer. */
  private received(exchange: Exchange): string[] {
    const answer = exchange.response;
    const got = answer ? `HTTP ${answer.status} ${answer.body}` : `no answer: ${exchange.transportError ?? 'none recorded'}`;
    const shown = got.length > LONGEST_ANSWER_SHOWN ? `${got.slice(0, LONGEST_ANSWER_SHOWN)}… (${got.length} characters)` : got;
    return [`printf '%s\\n' ${quote(`${RUN_GOT} ${shown}`)}`];
  }
}

/** Every string and number of a JSON value with its pointer. */
function leaves(value: unknown, pointer = ''): [string, string][] {
  if (typeof value === 'string') return [[pointer, value]];
  if (typeof value === 'number') return [[pointer, String(value)]];
  if (value === null || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([key, inner]) => leaves(inner, `${pointer}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`));
}

function split(text: string, substitutions: ReadonlyMap<string, string>): Part[] {
  const literals = [...substitutions.keys()].filter((k) => k !== '').sort((a, b) => b.length - a.length);
  const parts: Part[] = [];
  let rest = text;
  while (rest !== '') {
    let best: { at: number; literal: string } | undefined;
    for (const literal of literals) {
      const at = rest.indexOf(literal);
      if (at >= 0 && (best === undefined || at < best.at)) best = { at, literal };
    }
    if (!best) {
      parts.push({ text: rest });
      break;
    }
    if (best.at > 0) parts.push({ text: rest.slice(0, best.at) });
    parts.push({ variable: substitutions.get(best.literal)! });
    rest = rest.slice(best.at + best.literal.length);
  }
  return parts;
}

function render(parts: readonly Part[]): string {
  if (parts.length === 0) return "''";
  return parts.map((p) => ('text' in p ? quote(p.text) : `"$${p.variable}"`)).join('');
}

/** The products whose secrets an exchange sent. */
function productsOf(exchange: Exchange): Product[] {
  const c = exchange.credentials;
  return [c?.subscriptionKey, c?.basic, c?.accessToken?.product].filter((p): p is Product => p !== undefined);
}

/** Text for a comment line: no line break, no control character, whatever the target sent. */
function comment(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\u0000-\u001f\u007f]+/g, ' ');
}
