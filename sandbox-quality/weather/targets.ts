import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import type { ProfileName } from '../../core/profiles.ts';
import { EMBEDDED_TIMINGS } from '../../conformance/runner/target.ts';
import { chaosPlugins } from '../../sandbox/chaos/chaos.ts';
import { parseChaosShares } from '../../sandbox/domain/chaos-conditions.ts';
import { DEVELOPMENT_KEYS, resolveSettings } from '../../sandbox/domain/settings.ts';
import { startSandbox } from '../../sandbox/start.ts';
import { faultPlugins, type FaultName } from '../faults/faults.ts';
import { independentTargetEnv, startIndependentServer } from '../independent/servers.ts';
import { startWeatherProxy, type OutageBursts, type WeatherProxyKind } from '../independent/weather.ts';

/**
 * Targets under weather, for the proof that a verdict does not depend on it (`npm run mutation`, its weather table,
 * and the suite tests): the reference sandbox with its own spec-legal chaos (--chaos), optionally with a deliberate
 * deviation too; or a conforming server the project did not write behind the weather proxy the project did not write
 * either. Each is a set of settings for a run of the suite, and a way to stop it.
 */
export interface WeatheredTarget {
  env: Record<string, string>;
  /** What weather was met: the conditions applied, by name, with how often. */
  applied(): Record<string, number>;
  stop(): Promise<void>;
}

export type Weather =
  | { kind: 'chaos'; chaos: string; seed: number; profile: ProfileName; deviation?: FaultName }
  | { kind: 'proxy'; conditions: string; seed: number; profile: ProfileName; proxy?: WeatherProxyKind; bursts?: OutageBursts };

export const describeWeather = (w: Weather): string =>
  w.kind === 'chaos'
    ? `sandbox --chaos ${w.chaos} --chaos-seed ${w.seed}${w.deviation ? ` --deviations ${w.deviation}` : ''}`
    : `python server behind ${w.proxy === 'python' ? 'weather-proxy-py' : 'weather-proxy'} --conditions ${w.conditions}${w.bursts ? ` --burst-every ${w.bursts.everyS} --burst-length ${w.bursts.lengthS}` : ''} --seed ${w.seed}`;

export function startWeatheredTarget(weather: Weather): Promise<WeatheredTarget> {
  return weather.kind === 'chaos' ? chaoticSandbox(weather) : proxiedServer(weather);
}

/** The reference sandbox with chaos (and the embedded run's short timings), on a free port of 127.0.0.1. */
async function chaoticSandbox(w: Extract<Weather, { kind: 'chaos' }>): Promise<WeatheredTarget> {
  const settings = resolveSettings({
    overrides: {
      logLevel: 'silent',
      host: '127.0.0.1',
      port: 0,
      profile: w.profile,
      ...EMBEDDED_TIMINGS,
      chaos: parseChaosShares(w.chaos),
      chaosSeed: w.seed,
    },
  });
  const applied: Record<string, number> = {};
  const chaos = chaosPlugins(settings, (a) => void (applied[a.condition] = (applied[a.condition] ?? 0) + 1));
  const faults = w.deviation ? faultPlugins([w.deviation]) : [];
  const running = await startSandbox(settings, { logger: pino({ level: 'silent' }), plugins: [...faults, ...chaos] });
  return {
    env: {
      MOMO_BASE_URL: running.baseUrl,
      MOMO_COLLECTION_KEY: DEVELOPMENT_KEYS.collection,
      MOMO_DISBURSEMENT_KEY: DEVELOPMENT_KEYS.disbursement,
      MOMO_REMITTANCE_KEY: DEVELOPMENT_KEYS.remittance,
      MOMO_PROFILE: w.profile,
    },
    applied: () => ({ ...applied }),
    stop: () => running.close(),
  };
}

/** The python independent server, with the weather proxy in front of it. */
async function proxiedServer(w: Extract<Weather, { kind: 'proxy' }>): Promise<WeatheredTarget> {
  const server = await startIndependentServer(w.profile, { server: 'python' });
  try {
    const log = join(mkdtempSync(join(tmpdir(), 'momo-weather-')), 'weather.jsonl');
    const proxy = await startWeatherProxy(server.url, w.conditions, w.seed, log, {
      ...(w.proxy ? { kind: w.proxy } : {}),
      ...(w.bursts ? { bursts: w.bursts } : {}),
    });
    return {
      env: { ...independentTargetEnv({ ...server, url: proxy.url }, w.profile) },
      applied: () => {
        const counts: Record<string, number> = {};
        for (const line of proxy.applied()) counts[line.condition] = (counts[line.condition] ?? 0) + 1;
        return counts;
      },
      stop: async () => {
        await proxy.stop();
        await server.stop();
      },
    };
  } catch (error) {
    await server.stop();
    throw error;
  }
}
