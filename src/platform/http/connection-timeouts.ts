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

export interface Connections {
  /**
   * At shutdown, instead of node's closeIdleConnections(): a keep-alive connection idle right
   * now is closed only if it stays idle for `ms`. A client may already have sent its next
   * request on it; that request is answered (with Connection: close) instead of being reset.
   */
  closeIdleAfter(ms: number): void;
}

/**
 * Watches the server's connections and closes one that has been silent for `idleMs` while the
 * server waits on the client: nothing sent yet (or only part of the headers), a request body
 * that stopped arriving, or a reply the client stopped reading. A request whose handler is
 * still working is left alone (the database and outbound timeouts bound it), and so is any
 * transfer that is making progress: the timer restarts with every byte in either direction,
 * so a long upload or a CSV export that keeps flowing is never cut.
 */
export function watchConnections(server: Server, idleMs: number): Connections {
  const open = new Set<Socket>();
  const inFlight = new Map<Socket, { complete: boolean }>();
  server.on('connection', (socket: Socket) => {
    open.add(socket);
    socket.once('close', () => {
      open.delete(socket);
      inFlight.delete(socket);
    });
  });
  server.on('request', (request, response) => {
    const socket = request.socket;
    inFlight.set(socket, request);
    response.once('finish', () => {
      if (inFlight.get(socket) === request) inFlight.delete(socket);
    });
  });
  server.setTimeout(idleMs);
  // With a listener, node leaves the decision to close to us (the keep-alive timeout lands here too).
  server.on('timeout', (socket: Socket) => {
    const request = inFlight.get(socket);
    const waitingOnClient = request === undefined || !request.complete || socket.writableLength > 0;
    if (waitingOnClient) socket.destroy();
  });
  return {
    closeIdleAfter(ms) {
      for (const socket of open) if (!inFlight.has(socket)) socket.setTimeout(ms);
    },
  };
}
