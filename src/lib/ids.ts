import { randomUUID } from 'node:crypto';

export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function newId(): string {
  return randomUUID();
}

/** Ids of the wrong shape are answered like unknown ids (404), so check before querying. */
export function isUuid(value: string): boolean {
  return UUID_PATTERN.test(value);
}
