import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { behaviourOf, type ProfileBehaviour } from '../../core/profiles.ts';
import type { ChaosApplied, ChaosListener } from '../domain/chaos-applied.ts';
import {
  CHAOS_CONDITIONS,
  CHAOS_CONDITION_NAMES,
  hasChaos,
  type ChaosCondition,
  type ChaosConditionDefinition,
} from '../domain/chaos-conditions.ts';
import type { CallbackSink } from '../domain/callbacks.ts';
import type { Clock } from '../domain/clock.ts';
import type { SandboxContext } from '../domain/context.ts';
import type { Payments } from '../domain/payments.ts';
import type { SandboxPlugin } from '../domain/plugins.ts';
import { REPEATED_CALLBACK_AFTER_MS, type SandboxSettings } from '../domain/settings.ts';
import { idKey, type SandboxState, type Transaction } from '../domain/state.ts';
import { servesTargetEnvironment } from '../http/guards.ts';
import { sendBusinessError, sendOAuthError } from '../http/replies.ts';
import type { ServedRoute } from '../http/serving.ts';
import { ChaosDraws } from './draws.ts';
import { INTERNAL_ERROR, UNAVAILABLE, routeKey, routesByCondition, whereText, type RequestCondition } from './occasions.ts';

/**
 * The sandbox's spec-legal chaos (--chaos): the adverse conditions of ../domain/chaos-conditions.ts, carried out as
 * a plugin at the sandbox's edges (../domain/plugins.ts), so that a sandbox started without --chaos installs none of
 * it. Requests are answered late, answered 500 or 503, or cut off before or after a creation is stored; tokens are
 * refused early; payments stay PENDING longer; callbacks come late, twice or never. Each application is logged at
 * info level and told to the listener (the client report's recorder, when it is on).
 */

/** At most this many refused tokens are remembered (then the oldest is forgotten, and works again until its expiry). */
const MAX_REFUSED_TOKENS = 10_000;

/** What --chaos asks for, as plugins: the chaos plugin when a condition is on, none otherwise. */
export function chaosPlugins(settings: SandboxSettings, listener?: ChaosListener): SandboxPlugin[] {
  return hasChaos(settings.chaos) ? [chaosPlugin(settings, listener)] : [];
}

/** The chaos of the settings (--chaos, --chaos-seed and the conditions' own settings) as a sandbox plugin. */
export function chaosPlugin(settings: SandboxSettings, listener?: ChaosListener): SandboxPlugin {
  const chaos = new Chaos(settings, listener);
  return {
    name: 'chaos',
    wrap: {
      callbacks: (sink, { components, log }) => chaos.callbacks(sink, components.state!, components.clock!, log),
      payments: (payments, { components, log }) => chaos.payments(payments, components.state!, components.clock!, log),
    },
    install: (app, context) => chaos.install(app, context),
  };
}

/** The conditions of one sandbox: their shares, their seeded draws, and where each applies. */
class Chaos {
  private readonly draws: ChaosDraws;
  private readonly routes: Record<RequestCondition, ReadonlySet<string>>;
  /** The ids (jti) of the tokens token-refused-early refused, oldest first: they stay refused. */
  private readonly refusedTokens = new Set<string>();
  // The sandbox's log and clock, from the first of its wraps or its install to run (both come before any request).
  private log: FastifyBaseLogger | undefined;
  private clock: Clock | undefined;

  constructor(
    private readonly settings: SandboxSettings,
    private readonly listener: ChaosListener | undefined,
  ) {
    this.draws = new ChaosDraws(settings.chaosSeed);
    this.routes = routesByCondition(behaviourOf(settings.profile));
  }

  private share(condition: ChaosCondition): number {
    return this.settings.chaos[condition] ?? 0;
  }

  /** Whether a condition applies on this occasion: a draw of its own stream. */
  private happens(condition: ChaosCondition): boolean {
    return this.draws.chance(condition, this.share(condition));
  }

  /** Whether a condition that acts on requests applies to this one: drawn only on a route it may apply to. */
  private happensOn(condition: RequestCondition, route: ServedRoute): boolean {
    return this.routes[condition].has(routeKey(route)) && this.happens(condition);
  }

  /** Logs an application at info level and tells the listener; a listener that throws is logged, never the request's problem. */
  private report(applied: Omit<ChaosApplied, 'at'>): void {
    const entry: ChaosApplied = { ...applied, at: this.clock!.now() };
    this.log!.info({ chaos: entry }, `chaos: ${entry.condition}: ${entry.detail}`);
    if (!this.listener) return;
    try {
      this.listener(entry);
    } catch (error) {
      this.log!.warn({ err: error, condition: entry.condition }, 'the chaos listener failed; the chaos goes on');
    }
  }

  install(app: FastifyInstance, context: SandboxContext): void {
    this.log ??= context.log;
    this.clock ??= context.clock;
    if (this.share('token-refused-early') > 0)
      app.addHook('preValidation', (request, reply, done) => this.refuseToken(request, reply, done));
    if (this.share('cut-before-store') + this.share('503') + this.share('500') > 0) {
      app.addHook('preHandler', (request, reply, done) => this.answerInstead(request, reply, context, done));
    }
    if (this.share('cut-after-store') + this.share('latency') > 0) {
      app.addHook('onSend', (request, reply, payload, done) => this.holdOrCut(request, reply, () => done(null, payload)));
    }
    context.log.info(
      { chaos: this.settings.chaos, seed: this.settings.chaosSeed },
      `chaos on (seed ${this.settings.chaosSeed}; --chaos-seed ${this.settings.chaosSeed} repeats it)`,
    );
  }

  /**
   * token-refused-early, once the guards have admitted the request's token (its claims are set): a token drawn is
   * refused, and stays refused, as a revoked one would be.
   */
  private refuseToken(request: FastifyRequest, reply: FastifyReply, done: () => void): void {
    const route = request.routeOptions.config.route;
    const claims = request.claims;
    if (!route || !claims) {
      done();
      return;
    }
    const refusedBefore = this.refusedTokens.has(claims.jti);
    if (!refusedBefore && !this.happensOn('token-refused-early', route)) {
      done();
      return;
    }
    const secondsLeft = Math.floor(claims.exp - this.clock!.now() / 1000);
    if (!refusedBefore) {
      if (this.refusedTokens.size >= MAX_REFUSED_TOKENS) this.refusedTokens.delete(this.refusedTokens.values().next().value!);
      this.refusedTokens.add(claims.jti);
    }
    this.report({
      condition: 'token-refused-early',
      ...this.aboutRequest(request, route),
      detail: `answered 401 invalid_token to ${claims.use === 'access' ? 'an access' : 'a consent'} token ${refusedBefore ? 'refused before' : 'still valid'}, ${secondsLeft} s before its expiry`,
    });
    sendOAuthError(reply, 401, 'invalid_token', { description: 'The access token is no longer valid; request a new one.' });
  }

  /**
   * cut-before-store, 503 and 500, once the request is admitted and validated, before its handler: nothing of it is
   * carried out. A target environment the sandbox does not serve is left to its own answer, which the spec gives.
   */
  private answerInstead(request: FastifyRequest, reply: FastifyReply, context: SandboxContext, done: () => void): void {
    const route = request.routeOptions.config.route;
    if (!route || !servesTargetEnvironment(route, request, context.settings)) {
      done();
      return;
    }
    if (this.happensOn('cut-before-store', route)) {
      this.report({ condition: 'cut-before-store', ...this.aboutRequest(request, route), detail: 'closed the connection before storing' });
      cut(request, reply);
      return;
    }
    if (this.happensOn('503', route)) {
      this.report({ condition: '503', ...this.aboutRequest(request, route), detail: 'answered 503 SERVICE_UNAVAILABLE' });
      reply.header('retry-after', '1');
      sendBusinessError(reply, 503, UNAVAILABLE.code, UNAVAILABLE.message);
      return;
    }
    if (this.happensOn('500', route)) {
      this.report({ condition: '500', ...this.aboutRequest(request, route), detail: 'answered 500 INTERNAL_PROCESSING_ERROR' });
      sendBusinessError(reply, 500, INTERNAL_ERROR.code, INTERNAL_ERROR.message);
      return;
    }
    done();
  }

  /** cut-after-store on a creation's 202, and latency on any answer of the API, as the answer is about to go. */
  private holdOrCut(request: FastifyRequest, reply: FastifyReply, send: () => void): void {
    const route = request.routeOptions.config.route;
    if (!route) {
      send();
      return;
    }
    if (reply.statusCode === 202 && this.happensOn('cut-after-store', route)) {
      this.report({
        condition: 'cut-after-store',
        ...this.aboutRequest(request, route),
        detail: 'stored the transaction, then closed the connection without the 202',
      });
      cut(request, reply);
      return;
    }
    if (this.happensOn('latency', route)) {
      const ms = this.draws.within('latency ms', this.settings.chaosLatencyMs);
      this.report({ condition: 'latency', ...this.aboutRequest(request, route), detail: `held the ${reply.statusCode} back ${ms} ms` });
      this.clock!.setTimer(ms, send);
      return;
    }
    send();
  }

  /** Who and what a request is about: its id, operation, caller and the transaction it names (never a secret). */
  private aboutRequest(
    request: FastifyRequest,
    route: ServedRoute,
  ): Pick<ChaosApplied, 'requestId' | 'operationId' | 'apiUserId' | 'referenceId'> {
    const referenceId = transactionIdOf(request, route);
    return {
      requestId: request.id,
      operationId: route.operation.id,
      ...(request.caller ? { apiUserId: request.caller.id } : {}),
      ...(referenceId !== undefined ? { referenceId } : {}),
    };
  }

  /** long-pending: a transaction drawn is held PENDING, then begun as it would have been. */
  payments(payments: Payments, state: SandboxState, clock: Clock, log: FastifyBaseLogger): Payments {
    this.log ??= log;
    this.clock ??= clock;
    return {
      begin: (tx, now) => {
        if (!this.happens('long-pending')) return payments.begin(tx, now);
        const holdMs = this.settings.chaosLongPendingMs;
        this.report({ condition: 'long-pending', ...aboutTransaction(tx), detail: `kept the ${tx.kind} PENDING ${holdMs} ms longer` });
        // On the transaction's own timer, which the sandbox cancels when it closes.
        tx.timer = clock.setTimer(holdMs, () => {
          tx.timer = undefined;
          // A record forgotten by retention is no longer anyone's to settle.
          if (state.transactions[tx.kind].get(tx.referenceId) === tx) payments.begin(tx);
        });
      },
      statusRecord: (tx) => payments.statusRecord(tx),
    };
  }

  /** callback-lost, callback-delayed and callback-repeated, on every callback the sandbox sends. */
  callbacks(sink: CallbackSink, state: SandboxState, clock: Clock, log: FastifyBaseLogger): CallbackSink {
    this.log ??= log;
    this.clock ??= clock;
    const deliver = (delayMs: number, ...callback: Parameters<CallbackSink['send']>) => {
      const about = aboutCallback(state, callback[3]);
      if (this.happens('callback-lost')) {
        this.report({ condition: 'callback-lost', ...about, detail: `lost the ${about.kind} callback on its way` });
        return;
      }
      let at = delayMs;
      if (this.happens('callback-delayed')) {
        const later = this.draws.within('callback-delayed ms', this.settings.chaosCallbackDelayMs);
        at += later;
        this.report({ condition: 'callback-delayed', ...about, detail: `sent the ${about.kind} callback ${later} ms later` });
      }
      const send = (afterMs: number) => (afterMs === 0 ? sink.send(...callback) : sink.sendLater(afterMs, ...callback));
      send(at);
      if (this.happens('callback-repeated')) {
        this.report({
          condition: 'callback-repeated',
          ...about,
          detail: `sent the ${about.kind} callback again ${REPEATED_CALLBACK_AFTER_MS} ms after the first`,
        });
        send(at + REPEATED_CALLBACK_AFTER_MS);
      }
    };
    return {
      send: (...callback) => deliver(0, ...callback),
      sendLater: (delayMs, ...callback) => deliver(delayMs, ...callback),
      settled: () => sink.settled(),
      close: () => sink.close(),
      observe: (observer) => sink.observe?.(observer),
    };
  }
}

/** Closes a request's connection without an answer: the client hears nothing, as when a network drops it. */
function cut(request: FastifyRequest, reply: FastifyReply): void {
  reply.hijack();
  request.raw.socket.destroy();
}

/**
 * The transaction a request names: a creation's X-Reference-Id, or the referenceId of the path of an operation on a
 * transaction (a status query, a delivery notification). Provisioning's referenceId is an API user's, not a transaction's.
 */
function transactionIdOf(request: FastifyRequest, route: ServedRoute): string | undefined {
  const { operation } = route;
  if (operation.store !== undefined) {
    const header = request.headers['x-reference-id'];
    return typeof header === 'string' ? idKey(header) : undefined;
  }
  if (operation.credential !== 'bearer') return undefined;
  const named = (request.params as { referenceId?: unknown } | undefined)?.referenceId;
  return typeof named === 'string' ? idKey(named) : undefined;
}

function aboutTransaction(tx: Transaction): Pick<ChaosApplied, 'apiUserId' | 'referenceId'> {
  return { apiUserId: tx.apiUserId, referenceId: tx.referenceId };
}

/** What a callback is about, from the context the sandbox sends it with: a transaction (kind, referenceId) or a consent (authReqId). */
function aboutCallback(
  state: SandboxState,
  context: Record<string, string>,
): Pick<ChaosApplied, 'apiUserId' | 'referenceId'> & { kind: string } {
  const kind = context.kind ?? 'unknown';
  const store = Object.hasOwn(state.transactions, kind) ? state.transactions[kind as Transaction['kind']] : undefined;
  const tx = store && context.referenceId !== undefined ? store.get(context.referenceId) : undefined;
  if (tx) return { kind, ...aboutTransaction(tx) };
  const consent = context.authReqId !== undefined ? state.consentRequests.get(context.authReqId) : undefined;
  return consent ? { kind, apiUserId: consent.apiUserId } : { kind };
}

/** The conditions as text, for --list-chaos: each with its default share, what it does, where, and what allows it. */
export function chaosText(profile: ProfileBehaviour = behaviourOf('spec')): string {
  const legal = CHAOS_CONDITION_NAMES.filter((name) => CHAOS_CONDITIONS[name].legality === 'spec-legal').length;
  const lines = [
    `${CHAOS_CONDITION_NAMES.length} chaos conditions, ${legal} spec-legal (--chaos all names these) and ${CHAOS_CONDITION_NAMES.length - legal} live ones a run names on their own; start the sandbox with --chaos <name>[=<share>][,...] or --chaos all (MOMO_SANDBOX_CHAOS), and --chaos-seed <n> to repeat a run.`,
  ];
  for (const name of CHAOS_CONDITION_NAMES) {
    const { summary, allowedBy, defaultShare, legality, breaks } = CHAOS_CONDITIONS[name] as ChaosConditionDefinition;
    lines.push(
      '',
      `${name} (${legality}, default share ${defaultShare})`,
      `  ${summary}`,
      `  where: ${whereText(name, profile)}`,
      legality === 'spec-legal' ? `  allowed by ${allowedBy}` : `  met on the live service: ${allowedBy}`,
      ...(breaks ? [`  breaks ${breaks.rule}: a conformance run fails it (${breaks.check})`] : []),
    );
  }
  return lines.join('\n');
}

/** The conditions as the Markdown table of docs/sandbox.md ("Chaos"), which a test holds to this. */
export function chaosTable(): string {
  const cell = (text: string) => text.replace(/\|/g, '\\|');
  return [
    '| condition | legality | default share | what happens | allowed by, or the rule it breaks |',
    '|---|---|---|---|---|',
    ...CHAOS_CONDITION_NAMES.map((name) => {
      const { summary, allowedBy, defaultShare, legality, breaks } = CHAOS_CONDITIONS[name] as ChaosConditionDefinition;
      const why = breaks ? `breaks ${breaks.rule} (\`${breaks.check}\`); met on the live service: ${allowedBy}` : allowedBy;
      return `| \`${name}\` | ${legality} | ${defaultShare} | ${cell(summary)} | ${cell(why)} |`;
    }),
  ].join('\n');
}
