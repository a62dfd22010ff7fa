import { buildApp } from './app.js';
import { ConfigError, configHelp, loadConfig } from './config.js';

if (process.argv.includes('--help') || process.argv.includes('-h')) {
  console.log(configHelp());
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

const app = await buildApp(config);

// D-OPS-2: stop accepting, finish requests in flight, close the database cleanly.
let stopping = false;
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    app.log.info({ signal }, 'shutting down');
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
