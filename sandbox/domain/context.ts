import type { FastifyBaseLogger } from 'fastify';
import type { ProfileBehaviour } from '../../core/profiles.ts';
import type { CallbackDestinations } from './callback-destinations.ts';
import type { CallbackSink } from './callbacks.ts';
import type { Clock } from './clock.ts';
import type { Ledger } from './ledger.ts';
import type { Payments } from './payments.ts';
import type { SandboxSettings } from './settings.ts';
import type { SandboxState } from './state.ts';
import type { TokenAuthority } from './tokens.ts';

/**
 * The parts of the sandbox that the routes and guards work through. A plugin (plugins.ts) may wrap or replace
 * them before anything takes them: that is where a deliberate fault changes the sandbox, never inside its code.
 */
export interface SandboxComponents {
  clock: Clock;
  state: SandboxState;
  ledger: Ledger;
  tokens: TokenAuthority;
  callbacks: CallbackSink;
  payments: Payments;
}

/** What every route module works with. */
export interface SandboxContext extends SandboxComponents {
  settings: SandboxSettings;
  profile: ProfileBehaviour;
  /** Where callbacks may go (--callback-hosts). */
  destinations: CallbackDestinations;
  /** The sandbox's own log (never Fastify's per-request one, which is off unless the level logs each request). */
  log: FastifyBaseLogger;
}
