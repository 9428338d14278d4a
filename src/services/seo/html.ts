import { isQuestion, wordCount } from './text.js';

/**
 * A small HTML reader for the crawler: one pass over the markup at the tokenizer level
 * (comments, doctype, raw-text elements, attributes quoted or not, entities), collecting
 * what a page says about itself. It never builds a tree and never throws on bad markup.
 */

export interface PageQuestion {
  question: string;
  /** The text that follows the question (heading) or its accepted answer (FAQ markup), cut to 1,000 characters. */
  answer: string;
  source: 'heading' | 'faq_schema';
}

export interface ExtractedPage {
  title: string | null;
  metaDescription: string | null;
  headings: { level: number; text: string }[];
  links: string[];
  baseHref: string | null;
  canonical: string | null;
  noindex: boolean;
  nofollow: boolean;
  text: string;
  wordCount: number;
  questions: PageQuestion[];
}

const MAX_HEADINGS = 200;
const MAX_LINKS = 2000;
const MAX_QUESTIONS = 100;
const MAX_TEXT = 200_000;
const MAX_ANSWER = 1000;
const MAX_FIELD = 1000;

const RAW_TEXT = new Set(['script', 'style', 'textarea', 'title', 'xmp', 'iframe', 'noembed', 'noframes', 'template', 'noscript', 'svg', 'math']);
const BLOCK = new Set([
  'p',
  'div',
  'br',
  'li',
  'ul',
  'ol',
  'section',
  'article',
  'header',
  'footer',
  'main',
  'aside',
  'nav',
  'table',
  'tr',
  'td',
  'th',
  'dt',
  'dd',
  'dl',
  'blockquote',
  'pre',
  'hr',
  'form',
  'figure',
  'figcaption',
  'details',
  'summary',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'body',
  'html',
  'option',
]);

const NAMED_ENTITIES: Record<string, string> = {
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  apos: "'",
  nbsp: ' ',
  ndash: '–',
  mdash: '—',
  hellip: '…',
  lsquo: '‘',
  rsquo: '’',
  ldquo: '“',
  rdquo: '”',
  copy: '©',
  reg: '®',
  trade: '™',
  euro: '€',
  pound: '£',
  laquo: '«',
  raquo: '»',
  middot: '·',
  bull: '•',
  times: '×',
  eacute: 'é',
  egrave: 'è',
  agrave: 'à',
  aacute: 'á',
  ouml: 'ö',
  uuml: 'ü',
  auml: 'ä',
  szlig: 'ß',
  ccedil: 'ç',
  ntilde: 'ñ',
  iacute: 'í',
  oacute: 'ó',
  uacute: 'ú',
  shy: '',
};

/** Decodes character references: named (a common set), decimal and hexadecimal; anything else stays as written. */
export function decodeEntities(text: string): string {
  if (!text.includes('&')) return text;
  return text.replace(/&(#[xX][0-9a-fA-F]{1,6}|#[0-9]{1,7}|[a-zA-Z][a-zA-Z0-9]{1,31});?/g, (whole, body: string) => {
    if (body[0] === '#') {
      const code = body[1] === 'x' || body[1] === 'X' ? parseInt(body.slice(2), 16) : parseInt(body.slice(1), 10);
      if (!Number.isFinite(code) || code === 0 || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) return '\ufffd';
      return String.fromCodePoint(code);
    }
    const named = NAMED_ENTITIES[body] ?? NAMED_ENTITIES[body.toLowerCase()];
    return named ?? whole;
  });
}

/** Bytes to text: the charset of the Content-Type header, else of a `<meta charset>` near the start, else UTF-8. */
export function decodeHtml(bytes: Buffer, contentType: string | undefined): string {
  let charset = /charset\s*=\s*["']?([\w.:-]+)/i.exec(contentType ?? '')?.[1];
  if (!charset) {
    const head = bytes.subarray(0, 2048).toString('latin1');
    charset = /<meta[^>]+charset\s*=\s*["']?([\w.:-]+)/i.exec(head)?.[1];
  }
  try {
    return new TextDecoder(charset ?? 'utf-8').decode(bytes);
  } catch {
    return new TextDecoder('utf-8').decode(bytes);
  }
}

function clean(text: string, max = MAX_FIELD): string {
  return text
    .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g, '')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, max);
}

interface Tag {
  name: string;
  attributes: Map<string, string>;
  end: number;
  selfClosing: boolean;
}

/** Reads a start tag at `start` (just after `<`); undefined when it is not one. */
function readStartTag(html: string, start: number): Tag | undefined {
  let index = start;
  while (index < html.length && /[a-zA-Z0-9:-]/.test(html[index]!)) index += 1;
  if (index === start) return undefined;
  const name = html.slice(start, index).toLowerCase();
  const attributes = new Map<string, string>();
  let selfClosing = false;
  for (;;) {
    while (index < html.length && /[\s/]/.test(html[index]!)) {
      if (html[index] === '/' && html[index + 1] === '>') selfClosing = true;
      index += 1;
    }
    if (index >= html.length) return { name, attributes, end: html.length, selfClosing };
    if (html[index] === '>') return { name, attributes, end: index + 1, selfClosing };
    const nameStart = index;
    while (index < html.length && !/[\s/>=]/.test(html[index]!)) index += 1;
    const attribute = html.slice(nameStart, index).toLowerCase();
    while (index < html.length && /\s/.test(html[index]!)) index += 1;
    let value = '';
    if (html[index] === '=') {
      index += 1;
      while (index < html.length && /\s/.test(html[index]!)) index += 1;
      const quote = html[index];
      if (quote === '"' || quote === "'") {
        const close = html.indexOf(quote, index + 1);
        const stop = close === -1 ? html.length : close;
        value = html.slice(index + 1, stop);
        index = stop + 1;
      } else {
        const valueStart = index;
        while (index < html.length && !/[\s>]/.test(html[index]!)) index += 1;
        value = html.slice(valueStart, index);
      }
    }
    if (attribute && !attributes.has(attribute)) attributes.set(attribute, decodeEntities(value));
  }
}

/** Everything the crawler keeps of one HTML document. */
export function extractPage(html: string): ExtractedPage {
  const page: ExtractedPage = {
    title: null,
    metaDescription: null,
    headings: [],
    links: [],
    baseHref: null,
    canonical: null,
    noindex: false,
    nofollow: false,
    text: '',
    wordCount: 0,
    questions: [],
  };
  const text: string[] = [];
  let textLength = 0;
  const jsonLd: string[] = [];
  let heading: { level: number; parts: string[] } | undefined;
  let pending: { question: string; parts: string[]; length: number } | undefined;

  const finishPending = () => {
    if (!pending) return;
    if (page.questions.length < MAX_QUESTIONS) page.questions.push({ question: pending.question, answer: clean(pending.parts.join(' '), MAX_ANSWER), source: 'heading' });
    pending = undefined;
  };
  const addText = (raw: string) => {
    const value = decodeEntities(raw);
    if (heading) heading.parts.push(value);
    else if (pending && pending.length < MAX_ANSWER) {
      pending.parts.push(value);
      pending.length += value.length;
    }
    if (textLength < MAX_TEXT) {
      text.push(value);
      textLength += value.length;
    }
  };
  const boundary = () => {
    text.push(' ');
    if (heading) heading.parts.push(' ');
    else if (pending) pending.parts.push(' ');
  };

  let index = 0;
  const length = html.length;
  while (index < length) {
    const open = html.indexOf('<', index);
    if (open === -1) {
      addText(html.slice(index));
      break;
    }
    if (open > index) addText(html.slice(index, open));
    index = open;
    if (html.startsWith('<!--', index)) {
      const close = html.indexOf('-->', index + 4);
      index = close === -1 ? length : close + 3;
      continue;
    }
    const next = html[index + 1];
    if (next === '!' || next === '?') {
      const close = html.indexOf('>', index);
      index = close === -1 ? length : close + 1;
      continue;
    }
    if (next === '/') {
      const match = /^<\/([a-zA-Z][a-zA-Z0-9:-]*)[^>]*>?/.exec(html.slice(index, index + 200));
      if (!match) {
        addText('<');
        index += 1;
        continue;
      }
      const name = match[1]!.toLowerCase();
      index += match[0].length;
      if (/^h[1-6]$/.test(name) && heading) {
        const headingText = clean(heading.parts.join(' '), 300);
        heading = undefined;
        if (headingText && page.headings.length < MAX_HEADINGS) page.headings.push({ level: Number(name[1]), text: headingText });
        if (headingText && isQuestion(headingText)) pending = { question: headingText, parts: [], length: 0 };
      }
      if (BLOCK.has(name)) boundary();
      continue;
    }
    const tag = readStartTag(html, index + 1);
    if (!tag) {
      addText('<');
      index += 1;
      continue;
    }
    index = tag.end;
    const { name, attributes } = tag;
    if (RAW_TEXT.has(name) && !tag.selfClosing) {
      const closer = new RegExp(`</${name}`, 'ig');
      closer.lastIndex = index;
      const closeAt = closer.exec(html)?.index ?? -1;
      const content = html.slice(index, closeAt === -1 ? length : closeAt);
      const closeEnd = closeAt === -1 ? length : html.indexOf('>', closeAt);
      index = closeEnd === -1 ? length : closeEnd + 1;
      if (name === 'title' && page.title === null) page.title = clean(decodeEntities(content), 500) || null;
      else if (name === 'script' && /ld\+json/i.test(attributes.get('type') ?? '')) jsonLd.push(content);
      else if (name === 'textarea') addText(content);
      continue;
    }
    if (/^h[1-6]$/.test(name)) {
      finishPending();
      heading = { level: Number(name[1]), parts: [] };
      boundary();
      continue;
    }
    if (BLOCK.has(name)) boundary();
    if (name === 'a' || name === 'area') {
      const href = attributes.get('href');
      const rel = (attributes.get('rel') ?? '').toLowerCase();
      if (href && !/\bnofollow\b/.test(rel) && page.links.length < MAX_LINKS) page.links.push(href.trim());
    } else if (name === 'base') {
      if (page.baseHref === null && attributes.get('href')) page.baseHref = attributes.get('href')!.trim();
    } else if (name === 'link') {
      if (/\bcanonical\b/i.test(attributes.get('rel') ?? '') && attributes.get('href')) page.canonical = attributes.get('href')!.trim();
    } else if (name === 'meta') {
      const metaName = (attributes.get('name') ?? attributes.get('property') ?? '').toLowerCase();
      const content = attributes.get('content') ?? '';
      if (metaName === 'description' && page.metaDescription === null) page.metaDescription = clean(content) || null;
      if (metaName === 'robots' || metaName === 'platformseobot') {
        if (/\b(noindex|none)\b/i.test(content)) page.noindex = true;
        if (/\b(nofollow|none)\b/i.test(content)) page.nofollow = true;
      }
    }
  }
  if (heading) {
    const headingText = clean(heading.parts.join(' '), 300);
    if (headingText && page.headings.length < MAX_HEADINGS) page.headings.push({ level: heading.level, text: headingText });
  }
  finishPending();
  page.text = clean(text.join(''), MAX_TEXT);
  page.wordCount = wordCount(page.text);
  for (const block of jsonLd) {
    for (const entry of faqEntries(block)) {
      if (page.questions.length >= MAX_QUESTIONS) break;
      page.questions.push(entry);
    }
  }
  return page;
}

/** Question and accepted answer pairs of FAQPage JSON-LD (top level, arrays, `@graph`). */
export function faqEntries(json: string): PageQuestion[] {
  let data: unknown;
  try {
    data = JSON.parse(json.trim().replace(/^<!--|-->$/g, ''));
  } catch {
    return [];
  }
  const found: PageQuestion[] = [];
  const visit = (node: unknown, depth: number) => {
    if (depth > 8 || node === null || typeof node !== 'object') return;
    if (Array.isArray(node)) {
      for (const item of node) visit(item, depth + 1);
      return;
    }
    const record = node as Record<string, unknown>;
    if (hasType(record, 'FAQPage')) {
      const entities = Array.isArray(record.mainEntity) ? record.mainEntity : [record.mainEntity];
      for (const entity of entities) {
        if (!entity || typeof entity !== 'object' || !hasType(entity as Record<string, unknown>, 'Question')) continue;
        const name = (entity as Record<string, unknown>).name;
        const question = clean(typeof name === 'string' ? name : '', 300);
        const accepted: unknown = (entity as Record<string, unknown>).acceptedAnswer;
        const answerNode: unknown = Array.isArray(accepted) ? accepted[0] : accepted;
        const text = answerNode && typeof answerNode === 'object' ? (answerNode as Record<string, unknown>).text : undefined;
        const answerHtml = typeof text === 'string' ? text : '';
        if (question) found.push({ question, answer: clean(decodeEntities(answerHtml.replace(/<[^>]*>/g, ' ')), MAX_ANSWER), source: 'faq_schema' });
      }
    }
    if (record['@graph']) visit(record['@graph'], depth + 1);
  };
  visit(data, 0);
  return found;
}

function hasType(record: Record<string, unknown>, type: string): boolean {
  const value = record['@type'];
  return Array.isArray(value) ? value.includes(type) : value === type;
}
