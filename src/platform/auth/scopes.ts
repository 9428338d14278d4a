/** Every service id under /api/v1/services, and so every `<service>` a scope may name. */
export const SERVICE_IDS = [
  'forms',
  'blogs',
  'payments',
  'social',
  'invoicing',
  'outreach',
  'customer-auth',
  'catalog',
  'seo',
  'affiliates',
  'tasks',
  'appointments',
  'crm',
  'webhooks',
] as const;

export type ServiceId = (typeof SERVICE_IDS)[number];

const SCOPE_PATTERN = /^service\.([a-z][a-z-]*)\.(\*|[a-z]+(?:\.[a-z]+)*)$/;

/** `*`, `service.<service>.*` or `service.<service>.<area>` with a known service. */
export function isValidScope(scope: string): boolean {
  if (scope === '*') return true;
  const match = SCOPE_PATTERN.exec(scope);
  return match !== null && (SERVICE_IDS as readonly string[]).includes(match[1]!);
}

/**
 * Whether held scopes grant the needed one. `*` grants everything and `service.x.*`
 * everything of service x; otherwise scopes match exactly (manage does not imply view).
 */
export function grantsScope(held: readonly string[], needed: string): boolean {
  for (const scope of held) {
    if (scope === '*' || scope === needed) return true;
    if (scope.endsWith('.*') && needed.startsWith(scope.slice(0, -1))) return true;
  }
  return false;
}
