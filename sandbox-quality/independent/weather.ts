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

const ROOT = new URL('../../', import.meta.url).pathname;

/**
 * Which proxy: `go` (test/weather-proxy) or `python` (test/weather-proxy-py, a second one written blind, with other
 * choices: a gateway's 504 after the server acted, Retry-After as an HTTP-date, bodies sent slowly, and short
 * server-wide outages with `burst`).
 */
export type WeatherProxyKind = 'go' | 'python';

/** Short outages of the python proxy: every `everyS` seconds, `lengthS` seconds (at most 3) of 503s or 500s. */
export interface OutageBursts {
  everyS: number;
  lengthS: number;
}

function goBinary(): string {
  const dir = join(ROOT, 'test/weather-proxy');
  const built = join(dir, 'bin/weather-proxy');
  if (!existsSync(built)) execFileSync('sh', [join(dir, 'build.sh')], { stdio: 'pipe' });
  return built;
}

/** Starts a proxy before `upstream` on a free port of 127.0.0.1: `conditions` as `name=rate,...` or `all=rate`. */
export async function startWeatherProxy(
  upstream: string,
  conditions: string,
  seed: number,
  log: string,
  { kind = 'go', bursts }: { kind?: WeatherProxyKind; bursts?: OutageBursts } = {},
): Promise<WeatherProxy> {
  const args = ['--upstream', upstream, '--seed', String(seed), '--conditions', conditions, '--log', log];
  const child =
    kind === 'go'
      ? spawn(goBinary(), args, { stdio: ['ignore', 'pipe', 'pipe'] })
      : spawn(
          'python3',
          [
            join(ROOT, 'test/weather-proxy-py/weather_proxy.py'),
            ...args,
            ...(bursts ? ['--burst-every', String(bursts.everyS), '--burst-length', String(bursts.lengthS)] : []),
          ],
          { stdio: ['ignore', 'pipe', 'pipe'] },
        );
  const url = await listeningUrl(child, `the ${kind} weather proxy`);
  // The go proxy logs {condition} for each condition applied; the python one {injected: [...]} for each request.
  const applied = () =>
    existsSync(log)
      ? readFileSync(log, 'utf8')
          .split('\n')
          .filter(Boolean)
          .flatMap((line) => {
            const entry = JSON.parse(line) as { condition?: string; injected?: string[]; method: string; path: string };
            const names = entry.condition !== undefined ? [entry.condition] : (entry.injected ?? []);
            return names.map((condition) => ({ condition, method: entry.method, path: entry.path }));
          })
      : [];
  return { url, applied, stop: () => stopChild(child) };
}
