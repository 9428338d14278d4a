import { crc32, createInflate, inflateRawSync } from 'node:zlib';
import { BlobStoreError, type BlobStore } from './blob-store.js';
import type { FileKind, RejectCode } from './tables.js';

/**
 * What an uploaded file is, read from its bytes (never its name), and whether it may be used:
 * PNG, JPEG and GIF images, MP4 video, PDF, Word (.docx) and PowerPoint (.pptx) documents,
 * each checked for structure (a truncated or malformed file is refused) and, for documents,
 * for active or outside content. Every read is bounded: images are read whole (9 MiB at most),
 * MP4 boxes by their headers, PDFs in 1 MiB windows, zip containers by their central directory
 * with capped entry counts and capped, size-limited inflation of the few parts that are read.
 */

export const MIB = 1024 * 1024;
export const SIZE_LIMITS: Record<FileKind, number> = { png: 9 * MIB, jpeg: 9 * MIB, gif: 9 * MIB, mp4: 450 * MIB, pdf: 90 * MIB, docx: 90 * MIB, pptx: 90 * MIB };
export const MAX_UPLOAD_BYTES = 450 * MIB;
export const MIME: Record<FileKind, string> = {
  png: 'image/png',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  mp4: 'video/mp4',
  pdf: 'application/pdf',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  pptx: 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
};

export interface Inspection {
  kind: string | null;
  mime: string | null;
  reject: { code: RejectCode; detail: string } | null;
}

/** The bytes a file is read through: its head (already in memory) and ranged reads of the rest. */
export interface FileBytes {
  size: number;
  head: Buffer;
  read(start: number, length: number): Promise<Buffer>;
  stream(start: number, end?: number): NodeJS.ReadableStream;
}

export function blobBytes(store: BlobStore, key: string, size: number, head: Buffer): FileBytes {
  return {
    size,
    head,
    read: (start, length) => store.read(key, start, length),
    stream: (start, end) => store.stream(key, { start, ...(end !== undefined ? { end } : {}) }),
  };
}

/** How many bytes of the head the detection needs. */
export const HEAD_BYTES = 64 * 1024;

class Refusal extends Error {
  constructor(
    readonly code: RejectCode,
    readonly detail: string,
    /** What the file turned out to be, when that is not the kind first detected. */
    readonly kind?: string,
  ) {
    super(detail);
  }
}

const refuse = (code: RejectCode, detail: string, kind?: string): never => {
  throw new Refusal(code, detail, kind);
};
const malformed = (detail: string): never => refuse('malformed_file', detail);

export async function inspectFile(bytes: FileBytes): Promise<Inspection> {
  const found = detect(bytes.head);
  if (found.kind === null || !(found.kind in SIZE_LIMITS)) {
    return { kind: found.kind, mime: found.mime, reject: { code: 'type_not_allowed', detail: found.detail } };
  }
  const kind = found.kind as FileKind;
  const mime = MIME[kind];
  if (bytes.size > SIZE_LIMITS[kind]) {
    return { kind, mime, reject: { code: 'too_large', detail: `A ${kind.toUpperCase()} file may be at most ${SIZE_LIMITS[kind] / MIB} MB; this one has ${bytes.size} bytes.` } };
  }
  try {
    const checked = await CHECKS[kind](bytes);
    const finalKind = checked ?? kind;
    return { kind: finalKind, mime: MIME[finalKind], reject: null };
  } catch (error) {
    // The store failing to give the bytes back says nothing about the file: the upload is retried.
    if (error instanceof BlobStoreError) throw error;
    if (error instanceof Refusal)
      return { kind: error.kind ?? kind, mime: error.kind ? ((MIME as Record<string, string>)[error.kind] ?? null) : mime, reject: { code: error.code, detail: error.detail } };
    // A parser failure on hostile bytes is a malformed file, never a crash.
    return { kind, mime, reject: { code: 'malformed_file', detail: `The ${kind.toUpperCase()} file could not be read: ${(error as Error).message}` } };
  }
}

// ---------------------------------------------------------------------------------------------
// Detection by signature

interface Detected {
  kind: string | null;
  mime: string | null;
  detail: string;
}

const MP4_BRANDS = new Set(['isom', 'iso2', 'iso3', 'iso4', 'iso5', 'iso6', 'mp41', 'mp42', 'avc1', 'mp71', 'dash', 'MSNV', 'M4V ', 'M4VH', 'M4VP', 'f4v ']);

function startsWith(head: Buffer, bytes: number[], at = 0): boolean {
  return head.length >= at + bytes.length && bytes.every((byte, index) => head[at + index] === byte);
}

export function detect(head: Buffer): Detected {
  const ok = (kind: FileKind): Detected => ({ kind, mime: MIME[kind], detail: '' });
  const no = (kind: string | null, detail: string, mime: string | null = null): Detected => ({ kind, mime, detail });
  if (startsWith(head, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return ok('png');
  if (startsWith(head, [0xff, 0xd8, 0xff])) return ok('jpeg');
  const ascii6 = head.subarray(0, 6).toString('latin1');
  if (ascii6 === 'GIF87a' || ascii6 === 'GIF89a') return ok('gif');
  if (head.length >= 12 && head.subarray(4, 8).toString('latin1') === 'ftyp') {
    const size = head.readUInt32BE(0);
    const brands = [head.subarray(8, 12).toString('latin1')];
    for (let at = 16; at + 4 <= Math.min(size, head.length, 256); at += 4) brands.push(head.subarray(at, at + 4).toString('latin1'));
    if (brands.some((brand) => MP4_BRANDS.has(brand))) return ok('mp4');
    return no('iso_media', `An ISO media file of brand "${brands[0]!.trim()}" (QuickTime, HEIF, audio...) is not an accepted type; send MP4 video.`);
  }
  if (head.subarray(0, 1024).includes('%PDF-')) return ok('pdf');
  if (startsWith(head, [0x50, 0x4b, 0x03, 0x04])) return { kind: 'docx', mime: MIME.docx, detail: '' }; // refined by the zip check
  if (startsWith(head, [0x50, 0x4b, 0x05, 0x06])) return no('zip', 'An empty zip archive is not an accepted type.');
  if (startsWith(head, [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]))
    return no('ole2', 'Legacy Office files (.doc, .xls, .ppt) and other OLE2 compound files are refused; save as .docx or .pptx.', 'application/x-ole-storage');
  if (startsWith(head, [0x4d, 0x5a])) return no('executable', 'Programs (Windows executable) are refused.', 'application/x-msdownload');
  if (startsWith(head, [0x7f, 0x45, 0x4c, 0x46])) return no('executable', 'Programs (ELF executable) are refused.', 'application/x-executable');
  if (
    [
      [0xfe, 0xed, 0xfa, 0xce],
      [0xfe, 0xed, 0xfa, 0xcf],
      [0xce, 0xfa, 0xed, 0xfe],
      [0xcf, 0xfa, 0xed, 0xfe],
      [0xca, 0xfe, 0xba, 0xbe],
    ].some((sig) => startsWith(head, sig))
  )
    return no('executable', 'Programs (Mach-O executable or Java class) are refused.', 'application/x-mach-binary');
  if (startsWith(head, [0x00, 0x61, 0x73, 0x6d])) return no('executable', 'Programs (WebAssembly) are refused.', 'application/wasm');
  const text = head
    .subarray(0, 4096)
    .toString('latin1')
    .replace(/^\uFEFF|^\xEF\xBB\xBF/, '');
  if (text.startsWith('#!')) return no('script', 'Scripts are refused.', 'text/x-shellscript');
  const lower = text.trimStart().toLowerCase();
  if (lower.startsWith('<') && /<svg[\s>]/.test(head.toString('latin1').toLowerCase()))
    return no('svg', 'SVG images are refused (they can carry scripts); send PNG, JPEG or GIF.', 'image/svg+xml');
  if (lower.startsWith('<')) return no('markup', 'HTML and XML files are refused.', 'text/html');
  return no(null, 'The file is none of the accepted types (PNG, JPEG, GIF, MP4, PDF, DOCX, PPTX), read from its bytes.');
}

const CHECKS: Record<FileKind, (bytes: FileBytes) => Promise<FileKind | void>> = {
  png: async (bytes) => checkPng(await whole(bytes)),
  jpeg: async (bytes) => checkJpeg(await whole(bytes)),
  gif: async (bytes) => checkGif(await whole(bytes)),
  mp4: checkMp4,
  pdf: checkPdf,
  docx: checkOfficeZip,
  pptx: checkOfficeZip,
};

async function whole(bytes: FileBytes): Promise<Buffer> {
  return bytes.size <= bytes.head.length ? bytes.head.subarray(0, bytes.size) : bytes.read(0, bytes.size);
}

// ---------------------------------------------------------------------------------------------
// Images: the whole structure, to its end marker, with nothing after it

function checkPng(data: Buffer): void {
  let at = 8;
  let first = true;
  for (;;) {
    if (at + 12 > data.length) malformed('The PNG ends before its IEND chunk (truncated).');
    const length = data.readUInt32BE(at);
    const type = data.subarray(at + 4, at + 8).toString('latin1');
    if (!/^[A-Za-z]{4}$/.test(type)) malformed(`The PNG has an invalid chunk type at byte ${at}.`);
    if (at + 12 + length > data.length) malformed('The PNG ends inside a chunk (truncated).');
    if (first && (type !== 'IHDR' || length !== 13)) malformed('The PNG does not start with its IHDR chunk.');
    const crc = data.readUInt32BE(at + 8 + length);
    if (crc32(data.subarray(at + 4, at + 8 + length)) !== crc) malformed(`The PNG chunk ${type} fails its CRC check.`);
    if (first && (data.readUInt32BE(at + 8) === 0 || data.readUInt32BE(at + 12) === 0)) malformed('The PNG has a zero width or height.');
    first = false;
    at += 12 + length;
    if (type === 'IEND') break;
  }
  if (at !== data.length) malformed('The PNG has data after its IEND chunk.');
}

function checkJpeg(data: Buffer): void {
  let at = 2;
  let scanned = false;
  for (;;) {
    if (at + 2 > data.length) malformed('The JPEG ends before its end-of-image marker (truncated).');
    if (data[at] !== 0xff) malformed(`The JPEG has no marker where one is due (byte ${at}).`);
    while (data[at + 1] === 0xff && at + 2 < data.length) at += 1; // fill bytes
    const marker = data[at + 1]!;
    if (marker === 0xd9) {
      at += 2;
      break;
    }
    if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) {
      at += 2;
      continue;
    }
    if (at + 4 > data.length) malformed('The JPEG ends inside a segment header (truncated).');
    const length = data.readUInt16BE(at + 2);
    if (length < 2 || at + 2 + length > data.length) malformed('The JPEG ends inside a segment (truncated).');
    at += 2 + length;
    if (marker === 0xda) {
      scanned = true;
      // Entropy-coded data runs to the next marker other than a stuffed 0xFF00 or a restart marker.
      while (at + 1 < data.length && !(data[at] === 0xff && data[at + 1] !== 0x00 && !(data[at + 1]! >= 0xd0 && data[at + 1]! <= 0xd7))) at += 1;
      if (at + 1 >= data.length) malformed('The JPEG ends inside its image data (truncated).');
    }
  }
  if (!scanned) malformed('The JPEG has no image data.');
  for (let rest = at; rest < data.length; rest += 1) if (data[rest] !== 0x00) malformed('The JPEG has data after its end-of-image marker.');
}

function checkGif(data: Buffer): void {
  if (data.length < 13) malformed('The GIF is shorter than its header (truncated).');
  let at = 13;
  const packed = data[10]!;
  if (packed & 0x80) at += 3 * 2 ** ((packed & 0x07) + 1);
  const subBlocks = () => {
    for (;;) {
      if (at >= data.length) malformed('The GIF ends inside a block (truncated).');
      const size = data[at]!;
      at += 1 + size;
      if (size === 0) return;
    }
  };
  for (;;) {
    if (at >= data.length) malformed('The GIF ends before its trailer (truncated).');
    const introducer = data[at]!;
    if (introducer === 0x3b) {
      at += 1;
      break;
    }
    if (introducer === 0x21) {
      at += 2;
      subBlocks();
    } else if (introducer === 0x2c) {
      if (at + 10 > data.length) malformed('The GIF ends inside an image descriptor (truncated).');
      const flags = data[at + 9]!;
      at += 10;
      if (flags & 0x80) at += 3 * 2 ** ((flags & 0x07) + 1);
      at += 1; // LZW minimum code size
      subBlocks();
    } else {
      malformed(`The GIF has an unknown block at byte ${at}.`);
    }
  }
  if (at !== data.length) malformed('The GIF has data after its trailer.');
}

// ---------------------------------------------------------------------------------------------
// MP4: top-level boxes cover the file exactly; ftyp first; a moov box

const MAX_BOXES = 100_000;

async function checkMp4(bytes: FileBytes): Promise<void> {
  let at = 0;
  let count = 0;
  let hasMoov = false;
  while (at < bytes.size) {
    if ((count += 1) > MAX_BOXES) malformed('The MP4 has too many top-level boxes.');
    if (at + 8 > bytes.size) malformed('The MP4 ends inside a box header (truncated).');
    const header = at + 16 <= bytes.head.length ? bytes.head.subarray(at, at + 16) : await bytes.read(at, 16);
    let size = header.readUInt32BE(0);
    const type = header.subarray(4, 8).toString('latin1');
    if (!/^[\x20-\x7e]{4}$/.test(type)) malformed(`The MP4 has an invalid box type at byte ${at}.`);
    if (count === 1 && type !== 'ftyp') malformed('The MP4 does not start with its ftyp box.');
    if (size === 1) {
      if (header.length < 16) malformed('The MP4 ends inside a box header (truncated).');
      size = Number(header.readBigUInt64BE(8));
      if (size < 16) malformed('The MP4 has a box with an invalid size.');
    } else if (size === 0) {
      size = bytes.size - at; // runs to the end of the file
    } else if (size < 8) {
      malformed('The MP4 has a box with an invalid size.');
    }
    if (at + size > bytes.size) malformed(`The MP4 ends inside its ${type} box (truncated).`);
    if (type === 'moov') hasMoov = true;
    at += size;
  }
  if (!hasMoov) malformed('The MP4 has no moov box (no movie header).');
}

// ---------------------------------------------------------------------------------------------
// PDF: names that run code, launch programs or carry files, in the body and in object streams

const PDF_WINDOW = MIB;
const PDF_OVERLAP = 512;
const MAX_OBJECT_STREAM_BYTES = 64 * MIB;
const MAX_INFLATED_TOTAL = 256 * MIB;
const MAX_OBJECT_STREAMS = 10_000;

const PDF_NAMES: Record<string, [RejectCode, string]> = {
  javascript: ['script_detected', 'The PDF contains JavaScript (/JavaScript).'],
  js: ['script_detected', 'The PDF contains JavaScript (/JS).'],
  launch: ['script_detected', 'The PDF launches a program (/Launch).'],
  embeddedfile: ['embedded_object', 'The PDF carries an embedded file (/EmbeddedFile).'],
  embeddedfiles: ['embedded_object', 'The PDF carries embedded files (/EmbeddedFiles).'],
  richmedia: ['embedded_object', 'The PDF carries rich media (/RichMedia).'],
};

/** PDF names with `#xx` escapes decoded, lower-cased, as they appear in a chunk of text. */
function scanPdfNames(text: string): void {
  for (const match of text.matchAll(/\/([^\s/<>[\]()%{}]+)/g)) {
    const name = match[1]!.replace(/#([0-9A-Fa-f]{2})/g, (_all, hex: string) => String.fromCharCode(parseInt(hex, 16))).toLowerCase();
    const found = PDF_NAMES[name];
    if (found) refuse(found[0], found[1]);
    if (name === 'encrypt') malformed('The PDF is encrypted, so its content cannot be checked.');
  }
}

async function checkPdf(bytes: FileBytes): Promise<void> {
  const tail = await bytes.read(Math.max(0, bytes.size - 2048), Math.min(bytes.size, 2048));
  if (!tail.includes('%%EOF')) malformed('The PDF has no %%EOF marker at its end (truncated).');
  const objectStreams: number[] = [];
  for (let start = 0; start < bytes.size; start += PDF_WINDOW) {
    const from = Math.max(0, start - PDF_OVERLAP);
    const chunk = await bytes.read(from, Math.min(bytes.size, start + PDF_WINDOW) - from);
    const text = chunk.toString('latin1');
    scanPdfNames(text);
    // Object streams (/Type /ObjStm) hold dictionaries compressed: note where each one's data starts.
    for (const match of text.matchAll(/stream\r?\n/g)) {
      const position = from + match.index + match[0].length;
      if (position < start || objectStreams.includes(position)) continue;
      const dictionary = text.slice(Math.max(0, match.index - 1024), match.index);
      const own = dictionary.slice(dictionary.lastIndexOf(' obj') + 1);
      if (/\/Type\s*\/ObjStm/.test(own) && /\/FlateDecode/.test(own)) objectStreams.push(position);
      if (objectStreams.length > MAX_OBJECT_STREAMS) malformed('The PDF has too many object streams to check.');
    }
  }
  let inflatedTotal = 0;
  for (const position of objectStreams) {
    inflatedTotal += await scanObjectStream(bytes, position, MAX_INFLATED_TOTAL - inflatedTotal);
  }
}

/** Inflates one object stream (bounded) and scans the dictionaries in it; answers how many bytes came out. */
function scanObjectStream(bytes: FileBytes, position: number, budget: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const source = bytes.stream(position);
    const inflate = createInflate();
    let produced = 0;
    let carry = '';
    let settled = false;
    const finish = (error?: Error) => {
      if (settled) return;
      settled = true;
      (source as unknown as { destroy(): void }).destroy();
      inflate.destroy();
      if (error) reject(error);
      else resolve(produced);
    };
    inflate.on('data', (chunk: Buffer) => {
      produced += chunk.length;
      if (produced > Math.min(budget, MAX_OBJECT_STREAM_BYTES)) return finish(new Refusal('malformed_file', 'The PDF has more compressed content than can be checked.'));
      const text = carry + chunk.toString('latin1');
      try {
        scanPdfNames(text);
      } catch (error) {
        return finish(error as Error);
      }
      carry = text.slice(-PDF_OVERLAP);
    });
    // The deflate data ends before `endstream`; what follows is not ours to read.
    inflate.on('end', () => finish());
    inflate.on('error', () => finish(new Refusal('malformed_file', 'The PDF has an object stream that does not decompress.')));
    source.on('error', (error: Error) => finish(error));
    source.pipe(inflate);
  });
}

// ---------------------------------------------------------------------------------------------
// DOCX / PPTX: the zip's central directory, then the parts that can hold macros, objects or links

const MAX_ZIP_ENTRIES = 10_000;
const MAX_CENTRAL_DIRECTORY = 16 * MIB;
const MAX_TOTAL_UNCOMPRESSED = 1024 * MIB;
const MAX_RATIO = 200;
const MAX_PART_BYTES = 4 * MIB;
const MAX_PARTS_READ = 2_000;

interface ZipEntry {
  name: string;
  flags: number;
  method: number;
  compressedSize: number;
  size: number;
  offset: number;
}

async function readCentralDirectory(bytes: FileBytes): Promise<{ entries: ZipEntry[]; centralOffset: number }> {
  const tailLength = Math.min(bytes.size, 22 + 0xffff);
  const tail = await bytes.read(bytes.size - tailLength, tailLength);
  let end = -1;
  for (let at = tail.length - 22; at >= 0; at -= 1) {
    if (tail.readUInt32LE(at) === 0x06054b50) {
      end = at;
      break;
    }
  }
  if (end < 0) malformed('The zip container has no end-of-central-directory record (truncated or not a zip).');
  const count = tail.readUInt16LE(end + 10);
  const centralSize = tail.readUInt32LE(end + 12);
  const centralOffset = tail.readUInt32LE(end + 16);
  if (tail.readUInt16LE(end + 4) !== 0 || tail.readUInt16LE(end + 6) !== 0) malformed('Multi-part zip archives are not accepted.');
  if (count === 0xffff || centralOffset === 0xffffffff || centralSize === 0xffffffff) malformed('ZIP64 archives are not accepted.');
  if (count > MAX_ZIP_ENTRIES) malformed(`The zip container has more than ${MAX_ZIP_ENTRIES} entries.`);
  if (centralSize > MAX_CENTRAL_DIRECTORY || centralOffset + centralSize > bytes.size - tailLength + end) malformed('The zip central directory is out of bounds.');
  const directory = await bytes.read(centralOffset, centralSize);
  const entries: ZipEntry[] = [];
  let at = 0;
  for (let index = 0; index < count; index += 1) {
    if (at + 46 > directory.length || directory.readUInt32LE(at) !== 0x02014b50) malformed('The zip central directory is corrupt.');
    const nameLength = directory.readUInt16LE(at + 28);
    const extraLength = directory.readUInt16LE(at + 30);
    const commentLength = directory.readUInt16LE(at + 32);
    if (at + 46 + nameLength > directory.length) malformed('The zip central directory is corrupt.');
    entries.push({
      flags: directory.readUInt16LE(at + 8),
      method: directory.readUInt16LE(at + 10),
      compressedSize: directory.readUInt32LE(at + 20),
      size: directory.readUInt32LE(at + 24),
      offset: directory.readUInt32LE(at + 42),
      name: directory.subarray(at + 46, at + 46 + nameLength).toString('utf8'),
    });
    at += 46 + nameLength + extraLength + commentLength;
  }
  return { entries, centralOffset };
}

function checkZipBounds(entries: ZipEntry[], centralOffset: number): void {
  const names = new Set<string>();
  let total = 0;
  for (const entry of entries) {
    if (names.has(entry.name)) malformed(`The zip container has two entries named ${entry.name}.`);
    names.add(entry.name);
    if (entry.flags & 0x01) malformed('The zip container has encrypted entries.');
    if (entry.method !== 0 && entry.method !== 8) malformed(`The zip entry ${entry.name} uses an unsupported compression method.`);
    total += entry.size;
    if (total > MAX_TOTAL_UNCOMPRESSED) malformed('The zip container expands to more than 1 GB (zip bomb).');
    if (entry.size > MIB && entry.size > entry.compressedSize * MAX_RATIO) malformed(`The zip entry ${entry.name} expands more than ${MAX_RATIO} times (zip bomb).`);
  }
  // Entries may not overlap each other or the central directory (the overlapping-file zip bomb).
  const byOffset = [...entries].sort((a, b) => a.offset - b.offset);
  for (const [index, entry] of byOffset.entries()) {
    const next = byOffset[index + 1]?.offset ?? centralOffset;
    if (entry.offset + 30 + Buffer.byteLength(entry.name) + entry.compressedSize > next) malformed('The zip container has overlapping entries (zip bomb or corrupt).');
  }
}

async function readPart(bytes: FileBytes, entry: ZipEntry): Promise<string> {
  if (entry.size > MAX_PART_BYTES || entry.compressedSize > MAX_PART_BYTES) malformed(`The part ${entry.name} is too large to check.`);
  const local = await bytes.read(entry.offset, 30);
  if (local.length < 30 || local.readUInt32LE(0) !== 0x04034b50) malformed(`The zip entry ${entry.name} has no local header.`);
  const start = entry.offset + 30 + local.readUInt16LE(26) + local.readUInt16LE(28);
  const raw = await bytes.read(start, entry.compressedSize);
  if (raw.length < entry.compressedSize) malformed(`The zip entry ${entry.name} is truncated.`);
  let data: Buffer;
  try {
    data = entry.method === 0 ? raw : inflateRawSync(raw, { maxOutputLength: MAX_PART_BYTES });
  } catch {
    return malformed(`The zip entry ${entry.name} does not decompress within its limits.`);
  }
  if (data.length !== entry.size) malformed(`The zip entry ${entry.name} is not the size its directory says.`);
  return data.toString('utf8');
}

function attributes(tag: string): Record<string, string> {
  const found: Record<string, string> = {};
  for (const match of tag.matchAll(/([A-Za-z_:][\w:.-]*)\s*=\s*("([^"]*)"|'([^']*)')/g)) found[match[1]!] = match[3] ?? match[4] ?? '';
  return found;
}

async function checkOfficeZip(bytes: FileBytes): Promise<FileKind> {
  const { entries, centralOffset } = await readCentralDirectory(bytes);
  checkZipBounds(entries, centralOffset);
  const byName = new Map(entries.map((entry) => [entry.name, entry]));
  const lowerNames = entries.map((entry) => entry.name.toLowerCase());

  if (lowerNames.includes('meta-inf/manifest.mf') || lowerNames.includes('classes.dex') || lowerNames.some((name) => name.endsWith('.class')))
    refuse('type_not_allowed', 'Programs (Java or Android archives) are refused.', 'executable');
  const contentTypes = byName.get('[Content_Types].xml');
  if (!contentTypes) refuse('type_not_allowed', 'A zip archive that is not an Office document is not an accepted type.', 'zip');
  const kind: FileKind | undefined = byName.has('word/document.xml') ? 'docx' : byName.has('ppt/presentation.xml') ? 'pptx' : undefined;
  if (!kind) {
    const xlsx = byName.has('xl/workbook.xml');
    refuse('type_not_allowed', `${xlsx ? 'Excel workbooks are' : 'This Office document type is'} not an accepted type; send DOCX or PPTX.`, xlsx ? 'xlsx' : 'ooxml');
  }

  const refuseAs = (code: RejectCode, detail: string) => refuse(code, detail, kind);
  if (lowerNames.some((name) => /(^|\/)vba(project\.bin|data\.xml)$/.test(name))) refuseAs('macro_detected', 'The document contains macros (a vbaProject part).');
  const types = await readPart(bytes, contentTypes!);
  if (/macroEnabled|vbaProject|vbaData/i.test(types)) refuseAs('macro_detected', 'The document is macro-enabled (its content types name macros).');
  if (lowerNames.some((name) => name.includes('/embeddings/') || /(^|\/)oleobject\d*\.bin$/.test(name) || name.includes('/activex/')) || /oleObject|activeX/i.test(types))
    refuseAs('embedded_object', 'The document contains embedded objects (OLE objects, ActiveX controls or embedded files).');
  if (lowerNames.some((name) => /(^|\/)externallinks?\//.test(name)) || /externalLink/i.test(types))
    refuseAs('external_link', 'The document contains links to outside workbooks (externalLink parts).');

  const relationships = entries.filter((entry) => entry.name.toLowerCase().endsWith('.rels'));
  if (relationships.length > MAX_PARTS_READ) malformed('The document has too many relationship parts to check.');
  for (const part of relationships) {
    const xml = await readPart(bytes, part);
    for (const match of xml.matchAll(/<(?:[\w.-]+:)?Relationship\b[^>]*>/g)) {
      const relationship = attributes(match[0]);
      const type = relationship.Type ?? '';
      if ((relationship.TargetMode ?? '').toLowerCase() === 'external' && !/\/hyperlink$/.test(type)) {
        const what = type.slice(type.lastIndexOf('/') + 1) || 'relationship';
        refuseAs('external_link', `The document loads content from outside (${what} with TargetMode="External" in ${part.name}).`);
      }
      if (/\/(oleObject|package|activeXControl|control)$/.test(type))
        refuseAs('embedded_object', `The document contains an embedded object (${type.slice(type.lastIndexOf('/') + 1)}).`);
      if (/\/(vbaProject|wordVbaData|keyMapCustomizations)$/.test(type)) refuseAs('macro_detected', 'The document contains macros.');
    }
  }
  return kind!;
}
