import { createHash } from 'node:crypto';

/**
 * Text rules shared by questions, queries, topics and page matching: one normal form for
 * duplicate detection, content tokens (lower case, stop words out, a light plural stem),
 * token-set similarity, TF-IDF cosine and the deterministic clustering of queries.
 */

/** The form two questions or queries are compared in: NFKC, lower case, quotes and punctuation at the ends dropped, spaces collapsed. */
export function normalizeText(text: string): string {
  return text
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[\u2018\u2019\u201c\u201d"'`]/g, '')
    .replace(/[\s\u00a0]+/g, ' ')
    .replace(/^[\s?!.,;:¿¡-]+|[\s?!.,;:-]+$/g, '')
    .replace(/\s+([?!.,;:])/g, '$1')
    .trim();
}

const STOP_WORDS = new Set(
  (
    'a an and are as at be been being but by can could did do does doing for from had has have having he her his how i if in into is it its ' +
    'me my no not of on or our she should so than that the their them then there these they this those to too us was we were what when where which ' +
    'who whom why will with would you your yours about also any each just more most other some such only own same very s t get got vs versus'
  ).split(' '),
);

/** Lower-case word tokens of `text`, digits included, no stop words, trailing plural `s` removed. */
export function contentTokens(text: string): string[] {
  const words =
    text
      .normalize('NFKC')
      .toLowerCase()
      .match(/[\p{L}\p{N}]+/gu) ?? [];
  const tokens: string[] = [];
  for (const word of words) {
    if (STOP_WORDS.has(word)) continue;
    tokens.push(stem(word));
  }
  return tokens;
}

/** Every word token, stop words included (for word counts). */
export function wordCount(text: string): number {
  return (text.match(/[\p{L}\p{N}][\p{L}\p{N}'’-]*/gu) ?? []).length;
}

function stem(word: string): string {
  if (word.length > 4 && word.endsWith('ies')) return `${word.slice(0, -3)}y`;
  if (word.length > 3 && word.endsWith('s') && !word.endsWith('ss') && !word.endsWith('us') && !word.endsWith('is')) return word.slice(0, -1);
  return word;
}

/** |A ∩ B| / |A ∪ B| of two token sets (0 when both are empty). */
export function jaccard(a: Iterable<string>, b: Iterable<string>): number {
  const left = new Set(a);
  const right = new Set(b);
  if (left.size === 0 && right.size === 0) return 0;
  let shared = 0;
  for (const token of left) if (right.has(token)) shared += 1;
  return shared / (left.size + right.size - shared);
}

/** Share of `needles` found in `haystack` (1 when there are no needles). */
export function coverageOf(needles: Iterable<string>, haystack: Set<string>): number {
  const unique = new Set(needles);
  if (unique.size === 0) return 1;
  let found = 0;
  for (const token of unique) if (haystack.has(token)) found += 1;
  return found / unique.size;
}

const QUESTION_WORDS = new Set([
  'what',
  'how',
  'why',
  'when',
  'where',
  'who',
  'whom',
  'whose',
  'which',
  'can',
  'could',
  'is',
  'are',
  'was',
  'were',
  'does',
  'do',
  'did',
  'should',
  'will',
  'would',
  'may',
  'might',
  'must',
  'shall',
  'has',
  'have',
  'am',
]);

/** A heading phrased as a question: ends with `?`, or starts with a question word and has at least three words. */
export function isQuestion(text: string): boolean {
  const trimmed = text.trim();
  if (trimmed.length < 4 || trimmed.length > 300) return false;
  if (trimmed.endsWith('?')) return true;
  const words = trimmed.toLowerCase().split(/\s+/);
  return words.length >= 3 && QUESTION_WORDS.has(words[0]!.replace(/[^a-z]/g, ''));
}

/** Kind of a question, from its opening words. */
export function questionKind(question: string): string {
  const text = normalizeText(question);
  const first = text.split(' ')[0] ?? '';
  if (/^how (much|many)\b/.test(text) || /\b(cost|price|pricing|fee)s?\b/.test(text)) return 'quantity';
  if (first === 'what' || first === 'whats') return 'definition';
  if (first === 'how') return 'how_to';
  if (first === 'why') return 'reason';
  if (first === 'which' || /\b(best|vs|versus|compare|comparison|better)\b/.test(text)) return 'comparison';
  if (first === 'when') return 'time';
  if (first === 'where') return 'place';
  if (first === 'who' || first === 'whom' || first === 'whose') return 'entity';
  if (QUESTION_WORDS.has(first)) return 'yes_no';
  return 'other';
}

/** Search intent of a question, from its words. */
export function questionIntent(question: string): string {
  const text = normalizeText(question);
  if (/\b(buy|order|purchase|discount|coupon|deal|cheap|subscribe|sign up|download|hire|book)\b/.test(text)) return 'transactional';
  if (/\b(best|top|vs|versus|compare|comparison|review|reviews|alternative|alternatives|price|pricing|cost)\b/.test(text)) return 'commercial';
  if (/\b(login|log in|sign in|website|homepage|contact|address|phone number)\b/.test(text)) return 'navigational';
  return 'informational';
}

/** A UUID-shaped id derived from `parts` (SHA-256, version nibble 5-like): the same input gives the same id. */
export function stableId(...parts: string[]): string {
  const hex = createHash('sha256').update(parts.join('\u0000')).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-${((parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16)}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

export interface ClusterInput {
  id: string;
  text: string;
  impressions: number;
  clicks: number;
}

export interface Cluster {
  /** The query the cluster formed around (the one with the most impressions): its label. */
  leader: ClusterInput;
  members: ClusterInput[];
  /** The highest-weighted terms of the cluster, at most five. */
  terms: string[];
}

/** Cosine similarity at or above which a query joins a cluster. */
export const CLUSTER_THRESHOLD = 0.5;

/**
 * Deterministic leader clustering on TF-IDF vectors: queries in order of impressions
 * (then text), each joining the cluster whose centroid it is most similar to (cosine at or
 * above the threshold), else founding a new one. Same input, same clusters.
 */
export function clusterQueries(inputs: ClusterInput[], threshold = CLUSTER_THRESHOLD): Cluster[] {
  const ordered = [...inputs].sort((a, b) => b.impressions - a.impressions || b.clicks - a.clicks || (a.text < b.text ? -1 : a.text > b.text ? 1 : 0));
  const documents = ordered.map((input) => contentTokens(input.text));
  const documentFrequency = new Map<string, number>();
  for (const tokens of documents) for (const token of new Set(tokens)) documentFrequency.set(token, (documentFrequency.get(token) ?? 0) + 1);
  const count = documents.length;
  const vectors = documents.map((tokens) => {
    const vector = new Map<string, number>();
    for (const token of tokens) vector.set(token, (vector.get(token) ?? 0) + 1);
    let norm = 0;
    for (const [token, tf] of vector) {
      const weight = tf * (Math.log((1 + count) / (1 + documentFrequency.get(token)!)) + 1);
      vector.set(token, weight);
      norm += weight * weight;
    }
    norm = Math.sqrt(norm) || 1;
    for (const [token, weight] of vector) vector.set(token, weight / norm);
    return vector;
  });

  interface Building {
    leader: ClusterInput;
    members: ClusterInput[];
    /** Sum of the member vectors and its squared norm: cosine(v, centroid) = v·sum / |sum|. */
    sum: Map<string, number>;
    normSq: number;
  }
  const clusters: Building[] = [];
  /** Clusters by token: only clusters sharing a token with a query can be similar to it. */
  const byToken = new Map<string, Building[]>();
  ordered.forEach((input, index) => {
    const vector = vectors[index]!;
    const dots = new Map<Building, number>();
    for (const [token, weight] of vector) {
      for (const cluster of byToken.get(token) ?? []) dots.set(cluster, (dots.get(cluster) ?? 0) + weight * cluster.sum.get(token)!);
    }
    let best: Building | undefined;
    let bestScore = 0;
    let bestDot = 0;
    for (const cluster of clusters) {
      const dot = dots.get(cluster);
      if (dot === undefined) continue;
      const score = dot / Math.sqrt(cluster.normSq);
      if (score > bestScore + 1e-12) {
        best = cluster;
        bestScore = score;
        bestDot = dot;
      }
    }
    const join = (cluster: Building, dot: number) => {
      for (const [token, weight] of vector) {
        if (!cluster.sum.has(token)) byToken.set(token, [...(byToken.get(token) ?? []), cluster]);
        cluster.sum.set(token, (cluster.sum.get(token) ?? 0) + weight);
      }
      cluster.normSq += 2 * dot + 1;
    };
    if (best && bestScore >= threshold) {
      best.members.push(input);
      join(best, bestDot);
    } else {
      const cluster: Building = { leader: input, members: [input], sum: new Map(), normSq: 0 };
      clusters.push(cluster);
      if (vector.size > 0) join(cluster, 0);
      else cluster.normSq = 1;
    }
  });
  return clusters.map((cluster) => ({
    leader: cluster.leader,
    members: cluster.members,
    terms: [...cluster.sum.entries()]
      .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
      .slice(0, 5)
      .map(([token]) => token),
  }));
}
