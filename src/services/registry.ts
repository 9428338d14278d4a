import type { CrmService } from './crm/index.js';

/**
 * The interfaces services offer each other. A service that others may call adds its
 * entry here; callers use `deps.services.get('<id>')`, never another service's tables.
 */
export interface ServiceApis {
  crm: CrmService;
}

export class ServiceRegistry {
  readonly #apis = new Map<string, unknown>();

  provide(id: string, api: unknown): void {
    this.#apis.set(id, api);
  }

  /** Resolved when called, so the order services are created in does not matter. */
  get<Id extends keyof ServiceApis>(id: Id): ServiceApis[Id] {
    const api = this.#apis.get(id);
    if (api === undefined) throw new Error(`Service ${id} is not installed.`);
    return api as ServiceApis[Id];
  }
}
