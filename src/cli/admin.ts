/**
 * Operator CLI: `npm run admin -- <command>`. Creates tenants and manages their API keys
 * directly in the database the server uses (same DATABASE_URL / DATA_DIR).
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { serviceModules } from '../app.js';
import { ConfigError, loadConfig, type Config } from '../config/index.js';
import { EmbeddedDatabaseBusyError, openDatabase } from '../db/database.js';
import { UnreachableError } from '../lib/connection-errors.js';
import type { Mode } from '../db/types.js';
import { migrate, platformMigrations } from '../db/migrator.js';
import { systemClock } from '../lib/clock.js';
import { AppError } from '../platform/errors/app-error.js';
import { DEFAULT_LIMIT, MAX_LIMIT, MAX_OFFSET, toPage } from '../platform/pagination/index.js';
import {
  DEFAULT_RATE_LIMIT_PER_MINUTE,
  MAX_TENANT_NAME_LENGTH,
  createTenantAdmin,
  type ApiKey,
  type CreateApiKeyInput,
  type Tenant,
  type TenantAdmin,
} from '../platform/tenants/service.js';

const EXIT_OK = 0;
const EXIT_FAILURE = 1;
const EXIT_USAGE = 2;

const MAX_NAME_LENGTH = MAX_TENANT_NAME_LENGTH;
const MAX_SCOPES = 100;
const MAX_RATE_LIMIT = 1_000_000;

const USAGE = `Usage: npm run admin -- [--json] <command> [options]

Commands:
  create-tenant --name <name>
      Create a tenant and print it (id, name, created_at).

  list-tenants [--limit <n>] [--offset <n>]
      List tenants, newest first: id, name, created_at and KEYS, the count of API keys
      not revoked (0: every key was revoked or lost; create a new one with create-key).

  rename-tenant --tenant <tenant> --name <new name>
      Rename a tenant and print it.

  create-key --tenant <tenant> --mode <test|live> --scopes <scopes>
             [--rate-limit <per_minute>] [--name <label>]
      Create an API key. The secret is printed once and cannot be shown again.
      <scopes> is comma-separated: '*', 'service.crm.*' or 'service.crm.view,service.crm.manage'.
      --rate-limit is requests per minute, 1 to ${MAX_RATE_LIMIT} (default ${DEFAULT_RATE_LIMIT_PER_MINUTE}).

  list-keys --tenant <tenant> [--limit <n>] [--offset <n>]
      List a tenant's API keys, newest first (never their secrets).

  --limit is 1 to ${MAX_LIMIT} (default ${DEFAULT_LIMIT}), --offset 0 or more (default 0).
  <tenant> is a tenant's id or its exact name; when several tenants share the name the
  command fails and lists their ids.

  revoke-key <key_id>   (or --id <key_id>)
      Revoke an API key and print it. Revoking twice is harmless.

  help
      Show this text.

Global options:
  --json        Print machine-readable JSON on stdout instead of text; errors are one line
                {"error":{"code":"...","message":"..."}} on stderr (codes: invalid_usage,
                not_found, conflict, validation_failed, database_busy, database_unreachable,
                invalid_config, internal_error).
  -h, --help    Show this text.

Environment (the same as the server's):
  DATABASE_URL  postgres:// URL of the PostgreSQL database.
  DATA_DIR      Without DATABASE_URL: folder of the embedded database (default ./data).
                The embedded database can only be opened by one process: stop the server
                first, or use the HTTP operator API (ADMIN_TOKEN, /admin/v1) while it runs.

Exit status: 0 success, 1 error, 2 bad usage.
`;

/** `tenant` is what the operator typed: an id or an exact name. */
type Command =
  | { name: 'help' }
  | { name: 'create-tenant'; tenantName: string }
  | { name: 'list-tenants'; limit: number; offset: number }
  | { name: 'rename-tenant'; tenant: string; tenantName: string }
  | { name: 'create-key'; tenant: string; input: CreateApiKeyInput }
  | { name: 'list-keys'; tenant: string; limit: number; offset: number }
  | { name: 'revoke-key'; keyId: string };

interface Invocation {
  command: Command;
  json: boolean;
}

/** Wrong arguments: reported with a usage hint and exit status 2, before any database work. */
class UsageError extends Error {
  constructor(
    message: string,
    /** Print the whole usage text rather than a one-line hint. */
    readonly showUsage = false,
  ) {
    super(message);
  }
}

// ---------------------------------------------------------------------------
// Argument parsing (no database access)
// ---------------------------------------------------------------------------

const GLOBAL_OPTIONS = {
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

const COMMAND_OPTIONS = {
  'create-tenant': { name: { type: 'string' } },
  'list-tenants': { limit: { type: 'string' }, offset: { type: 'string' } },
  'rename-tenant': { tenant: { type: 'string' }, name: { type: 'string' } },
  'create-key': {
    tenant: { type: 'string' },
    mode: { type: 'string' },
    scopes: { type: 'string' },
    'rate-limit': { type: 'string' },
    name: { type: 'string' },
  },
  'list-keys': { tenant: { type: 'string' }, limit: { type: 'string' }, offset: { type: 'string' } },
  'revoke-key': { id: { type: 'string' } },
  help: {},
} as const;

type CommandName = keyof typeof COMMAND_OPTIONS;

function isCommandName(value: string): value is CommandName {
  return Object.hasOwn(COMMAND_OPTIONS, value);
}

/** Global flags are all booleans, so the command is the first argument not starting with `-`. */
function parseInvocation(argv: string[]): Invocation {
  const commandIndex = argv.findIndex((arg) => !arg.startsWith('-'));
  const rest = commandIndex === -1 ? argv : [...argv.slice(0, commandIndex), ...argv.slice(commandIndex + 1)];
  const commandName = commandIndex === -1 ? undefined : argv[commandIndex]!;

  if (commandName === undefined) {
    const { values } = parseOrThrow(rest, GLOBAL_OPTIONS);
    if (values.help) return { command: { name: 'help' }, json: false };
    throw new UsageError('no command given.', true);
  }
  if (!isCommandName(commandName)) throw new UsageError(`unknown command "${commandName}".`, true);

  const { values, positionals } = parseOrThrow(rest, { ...GLOBAL_OPTIONS, ...COMMAND_OPTIONS[commandName] });
  const json = values.json === true;
  if (values.help === true || commandName === 'help') return { command: { name: 'help' }, json };
  return { command: buildCommand(commandName, values, positionals), json };
}

type OptionValues = Record<string, string | boolean | undefined>;

function parseOrThrow(args: string[], options: ParseArgsConfig['options']): { values: OptionValues; positionals: string[] } {
  try {
    const { values, positionals } = parseArgs({ args, options, strict: true, allowPositionals: true });
    return { values: values, positionals };
  } catch (error) {
    if (isParseArgsError(error)) throw new UsageError(error.message);
    throw error;
  }
}

function isParseArgsError(error: unknown): error is Error {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return error instanceof Error && typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS');
}

function buildCommand(name: CommandName, values: OptionValues, positionals: string[]): Command {
  if (name === 'revoke-key') return { name, keyId: keyIdArgument(values, positionals) };
  if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}" for ${name}.`);
  switch (name) {
    case 'help':
      return { name };
    case 'create-tenant':
      return { name, tenantName: nameOption(values, 'name', true)! };
    case 'list-tenants':
      return { name, ...pageOptions(values) };
    case 'rename-tenant':
      return { name, tenant: requiredString(values, 'tenant'), tenantName: nameOption(values, 'name', true)! };
    case 'create-key':
      return {
        name,
        tenant: requiredString(values, 'tenant'),
        input: {
          mode: modeOption(values),
          scopes: scopesOption(values),
          rate_limit_per_minute: integerOption(values, 'rate-limit', { min: 1, max: MAX_RATE_LIMIT, fallback: DEFAULT_RATE_LIMIT_PER_MINUTE }),
          name: nameOption(values, 'name', false) ?? null,
        },
      };
    case 'list-keys':
      return { name, tenant: requiredString(values, 'tenant'), ...pageOptions(values) };
  }
}

function pageOptions(values: OptionValues): { limit: number; offset: number } {
  return {
    limit: integerOption(values, 'limit', { min: 1, max: MAX_LIMIT, fallback: DEFAULT_LIMIT }),
    offset: integerOption(values, 'offset', { min: 0, max: MAX_OFFSET, fallback: 0 }),
  };
}

function keyIdArgument(values: OptionValues, positionals: string[]): string {
  const given = [...positionals, ...(typeof values.id === 'string' ? [values.id] : [])];
  if (given.length !== 1) throw new UsageError('revoke-key needs exactly one key id (revoke-key <key_id> or --id <key_id>).');
  return given[0]!.trim();
}

function requiredString(values: OptionValues, option: string): string {
  const value = values[option];
  if (typeof value !== 'string' || value.trim() === '') throw new UsageError(`--${option} is required.`);
  return value.trim();
}

function nameOption(values: OptionValues, option: string, required: boolean): string | undefined {
  if (!required && values[option] === undefined) return undefined;
  const value = requiredString(values, option);
  if ([...value].length > MAX_NAME_LENGTH) throw new UsageError(`--${option} must be at most ${MAX_NAME_LENGTH} characters.`);
  return value;
}

function modeOption(values: OptionValues): Mode {
  const mode = requiredString(values, 'mode');
  if (mode !== 'test' && mode !== 'live') throw new UsageError(`--mode must be "test" or "live"; got "${mode}".`);
  return mode;
}

function scopesOption(values: OptionValues): string[] {
  const scopes = requiredString(values, 'scopes')
    .split(',')
    .map((scope) => scope.trim())
    .filter((scope) => scope !== '');
  if (scopes.length === 0) throw new UsageError('--scopes needs at least one scope.');
  if (scopes.length > MAX_SCOPES) throw new UsageError(`--scopes takes at most ${MAX_SCOPES} scopes.`);
  return scopes;
}

function integerOption(values: OptionValues, option: string, range: { min: number; max: number; fallback: number }): number {
  const value = values[option];
  if (value === undefined) return range.fallback;
  const text = String(value).trim();
  const number = Number(text);
  if (!/^\d+$/.test(text) || number < range.min || number > range.max) {
    throw new UsageError(`--${option} must be an integer from ${range.min} to ${range.max}; got "${text}".`);
  }
  return number;
}

// ---------------------------------------------------------------------------
// Running a command
// ---------------------------------------------------------------------------

async function runCommand(command: Exclude<Command, { name: 'help' }>, admin: TenantAdmin, json: boolean): Promise<string> {
  switch (command.name) {
    case 'create-tenant': {
      const tenant = await admin.createTenant(command.tenantName);
      return json ? toJson(tenant) : `Created tenant\n${formatTenantFields(tenant)}`;
    }
    case 'list-tenants': {
      const page = { limit: command.limit, offset: command.offset };
      const { rows, total } = await admin.listTenants(page);
      return json ? toJson(toPage(rows, total, page)) : formatList('tenants', TENANT_COLUMNS, rows, total, page);
    }
    case 'rename-tenant': {
      const { id } = await admin.findTenant(command.tenant);
      const tenant = await admin.renameTenant(id, command.tenantName);
      return json ? toJson(tenant) : `Renamed tenant\n${formatTenantFields(tenant)}`;
    }
    case 'create-key': {
      const { id } = await admin.findTenant(command.tenant);
      const created = await admin.createApiKey(id, command.input);
      return json ? toJson(created) : formatCreatedKey(created.key, created.secret);
    }
    case 'list-keys': {
      const page = { limit: command.limit, offset: command.offset };
      const { id } = await admin.findTenant(command.tenant);
      const { rows, total } = await admin.listApiKeys(id, page);
      return json ? toJson(toPage(rows, total, page)) : formatList('API keys', KEY_COLUMNS, rows, total, page);
    }
    case 'revoke-key': {
      const key = await admin.revokeApiKey(command.keyId);
      return json ? toJson(key) : `Revoked API key\n${formatKeyFields(key)}`;
    }
  }
}

/** Opens the server's database, brings its schema up to date, runs the command, closes. */
async function withAdmin<T>(config: Config, work: (admin: TenantAdmin) => Promise<T>): Promise<T> {
  const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  try {
    await migrate(database, [platformMigrations, ...serviceModules.map((module) => ({ owner: module.id, directory: module.migrations }))]);
    return await work(createTenantAdmin({ db: database.db, clock: systemClock }));
  } finally {
    await database.close();
  }
}

// ---------------------------------------------------------------------------
// Output
// ---------------------------------------------------------------------------

function toJson(value: unknown): string {
  return JSON.stringify(value, null, 2);
}

function fieldLines(fields: [string, string][]): string {
  const width = Math.max(...fields.map(([label]) => label.length)) + 1;
  return fields.map(([label, value]) => `  ${`${label}:`.padEnd(width)} ${value}`).join('\n');
}

function formatTenantFields(tenant: Tenant): string {
  return fieldLines([
    ['id', tenant.id],
    ['name', tenant.name],
    ['created_at', tenant.created_at],
    ['keys', `${tenant.key_count} active`],
  ]);
}

function formatKeyFields(key: ApiKey): string {
  return fieldLines([
    ['id', key.id],
    ['tenant_id', key.tenant_id],
    ['mode', key.mode],
    ['key_prefix', key.key_prefix],
    ['scopes', key.scopes.join(',')],
    ['rate_limit', `${key.rate_limit_per_minute}/min`],
    ['name', key.name ?? '-'],
    ['created_at', key.created_at],
    ['revoked_at', key.revoked_at ?? '-'],
  ]);
}

function formatCreatedKey(key: ApiKey, secret: string): string {
  return ['Created API key', formatKeyFields(key), '', 'Secret (shown only once; only its hash is stored, so it cannot be shown again):', '', `  ${secret}`].join('\n');
}

interface Column<T> {
  header: string;
  value: (row: T) => string;
}

const TENANT_COLUMNS: Column<Tenant>[] = [
  { header: 'ID', value: (tenant) => tenant.id },
  { header: 'NAME', value: (tenant) => tenant.name },
  { header: 'CREATED_AT', value: (tenant) => tenant.created_at },
  { header: 'KEYS', value: (tenant) => String(tenant.key_count) },
];

const KEY_COLUMNS: Column<ApiKey>[] = [
  { header: 'ID', value: (key) => key.id },
  { header: 'MODE', value: (key) => key.mode },
  { header: 'PREFIX', value: (key) => key.key_prefix },
  { header: 'SCOPES', value: (key) => key.scopes.join(',') },
  { header: 'RATE/MIN', value: (key) => String(key.rate_limit_per_minute) },
  { header: 'NAME', value: (key) => key.name ?? '-' },
  { header: 'CREATED_AT', value: (key) => key.created_at },
  { header: 'REVOKED_AT', value: (key) => key.revoked_at ?? '-' },
];

/** One page as an aligned table, with where it sits among all rows. */
function formatList<T>(noun: string, columns: Column<T>[], rows: T[], total: number, page: { limit: number; offset: number }): string {
  if (rows.length === 0) return total === 0 ? `No ${noun}.` : `No ${noun} at offset ${page.offset} (${total} in total).`;
  const table = [columns.map((column) => column.header), ...rows.map((row) => columns.map((column) => column.value(row)))];
  const widths = columns.map((_, index) => Math.max(...table.map((cells) => cells[index]!.length)));
  const lines = table.map((cells) =>
    cells
      .map((cell, index) => cell.padEnd(widths[index]!))
      .join('  ')
      .trimEnd(),
  );
  const shown = `${page.offset + 1}-${page.offset + rows.length} of ${total}`;
  const more = page.offset + rows.length < total ? ` (next page: --offset ${page.offset + rows.length})` : '';
  return [...lines, '', `Showing ${shown}${more}.`].join('\n');
}

// ---------------------------------------------------------------------------
// Errors and the entry point
// ---------------------------------------------------------------------------

const HTTP_HINT = [
  'hint: while the server runs with ADMIN_TOKEN set, the same operations exist over HTTP under /admin/v1',
  '  (Authorization: Bearer $ADMIN_TOKEN):',
  '    POST   /admin/v1/tenants                           create-tenant',
  '    GET    /admin/v1/tenants                           list-tenants',
  '    PATCH  /admin/v1/tenants/{tenant_id}               rename-tenant',
  '    POST   /admin/v1/tenants/{tenant_id}/api-keys      create-key',
  '    GET    /admin/v1/tenants/{tenant_id}/api-keys      list-keys',
  '    DELETE /admin/v1/api-keys/{id}                     revoke-key',
].join('\n');

interface Failure {
  code: string;
  message: string;
  /** Printed after the message in text mode only. */
  more?: string;
  details?: AppError['details'];
  exitCode: number;
}

/** What went wrong, in the terms both outputs share; the codes are the API's where one applies. */
function describeError(error: unknown): Failure {
  if (error instanceof UsageError) {
    const more = error.showUsage ? `\n${USAGE}` : 'Run "npm run admin -- help" for usage.\n';
    return { code: 'invalid_usage', message: error.message, more, exitCode: EXIT_USAGE };
  }
  if (error instanceof AppError) {
    const more = error.details.map((detail) => `  - ${detail.message}\n`).join('');
    return { code: error.code, message: error.message, more, details: error.details, exitCode: EXIT_FAILURE };
  }
  if (error instanceof EmbeddedDatabaseBusyError) return { code: 'database_busy', message: error.message, more: `${HTTP_HINT}\n`, exitCode: EXIT_FAILURE };
  if (error instanceof UnreachableError) return { code: 'database_unreachable', message: error.message, exitCode: EXIT_FAILURE };
  if (error instanceof ConfigError) return { code: 'invalid_config', message: error.message, exitCode: EXIT_FAILURE };
  return { code: 'internal_error', message: error instanceof Error ? error.message : String(error), exitCode: EXIT_FAILURE };
}

/** Writes what went wrong to stderr (with --json: one JSON line) and returns the exit status. */
function reportError(error: unknown, json: boolean): number {
  const failure = describeError(error);
  if (json) {
    const details = failure.details?.length ? { details: failure.details } : {};
    process.stderr.write(`${JSON.stringify({ error: { code: failure.code, message: failure.message, ...details } })}\n`);
  } else {
    process.stderr.write(`error: ${failure.message}\n${failure.more ?? ''}`);
  }
  return failure.exitCode;
}

async function main(argv: string[]): Promise<number> {
  // Known before parsing, so that bad usage is reported as JSON too.
  const json = argv.includes('--json');
  try {
    const { command } = parseInvocation(argv);
    if (command.name === 'help') {
      process.stdout.write(USAGE);
      return EXIT_OK;
    }
    const config = loadConfig();
    const output = await withAdmin(config, (admin) => runCommand(command, admin, json));
    process.stdout.write(`${output}\n`);
    return EXIT_OK;
  } catch (error) {
    return reportError(error, json);
  }
}

process.exitCode = await main(process.argv.slice(2));
