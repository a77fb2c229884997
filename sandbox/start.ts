import pino from 'pino';
import type { Product } from '../core/products.ts';
import { buildSandbox, type Sandbox, type SandboxOptions } from './app.ts';
import { resolveSettings, type SandboxSettings } from './settings.ts';

/** A sandbox listening for requests, and where. */
export interface RunningSandbox {
  sandbox: Sandbox;
  settings: SandboxSettings;
  /** http://<host>:<port> it answers at. */
  baseUrl: string;
  subscriptionKeys: Record<Product, string>;
  close(): Promise<void>;
}

/** Starts a sandbox with its settings, listening on settings.host and settings.port (0: a free port). */
export async function startSandbox(settings: SandboxSettings, options: SandboxOptions = {}): Promise<RunningSandbox> {
  const sandbox = await buildSandbox(settings, options);
  try {
    await sandbox.app.listen({ host: settings.host, port: settings.port });
  } catch (error) {
    await sandbox.close();
    throw error;
  }
  const { port } = sandbox.app.server.address() as { port: number };
  const host = settings.host.includes(':') ? `[${settings.host}]` : settings.host;
  return { sandbox, settings, baseUrl: `http://${host}:${port}`, subscriptionKeys: { ...settings.subscriptionKeys }, close: () => sandbox.close() };
}

/**
 * The embedded sandbox: on 127.0.0.1, a free port, silent, with the given settings. The one way the conformance
 * run, the load runs, the fuzzer over HTTP and the tests start one.
 */
export function startEmbeddedSandbox(overrides: Partial<SandboxSettings> = {}, options: SandboxOptions = {}): Promise<RunningSandbox> {
  const settings = resolveSettings({ overrides: { logLevel: 'silent', ...overrides, host: '127.0.0.1', port: 0 } });
  return startSandbox(settings, { logger: pino({ level: 'silent' }), ...options });
}
