import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { maxHeaderSize } from 'node:http';
import { createRequire } from 'node:module';
import path from 'node:path';
import cookie from '@fastify/cookie';
import rateLimit from '@fastify/rate-limit';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import type { Redis } from 'ioredis';
import { type Clock, MonotonicClock } from './clock.js';
import type { Config } from './config.js';
import { type OpenDatabase, openDatabase } from './db/connection.js';
import { engine } from './db/dialect.js';
import { onNoteChanges } from './db/noteChanges.js';
import { postgresLocation } from './db/postgresShared.js';
import { deleteExpiredRateLimits, postgresRateLimitStore, redisRateLimitStore } from './db/rateLimitStore.js';
import type { DatabaseOptions, Db, SchemaPolicy } from './db/types.js';
import { AppError, errors } from './errors.js';
import { apiKeyRoutes } from './features/apiKeys/routes.js';
import { createApiKeysService } from './features/apiKeys/service.js';
import { attachmentRoutes } from './features/attachments/routes.js';
import { createAttachmentsService } from './features/attachments/service.js';
import { attachmentStorageFor } from './features/attachments/storageFor.js';
import { type IdentityProvider, openIdentityProvider } from './features/auth/identityProvider.js';
import { authRoutes } from './features/auth/routes.js';
import { createAuthService } from './features/auth/service.js';
import { createSingleSignOnService } from './features/auth/singleSignOn.js';
import { collaboratorRoutes } from './features/collaborators/routes.js';
import { createCollaboratorsService } from './features/collaborators/service.js';
import { healthRoutes } from './features/health/routes.js';
import { createHealthService } from './features/health/service.js';
import { type HintBus, memoryBus, postgresBus, redisBus } from './features/live/bus.js';
import { liveRoutes } from './features/live/routes.js';
import { createLiveService } from './features/live/service.js';
import { mcpRoutes } from './features/mcp/routes.js';
import { createMcpSessionsService } from './features/mcp/service.js';
import { noteRoutes } from './features/notes/routes.js';
import { createNotesService } from './features/notes/service.js';
import { createPushSender } from './features/reminders/push.js';
import { reminderRoutes } from './features/reminders/routes.js';
import { createReminderScheduler } from './features/reminders/scheduler.js';
import { createRemindersService, reminderFields } from './features/reminders/service.js';
import { revisionRoutes } from './features/revisions/routes.js';
import { NoteRevision } from './features/revisions/schemas.js';
import { createRevisionsService } from './features/revisions/service.js';
import { searchRoutes } from './features/search/routes.js';
import { createSearchService } from './features/search/service.js';
import { sharingRoutes } from './features/sharing/routes.js';
import { PublicAttachment, SharedNote, ShareLink } from './features/sharing/schemas.js';
import { createSharingService } from './features/sharing/service.js';
import { type StorageQuota, storageQuota } from './features/storage/service.js';
import { syncRoutes } from './features/sync/routes.js';
import { createSyncService } from './features/sync/service.js';
import { tagRoutes } from './features/tags/routes.js';
import { createTagsService } from './features/tags/service.js';
import { transferRoutes } from './features/transfer/routes.js';
import { createTransferService } from './features/transfer/service.js';
import { createPasswordHasher, type ScryptCost } from './features/users/passwords.js';
import { userRoutes } from './features/users/routes.js';
import { createUsersService } from './features/users/service.js';
import { findWebBundle, loadWebBundle } from './features/webapp/bundle.js';
import { appPageFallback, registerWebApp } from './features/webapp/routes.js';
import { authPlugin } from './http/auth.js';
import { registerCors } from './http/cors.js';
import { registerErrorHandling } from './http/errorHandler.js';
import { registerJsonBodies } from './http/jsonBodies.js';
import { redactUrl } from './http/logging.js';
import type { Metrics } from './http/metrics.js';
import { describeRoute, securitySchemes } from './http/openapi.js';
import { type LingerLimits, registerBodyDraining } from './http/requestBody.js';
import { endSilentConnectionsOnClose, requestTimeoutOptions } from './http/requestTimeouts.js';
import { ErrorBody, Success } from './http/schemas.js';
import { registerSecurityHeaders } from './http/securityHeaders.js';
import { buildCachedSerializers } from './http/serialization.js';
import { registerTrustedHosts } from './http/trustedHosts.js';
import { registerValidation } from './http/validation.js';
import type { Logger } from './logger.js';
import { createNoteJsonCache } from './model/noteAnswers.js';
import { newestUpdate } from './model/notes.js';
import { ApiKey } from './shared/api/apiKeys.js';
import { Attachment, Note } from './shared/api/notes.js';
import { Collaborator, UserProfile, UserSummary } from './shared/api/people.js';
import { Reminder } from './shared/api/reminders.js';
import { APP_VERSION } from './version.js';

export const JSON_BODY_LIMIT = 2 * 1024 * 1024; // D-ERR-5
const MAINTENANCE_INTERVAL_MS = 60 * 60 * 1000;
/** How long start-up waits for a first connection to Redis that neither opens nor fails. */
const REDIS_CONNECT_WAIT_MS = 5000;

export function buildServices(deps: {
  db: Db;
  /** The health check's probe of the database (OpenDatabase.ping). */
  pingDatabase: () => void | Promise<void>;
  /** The health check's probe of Redis, with REDIS_URL. */
  pingRedis?: () => Promise<boolean>;
  clock: Clock;
  config: Config;
  log: Logger;
  /** scrypt cost for new password hashes; the production cost (D-AUTH-7) unless a test lowers it. */
  passwordCost?: ScryptCost;
  quota: StorageQuota;
  /** The OpenID provider, when single sign-on is configured (the server; commands need none). */
  identityProvider?: IdentityProvider;
  /** Carries the live hints to every process (features/live/bus.ts); default: this process only. */
  bus?: HintBus;
}) {
  const passwords = createPasswordHasher(deps.passwordCost);
  const singleSignOn = deps.identityProvider
    ? createSingleSignOnService({
        db: deps.db,
        clock: deps.clock,
        provider: deps.identityProvider,
        displayName: deps.config.oidcDisplayName,
        autoCreateUsers: deps.config.oidcAutoCreateUsers,
        log: deps.log,
      })
    : null;
  const uploadDir = path.join(deps.config.dataDir, 'uploads');
  const attachments = createAttachmentsService({
    db: deps.db,
    clock: deps.clock,
    storage: attachmentStorageFor(deps.config, deps.db),
    uploadDir,
    maxImagePixels: deps.config.maxImagePixels,
    quota: deps.quota,
    log: deps.log,
  });
  // One cache of note answers for the lists and the search results (model/noteAnswers.ts).
  const noteJson = createNoteJsonCache();
  const notes = createNotesService({
    db: deps.db,
    clock: deps.clock,
    trashRetentionDays: deps.config.trashRetentionDays,
    notesDeleted: [attachments.deleteFilesOf],
    noteJson,
    personal: reminderFields,
  });
  const push = createPushSender({
    db: deps.db,
    log: deps.log,
    allowPrivateEndpoints: deps.config.pushAllowPrivateEndpoints,
    subject:
      deps.config.vapidSubject ??
      (deps.config.publicUrl?.startsWith('https:') ? deps.config.publicUrl : 'mailto:admin@localhost'),
  });
  const auth = createAuthService({
    ...deps,
    passwords,
    passwordLogin: deps.config.passwordLogin,
    singleSignOn,
  });
  const apiKeys = createApiKeysService(deps);
  const live = createLiveService({
    db: deps.db,
    bus: deps.bus ?? memoryBus(),
    log: deps.log,
    maxStreamsPerUser: deps.config.eventsMaxStreamsPerUser,
    maxStreams: deps.config.eventsMaxStreams,
    activeSessions: auth.activeSessions,
    existingKeys: apiKeys.existingKeys,
  });
  return {
    health: createHealthService({
      pingDatabase: deps.pingDatabase,
      pingRedis: deps.pingRedis,
      attachments,
      log: deps.log,
    }),
    auth,
    singleSignOn,
    users: createUsersService({ ...deps, notes, passwords }),
    notes,
    revisions: createRevisionsService(deps),
    attachments,
    collaborators: createCollaboratorsService(deps),
    search: createSearchService({ ...deps, noteJson, readers: notes }),
    tags: createTagsService(deps),
    sharing: createSharingService(deps),
    apiKeys,
    live,
    mcpSessions: createMcpSessionsService({ ...deps, live }),
    sync: createSyncService({ db: deps.db, clock: deps.clock, notes, personal: reminderFields }),
    reminders: createRemindersService({
      db: deps.db,
      clock: deps.clock,
      allowPrivateEndpoints: deps.config.pushAllowPrivateEndpoints,
    }),
    push,
    reminderScheduler: createReminderScheduler({ db: deps.db, clock: deps.clock, log: deps.log, push }),
    transfer: createTransferService({
      db: deps.db,
      notes,
      attachments,
      uploadDir,
    }),
  };
}
export type Services = ReturnType<typeof buildServices>;

declare module 'fastify' {
  interface FastifyInstance {
    db: Db;
    services: Services;
    appConfig: Config;
    /**
     * The hourly maintenance, now: what it purged, or null when another process runs it
     * (decision 0022).
     */
    runMaintenance(): Promise<{ purged: number } | null>;
  }
}

interface BuildOptions {
  /** Replaces the server clock (tests move time forward). */
  clock?: Clock;
  /** Overrides Fastify's logger option (tests pass false). */
  logger?: FastifyServerOptions['logger'];
  /** Sends the configured (redacting) logger to this stream instead of stdout. */
  logStream?: NodeJS.WritableStream;
  /** Called with the SQL of every statement run (tests count queries). */
  onQuery?: (sql: string, durationMs: number) => void;
  /** scrypt cost for new password hashes; only tests lower it (helpers/server.ts). */
  passwordCost?: ScryptCost;
  /** The built web app to serve; null serves none. Default: this checkout's dist/web, if built. */
  webRoot?: string | null;
  /** How long a refused body is still read after its answer; only tests shorten it. */
  linger?: LingerLimits;
}

function loggerOptions(config: Config, stream?: NodeJS.WritableStream): FastifyServerOptions['logger'] {
  return {
    level: config.logLevel,
    ...(stream ? { stream } : {}),
    // D-OPS-4: credentials never reach the log, wherever they appear.
    redact: {
      paths: ['req.headers.authorization', 'req.headers.cookie', 'res.headers["set-cookie"]'],
      censor: '[redacted]',
    },
    serializers: {
      req: (request: { method: string; url: string; ip?: string }) => ({
        method: request.method,
        url: redactUrl(request.url),
        remoteAddress: request.ip,
      }),
    },
  };
}

/**
 * DATA_DIR's database with the storage quota enforced inside its writes, and the clock that
 * stamps writes, never behind the newest stored one (D-SYNC-2) nor, on PostgreSQL, behind an
 * X-Sync-Time any process has handed out (decision 0016): how the server and the commands open
 * it. Only the server's start migrates; by default the schema must already be this build's
 * (commands, decision 0035).
 */
export async function openDataDir(
  config: Config,
  opening: Pick<DatabaseOptions, 'onQuery' | 'waitForDatabase'> & { schema?: SchemaPolicy } = {},
) {
  const quota = storageQuota(config.storageQuotaBytes);
  const clock = new MonotonicClock();
  const options: DatabaseOptions = {
    schema: 'require-current',
    ...opening,
    storageGrew: (_userId, bytes) => quota.check(bytes),
    storageQuotaBytes: config.storageQuotaBytes,
    clockFloor: (ms) => clock.advanceTo(ms),
  };
  const database: OpenDatabase = config.databaseUrl
    ? // Imported here: the pg driver is loaded only on PostgreSQL (src/db/postgresShared.ts).
      await (await import('./db/postgres.js')).openPostgres(config.databaseUrl, options)
    : await openDatabase(config.dataDir, options);
  clock.advanceTo(await newestUpdate(database.db));
  return { database, quota, clock };
}

/**
 * What this server runs on, for the start-up log line: version, database, Redis, attachment
 * storage and the migrations this start ran. Never a password: URLs are reduced to where they point.
 */
export function deploymentSummary(config: Config, database: OpenDatabase) {
  const redis = config.redisUrl === null ? null : new URL(config.redisUrl);
  const summary = {
    version: APP_VERSION,
    database: config.databaseUrl
      ? `PostgreSQL ${postgresLocation(config.databaseUrl)}`
      : `SQLite ${path.join(config.dataDir, 'notes.db')}`,
    redis: redis ? `${redis.hostname}:${redis.port || '6379'}${redis.pathname || '/0'}` : 'none',
    attachments:
      config.attachmentsDir ??
      (config.databaseUrl ? 'in the database' : path.join(config.dataDir, 'attachments')),
    migrationsRun: database.migrationsRun,
  };
  const migrations =
    summary.migrationsRun.length === 0
      ? 'schema up to date'
      : `ran migrations ${summary.migrationsRun.join(', ')}`;
  return {
    summary,
    message: `Keepsake Notes ${summary.version} on ${summary.database}; Redis: ${summary.redis}; attachments: ${summary.attachments}; ${migrations}`,
  };
}

/** The files of swagger-ui's page (scripts, styles, logo), in its package. */
const SWAGGER_UI_FILES = path.join(
  path.dirname(createRequire(import.meta.url).resolve('@fastify/swagger-ui/package.json')),
  'static',
);

/** Builds the whole application on a fresh or existing DATA_DIR; `main.ts` only listens. */
export async function buildApp(config: Config, options: BuildOptions = {}): Promise<FastifyInstance> {
  // prom-client (~13 MiB) is loaded only when metrics are on.
  const metricsModule = config.metrics ? await import('./http/metrics.js') : undefined;
  const metrics: Metrics | undefined = metricsModule?.createMetrics();
  const onQuery =
    options.onQuery || metrics
      ? (sql: string, durationMs: number) => {
          options.onQuery?.(sql, durationMs);
          metrics?.observeQuery(durationMs);
        }
      : undefined;
  const app = Fastify({
    logger: options.logger ?? loggerOptions(config, options.logStream),
    // Fastify accepts a hop count at run time; its types only list the other forms.
    trustProxy: config.trustProxy as boolean | string[],
    bodyLimit: JSON_BODY_LIMIT,
    genReqId: () => randomUUID(),
    // Longer than any URL Node accepts, so the router never refuses a long path segment (414):
    // validation answers it (a note id that is not a uuid is 404 note_not_found).
    routerOptions: { maxParamLength: maxHeaderSize },
    schemaController: { compilersFactory: { buildSerializer: buildCachedSerializers } },
    ...requestTimeoutOptions(config),
  }).withTypeProvider<TypeBoxTypeProvider>();
  endSilentConnectionsOnClose(app);
  const opened = await openDataDir(config, {
    onQuery,
    schema: 'migrate',
    waitForDatabase: {
      seconds: config.databaseWaitSeconds,
      retrying: (message) => app.log.warn(message),
    },
  });
  const { database, quota } = opened;
  const clock = options.clock ?? opened.clock;
  const deployment = deploymentSummary(config, database);
  app.log.info(deployment.summary, deployment.message);

  // First of all hooks: a request for an unknown host reaches nothing else (DNS rebinding).
  registerTrustedHosts(app, config);
  app.decorate('db', database.db);
  app.decorate('appConfig', config);
  const redis = config.redisUrl === null ? undefined : await openRedis(app, config.redisUrl);
  const identityProvider = await openSingleSignOn(app, config);
  app.decorate(
    'services',
    buildServices({
      db: database.db,
      pingDatabase: database.ping,
      pingRedis: redis && (() => redisAnswers(redis)),
      clock,
      config,
      log: app.log,
      passwordCost: options.passwordCost,
      quota,
      identityProvider,
      bus: await hintBus(app, config, database),
    }),
  );
  app.addHook('onClose', async () => database.close());
  // Every committed note change goes to the live streams; they end before the server closes.
  onNoteChanges(database.db, app.services.live.committed);
  await app.services.live.start();
  app.addHook('preClose', async () => app.services.live.close());

  // A JSON API: text/plain bodies are 415 like any other non-JSON type, not strings to validate.
  app.removeContentTypeParser('text/plain');
  registerJsonBodies(app);
  registerValidation(app);
  const webBundle = loadWebBundle(options.webRoot === undefined ? findWebBundle() : options.webRoot);
  registerErrorHandling(app, webBundle ? appPageFallback(webBundle) : undefined);
  for (const schema of [
    ErrorBody,
    Success,
    Attachment,
    Reminder,
    Note,
    NoteRevision,
    UserProfile,
    UserSummary,
    Collaborator,
    ApiKey,
    ShareLink,
    PublicAttachment,
    SharedNote,
  ]) {
    app.addSchema(schema);
  }

  registerSecurityHeaders(app);
  await app.register(cookie);
  await app.register(rateLimit, {
    global: false,
    enableDraftSpec: true,
    ...sharedRateLimitStore(database, redis),
    errorResponseBuilder: (_request, context) => errors.rateLimited(Math.ceil(context.ttl / 1000)),
  });
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Notes API',
        version: APP_VERSION,
        description: 'Self-hosted, offline-first notes. Errors use the Error schema (D-ERR-1).',
        license: { name: 'MIT', identifier: 'MIT' },
      },
      // Relative to where this document was fetched from, unless the server knows its public origin.
      servers: [{ url: config.publicUrl ?? '/', description: 'This server' }],
      components: { securitySchemes },
    },
    transform: describeRoute,
    refResolver: { buildLocalReference: (json, _base, _fragment, i) => String(json.$id ?? `def-${i}`) },
  });
  await app.register(async (docs) => {
    docs.addHook('onRoute', (route) => {
      route.config = { ...route.config, auth: 'public' };
    });
    // swagger-ui can take the document it shows from the page's query (`?url=`, `?configUrl=`,
    // with its query config on): a link to these docs must never show another document under
    // this origin. No docs route takes a query, so one is dropped by a redirect.
    docs.addHook('onRequest', async (request, reply) => {
      const query = request.url.indexOf('?');
      if (query >= 0) return reply.redirect(request.url.slice(0, query), 302);
    });
    await docs.register(swaggerUi, {
      routePrefix: '/api/docs',
      // Bundled (an external copy loads its own yaml and @fastify/static: ~3 MiB more RSS), it
      // cannot find its page's files beside itself; they are read from its package.
      baseDir: SWAGGER_UI_FILES,
      logo: { type: 'image/svg+xml', content: await readFile(path.join(SWAGGER_UI_FILES, 'logo.svg')) },
      staticCSP: true,
      // Its policy asks browsers to upgrade requests to https: a blank page over plain http.
      transformStaticCSP: (header) => header.replace(/\s*upgrade-insecure-requests;?/, ''),
    });
  });
  app.get('/api/openapi.json', { config: { auth: 'public' }, schema: { hide: true } }, async () =>
    app.swagger(),
  );

  await registerCors(app, config.corsOrigins);
  registerBodyDraining(app, options.linger);
  await app.register(authPlugin, {
    resolveSession: app.services.auth.resolveSession,
    publicUrl: config.publicUrl,
    bearer: app.services.apiKeys.authenticate,
  });

  if (metricsModule && metrics) await metricsModule.registerMetrics(app, metrics, config.metricsToken);

  // Features, one line each.
  await app.register(healthRoutes);
  await app.register(authRoutes);
  await app.register(userRoutes);
  await app.register(noteRoutes);
  await app.register(attachmentRoutes);
  await app.register(collaboratorRoutes);
  await app.register(searchRoutes);
  await app.register(tagRoutes);
  await app.register(revisionRoutes);
  await app.register(syncRoutes);
  await app.register(liveRoutes);
  await app.register(sharingRoutes);
  await app.register(apiKeyRoutes);
  await app.register(mcpRoutes);
  await app.register(transferRoutes);
  await app.register(reminderRoutes);
  await registerWebApp(app, webBundle);

  startMaintenance(app, database);
  await createConfiguredOwner(app, config);
  startReminders(app);
  return app;
}

/**
 * The owner account of OWNER_EMAIL and OWNER_PASSWORD, when there is no owner yet: an instance
 * set up without the web app, which no one reaching it first can claim. Several processes
 * starting at once create it once (setup checks again inside its transaction).
 */
async function createConfiguredOwner(app: FastifyInstance, config: Config): Promise<void> {
  if (config.ownerPassword === null) return;
  if (!(await app.services.auth.status(null)).setupRequired) return;
  try {
    await app.services.auth.createOwner({
      password: config.ownerPassword,
      email: config.ownerEmail ?? undefined,
    });
    app.log.info({ email: config.ownerEmail ?? '' }, 'created the owner account from OWNER_PASSWORD');
  } catch (err) {
    if (!(err instanceof AppError && err.code === 'setup_completed')) throw err;
  }
}

/**
 * The Redis client of the rate limits (REDIS_URL; decision 0022). It reconnects for as long as the
 * process lives; meanwhile the requests that count in it answer 503 `unavailable` (decision 0028).
 */
async function openRedis(app: FastifyInstance, url: string) {
  // Loaded only when configured, like the MCP SDK (decision 0017).
  const { Redis } = await import('ioredis');
  const redis = new Redis(url, {
    // While Redis is away, a command fails at once (503) instead of waiting for a reconnection;
    // one sent just before the connection broke waits for one reconnection attempt at most, and
    // one that Redis does not answer, 2 s.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    commandTimeout: 2000,
    // Attempts at most a second apart: the process notices within a second that Redis is back.
    retryStrategy: (attempt) => Math.min(attempt * 100, 1000),
  });
  // Every failed attempt emits 'error' (unheard, it would end the process): logged once an outage.
  let reachable = true;
  redis.on('error', (err) => {
    if (!reachable) return;
    reachable = false;
    app.log.error({ err }, 'Redis unreachable: sign-ins and public share links answer 503 until it is back');
  });
  redis.on('ready', () => {
    if (reachable) return;
    reachable = true;
    app.log.info('Redis reachable again');
  });
  // The first requests find it connected, unless it cannot be reached (refused at once).
  await new Promise<void>((resolve) => {
    const timer = setTimeout(settled, REDIS_CONNECT_WAIT_MS);
    function settled() {
      clearTimeout(timer);
      redis.off('ready', settled).off('error', settled);
      resolve();
    }
    redis.once('ready', settled).once('error', settled);
  });
  app.addHook('onClose', async () => {
    // QUIT would wait for a Redis that is away.
    if (redis.status === 'ready') await redis.quit();
    else redis.disconnect();
  });
  return redis;
}

/** The OpenID provider of OIDC_ISSUER_URL, discovered in the background (decision 0036). */
async function openSingleSignOn(app: FastifyInstance, config: Config) {
  const { oidcIssuerUrl, oidcClientId, oidcClientSecret } = config;
  if (oidcIssuerUrl === null || oidcClientId === null || oidcClientSecret === null) return undefined;
  const provider = await openIdentityProvider({
    issuerUrl: oidcIssuerUrl,
    clientId: oidcClientId,
    clientSecret: oidcClientSecret,
    scopes: config.oidcScopes,
    log: app.log,
  });
  app.addHook('onClose', async () => provider.close());
  return provider;
}

/** Whether Redis answers now: no wait for a reconnection when it is known to be away. */
async function redisAnswers(redis: Redis): Promise<boolean> {
  if (redis.status !== 'ready') return false;
  return redis.ping().then(
    () => true,
    () => false,
  );
}

/**
 * Where the rate limits count, so that several processes count together (issue 15): in Redis
 * with REDIS_URL, else in PostgreSQL's table with DATABASE_URL, else in this process's memory
 * (SQLite: one process).
 */
function sharedRateLimitStore(database: OpenDatabase, redis: Redis | undefined) {
  if (redis) return { store: redisRateLimitStore(redis) };
  return database.engine === 'postgres' ? { store: postgresRateLimitStore(database.db) } : {};
}

/** The reminder scheduler, from when the server is ready (catch-up first) until it closes. */
function startReminders(app: FastifyInstance): void {
  let stop: (() => Promise<void>) | undefined;
  app.addHook('onReady', async () => {
    stop = app.services.reminderScheduler.start();
  });
  // Before the database closes (onClose), so no tick runs on a closed one.
  app.addHook('preClose', async () => stop?.());
}

/**
 * The bus of the live hints (decision 0033): Redis pub/sub with REDIS_URL and PostgreSQL, else
 * PostgreSQL's LISTEN/NOTIFY, else this process's memory (SQLite: one process).
 */
async function hintBus(app: FastifyInstance, config: Config, database: OpenDatabase): Promise<HintBus> {
  if (database.engine !== 'postgres' || config.databaseUrl === null) return memoryBus();
  if (config.redisUrl !== null) return redisBus(config.redisUrl, app.log);
  return postgresBus(database.db, config.databaseUrl, app.log);
}

/**
 * Trash retention, tombstone and session (web and MCP) clean-up: at start-up, then hourly
 * (D-NOTE-4, D-SYNC-3), by one process of those sharing a PostgreSQL database (decision 0022).
 */
function startMaintenance(app: FastifyInstance, database: OpenDatabase): void {
  app.decorate('runMaintenance', async () => {
    if (!(await database.leadsMaintenance())) return null;
    const purged = await app.services.notes.purgeExpiredTrash();
    await app.services.sync.purgeExpiredTombstones();
    await app.services.auth.deleteExpiredSessions();
    await app.services.mcpSessions.deleteIdleSessions();
    if (engine() === 'postgres') await deleteExpiredRateLimits(app.db);
    if (purged > 0) app.log.info({ purged }, 'deleted notes past the trash retention period');
    return { purged };
  });
  const run = async () => {
    try {
      await app.runMaintenance();
    } catch (err) {
      app.log.error({ err }, 'maintenance failed');
    }
  };
  let timer: NodeJS.Timeout | undefined;
  app.addHook('onReady', async () => {
    await run();
    timer = setInterval(run, MAINTENANCE_INTERVAL_MS);
    timer.unref();
  });
  app.addHook('onClose', async () => clearInterval(timer));
}
