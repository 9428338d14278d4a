/**
 * Whether the process is shutting down. From the moment it starts draining, /readyz answers
 * 503 and every reply carries `Connection: close`, so a load balancer takes the process out of
 * rotation and keep-alive clients move to a new connection (on another process) instead of
 * sending into a socket that is about to close.
 */
export class Draining {
  #since: Date | undefined;

  get active(): boolean {
    return this.#since !== undefined;
  }

  start(): void {
    this.#since ??= new Date();
  }
}
