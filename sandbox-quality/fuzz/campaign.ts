import fc from 'fast-check';
import pino from 'pino';
import { randomUUID } from 'node:crypto';
import { Agent, request as httpRequest } from 'undici';
import { buildSandbox, type Sandbox } from '../../sandbox/app.ts';
import { listenOnLoopback } from '../../sandbox/start.ts';
import { ManualClock } from '../../sandbox/domain/clock.ts';
import { resolveSettings, type SandboxSettings } from '../../sandbox/domain/settings.ts';
import { CallbackReceiver } from '../../harness/callbacks/receiver.ts';
import { PRODUCTS } from '../../core/products.ts';
import type { ProfileName } from '../../core/profiles.ts';
import { Redactor } from '../../core/secrets/redact.ts';
import { domainHints } from './hints.ts';
import { judge, type Property, type Violation } from './properties.ts';
import { ROUTE_MISSES, type MutationKind } from './mutations.ts';
import { loadModel, type ApiModel, type ModelOperation } from './openapi-model.ts';
import { hasDotSegment, partsOf, planArbitrary, serialise, type EpisodeContext, type FuzzRequest, type RequestPlan } from './requests.ts';
import { snapshotState } from './snapshot.ts';
import { pathOf } from '../../core/catalogue/routes.ts';
import { EpisodeWorld, type Answer } from './episode.ts';

export type Transport = 'inject' | 'http';

export interface CampaignOptions {
  /** At least this many generated requests (whole episodes are run, so a few more). */
  requests: number;
  seed: number;
  /** Most requests in one episode (one fresh sandbox each). */
  episodeLength: number;
  profiles: readonly ProfileName[];
  /** Fuzz sandboxes with the strict readings on (--strict), judged by the document they serve then. */
  strict: boolean;
  /** fastify.inject (in-process, fast) or real HTTP on 127.0.0.1. */
  transport: Transport;
  /** How many failing episodes to shrink to a minimal sequence and report in full. */
  shrink: number;
  shrinkTimeMs: number;
  onProgress?: (progress: Progress) => void;
  progressEveryMs?: number;
}

export interface Progress {
  requests: number;
  target: number;
  elapsedMs: number;
  violations: number;
}

export interface Tally {
  requests: number;
  valid: number;
  malformed: number;
  statuses: Record<string, number>;
}

/** A violation as the summary lists it: what, where, and how to replay it. */
export interface RecordedViolation extends Violation {
  operation: string;
  mutation: MutationKind | 'none';
  status: number;
  replay: { seed: number; path: string };
}

/** A failing episode shrunk by fast-check to the fewest requests that still break a property. */
export interface ShrunkFailure {
  replay: { seed: number; path: string };
  requestsInEpisode: number;
  violations: Violation[];
  request: { method: string; url: string; headers: Record<string, string>; body: string };
  answer: { status: number; body: string };
  plan: RequestPlan;
}

export interface CampaignResult {
  seed: number;
  transport: Transport;
  profiles: readonly ProfileName[];
  requests: number;
  valid: number;
  malformed: number;
  episodes: number;
  /** Requests that provisioned the fuzzer's own API users at the start of each episode (not counted above). */
  setupRequests: number;
  /** Requests the client could not put on the wire (an HTTP client refuses some malformed paths); not counted above. */
  unsendable: number;
  durationMs: number;
  byOperation: Record<string, Tally>;
  byMutation: Record<string, Tally>;
  statuses: Record<string, number>;
  /** Valid requests (per the document) that the sandbox refused for their form: where the document is less strict than the sandbox. */
  validRefused: Record<string, { count: number; example: string }>;
  violationCounts: Partial<Record<Property, number>>;
  /** The first violations of each property and operation, with their replay. */
  violations: RecordedViolation[];
  failures: ShrunkFailure[];
  callbacksReceived: number;
}

interface Episode {
  profile: ProfileName;
  /** Small stores, so creations meet the documented 503 of a full store. */
  tight: boolean;
  plans: RequestPlan[];
}

interface Observation {
  index: number;
  plan: RequestPlan;
  op: ModelOperation;
  request: FuzzRequest;
  answer: Answer;
  violations: Violation[];
}

const REQUEST_TIMEOUT_MS = 10_000;
/** undici's errors for a request it will not put on the wire. */
const CLIENT_REFUSALS = new Set(['UND_ERR_INVALID_ARG', 'UND_ERR_NOT_SUPPORTED']);
const VIOLATIONS_KEPT_PER_KIND = 3;
const START = Date.UTC(2026, 0, 1);

/** The environment every episode shares: the models of the document, the callback receiver, the HTTP agent. */
interface Environment {
  models: Map<ProfileName, ApiModel>;
  strict: boolean;
  receiver: CallbackReceiver;
  transport: Transport;
  agent: Agent | undefined;
  redactor: Redactor;
  /** Errors the process saw outside any request (uncaught exceptions, unhandled rejections). */
  processErrors: string[];
  /** Stops listening for them. */
  detach(): void;
}

/**
 * Runs generated requests against fresh sandboxes until the target is reached, checking every property
 * on every answer. Episodes are fast-check runs: a failing one is replayed by its seed and path, and
 * shrunk to the fewest requests that still fail.
 */
export async function runCampaign(options: CampaignOptions): Promise<CampaignResult> {
  const env = await openEnvironment(options);
  const started = Date.now();
  const result = emptyResult(options);
  const failing: { seed: number; path: string; key: string }[] = [];
  try {
    const generationModel = env.models.get(options.profiles[0]!)!;
    const arbitrary = episodeArbitrary(generationModel, options);
    let lastProgress = 0;
    for (let pass = 0; result.requests < options.requests; pass += 1) {
      const seed = (options.seed + pass) | 0;
      // Episodes average a little under half the longest; fast-check draws them until the target is met.
      const numRuns = Math.max(1, Math.ceil((options.requests - result.requests) / (options.episodeLength * 0.45)));
      let run = 0;
      await fc.assert(
        fc.asyncProperty(arbitrary, async (episode) => {
          const path = String(run++);
          if (result.requests >= options.requests) return;
          const outcome = await runEpisode(episode, env, (o) => record(result, o, { seed, path }));
          result.episodes += 1;
          result.setupRequests += outcome.setupRequests;
          result.unsendable += outcome.unsendable;
          for (const v of outcome.violations) {
            const key = `${v.property}|${v.operation}`;
            if (!failing.some((f) => f.key === key)) failing.push({ seed, path, key });
          }
          if (options.onProgress && Date.now() - lastProgress >= (options.progressEveryMs ?? 2000)) {
            lastProgress = Date.now();
            options.onProgress({
              requests: result.requests,
              target: options.requests,
              elapsedMs: Date.now() - started,
              violations: sum(result.violationCounts),
            });
          }
        }),
        { seed, numRuns },
      );
    }
    result.durationMs = Date.now() - started;
    const episodes = [...new Map(failing.map((f) => [`${f.seed}:${f.path}`, f])).values()].slice(0, options.shrink);
    for (const f of episodes) {
      const shrunk = await shrinkFailure(arbitrary, env, f.seed, f.path, options.shrinkTimeMs);
      if (shrunk) result.failures.push(shrunk);
    }
    result.callbacksReceived = env.receiver.all().length;
  } finally {
    await closeEnvironment(env);
  }
  return result;
}

/** Replays one episode by seed and path (as the summary prints them), shrinks it, and reports the failure. */
export async function replayFailure(options: CampaignOptions & { path: string }): Promise<ShrunkFailure | undefined> {
  const env = await openEnvironment(options);
  try {
    const arbitrary = episodeArbitrary(env.models.get(options.profiles[0]!)!, options);
    return await shrinkFailure(arbitrary, env, options.seed, options.path, options.shrinkTimeMs);
  } finally {
    await closeEnvironment(env);
  }
}

async function openEnvironment(options: CampaignOptions): Promise<Environment> {
  const receiver = new CallbackReceiver('127.0.0.1');
  await receiver.start(0);
  const processErrors: string[] = [];
  const onError = (error: unknown) => processErrors.push(error instanceof Error ? `${error.name}: ${error.message}` : String(error));
  process.on('uncaughtException', onError);
  process.on('unhandledRejection', onError);
  const models = new Map<ProfileName, ApiModel>();
  for (const profile of options.profiles) models.set(profile, await documentOf(profile, options.strict));
  // Every profile serves the same operations; generation uses the first one's document.
  const ids = [...models.values()].map((m) => m.operations.map((op) => op.id).join(','));
  if (new Set(ids).size > 1) throw new Error("the profiles' documents list different operations; fuzz one profile at a time (--profile)");
  const redactor = new Redactor();
  for (const key of Object.values(settingsFor('spec', false, options.strict).subscriptionKeys)) redactor.add(key);
  return {
    models,
    strict: options.strict,
    receiver,
    transport: options.transport,
    redactor,
    processErrors,
    agent: options.transport === 'http' ? new Agent({ keepAliveTimeout: 10_000, connections: 4 }) : undefined,
    detach: () => {
      process.off('uncaughtException', onError);
      process.off('unhandledRejection', onError);
    },
  };
}

async function closeEnvironment(env: Environment): Promise<void> {
  env.detach();
  await env.agent?.close();
  await env.receiver.stop();
}

/** The document the sandbox serves in a profile, read through its own GET /openapi.json. */
async function documentOf(profile: ProfileName, strict: boolean): Promise<ApiModel> {
  const sandbox = await buildSandbox(settingsFor(profile, false, strict), {
    clock: new ManualClock(START),
    logger: pino({ level: 'silent' }),
  });
  try {
    const response = await sandbox.app.inject({ method: 'GET', url: '/openapi.json' });
    if (response.statusCode !== 200) throw new Error(`GET /openapi.json answered ${response.statusCode}`);
    return loadModel(response.json());
  } finally {
    await sandbox.close();
  }
}

/**
 * The sandbox of an episode. Nothing in it moves by real time during a request: delayed outcomes and the
 * pending timeout lie hours ahead on a manual clock, so the state only changes when a request changes it
 * (callbacks still go out, to the fuzzer's receiver).
 */
function settingsFor(profile: ProfileName, tight: boolean, strict: boolean): SandboxSettings {
  return resolveSettings({
    overrides: {
      port: 0,
      profile,
      strict,
      logLevel: 'error',
      delayedSuccessMs: 12 * 3_600_000,
      pendingTimeoutMs: 24 * 3_600_000,
      retentionMaxAgeMs: 48 * 3_600_000,
      callbackTimeoutMs: 1_000,
      callbackRetryDelaysMs: [],
      consentIntervalSeconds: 1,
      ...(tight ? { maxApiUsers: 6, retentionMaxEntries: 5 } : {}),
    },
  });
}

function episodeArbitrary(model: ApiModel, options: CampaignOptions): fc.Arbitrary<Episode> {
  const hints = domainHints(settingsFor('spec', false, options.strict));
  return fc.record({
    profile: fc.constantFrom(...options.profiles),
    tight: fc.nat(4).map((n) => n === 0),
    plans: fc.array(planArbitrary(model, hints), { minLength: 1, maxLength: options.episodeLength, size: 'max' }),
  });
}

interface EpisodeOutcome {
  violations: (Violation & { operation: string })[];
  setupRequests: number;
  unsendable: number;
}

/** One episode: a fresh sandbox, the fuzzer's API users, then the plans in order, each judged. */
async function runEpisode(
  episode: Episode,
  env: Environment,
  observe: (o: Observation) => void,
  stopAtFirstViolation = false,
): Promise<EpisodeOutcome> {
  const model = env.models.get(episode.profile)!;
  const settings = settingsFor(episode.profile, episode.tight, env.strict);
  const clock = new ManualClock(START);
  const internalErrors: string[] = [];
  // The sandbox's error log is how an unexpected error shows: its error handler logs it, then answers 500.
  const logger = pino({ level: 'error' }, { write: (line: string) => internalErrors.push(logLine(line)) });
  const sandbox = await buildSandbox(settings, { clock, logger });
  const outcome: EpisodeOutcome = { violations: [], setupRequests: 0, unsendable: 0 };
  try {
    const send = await transportFor(sandbox, env);
    const world = new EpisodeWorld(model);
    const context: EpisodeContext = {
      world,
      keys: settings.subscriptionKeys,
      products: PRODUCTS,
      jwtSecret: settings.jwtSecret,
      now: () => clock.now(),
      methodsAt: (path) => model.operations.filter((op) => op.path === path).map((op) => op.method),
      callbackBaseUrl: env.receiver.baseUrl,
    };
    outcome.setupRequests = await provision(model, world, context, send);
    const byId = new Map(model.operations.map((op) => [op.id, op]));
    const prototypeKeys = Object.getOwnPropertyNames(Object.prototype).length;
    for (const [index, plan] of episode.plans.entries()) {
      const op = byId.get(plan.operation)!;
      clock.advance(plan.elapsedMs);
      const parts = partsOf(plan, op, context);
      const request = serialise(parts, op);
      const before = snapshotState(sandbox.context, clock.now());
      internalErrors.length = 0;
      const sent = await send(request);
      if (sent.kind === 'unsendable') {
        outcome.unsendable += 1;
        continue;
      }
      const violations: Violation[] = [];
      if (sent.kind === 'failed') {
        violations.push({ property: 'no-crash', detail: `${request.method} ${op.id}: ${sent.reason}` });
        observe({ index, plan, op, request, answer: { status: 0, headers: {}, body: '' }, violations });
        outcome.violations.push(...violations.map((v) => ({ ...v, operation: op.id })));
        break;
      }
      const after = snapshotState(sandbox.context, clock.now());
      const routeMiss = (plan.mutation !== null && ROUTE_MISSES.has(plan.mutation.kind)) || hasDotSegment(request.url);
      violations.push(
        ...judge({ op, method: request.method, answer: sent.answer, routeMiss, before, after, internalErrors: [...internalErrors] }, model),
      );
      if (Object.getOwnPropertyNames(Object.prototype).length !== prototypeKeys || ({} as Record<string, unknown>).polluted !== undefined) {
        violations.push({
          property: 'no-prototype-pollution',
          detail: `${op.id}: Object.prototype gained ${Object.getOwnPropertyNames(Object.prototype).slice(prototypeKeys).join(', ') || 'polluted'}`,
        });
        delete (Object.prototype as Record<string, unknown>).polluted;
      }
      for (const error of env.processErrors.splice(0)) violations.push({ property: 'no-crash', detail: `the process saw: ${error}` });
      world.learn(op, parts, sent.answer);
      observe({ index, plan, op, request, answer: sent.answer, violations });
      outcome.violations.push(...violations.map((v) => ({ ...v, operation: op.id })));
      if (stopAtFirstViolation && violations.length > 0) break;
    }
    // Still answering after everything the episode sent.
    const health = await send({ method: 'GET', url: '/health', headers: {} });
    if (health.kind !== 'answered' || health.answer.status !== 200) {
      outcome.violations.push({ property: 'no-crash', detail: 'GET /health did not answer 200 after the episode', operation: 'health' });
    }
  } finally {
    await sandbox.close();
  }
  return outcome;
}

type Sent = { kind: 'answered'; answer: Answer } | { kind: 'failed'; reason: string } | { kind: 'unsendable' };

/** Sends requests in-process (fastify.inject) or over a real socket, with a time limit either way. */
async function transportFor(sandbox: Sandbox, env: Environment): Promise<(request: FuzzRequest) => Promise<Sent>> {
  const limit = <T>(promise: Promise<T>) => {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${REQUEST_TIMEOUT_MS} ms`)), REQUEST_TIMEOUT_MS);
    });
    return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
  };
  if (env.transport === 'inject') {
    return async (request): Promise<Sent> => {
      try {
        const response = await limit(
          sandbox.app.inject({
            method: request.method as 'GET',
            url: request.url,
            headers: request.headers,
            ...(request.body !== undefined ? { payload: request.body } : {}),
          }),
        );
        return {
          kind: 'answered',
          answer: { status: response.statusCode, headers: response.headers as Answer['headers'], body: response.body },
        };
      } catch (error) {
        return { kind: 'failed', reason: (error as Error).message };
      }
    };
  }
  const address = (await listenOnLoopback(sandbox)).baseUrl;
  return async (request): Promise<Sent> => {
    // undici refuses an Expect header, and a refused request with a body can leave its connection stuck
    // (the next request on it never gets an answer), so such a request is not handed to it at all.
    if (Object.keys(request.headers).some((name) => name.toLowerCase() === 'expect')) return { kind: 'unsendable' };
    let response;
    try {
      response = httpRequest(`${address}${request.url}`, {
        method: request.method as 'GET',
        headers: request.headers,
        body: request.body,
        dispatcher: env.agent,
      });
    } catch {
      return { kind: 'unsendable' };
    }
    try {
      const answered = await limit(response);
      const body = await answered.body.text();
      return { kind: 'answered', answer: { status: answered.statusCode, headers: answered.headers as Answer['headers'], body } };
    } catch (error) {
      // undici refuses some requests before sending them (a path it cannot encode, a header such as Expect it will not carry).
      if (CLIENT_REFUSALS.has(String((error as { code?: string }).code))) return { kind: 'unsendable' };
      return { kind: 'failed', reason: (error as Error).message };
    }
  };
}

/** The fuzzer's own API user per product: created, given a key and a token, as any client would. */
async function provision(
  model: ApiModel,
  world: EpisodeWorld,
  context: EpisodeContext,
  send: (r: FuzzRequest) => Promise<Sent>,
): Promise<number> {
  const op = (operation: string, product: string) => {
    const found = model.operations.find((o) => o.operation === operation && o.product === product);
    if (!found)
      throw new Error(`the document has no operation ${operation} under ${product}, which the fuzzer provisions its API users with`);
    return found;
  };
  let requests = 0;
  const call = async (operation: ModelOperation, request: FuzzRequest, pathParams: Record<string, string>) => {
    requests += 1;
    const sent = await send(request);
    if (sent.kind !== 'answered' || sent.answer.status >= 300)
      throw new Error(`provisioning ${operation.id} failed: ${sent.kind === 'answered' ? sent.answer.status : sent.kind}`);
    world.learn(operation, { headers: request.headers, pathParams }, sent.answer);
  };
  for (const product of PRODUCTS) {
    const id = randomUUID();
    const key = context.keys[product]!;
    world.adoptUser(id, product);
    const host = new URL(context.callbackBaseUrl).host;
    await call(
      op('createApiUser', 'provisioning'),
      {
        method: 'POST',
        url: pathOf('createApiUser'),
        headers: { 'ocp-apim-subscription-key': key, 'x-reference-id': id, 'content-type': 'application/json' },
        body: JSON.stringify({ providerCallbackHost: host }),
      },
      {},
    );
    await call(
      op('createApiKey', 'provisioning'),
      { method: 'POST', url: pathOf('createApiKey', undefined, { referenceId: id }), headers: { 'ocp-apim-subscription-key': key } },
      { referenceId: id },
    );
    const basic = world.credential(world.basicScheme ?? '', product);
    await call(
      op('createAccessToken', product),
      {
        method: 'POST',
        url: pathOf('createAccessToken', product),
        headers: { 'ocp-apim-subscription-key': key, authorization: basic ?? '' },
      },
      {},
    );
  }
  return requests;
}

function record(result: CampaignResult, o: Observation, replay: { seed: number; path: string }): void {
  const malformed = o.plan.mutation !== null;
  const status = String(o.answer.status);
  result.requests += 1;
  if (malformed) result.malformed += 1;
  else result.valid += 1;
  result.statuses[status] = (result.statuses[status] ?? 0) + 1;
  const tally = (table: Record<string, Tally>, key: string) => {
    const t = (table[key] ??= { requests: 0, valid: 0, malformed: 0, statuses: {} });
    t.requests += 1;
    if (malformed) t.malformed += 1;
    else t.valid += 1;
    t.statuses[status] = (t.statuses[status] ?? 0) + 1;
  };
  tally(result.byOperation, o.op.id);
  tally(result.byMutation, o.plan.mutation?.kind ?? 'none (valid)');
  if (!malformed && o.answer.status === 400 && /"statusCode":400/.test(o.answer.body)) {
    const refused = (result.validRefused[o.op.id] ??= { count: 0, example: '' });
    refused.count += 1;
    refused.example ||= messageOf(o.answer.body);
  }
  for (const v of o.violations) {
    result.violationCounts[v.property] = (result.violationCounts[v.property] ?? 0) + 1;
    const kept = result.violations.filter((r) => r.property === v.property && r.operation === o.op.id).length;
    if (kept < VIOLATIONS_KEPT_PER_KIND) {
      result.violations.push({ ...v, operation: o.op.id, mutation: o.plan.mutation?.kind ?? 'none', status: o.answer.status, replay });
    }
  }
}

async function shrinkFailure(
  arbitrary: fc.Arbitrary<Episode>,
  env: Environment,
  seed: number,
  path: string,
  timeMs: number,
): Promise<ShrunkFailure | undefined> {
  const details = await fc.check(
    fc.asyncProperty(arbitrary, async (episode) => {
      const outcome = await runEpisode(episode, env, () => undefined, true);
      return outcome.violations.length === 0;
    }),
    { seed, path, plugins: [fc.interruptAfterTimeLimit(timeMs)] },
  );
  if (!details.failed || !details.counterexample) return undefined;
  const [episode] = details.counterexample as [Episode];
  let failing: Observation | undefined;
  await runEpisode(
    episode,
    env,
    (o) => {
      if (!failing && o.violations.length > 0) failing = o;
    },
    true,
  );
  if (!failing) return undefined;
  const body =
    failing.request.body === undefined
      ? ''
      : Buffer.isBuffer(failing.request.body)
        ? `<${failing.request.body.length} bytes>`
        : failing.request.body;
  return {
    replay: { seed, path: details.counterexamplePath ?? path },
    requestsInEpisode: episode.plans.length,
    violations: failing.violations,
    request: {
      method: failing.request.method,
      url: failing.request.url,
      headers: env.redactor.headers(failing.request.headers),
      body: excerpt(env.redactor.body(body), 400),
    },
    answer: { status: failing.answer.status, body: excerpt(env.redactor.body(failing.answer.body), 400) },
    plan: failing.plan,
  };
}

function emptyResult(options: CampaignOptions): CampaignResult {
  return {
    seed: options.seed,
    transport: options.transport,
    profiles: options.profiles,
    requests: 0,
    valid: 0,
    malformed: 0,
    episodes: 0,
    setupRequests: 0,
    unsendable: 0,
    durationMs: 0,
    byOperation: {},
    byMutation: {},
    statuses: {},
    validRefused: {},
    violationCounts: {},
    violations: [],
    failures: [],
    callbacksReceived: 0,
  };
}

function logLine(line: string): string {
  try {
    const entry = JSON.parse(line) as { msg?: string; err?: { type?: string; message?: string } };
    return `the sandbox logged "${entry.msg ?? ''}"${entry.err ? `: ${entry.err.type ?? 'Error'}: ${entry.err.message ?? ''}` : ''}`;
  } catch {
    return `the sandbox logged: ${line.slice(0, 200)}`;
  }
}

function messageOf(body: string): string {
  try {
    return String((JSON.parse(body) as { message?: string }).message ?? body).slice(0, 200);
  } catch {
    return body.slice(0, 200);
  }
}

function excerpt(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

function sum(counts: Partial<Record<string, number>>): number {
  return Object.values(counts).reduce<number>((a, b) => a + (b ?? 0), 0);
}
