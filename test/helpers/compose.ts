import fs from 'node:fs';
import path from 'node:path';

/**
 * Runs a compose file's services with Podman as Compose does, for test/container.test.ts. No
 * Compose that reads compose.yaml faithfully can run here: no Docker engine, and Debian 12's
 * podman-compose (1.0.3) ignores `profiles` and `name` and passes `${VAR:-}` in an environment
 * map through uninterpolated. So this reads the parts of the Compose specification that
 * compose.yaml uses, as the specification says, and nothing else (anything else is an error):
 * `name` (COMPOSE_PROJECT_NAME wins), interpolation, profiles (COMPOSE_PROFILES), `image`,
 * `environment`, named volumes and relative bind mounts, `ports`, `healthcheck`, `restart`,
 * and `depends_on` with `condition` and `required`; one network per project, on which each
 * service is reached by its name. `build` is not run: the image must exist.
 */

type Podman = (
  args: string[],
  options?: { timeoutMs?: number; allowFailure?: boolean },
) => Promise<{ code: number | null; stdout: string; stderr: string }>;

interface Dependency {
  condition?: 'service_started' | 'service_healthy' | 'service_completed_successfully';
  required?: boolean;
}

interface Service {
  image: string;
  build?: unknown;
  profiles?: string[];
  restart?: string;
  environment?: Record<string, string | number | boolean | null>;
  volumes?: string[];
  ports?: string[];
  healthcheck?: {
    test: string[] | string;
    interval?: string;
    timeout?: string;
    retries?: number;
    start_period?: string;
  };
  depends_on?: string[] | Record<string, Dependency>;
}

interface ComposeFile {
  name?: string;
  services: Record<string, Service>;
  volumes?: Record<string, unknown>;
}

const KNOWN_KEYS = new Set([
  'image',
  'build',
  'profiles',
  'restart',
  'environment',
  'volumes',
  'ports',
  'healthcheck',
  'depends_on',
]);

/**
 * Compose's interpolation of one string: `${VAR}`, `${VAR:-default}` (unset or empty),
 * `${VAR-default}` (unset), `${VAR:?message}`, `$VAR`, and `$$` for a dollar sign.
 */
function interpolate(text: string, env: Record<string, string | undefined>): string {
  return text.replace(
    /\$(?:\$|\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?])([^}]*))?\}|([A-Za-z_][A-Za-z0-9_]*))/g,
    (match, braced?: string, operator?: string, operand?: string, bare?: string) => {
      if (match === '$$') return '$';
      const name = (braced ?? bare) as string;
      const value = env[name];
      const missing = operator?.startsWith(':') ? value === undefined || value === '' : value === undefined;
      if (operator?.endsWith('-') && missing) return interpolate(operand ?? '', env);
      if (operator?.endsWith('?') && missing) throw new Error(`compose: ${name}: ${operand || 'required'}`);
      return value ?? '';
    },
  );
}

function interpolateAll<T>(value: T, env: Record<string, string | undefined>): T {
  if (typeof value === 'string') return interpolate(value, env) as T;
  if (Array.isArray(value)) return value.map((item) => interpolateAll(item, env)) as T;
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [key, interpolateAll(item, env)]),
    ) as T;
  }
  return value;
}

const dependencies = (service: Service): [string, Dependency][] =>
  Array.isArray(service.depends_on)
    ? service.depends_on.map((name) => [name, {}])
    : Object.entries(service.depends_on ?? {});

export class ComposeProject {
  readonly name: string;
  readonly file: ComposeFile;
  /** The services the active profiles enable, each after the ones it depends on. */
  readonly services: string[];

  constructor(
    parsed: ComposeFile,
    /** Relative bind mounts are resolved against it (Compose's project directory). */
    readonly directory: string,
    /** What Compose reads from the shell and `.env`: interpolation, COMPOSE_PROFILES, COMPOSE_PROJECT_NAME. */
    env: Record<string, string | undefined>,
    private readonly podman: Podman,
  ) {
    this.file = interpolateAll(parsed, env);
    this.name = env.COMPOSE_PROJECT_NAME || this.file.name || path.basename(directory);
    const profiles = new Set((env.COMPOSE_PROFILES ?? '').split(',').filter((p) => p !== ''));
    const enabled = (name: string) => {
      const service = this.service(name);
      return service.profiles === undefined || service.profiles.some((p) => profiles.has(p));
    };
    for (const [name, service] of Object.entries(this.file.services)) {
      const unknown = Object.keys(service).filter((key) => !KNOWN_KEYS.has(key));
      if (unknown.length > 0) throw new Error(`compose: ${name}: not supported here: ${unknown.join(', ')}`);
      if (typeof service.image !== 'string') throw new Error(`compose: ${name} names no image`);
    }
    this.services = [];
    const visit = (name: string, trail: string[]) => {
      if (this.services.includes(name)) return;
      if (trail.includes(name)) throw new Error(`compose: depends_on cycle ${[...trail, name].join(' → ')}`);
      for (const [dependency, { required = true }] of dependencies(this.service(name))) {
        if (this.file.services[dependency] === undefined)
          throw new Error(`compose: no service ${dependency}`);
        if (enabled(dependency)) visit(dependency, [...trail, name]);
        else if (required) {
          throw new Error(`compose: ${name} depends on ${dependency}, which no active profile enables`);
        }
      }
      this.services.push(name);
    };
    for (const name of Object.keys(this.file.services)) if (enabled(name)) visit(name, []);
  }

  private service(name: string): Service {
    const service = this.file.services[name];
    if (service === undefined) throw new Error(`compose: no service ${name}`);
    return service;
  }

  container(service: string): string {
    return `${this.name}-${service}-1`;
  }

  volume(name: string): string {
    return `${this.name}_${name}`;
  }

  private get network(): string {
    return `${this.name}_default`;
  }

  /** `compose up -d`: network, volumes, then each service once those it waits for are ready. */
  async up(): Promise<void> {
    if ((await this.podman(['network', 'exists', this.network], { allowFailure: true })).code !== 0) {
      await this.podman(['network', 'create', this.network]);
    }
    for (const volume of Object.keys(this.file.volumes ?? {})) {
      if ((await this.podman(['volume', 'exists', this.volume(volume)], { allowFailure: true })).code !== 0) {
        await this.podman(['volume', 'create', this.volume(volume)]);
      }
    }
    for (const name of this.services) {
      for (const [dependency, { condition = 'service_started' }] of dependencies(this.service(name))) {
        if (!this.services.includes(dependency)) continue;
        if (condition === 'service_healthy') await this.untilHealthy(dependency);
        else if (condition !== 'service_started')
          throw new Error(`compose: condition ${condition} not supported here`);
      }
      await this.podman(['--runtime', 'runc', 'run', '--detach', ...this.runArguments(name)], {
        timeoutMs: 120_000,
      });
    }
  }

  /** `compose down` (with `--volumes`: the named volumes too). */
  async down({ volumes = false } = {}): Promise<void> {
    for (const name of [...this.services].reverse()) {
      await this.podman(['rm', '--force', '--time', '10', this.container(name)], {
        allowFailure: true,
        timeoutMs: 60_000,
      });
    }
    await this.podman(['network', 'rm', '--force', this.network], { allowFailure: true });
    if (volumes) {
      for (const volume of Object.keys(this.file.volumes ?? {})) {
        await this.podman(['volume', 'rm', '--force', this.volume(volume)], { allowFailure: true });
      }
    }
  }

  /**
   * Whether the service's health check passes. Podman runs health checks on a timer through
   * systemd, absent here, so each check is run on demand (as the engine would at its interval).
   */
  async healthy(service: string): Promise<boolean> {
    const check = await this.podman(['--runtime', 'runc', 'healthcheck', 'run', this.container(service)], {
      allowFailure: true,
    });
    return check.code === 0;
  }

  /** Waits as long as the health check's own settings allow, then fails as Compose does. */
  async untilHealthy(service: string): Promise<void> {
    const check = this.service(service).healthcheck;
    const seconds = (text = '30s') =>
      Number.parseFloat(text) * (text.endsWith('ms') ? 0.001 : text.endsWith('m') ? 60 : 1);
    const patience =
      1000 * (seconds(check?.start_period ?? '0s') + seconds(check?.interval) * (check?.retries ?? 3) + 30);
    const since = Date.now();
    while (Date.now() - since < patience) {
      if (await this.healthy(service)) return;
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
    const logs = await this.podman(['logs', '--tail', '20', this.container(service)], { allowFailure: true });
    throw new Error(`compose: ${service} did not become healthy: ${logs.stdout}${logs.stderr}`);
  }

  private runArguments(name: string): string[] {
    const service = this.service(name);
    const args = ['--name', this.container(name), '--network', this.network, '--network-alias', name];
    if (service.restart !== undefined) args.push('--restart', service.restart);
    for (const [variable, value] of Object.entries(service.environment ?? {})) {
      args.push('--env', value === null ? variable : `${variable}=${value}`);
    }
    for (const volume of service.volumes ?? []) {
      const [source = '', ...rest] = volume.split(':');
      const named = !source.startsWith('.') && !source.startsWith('/');
      if (named && !Object.hasOwn(this.file.volumes ?? {}, source)) {
        throw new Error(`compose: ${name} mounts undeclared volume ${source}`);
      }
      const host = named ? this.volume(source) : path.resolve(this.directory, source);
      // Docker creates a missing bind-mounted folder (Podman refuses it).
      if (!named) fs.mkdirSync(host, { recursive: true });
      args.push('--volume', [host, ...rest].join(':'));
    }
    for (const port of service.ports ?? []) args.push('--publish', port);
    const check = service.healthcheck;
    if (check !== undefined) {
      const [kind, ...command] = typeof check.test === 'string' ? ['CMD-SHELL', check.test] : check.test;
      // Podman takes the exec form as a JSON array, the shell form as a string.
      args.push('--health-cmd', kind === 'CMD' ? JSON.stringify(command) : command.join(' '));
      if (check.interval !== undefined) args.push('--health-interval', check.interval);
      if (check.timeout !== undefined) args.push('--health-timeout', check.timeout);
      if (check.retries !== undefined) args.push('--health-retries', String(check.retries));
      if (check.start_period !== undefined) args.push('--health-start-period', check.start_period);
    }
    args.push(service.image);
    return args;
  }
}
