import type { SandboxPlugin } from '../../sandbox/domain/plugins.ts';
import { startEmbeddedSandbox } from '../../sandbox/start.ts';
import type { HarnessConfig } from '../../harness/config.ts';

/** The server a run tests: the embedded reference sandbox, or the one MOMO_BASE_URL names. */
export interface Target {
  description: string;
  config: HarnessConfig;
  embedded: boolean;
  stop(): Promise<void>;
}

/** The embedded sandbox runs with short delays, so the delayed outcomes and expiries are seen within a run. */
export const EMBEDDED_TIMINGS = {
  delayedSuccessMs: 1500,
  pendingTimeoutMs: 4000,
  tokenLifetimeSeconds: 4,
  consentIntervalSeconds: 1,
  callbackTimeoutMs: 1000,
  callbackRetryDelaysMs: [200, 500],
};

/**
 * The embedded reference sandbox as the run's target, with the run's profile, currency and environment and short
 * timings; `plugins` are deliberate faults (MOMO_SANDBOX_DEVIATIONS) and `variations` conforming variations
 * (MOMO_SANDBOX_VARIATIONS), which its description then names.
 */
export async function startEmbeddedTarget(
  config: HarnessConfig,
  plugins: readonly SandboxPlugin[] = [],
  variations: readonly SandboxPlugin[] = [],
): Promise<Target> {
  const running = await startEmbeddedSandbox(
    {
      profile: config.profile,
      currencies: [config.currency],
      targetEnvironments: [config.targetEnvironment],
      strict: config.strict,
      ...EMBEDDED_TIMINGS,
    },
    { plugins: [...variations, ...plugins] },
  );
  const { baseUrl } = running;
  const faults = plugins.map((p) => p.name);
  const varied = variations.map((p) => p.name);
  return {
    description: `the embedded reference sandbox (profile ${config.profile}${config.strict ? ', strict readings on' : ''}${varied.length > 0 ? `, with conforming variations: ${varied.join(', ')}` : ''}${faults.length > 0 ? `, DELIBERATELY DEVIATING: ${faults.join(', ')}` : ''}) at ${baseUrl}`,
    embedded: true,
    // A duplicate callback would come after the embedded sandbox's last retry delay; watch a little longer.
    // Its slowest outcome comes within its pending timeout, so a longer wait only slows a failing run.
    config: {
      ...config,
      callbackQuietMs: Math.min(config.callbackQuietMs, 1000),
      slowOutcomeTimeoutMs: Math.min(config.slowOutcomeTimeoutMs, 2.5 * EMBEDDED_TIMINGS.pendingTimeoutMs),
      baseUrl,
      sandboxUrl: baseUrl,
      subscriptionKeys: running.subscriptionKeys,
      apiUsers: { collection: undefined, disbursement: undefined, remittance: undefined },
    },
    stop: () => running.close(),
  };
}
