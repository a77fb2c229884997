import { bodySchemasOf, routes, type Route } from '../../core/catalogue/routes.ts';
import type { ProfileBehaviour } from '../../core/profiles.ts';
import { validatorFor } from '../../core/validation/schemas.ts';
import type { ChaosCondition } from '../domain/chaos-conditions.ts';

/**
 * Where each chaos condition may happen, derived from the operation catalogue rather than listed: a condition that
 * answers for an operation does so only where the operation's contract (its statuses and their bodies, as the
 * harness judges them) allows the answer.
 */

/** A route as the conditions know it: an operation under a product (undefined for provisioning, which any key opens). */
export type RouteRef = Pick<Route, 'operation' | 'product'>;

export const INTERNAL_ERROR = {
  code: 'INTERNAL_PROCESSING_ERROR',
  message: 'An internal error occurred while processing; nothing was done, and the request may be sent again. (sandbox chaos: 500)',
} as const;

export const UNAVAILABLE = {
  code: 'SERVICE_UNAVAILABLE',
  message:
    'The service is unavailable for a moment; nothing was done, and the request may be sent again after Retry-After. (sandbox chaos: 503)',
} as const;

/**
 * Whether an operation's contract lets it answer a status with a body: one of the schemas the catalogue gives the
 * status, or, for a status it does not list, the error set of the operation under its product (as
 * harness/checks/contract.ts reads the catalogue).
 */
function contractAccepts(route: RouteRef, status: number, body: unknown, profile: ProfileBehaviour): boolean {
  const { responses, products } = route.operation;
  // Provisioning has one binding under every product; any of them gives its error set.
  const binding = route.product === undefined ? Object.values(products)[0]! : products[route.product]!;
  const response = responses[status];
  const schemas = response ? bodySchemasOf(response, binding.errors, profile) : [binding.errors];
  return schemas.some((schema) => validatorFor(schema)(body));
}

export type RequestCondition = Extract<
  ChaosCondition,
  'latency' | '500' | '503' | 'cut-before-store' | 'cut-after-store' | 'token-refused-early'
>;

/** The routes a condition that acts on requests applies to. */
const APPLIES: Record<RequestCondition, (route: RouteRef, profile: ProfileBehaviour) => boolean> = {
  latency: () => true,
  // Only where the spec's status list has 500 for the operation (§4, §7 rule 3), and its body may carry the code.
  '500': (route, profile) => route.operation.responses[500]?.source === 'spec' && contractAccepts(route, 500, INTERNAL_ERROR, profile),
  // Observed of the live service on any operation; only where the error set has the code (set C, provisioning's, has not).
  '503': (route, profile) => contractAccepts(route, 503, UNAVAILABLE, profile),
  'cut-before-store': (route) => route.operation.store !== undefined,
  'cut-after-store': (route) => route.operation.store !== undefined,
  'token-refused-early': (route) => route.operation.credential === 'bearer' || route.operation.credential === 'consent',
};

/** Where the conditions that act on components (payments, callbacks) happen, in words. */
const WHERE: Record<Exclude<ChaosCondition, RequestCondition>, string> = {
  'long-pending': 'every transaction, as its creation is accepted',
  'callback-delayed': "every callback: a transaction's, and the consent ping of bc-authorize",
  'callback-repeated': "every callback: a transaction's, and the consent ping of bc-authorize",
  'callback-lost': "every callback: a transaction's, and the consent ping of bc-authorize",
};

export const isRequestCondition = (condition: ChaosCondition): condition is RequestCondition => Object.hasOwn(APPLIES, condition);

/** The key a route is known by among a condition's routes. */
export const routeKey = (route: RouteRef): string => `${route.operation.id} ${route.product ?? 'any'}`;

/** The keys of the routes a condition that acts on requests applies to under a profile. */
export function routesOf(condition: RequestCondition, profile: ProfileBehaviour): ReadonlySet<string> {
  return new Set(
    routes()
      .filter((route) => APPLIES[condition](route, profile))
      .map(routeKey),
  );
}

/** For each condition that acts on requests, the keys of the routes it applies to under a profile. */
export function routesByCondition(profile: ProfileBehaviour): Record<RequestCondition, ReadonlySet<string>> {
  return Object.fromEntries(
    Object.keys(APPLIES).map((condition) => [condition, routesOf(condition as RequestCondition, profile)]),
  ) as Record<RequestCondition, ReadonlySet<string>>;
}

/** Where a condition happens, in words: the operations (by id, with their products) or the components it acts on. */
export function whereText(condition: ChaosCondition, profile: ProfileBehaviour): string {
  if (!isRequestCondition(condition)) return WHERE[condition];
  const all = routes();
  const applying = all.filter((route) => APPLIES[condition](route, profile));
  if (applying.length === all.length) return 'every operation';
  const products = new Map<string, string[]>();
  for (const { operation, product } of applying) products.set(operation.id, [...(products.get(operation.id) ?? []), product ?? 'any']);
  return [...products].map(([id, served]) => `${id} (${served.join(', ')})`).join(', ');
}
