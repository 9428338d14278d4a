import type { Server, ServerOptions } from 'node:http';
import type { Socket } from 'node:net';
import type { HttpTimeouts } from '../../config/index.js';

/**
 * Options for node's HTTP server from the configured timeouts. Node checks the header and
 * request deadlines only every `connectionsCheckingInterval` (30 s by default), so a deadline
 * of 10 s could take 40 s to act: the interval here is a fraction of the header deadline.
 */
export function httpServerOptions(timeouts: HttpTimeouts): ServerOptions {
  return {
    headersTimeout: timeouts.headersTimeoutMs,
    requestTimeout: timeouts.requestTimeoutMs,
    keepAliveTimeout: timeouts.keepAliveTimeoutMs,
    connectionsCheckingInterval: Math.max(50, Math.min(1_000, Math.floor(timeouts.headersTimeoutMs / 4))),
  };
}

interface Exchange {
  request: { complete: boolean };
}

/**
 * Closes a connection that has been silent for `idleMs` while the server waits on the client:
 * nothing sent yet (or only part of the headers), a request body that stopped arriving, or a
 * reply the client stopped reading. A request whose handler is still working is left alone
 * (the database and outbound timeouts bound it), and so is any transfer that is making
 * progress: the timer restarts with every byte in either direction, so a long upload or a
 * CSV export that keeps flowing is never cut.
 */
export function closeStalledConnections(server: Server, idleMs: number): void {
  const exchanges = new WeakMap<Socket, Exchange>();
  server.on('request', (request, response) => {
    const socket = request.socket;
    exchanges.set(socket, { request });
    response.once('finish', () => {
      if (exchanges.get(socket)?.request === request) exchanges.delete(socket);
    });
  });
  server.setTimeout(idleMs);
  // With a listener, node leaves the decision to close to us.
  server.on('timeout', (socket: Socket) => {
    const exchange = exchanges.get(socket);
    const waitingOnClient = exchange === undefined || !exchange.request.complete || socket.writableLength > 0;
    if (waitingOnClient) socket.destroy();
  });
}
