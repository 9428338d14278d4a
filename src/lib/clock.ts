/** Time source injected everywhere a rule depends on "now", so tests can move time. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** Follows real time, shifted by however far a test has advanced it. */
export class ManualClock implements Clock {
  #offsetMs = 0;
  #frozenAt: number | undefined;

  now(): Date {
    return new Date((this.#frozenAt ?? Date.now()) + this.#offsetMs);
  }

  advance(ms: number): void {
    this.#offsetMs += ms;
  }

  /** Stop time at its current reading (or the given instant) until `resume()`. */
  freeze(at?: Date): void {
    this.#offsetMs = 0;
    this.#frozenAt = (at ?? this.now()).getTime();
  }

  resume(): void {
    if (this.#frozenAt !== undefined) this.#offsetMs = this.#frozenAt + this.#offsetMs - Date.now();
    this.#frozenAt = undefined;
  }
}

export function addMilliseconds(date: Date, ms: number): Date {
  return new Date(date.getTime() + ms);
}

export const SECOND_MS = 1000;
export const MINUTE_MS = 60 * SECOND_MS;
export const HOUR_MS = 60 * MINUTE_MS;
export const DAY_MS = 24 * HOUR_MS;
