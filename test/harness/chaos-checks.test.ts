/**
 * Every chaos condition of the sandbox against the harness checks it touches: the chaos and the checks agree, from
 * their own definitions, on whether a behaviour is legal. A spec-legal condition is one a conforming server may show,
 * so the careful client absorbs it (a retry, a wait) or a check weighs it below a failure; a live condition breaks a
 * definite rule, and names the check that finds it. A condition added to sandbox/domain/chaos-conditions.ts without
 * an entry here fails the type check.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { OPERATIONS, type OperationId } from '../../core/catalogue/operations.ts';
import { routes } from '../../core/catalogue/routes.ts';
import { PROFILES, behaviourOf } from '../../core/profiles.ts';
import { validatorFor } from '../../core/validation/schemas.ts';
import { CHECKS, type CheckName } from '../../harness/checks/index.ts';
import { schemasFor } from '../../harness/checks/contract.ts';
import { isTransientAnswer, repeatabilityOf } from '../../harness/client/careful.ts';
import { loadConfig } from '../../harness/config.ts';
import { INTERNAL_ERROR, UNAVAILABLE, routeKey, routesOf } from '../../sandbox/chaos/occasions.ts';
import { CHAOS_CONDITIONS, CHAOS_CONDITION_NAMES, type ChaosCondition } from '../../sandbox/domain/chaos-conditions.ts';
import { resolveSettings } from '../../sandbox/domain/settings.ts';

const CONFIG = loadConfig({
  MOMO_BASE_URL: 'http://127.0.0.1:1',
  MOMO_COLLECTION_KEY: 'k',
  MOMO_DISBURSEMENT_KEY: 'k',
  MOMO_REMITTANCE_KEY: 'k',
});
const SETTINGS = resolveSettings();

/** What a 5xx condition answers, and where: every route it reaches is a legal answer the careful client asks again. */
function assertAbsorbedAnswer(condition: '500' | '503', body: unknown): string[] {
  const touched: string[] = [];
  for (const profile of PROFILES) {
    const behaviour = behaviourOf(profile);
    const reached = routesOf(condition, behaviour);
    assert.ok(reached.size > 0, `${condition} reaches no route in ${profile}`);
    for (const route of routes()) {
      const key = routeKey(route);
      if (!reached.has(key)) continue;
      const id = route.operation.id as OperationId;
      const status = Number(condition);
      // status-code: the operation lists the status, so the judge takes it; body-schema: the body is one of that status.
      const schemas = schemasFor(id, route.product ?? 'collection', status, behaviour);
      assert.ok(
        Array.isArray(schemas) && schemas.some((schema) => validatorFor(schema)(body)),
        `${condition} on ${key} (${profile}) is no answer its contract takes`,
      );
      // The 500 an operation takes is the spec's own listing, never one the catalogue infers.
      if (condition === '500') assert.equal(OPERATIONS[id].responses[500]?.source, 'spec', `500 on ${key}: §4 does not list it`);
      // The careful client asks again, whatever the operation: the answer says nothing was done.
      assert.ok(isTransientAnswer(status, body), `${condition} on ${key} is not taken as transient`);
      touched.push(key);
    }
  }
  return touched;
}

/** Each condition, the checks it touches, and why none of them fails a target that shows it (or, if live, which does). */
const WALKS: Record<ChaosCondition, { touches: CheckName[]; walk: () => void }> = {
  latency: {
    touches: ['status-code'],
    walk: () => {
      // Held back within the default range, an answer comes before the harness stops waiting for it.
      assert.ok(SETTINGS.chaosLatencyMs.max < CONFIG.requestTimeoutMs, 'the default latency outlasts MOMO_REQUEST_TIMEOUT_MS');
    },
  },
  '500': { touches: ['status-code', 'error-code', 'body-schema'], walk: () => void assertAbsorbedAnswer('500', INTERNAL_ERROR) },
  '503': { touches: ['status-code', 'error-code', 'body-schema'], walk: () => void assertAbsorbedAnswer('503', UNAVAILABLE) },
  'cut-before-store': {
    touches: ['status-code', 'refusal-changes-nothing'],
    walk: () => assertCutsAreKeyed('cut-before-store'),
  },
  'cut-after-store': {
    touches: ['status-code', 'refusal-changes-nothing'],
    walk: () => assertCutsAreKeyed('cut-after-store'),
  },
  'long-pending': {
    touches: ['transaction-outcome'],
    walk: () => {
      // At its default, a payment held back still settles within the harness's default wait: the mtn-sandbox profile,
      // where the live service's pace is an observation, fails a wait that runs out.
      assert.ok(SETTINGS.chaosLongPendingMs < CONFIG.pollTimeoutMs, 'the default long-pending outlasts MOMO_POLL_TIMEOUT_MS');
      // The spec gives no time: in the spec profile a payment that settles later than the harness waits is not observed.
      assert.notEqual(CHECKS['transaction-outcome'].values.settling.kind, 'spec');
      assert.notEqual(CHECKS['transaction-outcome'].values.slowNumber.kind, 'spec');
    },
  },
  'callback-delayed': {
    touches: ['callback-arrives'],
    walk: () => {
      // At its default, a late callback still comes within the harness's default wait (mtn-sandbox fails one that does not).
      assert.ok(SETTINGS.chaosCallbackDelayMs.max < CONFIG.pollTimeoutMs, 'the default callback delay outlasts MOMO_POLL_TIMEOUT_MS');
      // §6 gives no time: in the spec profile a callback later than the wait is not observed, never a failure.
      assert.notEqual(CHECKS['callback-arrives'].values.timing.kind, 'spec');
      assert.notEqual(CHECKS['consent-granted'].values.timing.kind, 'spec');
    },
  },
  'callback-repeated': {
    touches: ['callback-once'],
    walk: () => {
      // §6 leaves retries not shown: a second callback is a reading (a warning unless --strict).
      assert.equal(CHECKS['callback-once'].source.kind, 'reading');
    },
  },
  'callback-lost': { touches: ['callback-arrives'], walk: () => assertLiveBreaks('callback-lost') },
  'token-refused-early': { touches: ['token-honoured-until-expiry'], walk: () => assertLiveBreaks('token-refused-early') },
};

function assertCutsAreKeyed(condition: 'cut-before-store' | 'cut-after-store'): void {
  for (const profile of PROFILES) {
    const reached = routesOf(condition, behaviourOf(profile));
    assert.ok(reached.size > 0, `${condition} reaches no route in ${profile}`);
    for (const route of routes()) {
      if (!reached.has(routeKey(route))) continue;
      // Sent again under the same X-Reference-Id: a 409 then tells that the cut attempt had created it.
      assert.equal(repeatabilityOf(route.operation.id as OperationId), 'keyed', `${condition} cuts ${routeKey(route)}, which is not keyed`);
    }
  }
}

/** A live condition breaks a definite rule, and names the check that finds it; the check cites the same clause. */
function assertLiveBreaks(condition: 'callback-lost' | 'token-refused-early'): void {
  const breaks = CHAOS_CONDITIONS[condition].breaks;
  const check = CHECKS[breaks.check as CheckName];
  assert.ok(check, `${condition} names ${breaks.check}, which is no check`);
  assert.equal(check.source.kind, 'spec', `${breaks.check} is not definite, so ${condition} breaks no rule`);
  const clause = breaks.rule.split(':')[0]!;
  assert.ok(
    check.source.kind === 'spec' && check.source.clause.startsWith(clause),
    `${breaks.check} cites ${JSON.stringify(check.source)}`,
  );
}

describe('every chaos condition against the checks it touches', () => {
  for (const condition of CHAOS_CONDITION_NAMES) {
    const definition = CHAOS_CONDITIONS[condition];
    test(`${condition} (${definition.legality}): ${WALKS[condition].touches.join(', ')}`, () => {
      for (const check of WALKS[condition].touches) assert.ok(check in CHECKS, `${check} is no check`);
      // Spec-legal and live are exclusive: a spec-legal condition breaks no rule; a live one names the rule it breaks.
      assert.equal('breaks' in definition, definition.legality === 'live', `${condition}: legality and breaks disagree`);
      WALKS[condition].walk();
    });
  }
});
