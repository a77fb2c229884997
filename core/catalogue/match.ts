import type { Operation, OperationId } from './operations.ts';
import type { Product } from '../products.ts';
import { routes } from './routes.ts';

/** A request's method and path matched to the catalogue: the operation, its product and its path parameters. */
export interface MatchedRoute {
  operation: Operation<OperationId>;
  product: Product | undefined;
  params: Record<string, string>;
}

const matchers = routes().map((route) => ({
  route,
  pattern: new RegExp(
    `^${route.path
      .replace(/\/$/, '')
      .replace(/[.*+?^$()|[\]\\]/g, '\\$&')
      .replace(/\\?\{([A-Za-z]+)\\?\}/g, '(?<$1>[^/]+)')}/?$`,
  ),
}));

/** The catalogue operation at a method and path (the path without its query), or undefined when none is. */
export function matchRoute(method: string, path: string): MatchedRoute | undefined {
  const bare = path.split('?')[0]!;
  for (const { route, pattern } of matchers) {
    if (route.method !== method.toUpperCase()) continue;
    const match = pattern.exec(bare);
    if (!match) continue;
    const params = Object.fromEntries(Object.entries(match.groups ?? {}).map(([name, value]) => [name, safeDecode(value)]));
    return { operation: route.operation, product: route.product, params };
  }
  return undefined;
}

function safeDecode(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}
