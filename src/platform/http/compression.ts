import { constants } from 'node:zlib';
import compress from '@fastify/compress';
import type { FastifyInstance } from 'fastify';

/** Below this a reply goes as it is: compressing it costs more time than the bytes saved. */
export const COMPRESSION_THRESHOLD_BYTES = 1024;

/**
 * Brotli or gzip, as the client's Accept-Encoding allows (brotli first), for every route
 * registered after this, on the types the plugin deems compressible (JSON, CSV, HTML, the /docs
 * scripts and stylesheets). A reply below the threshold is sent as it is; a stream (a CSV
 * export) is compressed as it flows. Brotli runs at quality 4: close to gzip's speed with smaller
 * output; its default, 11, costs tens of milliseconds per large reply.
 * Request bodies are not decompressed: the API reads plain JSON only.
 */
export async function installCompression(app: FastifyInstance): Promise<void> {
  await app.register(compress, {
    threshold: COMPRESSION_THRESHOLD_BYTES,
    encodings: ['br', 'gzip'],
    brotliOptions: { params: { [constants.BROTLI_PARAM_QUALITY]: 4 } },
    globalDecompression: false,
  });
}
