/**
 * Whether an endpoint subscribed to `enabledEvents` receives events of `type`: an exact type,
 * a `<service>.*` prefix, or `*` for every type.
 */
export function subscribesTo(enabledEvents: readonly string[], type: string): boolean {
  for (const pattern of enabledEvents) {
    if (pattern === '*' || pattern === type) return true;
    if (pattern.endsWith('.*') && type.startsWith(pattern.slice(0, -1))) return true;
  }
  return false;
}
