import { FastifyBaseLogger, FastifyRequest, FastifyServerOptions } from 'fastify';

/** A path parameter of this name is a bearer secret: a value-event hook's, the payment connector's, a stream source link's. */
const SECRET_PARAM = 'token';

/** The same routes by their raw path, for a request no route matched (a 404 still logs its URL). */
const SECRET_SEGMENT = /^(\/+api\/+public\/+proof\/+(?:hooks|stripe|stream\/+source)\/+)[^/]+/i;

const REDACTED = '[redacted]';

const SECRET_FIELDS = ['authorization', 'cookie', '["set-cookie"]', '["x-csrf-token"]', 'secret', 'token', 'password', 'apiKey', 'identitySecret'];
const REDACTED_FIELDS = SECRET_FIELDS.flatMap((field) => [field, `*.${field}`, `*.*.${field}`].map((p) => p.replace(/\.\[/g, '[')));

function decoded(path: string): string {
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}

/**
 * The URL as the request log shows it: a secret path segment masked, and every query value too: the upload
 * preview's `t=` MAC, a customer secret sent in a query (refused, but logged as it arrives), and customer
 * text, which queries also carry (docs/collection.md#endpoints-customers). Names stay, so the log still says what was asked.
 */
export function loggableUrl(request: Pick<FastifyRequest, 'url' | 'params'> & { routeOptions?: { url?: string } }): string {
  const at = request.url.indexOf('?');
  const rawPath = at === -1 ? request.url : request.url.slice(0, at);
  const pattern = request.routeOptions?.url;
  const params = (request.params ?? {}) as Record<string, string>;
  let path: string;
  if (pattern && SECRET_PARAM in params) {
    path = pattern.replace(/:([A-Za-z0-9_]+)/g, (_m, name: string) => (name === SECRET_PARAM ? REDACTED : encodeURIComponent(params[name] ?? '')));
  } else {
    path = SECRET_SEGMENT.test(decoded(rawPath)) ? decoded(rawPath).replace(SECRET_SEGMENT, `$1${REDACTED}`) : rawPath;
  }
  if (at === -1) return path;
  const names = request.url.slice(at + 1).split('&').filter((pair) => pair !== '').map((pair) => `${pair.split('=')[0]}=${REDACTED}`);
  return `${path}?${names.join('&')}`;
}

/** Fastify's own request serializer, with the URL as loggableUrl gives it. */
function loggableRequest(request: FastifyRequest) {
  return {
    method: request.method, url: loggableUrl(request), host: request.host, remoteAddress: request.ip, remotePort: request.socket?.remotePort,
  };
}

/**
 * The logger options the app is built with: the caller's, with the request serializer that keeps secret
 * path segments and query values out of the log (the request line is logged at `info`).
 */
export function redactingLogger(logger: FastifyServerOptions['logger']): FastifyServerOptions['logger'] {
  if (!logger) return false;
  const options = logger === true ? {} : logger;
  return {
    ...options,
    serializers: { ...options.serializers, req: loggableRequest as never },
    // Whatever a log call is handed (a header set, an error's request options), these never leave as they are.
    redact: { paths: REDACTED_FIELDS, censor: REDACTED },
  };
}

type Bindings = Parameters<FastifyBaseLogger['child']>[0];
type ChildLoggerOptions = NonNullable<Parameters<FastifyBaseLogger['child']>[1]>;
type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';
type LevelAware = FastifyBaseLogger & { isLevelEnabled(level: string): boolean };

/**
 * A request's logger, made only once the request logs something its level lets through: Fastify makes a child
 * logger for every request, and pino's child, with the redaction above, was a few percent of a small request's
 * time, although at the default level (`warn`) most requests log nothing. What it writes is the child's.
 */
class RequestLogger {
  private made: FastifyBaseLogger | null = null;

  constructor(private readonly parent: LevelAware, private readonly bindings: Bindings, private readonly options: ChildLoggerOptions) {}

  private get logger(): FastifyBaseLogger {
    return (this.made ??= this.parent.child(this.bindings, this.options));
  }

  get level(): string {
    return (this.made ?? this.parent).level;
  }

  set level(level: string) {
    this.logger.level = level;
  }

  isLevelEnabled(level: string): boolean {
    return ((this.made ?? this.parent) as LevelAware).isLevelEnabled(level);
  }

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.logger.child(bindings, options);
  }

  private write(level: Level, args: unknown[]): void {
    if (this.isLevelEnabled(level)) (this.logger[level] as (...a: unknown[]) => void)(...args);
  }

  fatal(...args: unknown[]) { this.write('fatal', args); }
  error(...args: unknown[]) { this.write('error', args); }
  warn(...args: unknown[]) { this.write('warn', args); }
  info(...args: unknown[]) { this.write('info', args); }
  debug(...args: unknown[]) { this.write('debug', args); }
  trace(...args: unknown[]) { this.write('trace', args); }
  silent() {}
}

/** Fastify's `childLoggerFactory`: a RequestLogger, or pino's own child for a route with a level of its own. */
export function requestLogger(logger: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions): FastifyBaseLogger {
  if (options.level || typeof (logger as Partial<LevelAware>).isLevelEnabled !== 'function') return logger.child(bindings, options);
  return new RequestLogger(logger as LevelAware, bindings, options) as unknown as FastifyBaseLogger;
}
