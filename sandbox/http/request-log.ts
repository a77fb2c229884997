import type { FastifyBaseLogger } from 'fastify';

type Bindings = Parameters<FastifyBaseLogger['child']>[0];
type ChildOptions = Parameters<FastifyBaseLogger['child']>[1];

/**
 * A request's logger, made only when the request logs something. Fastify gives every request a child of the
 * sandbox's logger bound to its request id; building a pino child on every request cost about 3% of the
 * request-to-pay path's CPU (docs/benchmarks.md), for requests that, below debug level, never log a line.
 * The lines a request does log are the same as before: the child is built with the same bindings at first use.
 */
class LazyRequestLogger {
  #child: FastifyBaseLogger | undefined;

  constructor(private readonly parent: FastifyBaseLogger, private readonly bindings: Bindings, private readonly options: ChildOptions) {}

  get real(): FastifyBaseLogger {
    return (this.#child ??= this.parent.child(this.bindings, this.options));
  }

  get level(): string {
    return this.#child?.level ?? this.parent.level;
  }

  set level(level: string) {
    this.real.level = level;
  }

  isLevelEnabled(level: string): boolean {
    return ((this.#child ?? this.parent) as FastifyBaseLogger & { isLevelEnabled(level: string): boolean }).isLevelEnabled(level);
  }

  child(bindings: Bindings, options?: ChildOptions): FastifyBaseLogger {
    return this.real.child(bindings, options);
  }
}

// fatal, error, warn, info, debug, trace and silent, each passed on to the child, built at its first line.
const LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
for (const level of LEVELS) {
  Object.defineProperty(LazyRequestLogger.prototype, level, {
    value(this: LazyRequestLogger, ...args: unknown[]) {
      (this.real[level] as (...a: unknown[]) => void)(...args);
    },
  });
}

/** Fastify's childLoggerFactory for the sandbox: a lazy child, unless the route sets a level or serializers of its own. */
export const lazyRequestLogger = (logger: FastifyBaseLogger, bindings: Bindings, options: ChildOptions): FastifyBaseLogger =>
  (options && Object.keys(options).length > 0 ? logger.child(bindings, options) : new LazyRequestLogger(logger, bindings, options) as unknown as FastifyBaseLogger);
