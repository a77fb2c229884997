import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { listeningUrl, stopChild } from './servers.ts';

/**
 * The weather proxy (test/weather-proxy): a reverse proxy the project did not write, from the spec and the notes
 * alone, that adds only the bad weather the API allows (its README gives each condition's clause): transient 500s
 * where §4 lists 500, a gateway's 503 with Retry-After, latency, connections cut before and after the server acted,
 * late and repeated callbacks. In front of a conforming server, a run must still conform or could not test.
 */
export const WEATHER_CONDITIONS = [
  'internal-error',
  'unavailable',
  'latency',
  'cut-before',
  'cut-after',
  'callback-late',
  'callback-repeated',
] as const;
export type WeatherCondition = (typeof WEATHER_CONDITIONS)[number];

export interface WeatherProxy {
  url: string;
  /** The conditions applied so far, one a line of its log: {condition, method, path}. */
  applied(): { condition: string; method: string; path: string }[];
  stop(): Promise<void>;
}

const DIR = join(new URL('../../', import.meta.url).pathname, 'test/weather-proxy');

function binary(): string {
  const built = join(DIR, 'bin/weather-proxy');
  if (!existsSync(built)) execFileSync('sh', [join(DIR, 'build.sh')], { stdio: 'pipe' });
  return built;
}

/** Starts the proxy before `upstream` on a free port of 127.0.0.1: `conditions` as `name=rate,...` or `all=rate`. */
export async function startWeatherProxy(upstream: string, conditions: string, seed: number, log: string): Promise<WeatherProxy> {
  const child = spawn(binary(), ['--upstream', upstream, '--seed', String(seed), '--conditions', conditions, '--log', log], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const url = await listeningUrl(child, 'the weather proxy');
  const applied = () =>
    existsSync(log)
      ? readFileSync(log, 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((line) => JSON.parse(line) as { condition: string; method: string; path: string })
      : [];
  return { url, applied, stop: () => stopChild(child) };
}
