import { createHash, createHmac } from 'node:crypto';

/**
 * AWS Signature Version 4 for S3-compatible object stores (AWS S3, MinIO, Cloudflare R2,
 * Backblaze B2...): the Authorization header of one request, as
 * https://docs.aws.amazon.com/AmazonS3/latest/API/sig-v4-header-based-auth.html describes it.
 */
export interface SigningCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  region: string;
  /** `s3` for object stores. */
  service: string;
}

export interface RequestToSign {
  method: string;
  url: URL;
  /** Headers to sign besides host, x-amz-date and x-amz-content-sha256 (which are added). */
  headers?: Record<string, string>;
  /** Hex SHA-256 of the body, or `UNSIGNED-PAYLOAD` for a streamed body. */
  payloadHash: string;
  date: Date;
}

export const EMPTY_PAYLOAD_HASH = createHash('sha256').update('').digest('hex');
export const UNSIGNED_PAYLOAD = 'UNSIGNED-PAYLOAD';

/** The headers to send: the given ones plus x-amz-date, x-amz-content-sha256 and authorization. */
export function signRequest(credentials: SigningCredentials, request: RequestToSign): Record<string, string> {
  const amzDate = request.date
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');
  const day = amzDate.slice(0, 8);
  const headers: Record<string, string> = { ...request.headers, 'x-amz-date': amzDate, 'x-amz-content-sha256': request.payloadHash };
  const canonical = new Map<string, string>([['host', request.url.host]]);
  for (const [name, value] of Object.entries(headers)) canonical.set(name.toLowerCase(), value.trim().replace(/\s+/g, ' '));
  const names = [...canonical.keys()].sort();
  const signedHeaders = names.join(';');
  const canonicalRequest = [
    request.method.toUpperCase(),
    canonicalPath(request.url.pathname),
    canonicalQuery(request.url.searchParams),
    names.map((name) => `${name}:${canonical.get(name)}\n`).join(''),
    signedHeaders,
    request.payloadHash,
  ].join('\n');
  const scope = `${day}/${credentials.region}/${credentials.service}/aws4_request`;
  const stringToSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256Hex(canonicalRequest)].join('\n');
  const signingKey = [day, credentials.region, credentials.service, 'aws4_request'].reduce<Buffer | string>((key, part) => hmac(key, part), `AWS4${credentials.secretAccessKey}`);
  const signature = createHmac('sha256', signingKey).update(stringToSign).digest('hex');
  return {
    ...headers,
    authorization: `AWS4-HMAC-SHA256 Credential=${credentials.accessKeyId}/${scope}, SignedHeaders=${signedHeaders}, Signature=${signature}`,
  };
}

/** S3 signs the path as sent, each segment URI-encoded once (RFC 3986 unreserved characters kept). */
function canonicalPath(pathname: string): string {
  return pathname
    .split('/')
    .map((segment) => encodeRfc3986(decodeURIComponent(segment)))
    .join('/');
}

function canonicalQuery(params: URLSearchParams): string {
  return [...params.entries()]
    .map(([name, value]) => [encodeRfc3986(name), encodeRfc3986(value)] as const)
    .sort(([a, x], [b, y]) => (a === b ? (x < y ? -1 : x > y ? 1 : 0) : a < b ? -1 : 1))
    .map(([name, value]) => `${name}=${value}`)
    .join('&');
}

function encodeRfc3986(text: string): string {
  return encodeURIComponent(text).replace(/[!'()*]/g, (character) => `%${character.charCodeAt(0).toString(16).toUpperCase()}`);
}

function hmac(key: Buffer | string, data: string): Buffer {
  return createHmac('sha256', key).update(data).digest();
}

function sha256Hex(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}
