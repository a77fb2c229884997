import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { ProfileBehaviour } from '../../core/profiles.ts';
import type { SandboxComponents, SandboxContext } from './context.ts';
import type { SandboxSettings } from './settings.ts';

/** What a plugin sees when it wraps a component: the settings, the profile, the log and the components built so far. */
export interface WrapContext {
  settings: SandboxSettings;
  profile: ProfileBehaviour;
  log: FastifyBaseLogger;
  components: Partial<SandboxComponents>;
}

/**
 * Something added to the sandbox at its edges, from outside its own code: deliberate faults for mutation
 * testing are plugins (sandbox-quality/faults), and so is the sandbox's spec-legal chaos (sandbox/chaos). A plugin may
 * - wrap a component as it is built (the clock, the state, the ledger, the token authority, the callback
 *   sink, the payments), returning its replacement; and
 * - install Fastify hooks, before the sandbox's own guards: requests changed on their way in, answers on
 *   their way out.
 * A sandbox built without plugins has none of this machinery installed.
 */
export interface SandboxPlugin {
  name: string;
  /** A plugin that changes nothing the sandbox does, only watches it (the client report): the start gives no warning of it. */
  observesOnly?: true;
  wrap?: { [K in keyof SandboxComponents]?: (component: SandboxComponents[K], context: WrapContext) => SandboxComponents[K] };
  install?(app: FastifyInstance, context: SandboxContext): void;
}
