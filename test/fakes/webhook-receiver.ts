import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';

export interface ReceivedWebhook {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

interface Script {
  statuses: number[];
  otherwise: number;
  body: string;
}

/**
 * A webhook receiver on 127.0.0.1 for tests. Each endpoint gets a path of its own (`newUrl()`),
 * so deliveries left over from other tests never mix in: every request is recorded under its
 * path and answered with the next status of that path's script.
 */
export class WebhookReceiver {
  readonly #received: ReceivedWebhook[] = [];
  readonly #scripts = new Map<string, Script>();
  #server: http.Server | undefined;
  #origin = '';

  /** A fresh URL on this receiver. */
  newUrl(): string {
    return `${this.#origin}/hooks/${randomUUID()}`;
  }

  /** Requests that reached `url`, in order. */
  receivedAt(url: string): ReceivedWebhook[] {
    const path = new URL(url).pathname;
    return this.#received.filter((request) => request.path === path);
  }

  /** The statuses of the next replies at `url`, in order; after them every reply is `otherwise`. */
  answer(url: string, statuses: number[], otherwise = 200, body = 'ok'): void {
    this.#scripts.set(new URL(url).pathname, { statuses: [...statuses], otherwise, body });
  }

  async start(): Promise<this> {
    this.#server = http.createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const path = request.url ?? '/';
        this.#received.push({ path, headers: request.headers, body: Buffer.concat(chunks).toString('utf8') });
        const script = this.#scripts.get(path) ?? { statuses: [], otherwise: 200, body: 'ok' };
        response.writeHead(script.statuses.shift() ?? script.otherwise, { 'content-type': 'text/plain' });
        response.end(script.body);
      });
    });
    await new Promise<void>((resolve) => this.#server!.listen(0, '127.0.0.1', resolve));
    this.#origin = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
    return this;
  }

  async close(): Promise<void> {
    if (!this.#server) return;
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server!.close(() => resolve()));
  }
}
