import type { PageQuestion } from './html.js';
import { contentTokens, coverageOf, jaccard, normalizeText } from './text.js';

/**
 * How well the crawled pages answer a question, and how much search demand it has:
 * the best page, what it matched on, coverage none / partial / full, and a 0-100 score from
 * weighted checks; plus the query, topic and demand from imported search data.
 */

export interface PageForEvaluation {
  url: string;
  title: string | null;
  metaDescription: string | null;
  headings: { level: number; text: string }[];
  wordCount: number;
  questions: PageQuestion[];
  text: string;
}

export interface IndexedPage extends PageForEvaluation {
  focus: Set<string>;
  body: Set<string>;
  titleTokens: Set<string>;
  asked: { entry: PageQuestion; normalized: string; tokens: string[] }[];
}

export function indexPage(page: PageForEvaluation): IndexedPage {
  const focusText = [page.title ?? '', page.metaDescription ?? '', ...page.headings.map((heading) => heading.text), ...page.questions.map((entry) => entry.question)].join(' ');
  const h1 = page.headings.filter((heading) => heading.level === 1).map((heading) => heading.text);
  const focus = new Set(contentTokens(focusText));
  return {
    ...page,
    focus,
    body: new Set([...focus, ...contentTokens(page.text)]),
    titleTokens: new Set(contentTokens([page.title ?? '', ...h1].join(' '))),
    asked: page.questions.map((entry) => ({ entry, normalized: normalizeText(entry.question), tokens: contentTokens(entry.question) })),
  };
}

export interface Check {
  key: string;
  label: string;
  passed: boolean;
  weight: number;
  detail: string;
}

export interface Evaluation {
  best_page_url: string | null;
  match_basis: string;
  coverage: 'none' | 'partial' | 'full';
  answer_score: number;
  checks: Check[];
}

/** Similarity of two question token sets at or above which they ask the same thing. */
export const SIMILAR_QUESTION = 0.6;
/** Words in the first sentence of a direct answer, at most. */
const DIRECT_ANSWER_WORDS = 60;
const DEEP_PAGE_WORDS = 300;

/** Check keys, labels and weights (they sum to 100). */
export const CHECKS = [
  { key: 'question_on_page', label: 'The page asks the question (a heading or an FAQ entry)', weight: 25 },
  { key: 'direct_answer', label: 'A concise answer follows the question', weight: 20 },
  { key: 'faq_markup', label: 'The question is marked up as FAQPage structured data', weight: 15 },
  { key: 'key_terms', label: "The page uses the question's key terms", weight: 15 },
  { key: 'title_match', label: 'The title or main heading is about the question', weight: 10 },
  { key: 'content_depth', label: `The page has at least ${DEEP_PAGE_WORDS} words`, weight: 10 },
  { key: 'meta_description', label: 'The page has a meta description', weight: 5 },
] as const;

interface Candidate {
  page: IndexedPage;
  relevance: number;
  basis: string;
  asked?: { entry: PageQuestion; similarity: number };
}

function candidateFor(page: IndexedPage, normalized: string, tokens: string[]): Candidate {
  let asked: Candidate['asked'];
  for (const entry of page.asked) {
    const similarity = entry.normalized === normalized ? 1 : jaccard(entry.tokens, tokens);
    if (similarity < SIMILAR_QUESTION) continue;
    const better = !asked || similarity > asked.similarity || (similarity === asked.similarity && entry.entry.source === 'faq_schema' && asked.entry.source !== 'faq_schema');
    if (better) asked = { entry: entry.entry, similarity };
  }
  if (asked) {
    const basis = asked.entry.source === 'faq_schema' ? 'faq_schema' : 'question_heading';
    return { page, relevance: 60 + 40 * asked.similarity, basis, asked };
  }
  const focus = coverageOf(tokens, page.focus);
  const body = coverageOf(tokens, page.body);
  if (focus >= 0.5 && focus * 50 >= body * 30) return { page, relevance: focus * 50, basis: coverageOf(tokens, page.titleTokens) >= 0.5 ? 'title' : 'heading' };
  if (body >= 0.5) return { page, relevance: body * 30, basis: 'body_text' };
  return { page, relevance: 0, basis: 'none' };
}

function firstSentenceWords(text: string): number {
  const sentence = /^(.+?[.!?])(\s|$)/.exec(text)?.[1] ?? text;
  return sentence.split(/\s+/).filter(Boolean).length;
}

/** The evaluation of `question` against `pages` (the site's own crawled pages). */
export function evaluateQuestion(question: string, pages: IndexedPage[]): Evaluation {
  const normalized = normalizeText(question);
  const tokens = contentTokens(question);
  let best: Candidate | undefined;
  for (const page of pages) {
    const candidate = candidateFor(page, normalized, tokens);
    if (candidate.relevance <= 0) continue;
    if (!best || candidate.relevance > best.relevance || (candidate.relevance === best.relevance && page.url < best.page.url)) best = candidate;
  }
  if (!best) {
    return {
      best_page_url: null,
      match_basis: 'none',
      coverage: 'none',
      answer_score: 0,
      checks: CHECKS.map((check) => ({ ...check, passed: false, detail: pages.length === 0 ? 'No page of the site has been crawled.' : 'No crawled page covers this question.' })),
    };
  }
  const { page, asked } = best;
  const answer = asked?.entry.answer ?? '';
  const answerWords = answer.split(/\s+/).filter(Boolean).length;
  const keyTerms = coverageOf(tokens, page.body);
  const titleTerms = coverageOf(tokens, page.titleTokens);
  const faq = page.asked.find((entry) => entry.entry.source === 'faq_schema' && (entry.normalized === normalized || jaccard(entry.tokens, tokens) >= SIMILAR_QUESTION));
  const results: Record<(typeof CHECKS)[number]['key'], { passed: boolean; detail: string }> = {
    question_on_page: asked
      ? { passed: true, detail: `Asked as "${asked.entry.question}" (${asked.entry.source === 'faq_schema' ? 'FAQ markup' : 'heading'}).` }
      : { passed: false, detail: 'No heading or FAQ entry of the page asks this question.' },
    direct_answer:
      asked && answerWords >= 5 && firstSentenceWords(answer) <= DIRECT_ANSWER_WORDS
        ? { passed: true, detail: `An answer of ${answerWords} words follows the question.` }
        : { passed: false, detail: asked ? 'The text after the question is missing or its first sentence is too long.' : 'The question is not asked, so no answer follows it.' },
    faq_markup: faq ? { passed: true, detail: 'Found in FAQPage JSON-LD.' } : { passed: false, detail: 'No FAQPage JSON-LD entry for this question.' },
    key_terms: { passed: keyTerms >= 0.8, detail: `${Math.round(keyTerms * 100)}% of the key terms appear on the page.` },
    title_match: { passed: titleTerms >= 0.5, detail: `${Math.round(titleTerms * 100)}% of the key terms appear in the title or main heading.` },
    content_depth: { passed: page.wordCount >= DEEP_PAGE_WORDS, detail: `${page.wordCount} words.` },
    meta_description: page.metaDescription ? { passed: true, detail: `${page.metaDescription.length} characters.` } : { passed: false, detail: 'No meta description.' },
  };
  const checks = CHECKS.map((check) => ({ ...check, ...results[check.key] }));
  const score = checks.reduce((sum, check) => sum + (check.passed ? check.weight : 0), 0);
  const coverage = results.question_on_page.passed && results.direct_answer.passed ? 'full' : 'partial';
  return { best_page_url: page.url, match_basis: best.basis, coverage, answer_score: score, checks };
}

export interface QueryForDemand {
  id: string;
  normalized: string;
  tokens: string[];
  impressions: number;
  clicks: number;
  position: number;
  first_date: string;
  last_date: string;
  topic_id: string | null;
}

export interface TopicForMatching {
  id: string;
  label: string;
  terms: string[];
}

export interface Demand {
  impressions: number;
  clicks: number;
  position: number;
  measured: boolean;
  period: string;
}

export const UNMEASURED: Demand = { impressions: 0, clicks: 0, position: 0, measured: false, period: '' };
/** Token-set similarity at or above which a query is the question's query. */
export const SIMILAR_QUERY = 0.6;

/** The query a question corresponds to (the same normal form, else the most similar), its demand and topic. */
export function demandOf(
  question: string,
  queries: QueryForDemand[],
  topics: TopicForMatching[],
): { query_id: string | null; demand: Demand; topic_id: string | null; topic_label: string | null } {
  const normalized = normalizeText(question);
  const tokens = contentTokens(question);
  let best: { query: QueryForDemand; similarity: number } | undefined;
  for (const query of queries) {
    const similarity = query.normalized === normalized ? 1.01 : jaccard(query.tokens, tokens);
    if (similarity < SIMILAR_QUERY) continue;
    if (!best || similarity > best.similarity || (similarity === best.similarity && query.impressions > best.query.impressions)) best = { query, similarity };
  }
  const byId = new Map(topics.map((topic) => [topic.id, topic]));
  let topic = best?.query.topic_id ? byId.get(best.query.topic_id) : undefined;
  if (!topic) {
    let bestShare = 0;
    const questionTokens = new Set(tokens);
    for (const candidate of topics) {
      const labelTokens = contentTokens(candidate.label);
      const share = labelTokens.length === 0 ? 0 : coverageOf(labelTokens, questionTokens);
      if (share >= 0.5 && share > bestShare) {
        bestShare = share;
        topic = candidate;
      }
    }
  }
  const topicFields = { topic_id: topic?.id ?? null, topic_label: topic?.label ?? null };
  if (!best) return { query_id: null, demand: UNMEASURED, ...topicFields };
  const { query } = best;
  return {
    query_id: query.id,
    demand: {
      impressions: query.impressions,
      clicks: query.clicks,
      position: Math.round(query.position * 100) / 100,
      measured: true,
      period: `${query.first_date}/${query.last_date}`,
    },
    ...topicFields,
  };
}

/** Whether a page covers a topic: at least two thirds of the topic label's key terms in its title, headings, description or questions. */
export function coversTopic(page: IndexedPage, labelTokens: string[]): boolean {
  if (labelTokens.length === 0) return false;
  return coverageOf(labelTokens, page.focus) >= 2 / 3;
}
