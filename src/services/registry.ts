/**
 * The interfaces services offer each other. A service that others may call declares its
 * entry from its own index.ts, by augmenting this interface:
 *
 *   declare module '../registry.js' { interface ServiceApis { crm: CrmService } }
 *
 * Callers use `deps.services.get('<id>')`, never another service's modules or tables.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- filled by declaration merging
export interface ServiceApis {}

export class ServiceRegistry {
  readonly #apis = new Map<string, unknown>();

  provide(id: string, api: unknown): void {
    this.#apis.set(id, api);
  }

  /** Resolved when called, so the order services are created in does not matter. */
  get<Id extends keyof ServiceApis>(id: Id): ServiceApis[Id] {
    const api = this.#apis.get(id);
    if (api === undefined) throw new Error(`Service ${String(id)} is not installed.`);
    return api as ServiceApis[Id];
  }
}
