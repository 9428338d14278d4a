import FindMyWay from 'find-my-way';
import type { RouteMethodIndex } from '../errors/handler.js';

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

/** A second router holding only path shapes, so an unmatched request can learn which methods its path has. */
export class RouteIndex implements RouteMethodIndex {
  readonly #router = FindMyWay({ ignoreTrailingSlash: true });
  readonly #routes: Array<{ method: string; url: string }> = [];

  add(method: string | string[], url: string): void {
    for (const one of [method].flat()) {
      if ((METHODS as readonly string[]).includes(one) && !this.#router.hasRoute(one as never, url)) {
        this.#router.on(one as never, url, () => {});
        this.#routes.push({ method: one, url });
      }
    }
  }

  /** Every route the app serves (HEAD and OPTIONS left out), in the order registered. */
  list(): ReadonlyArray<{ method: string; url: string }> {
    return this.#routes;
  }

  methodsFor(url: string): string[] {
    const path = url.split('?')[0] ?? '/';
    return METHODS.filter((method) => this.#router.find(method as never, path) !== null);
  }
}
