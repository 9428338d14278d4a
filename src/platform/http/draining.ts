/**
 * Whether the process is shutting down. From the moment it starts draining, /readyz answers
 * 503, so a load balancer takes the process out of rotation while it still serves.
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
