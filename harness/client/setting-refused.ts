import type { Product } from '../../core/products.ts';
import { reportSafe } from '../../core/report-text.ts';

/**
 * What a refusal in the preflight (harness/preflight.ts) stops: every call of the product (its key, API user or
 * token), only the calls that carry the target environment, or only the calls that ask for a callback.
 */
export type RefusalScope = 'product' | 'environment' | 'callbacks';

// A type, not an interface: it travels to the scenarios as a cucumber world parameter, which must be plain JSON.
export type Refusal = {
  scope: RefusalScope;
  /** The setting to fix, as .env.example names it. */
  setting: string;
  /** "the gateway refused MOMO_COLLECTION_KEY: 401 {…}; …": the setting first, then the target's answer and what to do. */
  message: string;
};

export type PreflightRefusals = Partial<Record<Product, Refusal>>;

/**
 * A call the client did not make because the preflight found a setting it needs refused: the scenario could not
 * test, which says nothing about conformance. The message is the refusal's, the same for every scenario it stops,
 * so the run's summary can say it once.
 */
export class SettingRefusedError extends Error {
  readonly fatal = true;
  constructor(readonly refusal: Refusal) {
    super(reportSafe(`Not tested: ${refusal.message}.`));
    this.name = 'SettingRefusedError';
  }
}
