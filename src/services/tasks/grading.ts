import { invalidField } from '../../platform/errors/app-error.js';
import type { RubricCriterionRow } from './repository.js';
import type { GradingScheme } from './tables.js';

/** The score scale when a task leaves max_score null. */
export const DEFAULT_MAX_SCORE = 100;

/**
 * The letter table (a 10-point scale, as the common US default and Canvas' simple scheme):
 * a percentage earns the first letter whose `min` it reaches; a letter sent instead of a score
 * counts as its `value` percent of max_score (the middle of its band; F counts 0).
 */
export const LETTER_TABLE: readonly { letter: string; min: number; value: number }[] = [
  { letter: 'A', min: 90, value: 95 },
  { letter: 'B', min: 80, value: 85 },
  { letter: 'C', min: 70, value: 75 },
  { letter: 'D', min: 60, value: 65 },
  { letter: 'F', min: 0, value: 0 },
];

export const round2 = (value: number): number => Math.round((value + Number.EPSILON) * 100) / 100;

export function letterOf(percentage: number): string {
  return LETTER_TABLE.find((row) => percentage >= row.min)!.letter;
}

export interface GradeInput {
  score?: number | null;
  grade?: string;
  rubric_scores?: { criterion_id: string; score: number }[];
}

export interface Grade {
  score: number | null;
  grade: string | null;
  rubric_scores: { criterion_id: string; score: number }[];
}

/**
 * The review's score in points out of max_score (null max reads as 100):
 * - points: the score sent, 0..max_score;
 * - percentage: the score sent is a percentage 0..100; points = percentage × max_score / 100;
 * - letter: a grade letter (points = its table value % of max_score) or points 0..max_score;
 * - rubric: Σ weight × (criterion score / criterion max) / Σ weight, times max_score.
 * Every scheme also names the letter of the resulting percentage. Nothing sent: no score.
 */
export function computeGrade(scheme: GradingScheme, maxScoreOrNull: number | null, rubric: RubricCriterionRow[], input: GradeInput): Grade {
  const maxScore = maxScoreOrNull ?? DEFAULT_MAX_SCORE;
  const result = (points: number, rubricScores: Grade['rubric_scores'] = []): Grade => ({
    score: round2(points),
    grade: letterOf(maxScore > 0 ? (points / maxScore) * 100 : 0),
    rubric_scores: rubricScores,
  });
  if (scheme === 'rubric') {
    const sent = input.rubric_scores;
    if (sent === undefined || sent.length === 0) {
      if (input.score !== undefined && input.score !== null) throw invalidField('rubric_scores', 'required', 'The rubric scheme scores each criterion: send rubric_scores.');
      return { score: null, grade: null, rubric_scores: [] };
    }
    if (rubric.length === 0) throw invalidField('rubric_scores', 'no_rubric', 'The task has no rubric.');
    const byId = new Map(sent.map((entry) => [entry.criterion_id, entry.score]));
    if (byId.size !== sent.length) throw invalidField('rubric_scores', 'duplicate', 'Each criterion is scored once.');
    sent.forEach((entry, index) => {
      const criterion = rubric.find((c) => c.id === entry.criterion_id);
      if (!criterion) throw invalidField(`rubric_scores[${index}].criterion_id`, 'unknown', 'No rubric criterion with this id.');
      if (entry.score > criterion.max_score) throw invalidField(`rubric_scores[${index}].score`, 'too_high', `At most ${criterion.max_score}.`);
    });
    const missing = rubric.find((criterion) => !byId.has(criterion.id));
    if (missing) throw invalidField('rubric_scores', 'incomplete', `Criterion ${missing.id} is not scored.`);
    const totalWeight = rubric.reduce((sum, c) => sum + c.weight, 0);
    const fraction = totalWeight > 0 ? rubric.reduce((sum, c) => sum + c.weight * (byId.get(c.id)! / c.max_score), 0) / totalWeight : 0;
    return result(
      fraction * maxScore,
      rubric.map((c) => ({ criterion_id: c.id, score: byId.get(c.id)! })),
    );
  }
  if (input.rubric_scores !== undefined && input.rubric_scores.length > 0)
    throw invalidField('rubric_scores', 'not_rubric', `The ${scheme} scheme takes score, not rubric_scores.`);
  if (scheme === 'letter' && input.grade !== undefined) {
    const row = LETTER_TABLE.find((entry) => entry.letter === input.grade!.toUpperCase());
    if (!row) throw invalidField('grade', 'invalid', `One of ${LETTER_TABLE.map((entry) => entry.letter).join(', ')}.`);
    return { ...result((row.value / 100) * maxScore), grade: row.letter };
  }
  if (input.grade !== undefined) throw invalidField('grade', 'not_letter', 'Only the letter scheme takes a grade.');
  if (input.score === undefined || input.score === null) return { score: null, grade: null, rubric_scores: [] };
  if (scheme === 'percentage') {
    if (input.score > 100) throw invalidField('score', 'too_high', 'A percentage is at most 100.');
    return result((input.score / 100) * maxScore);
  }
  if (input.score > maxScore) throw invalidField('score', 'too_high', `At most max_score (${maxScore}).`);
  return result(input.score);
}
