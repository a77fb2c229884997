import { CONFIG_VARIABLES } from '../../harness/config.ts';
import type { ReplayPlan } from './replay-plan.ts';

/**
 * The replay of a shrunk exploration: a standalone node script (Node 20 or later, nothing to install) that reads only
 * MOMO_* variables, makes the sequence's calls again with new ids, holds each answer to what the exploration held it
 * to, and exits 1 when the departure comes again, 0 when every answer is as expected, 2 when it could not replay (no
 * target, a key missing, no answer, a premise of the case not holding). It carries no secret: keys, API users and
 * tokens come from the variables, or from an API user it provisions as the run did.
 */

/** The variables the replay reads: the harness's own names (.env.example), so a run's settings replay it. */
const VARIABLES = [
  'MOMO_BASE_URL',
  'MOMO_SANDBOX_URL',
  'MOMO_COLLECTION_KEY',
  'MOMO_DISBURSEMENT_KEY',
  'MOMO_COLLECTION_USER_ID',
  'MOMO_COLLECTION_API_KEY',
  'MOMO_DISBURSEMENT_USER_ID',
  'MOMO_DISBURSEMENT_API_KEY',
  'MOMO_TARGET_ENVIRONMENT',
  'MOMO_CALLBACK_HOST',
] as const satisfies readonly (keyof typeof CONFIG_VARIABLES)[];

/** The script: a header that says what it replays and how, the plan as JSON, and the code that runs it. */
export function replayScriptOf(plan: ReplayPlan): string {
  return [
    '#!/usr/bin/env node',
    `// ${comment(plan.title)}`,
    ...plan.findings.map((line) => `//   found: ${comment(line)}`),
    `// ${plan.calls.length} call${plan.calls.length === 1 ? '' : 's'}, each held to what the exploration held it to (profile ${plan.profile}).`,
    '//',
    '// Run it with node (20 or later) and the MOMO_* variables of .env.example:',
    ...VARIABLES.map(
      (name) =>
        `//   ${name}: ${comment(name === 'MOMO_BASE_URL' ? 'Base URL of the target ({base_url}); required.' : CONFIG_VARIABLES[name])}`,
    ),
    '// Without MOMO_<PRODUCT>_USER_ID and MOMO_<PRODUCT>_API_KEY it provisions an API user, as the run did.',
    '// Exit 1: the departure came again; 0: every answer was as expected; 2: it could not replay, or the finding is of a',
    '// kind it does not judge itself (a record against its schema): it then shows the answer to compare.',
    `const PLAN = ${JSON.stringify(plan, null, 2)};`,
    REPLAY_RUNTIME,
  ].join('\n');
}

/** Text for a comment line: no line break and no control character, whatever a target sent. */
function comment(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f\u2028\u2029]+/g, ' ');
}

/**
 * The code of the replay, in plain JavaScript for node: it makes each call of PLAN with new ids (a UUID of the version
 * the exploration used), the product's subscription key, the replay's own access token or the Basic credential of the
 * API user a call registered, and checks each answer's status, error code and fields as PLAN says, with their weight.
 */
const REPLAY_RUNTIME = String.raw`
const env = process.env;
const KEYS = { collection: 'MOMO_COLLECTION_KEY', disbursement: 'MOMO_DISBURSEMENT_KEY', remittance: 'MOMO_REMITTANCE_KEY' };
const stop = (code, line) => { console.log(line); process.exit(code); };
const trimmed = (url) => url.replace(/\/+$/, '');
if (!env.MOMO_BASE_URL) stop(2, 'Could not replay: set MOMO_BASE_URL to the target (and MOMO_SANDBOX_URL when provisioning is on another host).');
const hosts = { gateway: trimmed(env.MOMO_BASE_URL), provisioning: trimmed(env.MOMO_SANDBOX_URL || env.MOMO_BASE_URL) };
const values = new Map();
const finals = new Map();
const tokens = new Map();
const printable = (text) => (String(text).trim() === '' ? '(empty body)' : String(text).replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, '?').slice(0, 2000));
// Statuses as runs: 400–501 or 505–599, rather than every one of them.
const statusList = (statuses) => statuses.reduce((runs, s) => { const last = runs.at(-1); if (last && last[1] === s - 1) last[1] = s; else runs.push([s, s]); return runs; }, []).map(([a, b]) => (a === b ? String(a) : a + '–' + b)).join(' or ');

// The replay's own callback listener, when a call asks for a callback: on 127.0.0.1, reached under the callback host
// its API users are registered with, each transaction at /callbacks/<its reference id>.
const callbacks = new Map();
let callbackBase;
if (PLAN.calls.some((call) => call.callback)) {
  const { createServer } = await import('node:http');
  const listener = createServer((request, response) => {
    let text = '';
    request.on('data', (chunk) => { if (text.length < 1048576) text += chunk; });
    request.on('end', () => {
      const id = decodeURIComponent(request.url.split('?')[0].split('/').pop()).toLowerCase();
      let json;
      try { json = JSON.parse(text); } catch { json = undefined; }
      callbacks.set(id, (callbacks.get(id) || []).concat([{ method: request.method, json, text }]));
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise((resolve) => listener.listen(0, '127.0.0.1', resolve));
  listener.unref();
  callbackBase = 'http://' + (env.MOMO_CALLBACK_HOST || PLAN.callbackHost) + ':' + listener.address().port + '/callbacks/';
}

function idOf(name, version) {
  if (!values.has(name)) { const id = crypto.randomUUID(); values.set(name, id.slice(0, 14) + version + id.slice(15)); }
  return values.get(name);
}
function keptOf(name) {
  if (!values.has(name)) stop(2, 'Could not replay: no answer gave the ' + name + ' a later call needs.');
  return values.get(name);
}
const fill = (text) => text.replace(/\{\{(id|kept):([A-Za-z0-9_]+)(?::([0-9a-f]))?\}\}/g, (_, kind, name, version) => (kind === 'id' ? idOf(name, version) : keptOf(name)));
const filled = (value) => (value === undefined ? undefined : JSON.parse(fill(JSON.stringify(value))));
function keyOf(product) {
  if (!env[KEYS[product]]) stop(2, 'Could not replay: set ' + KEYS[product] + ' to the ' + product + ' subscription key.');
  return env[KEYS[product]];
}
function pointed(json, pointer) {
  let value = json;
  for (const part of pointer.split('/').slice(1)) value = value === null || typeof value !== 'object' ? undefined : value[part.replace(/~1/g, '/').replace(/~0/g, '~')];
  return value;
}

async function send(method, host, path, headers, body) {
  const url = hosts[host] + path;
  let response;
  try {
    response = await fetch(url, { method, headers, body, redirect: 'manual', signal: AbortSignal.timeout(30000) });
  } catch (error) {
    stop(2, 'Could not replay: ' + url + ' did not answer (' + ((error.cause && error.cause.message) || error.message) + ').');
  }
  const text = await response.text();
  let json;
  try { json = text.trim() === '' ? undefined : JSON.parse(text); } catch { json = undefined; }
  return { status: response.status, text, json };
}

async function account(product) {
  const upper = product.toUpperCase();
  if (env['MOMO_' + upper + '_USER_ID'] && env['MOMO_' + upper + '_API_KEY']) return { userId: env['MOMO_' + upper + '_USER_ID'], apiKey: env['MOMO_' + upper + '_API_KEY'] };
  const paths = PLAN.accounts[product];
  const userId = crypto.randomUUID();
  const key = { 'Ocp-Apim-Subscription-Key': keyOf(product) };
  const body = JSON.stringify({ providerCallbackHost: env.MOMO_CALLBACK_HOST || PLAN.callbackHost });
  const made = await send('POST', paths.user.host, paths.user.path, Object.assign({ 'X-Reference-Id': userId, 'Content-Type': 'application/json' }, key), body);
  const answer = made.status === 201 ? await send('POST', paths.key.host, paths.key.path.replace('{{user}}', userId), key) : made;
  if (answer.status !== 201 || !answer.json || typeof answer.json.apiKey !== 'string')
    stop(2, 'Could not replay: provisioning a ' + product + ' API user got HTTP ' + answer.status + '; set MOMO_' + upper + '_USER_ID and MOMO_' + upper + '_API_KEY.');
  return { userId, apiKey: answer.json.apiKey };
}

async function bearer(product) {
  const held = tokens.get(product);
  if (held && Date.now() < held.until) return 'Bearer ' + held.token;
  const { userId, apiKey } = held ? held.account : await account(product);
  const paths = PLAN.accounts[product];
  const headers = { 'Ocp-Apim-Subscription-Key': keyOf(product), Authorization: 'Basic ' + Buffer.from(userId + ':' + apiKey).toString('base64') };
  const answer = await send('POST', paths.token.host, paths.token.path, headers);
  if (answer.status !== 200 || !answer.json || typeof answer.json.access_token !== 'string') stop(2, 'Could not replay: the ' + product + ' access token got HTTP ' + answer.status + '.');
  // Renewed when four fifths of its life have passed, as the harness renews its own.
  tokens.set(product, { token: answer.json.access_token, until: Date.now() + Number(answer.json.expires_in || 60) * 800, account: { userId, apiKey } });
  return 'Bearer ' + answer.json.access_token;
}

async function headersOf(call) {
  const headers = {};
  if (call.key === 'own') headers['Ocp-Apim-Subscription-Key'] = keyOf(call.product);
  if (call.auth !== 'none' && call.auth.bearer) headers.Authorization = await bearer(call.auth.bearer);
  if (call.auth !== 'none' && call.auth.basic) headers.Authorization = 'Basic ' + Buffer.from(fill(call.auth.basic.user) + ':' + fill(call.auth.basic.key)).toString('base64');
  if (call.referenceId !== undefined) headers['X-Reference-Id'] = fill(call.referenceId);
  if (call.targetEnvironment) headers['X-Target-Environment'] = env.MOMO_TARGET_ENVIRONMENT || PLAN.targetEnvironment;
  if (call.body !== undefined) headers['Content-Type'] = 'application/json';
  if (call.callback && call.referenceId !== undefined) headers['X-Callback-Url'] = callbackBase + fill(call.referenceId);
  return headers;
}

function decimal(value) {
  const text = String(value).trim().replace(/^\+/, '');
  if (!/^-?\d+(\.\d+)?$/.test(text)) return text;
  const [whole, fraction = ''] = text.split('.');
  const digits = fraction.replace(/0+$/, '');
  return whole.replace(/^(-?)0+(?=\d)/, '$1') + (digits ? '.' + digits : '');
}
function partyValue(party) {
  const id = String(party.partyId);
  if (party.partyIdType === 'MSISDN') return id.replace(/^\+/, '');
  if (party.partyIdType === 'EMAIL') { const at = id.lastIndexOf('@'); return at < 0 ? id : id.slice(0, at) + '@' + id.slice(at + 1).toLowerCase(); }
  return id.toLowerCase();
}
function same(compare, actual, expected) {
  if (compare === 'amount') return (typeof actual === 'string' || typeof actual === 'number') && decimal(actual) === decimal(expected);
  if (compare !== 'party') return JSON.stringify(actual) === JSON.stringify(expected);
  if (actual === null || typeof actual !== 'object' || actual.partyIdType !== expected.partyIdType) return false;
  return PLAN.profile === 'mtn-sandbox' ? actual.partyId === expected.partyId : partyValue(actual) === partyValue(expected);
}

// JSON with its object keys in order, so that two records are compared on their values.
const canonical = (value) => JSON.stringify(value, (_, v) => (v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : 1))) : v));

/** Every callback that came for the id (waiting up to 5 s for one) against the status record of the answer, field by field. */
async function callbacksDeparture(check, answer) {
  if (check.when !== undefined && !check.when.includes(answer.status)) return undefined;
  const id = fill(check.referenceId).toLowerCase();
  const until = Date.now() + 5000;
  while (!(callbacks.get(id) || []).length && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 100));
  const record = answer.json === null || typeof answer.json !== 'object' ? {} : answer.json;
  for (const [index, callback] of (callbacks.get(id) || []).entries()) {
    const body = callback.json === null || typeof callback.json !== 'object' ? {} : callback.json;
    for (const field of check.fields)
      if (canonical(body[field]) !== canonical(record[field]))
        return { text: 'callback ' + (index + 1) + ' /' + field + ': expected ' + printable(canonical(record[field])) + ', as the status query gives, got ' + printable(canonical(body[field])) };
  }
  return undefined;
}

function departureOf(check, answer) {
  if (check.when !== undefined && !check.when.includes(answer.status)) return undefined;
  if (check.kind === 'status') return check.statuses.includes(answer.status) ? undefined : { text: 'status: expected ' + statusList(check.statuses) + ', got ' + answer.status };
  if (check.kind === 'not-status') return check.statuses.includes(answer.status) ? { text: 'status: expected anything but ' + statusList(check.statuses) + ', got ' + answer.status } : undefined;
  const json = answer.json === null || typeof answer.json !== 'object' ? {} : answer.json;
  if (check.kind === 'code') { const code = json.code !== undefined ? json.code : json.error; return code === check.code ? undefined : { text: 'code: expected ' + check.code + ', got ' + printable(JSON.stringify(code)) }; }
  const actual = pointed(answer.json, check.pointer);
  const expected = filled(check.value);
  if (actual === undefined) return check.whenMissing === 'passes' ? undefined : { weight: check.whenMissing, text: check.pointer + ': expected ' + JSON.stringify(expected) + ', got none' };
  return same(check.compare, actual, expected) ? undefined : { text: check.pointer + ': expected ' + JSON.stringify(expected) + ', got ' + printable(JSON.stringify(actual)) };
}

function finalStatusDeparture(call, answer, url) {
  const status = answer.json && answer.json.status;
  if (!call.statusQuery || answer.status !== 200 || typeof status !== 'string') return [];
  const first = finals.get(url);
  if (first === undefined && (status === 'SUCCESSFUL' || status === 'FAILED')) finals.set(url, status);
  return first === undefined || first === status ? [] : [{ weight: 'departure', text: '/status: expected ' + first + ', as read before, got ' + printable(status), why: 'a transaction that reached a final status keeps it (§3)' }];
}

async function departures(call, answer, url) {
  const found = [];
  for (const check of call.checks) {
    const departure = check.kind === 'callbacks' ? await callbacksDeparture(check, answer) : departureOf(check, answer);
    if (departure) found.push({ weight: departure.weight || check.weight, text: departure.text, why: check.why });
  }
  return found.concat(finalStatusDeparture(call, answer, url));
}

console.log(PLAN.title + '\nReplaying ' + PLAN.calls.length + ' calls against ' + hosts.gateway);
for (const line of PLAN.findings) console.log('  the exploration found: ' + line);
let last;
for (const [index, call] of PLAN.calls.entries()) {
  const path = fill(call.path);
  const body = call.body === undefined ? undefined : JSON.stringify(filled(call.body));
  let answer = await send(call.method, call.host, path, await headersOf(call), body);
  // A record the callbacks are held to is read until it is final, as the exploration read it (within 10 s).
  for (const until = Date.now() + 10000; call.checks.some((c) => c.kind === 'callbacks') && answer.status === 200 && answer.json && answer.json.status === 'PENDING' && Date.now() < until; ) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    answer = await send(call.method, call.host, path, await headersOf(call), body);
  }
  last = answer;
  if (call.keep) { const value = pointed(answer.json, call.keep.pointer); if (typeof value === 'string') values.set(call.keep.name, value); }
  console.log((index + 1) + '. ' + call.command + ': ' + call.method + ' ' + path + ' -> HTTP ' + answer.status);
  const found = await departures(call, answer, hosts[call.host] + path);
  for (const f of found) console.log('   ' + { departure: 'DEPARTS', premise: 'PREMISE NOT HELD', note: 'note' }[f.weight] + ': ' + f.text + ' (' + f.why + ')');
  if (found.some((f) => f.weight === 'departure')) stop(1, '   answer: ' + printable(answer.text) + '\nThe departure is reproduced.');
  if (found.some((f) => f.weight === 'premise')) stop(2, 'Could not replay: the case rests on a premise that did not hold for this target (above).');
}
// A finding of a kind this script does not judge (a record against its schema): the answer is shown, not passed.
if (PLAN.unjudged.length > 0) stop(2, 'Could not judge: the exploration found what this replay does not check:\n  ' + PLAN.unjudged.join('\n  ') + '\nThe last answer, to compare: HTTP ' + last.status + ' ' + printable(last.text));
stop(0, 'No departure: every answer was as the exploration expected.');
`;
