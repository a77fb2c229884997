import pino from 'pino';
import type { Product } from '../core/products.ts';
import { buildSandbox, logsEachRequest, type Sandbox, type SandboxOptions } from './app.ts';
import { resolveSettings, type SandboxSettings } from './domain/settings.ts';

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
  return listen(await buildSandbox(settings, options), settings.host, settings.port);
}

/** A built sandbox listening on 127.0.0.1, on a free port: the fuzzer's over HTTP. */
export function listenOnLoopback(sandbox: Sandbox): Promise<RunningSandbox> {
  return listen(sandbox, '127.0.0.1', 0);
}

async function listen(sandbox: Sandbox, host: string, port: number): Promise<RunningSandbox> {
  try {
    await sandbox.app.listen({ host, port });
  } catch (error) {
    await sandbox.close();
    throw error;
  }
  const address = sandbox.app.server.address() as { port: number };
  const shown = host.includes(':') ? `[${host}]` : host;
  const { settings } = sandbox.context;
  const baseUrl = `http://${shown}:${address.port}`;
  if (!logsEachRequest(sandbox.log)) sandbox.log.info(`Server listening at ${baseUrl}`);
  return { sandbox, settings, baseUrl, subscriptionKeys: { ...settings.subscriptionKeys }, close: () => sandbox.close() };
}

/**
 * The embedded sandbox: on 127.0.0.1, a free port, silent, with the given settings. The one way the conformance
 * run, the load runs, the fuzzer over HTTP and the tests start one.
 */
export function startEmbeddedSandbox(overrides: Partial<SandboxSettings> = {}, options: SandboxOptions = {}): Promise<RunningSandbox> {
  const settings = resolveSettings({ overrides: { logLevel: 'silent', ...overrides, host: '127.0.0.1', port: 0 } });
  return startSandbox(settings, { logger: pino({ level: 'silent' }), ...options });
}
