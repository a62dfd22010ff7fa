import { buildApp } from './app.js';
import { commandsHelp, runCommand } from './cli/commands.js';
import { ConfigError, configHelp, loadConfig } from './config.js';
import { startFailure } from './startFailure.js';

const [command = 'serve', ...args] = process.argv.slice(2);

if (command === '--help' || command === '-h') {
  console.log(`${configHelp()}\n\n${commandsHelp()}`);
  process.exit(0);
}

let config: ReturnType<typeof loadConfig>;
try {
  config = loadConfig();
} catch (err) {
  if (err instanceof ConfigError) {
    console.error(`Configuration error: ${err.message}\n\n${configHelp()}`);
    process.exit(1);
  }
  throw err;
}

if (command !== 'serve') process.exit(await runCommand(command, args, config));

const app = await buildApp(config).catch((err: unknown) => {
  const failure = startFailure(err);
  console.error(failure.message);
  process.exit(failure.exitCode);
});

/**
 * How long a shutdown waits for requests in flight before it cuts their connections, so that
 * the database still closes cleanly before a container runtime's SIGKILL (Docker and Podman
 * send it 10 s after SIGTERM). A client that keeps a request open (a stalled upload, a stream
 * nobody ended) would otherwise hold the process up to its timeout.
 */
const SHUTDOWN_GRACE_MS = 8_000;

// D-OPS-2: stop accepting, finish requests in flight, close the database cleanly.
let stopping = false;
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    app.log.info({ signal }, 'shutting down');
    setTimeout(() => {
      app.log.warn(
        `requests still open ${SHUTDOWN_GRACE_MS / 1000} s after ${signal}: their connections are closed`,
      );
      app.server.closeAllConnections();
    }, SHUTDOWN_GRACE_MS).unref();
    app.close().then(
      () => process.exit(0),
      (err) => {
        app.log.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  });
}

try {
  await app.listen({ port: config.port, host: config.host });
} catch (err) {
  app.log.fatal({ err }, 'could not start the server');
  process.exit(1);
}

// Where to go next, for the person who just started it.
const address = app.server.address();
const port = address && typeof address === 'object' ? address.port : config.port;
const origin =
  config.publicUrl ?? `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
const { setupRequired } = await app.services.auth.status(null);
app.log.info(
  { url: origin, app: `${origin}/`, docs: `${origin}/api/docs`, setupRequired },
  setupRequired
    ? `Ready: open the app at ${origin}/ to create the owner account; API docs at ${origin}/api/docs`
    : `Ready: open the app at ${origin}/; API docs at ${origin}/api/docs`,
);
