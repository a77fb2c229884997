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

  private get real(): FastifyBaseLogger {
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

  fatal(...args: unknown[]): void {
    (this.real.fatal as (...a: unknown[]) => void)(...args);
  }

  error(...args: unknown[]): void {
    (this.real.error as (...a: unknown[]) => void)(...args);
  }

  warn(...args: unknown[]): void {
    (this.real.warn as (...a: unknown[]) => void)(...args);
  }

  info(...args: unknown[]): void {
    (this.real.info as (...a: unknown[]) => void)(...args);
  }

  debug(...args: unknown[]): void {
    (this.real.debug as (...a: unknown[]) => void)(...args);
  }

  trace(...args: unknown[]): void {
    (this.real.trace as (...a: unknown[]) => void)(...args);
  }

  silent(...args: unknown[]): void {
    (this.real.silent as (...a: unknown[]) => void)(...args);
  }

  child(bindings: Bindings, options?: ChildOptions): FastifyBaseLogger {
    return this.real.child(bindings, options);
  }
}

/** Fastify's childLoggerFactory for the sandbox: a lazy child, unless the route sets a level or serializers of its own. */
export const lazyRequestLogger = (logger: FastifyBaseLogger, bindings: Bindings, options: ChildOptions): FastifyBaseLogger =>
  (options && Object.keys(options).length > 0 ? logger.child(bindings, options) : new LazyRequestLogger(logger, bindings, options) as unknown as FastifyBaseLogger);
