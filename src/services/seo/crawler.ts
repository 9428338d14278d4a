import { OutboundRequestError, type OutboundHttp, type OutboundResponse } from '../../platform/outbound/http.js';
import { decodeHtml, extractPage, type PageQuestion } from './html.js';
import { ALLOW_ALL, DISALLOW_ALL, MAX_ROBOTS_BYTES, parseRobots, type Robots } from './robots.js';

/**
 * The crawler: breadth-first from the start URL over same-host links, every request through
 * the platform's outbound client (private, loopback and link-local targets refused after DNS
 * and on every hop unless ALLOW_PRIVATE_TARGETS), robots.txt obeyed, redirects followed by
 * hand (each hop checked: same host, robots, not seen before, at most five), and a budget of
 * pages, depth and time.
 */

export const CRAWLER_PRODUCT = 'PlatformSEOBot';
export const CRAWLER_USER_AGENT = `Mozilla/5.0 (compatible; ${CRAWLER_PRODUCT}/1.0)`;
/** Largest HTML document read; a longer one counts as a failed page. */
export const MAX_PAGE_BYTES = 2 * 1024 * 1024;
const MAX_HOPS = 5;
const REQUEST_TIMEOUT_MS = 10_000;
/** Body text kept per page for matching. */
const MAX_STORED_TEXT = 20_000;

export interface CrawlBudget {
  maxPages: number;
  maxDepth: number;
  maxSeconds: number;
}

export interface CrawledPage {
  url: string;
  depth: number;
  statusCode: number;
  title: string | null;
  metaDescription: string | null;
  headings: { level: number; text: string }[];
  wordCount: number;
  questions: PageQuestion[];
  text: string;
}

export interface CrawlProgress {
  pagesCrawled: number;
  pagesFailed: number;
  urlsBlocked: number;
  urlsQueued: number;
}

export type StopReason = 'completed' | 'max_pages' | 'time_budget';

export interface CrawlOutcome {
  pages: CrawledPage[];
  progress: CrawlProgress;
  stopReason: StopReason;
}

export interface CrawlOptions {
  startUrl: string;
  budget: CrawlBudget;
  http: OutboundHttp;
  /** Milliseconds since the crawl started (tests pass a fake). */
  elapsedMs: () => number;
  onProgress?: (progress: CrawlProgress) => Promise<void>;
}

/** Why a whole crawl was given up: the target is refused, or its first page cannot be read. */
export class CrawlError extends Error {
  override readonly name = 'CrawlError';
}

function withoutFragment(url: URL): string {
  const copy = new URL(url);
  copy.hash = '';
  return copy.href;
}

function pathOf(url: URL): string {
  return `${url.pathname}${url.search}`;
}

export async function crawl({ startUrl, budget, http, elapsedMs, onProgress }: CrawlOptions): Promise<CrawlOutcome> {
  const start = new URL(startUrl);
  const host = start.host;
  const robotsByOrigin = new Map<string, Robots>();
  const progress: CrawlProgress = { pagesCrawled: 0, pagesFailed: 0, urlsBlocked: 0, urlsQueued: 1 };
  const pages: CrawledPage[] = [];
  const seen = new Set<string>([withoutFragment(start)]);
  const queue: { url: URL; depth: number }[] = [{ url: start, depth: 0 }];
  const budgetMs = budget.maxSeconds * 1000;
  const maxQueue = budget.maxPages * 20;
  let stopReason: StopReason = 'completed';

  const get = (url: URL, init: { maxRedirects: number; maxResponseBytes: number }): Promise<OutboundResponse> =>
    http.request(url, {
      method: 'GET',
      headers: { 'user-agent': CRAWLER_USER_AGENT, accept: 'text/html,application/xhtml+xml;q=0.9,*/*;q=0.1' },
      ...init,
      signal: AbortSignal.timeout(Math.max(1, Math.min(REQUEST_TIMEOUT_MS, budgetMs - elapsedMs()))),
    });

  /** robots.txt of an origin, or `unreachable` when no HTTP answer came at all. */
  async function fetchRobots(origin: string): Promise<Robots | 'unreachable'> {
    try {
      const response = await get(new URL('/robots.txt', origin), { maxRedirects: 5, maxResponseBytes: MAX_ROBOTS_BYTES * 2 });
      if (response.status >= 200 && response.status < 300) return parseRobots(response.text(), CRAWLER_PRODUCT);
      if (response.status >= 400 && response.status < 500) return ALLOW_ALL; // no robots.txt: everything allowed (RFC 9309 2.3.1.3)
      return DISALLOW_ALL; // server error: assume complete disallow (RFC 9309 2.3.1.4)
    } catch (error) {
      if (error instanceof OutboundRequestError && error.reason === 'private_target') throw new CrawlError(error.message);
      if (error instanceof OutboundRequestError && error.reason === 'response_too_large') return DISALLOW_ALL;
      return 'unreachable';
    }
  }

  async function robotsFor(url: URL): Promise<Robots> {
    const cached = robotsByOrigin.get(url.origin);
    if (cached) return cached;
    const fetched = await fetchRobots(url.origin);
    const robots = fetched === 'unreachable' ? DISALLOW_ALL : fetched; // unreachable: complete disallow
    robotsByOrigin.set(url.origin, robots);
    return robots;
  }

  // A site given without a scheme starts on https; when https cannot even be connected to, its http origin is read instead.
  if (start.protocol === 'https:') {
    const secure = await fetchRobots(start.origin);
    if (secure === 'unreachable') {
      const plain = new URL(start);
      plain.protocol = 'http:';
      const fallback = await fetchRobots(plain.origin);
      if (fallback !== 'unreachable') {
        robotsByOrigin.set(plain.origin, fallback);
        queue[0] = { url: plain, depth: 0 };
        seen.add(withoutFragment(plain));
      } else robotsByOrigin.set(start.origin, DISALLOW_ALL);
    } else robotsByOrigin.set(start.origin, secure);
  }

  while (queue.length > 0) {
    if (progress.pagesCrawled + progress.pagesFailed >= budget.maxPages) {
      stopReason = 'max_pages';
      break;
    }
    if (elapsedMs() >= budgetMs) {
      stopReason = 'time_budget';
      break;
    }
    const { url: first, depth } = queue.shift()!;
    if (!(await robotsFor(first)).isAllowed(pathOf(first))) {
      progress.urlsBlocked += 1;
      continue;
    }
    let url = first;
    let response: OutboundResponse | undefined;
    try {
      for (let hop = 0; ; hop += 1) {
        const answer = await get(url, { maxRedirects: 0, maxResponseBytes: MAX_PAGE_BYTES });
        const location = answer.headers.location;
        if (answer.status >= 300 && answer.status < 400 && typeof location === 'string') {
          if (hop >= MAX_HOPS) break; // too many redirects: a failed page
          let next: URL;
          try {
            next = new URL(location, url);
          } catch {
            break;
          }
          if ((next.protocol !== 'http:' && next.protocol !== 'https:') || next.host !== host) break; // off the site: not followed
          const key = withoutFragment(next);
          if (seen.has(key)) break; // a loop, or a page already read
          seen.add(key);
          if (!(await robotsFor(next)).isAllowed(pathOf(next))) {
            progress.urlsBlocked += 1;
            break;
          }
          url = next;
          continue;
        }
        response = answer;
        break;
      }
    } catch (error) {
      if (error instanceof OutboundRequestError && error.reason === 'private_target') throw new CrawlError(error.message);
      if (error instanceof CrawlError) throw error;
      response = undefined;
    }
    if (!response) {
      progress.pagesFailed += 1;
      await onProgress?.(progress);
      continue;
    }
    const contentType = String(response.headers['content-type'] ?? '');
    if (response.status >= 200 && response.status < 300 && !/html/i.test(contentType)) continue; // not a page (an image, a PDF...)
    if (response.status < 200 || response.status >= 300) {
      progress.pagesFailed += 1;
      pages.push({ url: withoutFragment(url), depth, statusCode: response.status, title: null, metaDescription: null, headings: [], wordCount: 0, questions: [], text: '' });
      await onProgress?.(progress);
      continue;
    }
    const extracted = extractPage(decodeHtml(response.body, contentType));
    const robotsHeader = String(response.headers['x-robots-tag'] ?? '');
    const noindex = extracted.noindex || /\b(noindex|none)\b/i.test(robotsHeader);
    const nofollow = extracted.nofollow || /\b(nofollow|none)\b/i.test(robotsHeader);
    progress.pagesCrawled += 1;
    if (!noindex) {
      pages.push({
        url: withoutFragment(url),
        depth,
        statusCode: response.status,
        title: extracted.title,
        metaDescription: extracted.metaDescription,
        headings: extracted.headings,
        wordCount: extracted.wordCount,
        questions: extracted.questions,
        text: extracted.text.slice(0, MAX_STORED_TEXT),
      });
    }
    if (depth < budget.maxDepth && !nofollow) {
      let base = url;
      try {
        if (extracted.baseHref) base = new URL(extracted.baseHref, url);
      } catch {
        base = url;
      }
      for (const href of extracted.links) {
        if (queue.length >= maxQueue) break;
        let link: URL;
        try {
          link = new URL(href, base);
        } catch {
          continue;
        }
        if ((link.protocol !== 'http:' && link.protocol !== 'https:') || link.host !== host || link.username || link.password) continue;
        const key = withoutFragment(link);
        if (seen.has(key)) continue;
        seen.add(key);
        queue.push({ url: new URL(key), depth: depth + 1 });
        progress.urlsQueued += 1;
      }
    }
    await onProgress?.(progress);
  }
  return { pages, progress, stopReason };
}
