import { Agent, request } from 'undici';
import type { HarnessConfig } from './config.ts';
import { TargetUnreachableError, explainTransportError } from './client/transport-errors.ts';
import { DEFAULT_RETRY_POLICY, delayBefore, retryAfterMs } from './client/careful.ts';

export { TargetUnreachableError };

/**
 * Any HTTP answer but a gateway's 502, 503 or 504 means the target is there. No answer within the timeouts
 * the scenarios use (connect, then request) means the run cannot test, and the message says why.
 */
export async function probeTarget(config: HarnessConfig): Promise<void> {
  const { connectTimeoutMs, requestTimeoutMs } = config;
  const dispatcher = new Agent({ connect: { timeout: connectTimeoutMs }, headersTimeout: requestTimeoutMs, bodyTimeout: requestTimeoutMs });
  try {
    for (const url of new Set([config.baseUrl!, config.sandboxUrl!])) {
      let status = 0;
      // A gateway's 502–504 may be a moment's weather: asked again, as a careful client asks, after the wait the target
      // asks for (Retry-After) or a backoff, within the calls' retry budget.
      const started = Date.now();
      for (let attempt = 1; ; attempt += 1) {
        let retryAfter: string | undefined;
        try {
          // undici checks its own timeouts about once a second; the signal makes short ones exact.
          const response = await request(url, {
            method: 'GET',
            dispatcher,
            signal: AbortSignal.timeout(connectTimeoutMs + requestTimeoutMs),
          });
          await response.body.dump();
          status = response.statusCode;
          const header = response.headers['retry-after'];
          retryAfter = Array.isArray(header) ? header[0] : header;
        } catch (error) {
          throw new TargetUnreachableError(
            `The target at ${url} could not be tested: ${explainTransportError(error, { url, connectTimeoutMs, requestTimeoutMs })}.`,
          );
        }
        if (status !== 502 && status !== 503 && status !== 504) break;
        const delay = delayBefore(attempt + 1, { ...DEFAULT_RETRY_POLICY, attempts: config.callRetries + 1 }, retryAfterMs(retryAfter));
        if (attempt > config.callRetries || Date.now() - started + delay > config.callRetryBudgetMs) break;
        await new Promise((resolve) => setTimeout(resolve, delay));
      }
      if (status === 502 || status === 503 || status === 504) {
        throw new TargetUnreachableError(
          `The target at ${url} could not be tested: it answers HTTP ${status}, unavailable (a gateway error or an overloaded server). Try again later.`,
        );
      }
    }
  } finally {
    await dispatcher.close();
  }
}

/** The settings the scenarios read, in the variables of .env.example. */
export function environmentFor(config: HarnessConfig): Record<string, string> {
  const env: Record<string, string> = {
    MOMO_BASE_URL: config.baseUrl!,
    MOMO_SANDBOX_URL: config.sandboxUrl!,
    MOMO_TARGET_ENVIRONMENT: config.targetEnvironment,
    MOMO_CURRENCY: config.currency,
    MOMO_CALLBACK_HOST: config.callbackHost,
    MOMO_CALLBACK_PORT: String(config.callbackPort),
    MOMO_CALLBACK_BIND: config.callbackBind,
    MOMO_PROFILE: config.profile,
    MOMO_STRICT: String(config.strict),
    MOMO_CONNECT_TIMEOUT_MS: String(config.connectTimeoutMs),
    MOMO_REQUEST_TIMEOUT_MS: String(config.requestTimeoutMs),
    MOMO_MAX_RESPONSE_BYTES: String(config.maxResponseBytes),
    MOMO_EVIDENCE_BUDGET_BYTES: String(config.evidenceBudgetBytes),
    MOMO_POLL_TIMEOUT_MS: String(config.pollTimeoutMs),
    MOMO_POLL_INTERVAL_MS: String(config.pollIntervalMs),
    MOMO_SLOW_OUTCOME_TIMEOUT_MS: String(config.slowOutcomeTimeoutMs),
    MOMO_CALLBACK_QUIET_MS: String(config.callbackQuietMs),
    MOMO_RETRIES: String(config.retries),
    MOMO_CALL_RETRIES: String(config.callRetries),
    MOMO_CALL_RETRY_BUDGET_MS: String(config.callRetryBudgetMs),
  };
  if (config.callbackUrl) env.MOMO_CALLBACK_URL = config.callbackUrl;
  // Only when it was set: a refused currency the run was told of is its own word, one it picked is a premise.
  if (config.refusedCurrencySet) env.MOMO_REFUSED_CURRENCY = config.refusedCurrency;
  for (const [product, key] of Object.entries(config.subscriptionKeys)) if (key) env[`MOMO_${product.toUpperCase()}_KEY`] = key;
  for (const [product, user] of Object.entries(config.apiUsers)) {
    if (user) {
      env[`MOMO_${product.toUpperCase()}_USER_ID`] = user.userId;
      env[`MOMO_${product.toUpperCase()}_API_KEY`] = user.apiKey;
    }
  }
  return env;
}
