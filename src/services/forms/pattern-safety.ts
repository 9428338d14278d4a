/**
 * Guards the one place where tenant-supplied code runs on the server: the `pattern` of a
 * form field, a regular expression matched against submitted values. JavaScript's engine
 * backtracks, so a pattern such as `(a+)+$` can take seconds (or years) on a short value and
 * block the event loop for every tenant. We cannot put a timer on a regular expression, so
 * patterns are checked when a form is saved, statically and conservatively:
 *
 * 1. at most MAX_PATTERN_LENGTH characters, and it must compile with the `u` flag;
 * 2. no backreferences (they make matching NP-hard);
 * 3. a group repeated more than once may not contain `|` or a quantifier whose count varies
 *    (`?`, `*`, `+`, `{n,m}`): that nesting is what makes backtracking exponential;
 * 4. what is left is at worst polynomial: k open-ended repeats over a value of n characters
 *    try about n^k / k! ways to split it. Values are length-checked before the pattern runs,
 *    so with the field's maximum length as n that estimate must stay under MAX_BACKTRACK_STEPS
 *    (on our machines about 30 ms for the first match, which V8 interprets, and under 10 ms
 *    once it has compiled the expression).
 *
 * This refuses some safe patterns (e.g. `^[a-z]+(-[a-z]+)*$`, rule 3); a refusal names the
 * rule so the author can rewrite it (here: `^[a-z-]+$`, or a lower max_length for rule 4).
 */

export const MAX_PATTERN_LENGTH = 200;
export const MAX_BACKTRACK_STEPS = 3_000_000;

interface Frame {
  /** Contains a quantifier whose count varies, at any depth. */
  variable: boolean;
  /** Contains `|`, at any depth. */
  alternation: boolean;
}

/**
 * Where repeats are counted: the whole pattern, or one lookaround. JavaScript never
 * backtracks into a lookaround once it has matched, so its repeats do not multiply with the
 * ones around it; its cost is counted once per state of the enclosing scope.
 */
interface Scope {
  ranges: number[];
  lookaroundCost: number;
}

type Atom = { kind: 'atom' } | { kind: 'group'; frame: Frame };

export type PatternVerdict = { ok: true } | { ok: false; reason: string; maxLengthThatFits?: number };

/** Whether `pattern` may be used on values of at most `maxValueLength` characters. */
export function checkPattern(pattern: string, maxValueLength: number): PatternVerdict {
  if (pattern.length > MAX_PATTERN_LENGTH) return refuse(`is longer than ${MAX_PATTERN_LENGTH} characters`);
  try {
    new RegExp(pattern, 'u');
  } catch (error) {
    return refuse(`is not a valid regular expression (${(error as Error).message.replace(/^Invalid regular expression: /, '')})`);
  }

  // The pattern compiled in unicode mode, which rejects stray `{`, `}` and `]` and quantified
  // lookarounds, so every `{` outside a class or escape here starts a quantifier.
  const scopes: Scope[] = [{ ranges: [], lookaroundCost: 0 }];
  // For each open group: whether it is a lookaround (and so opened a scope).
  const lookarounds: boolean[] = [];
  const stack: Frame[] = [{ variable: false, alternation: false }];
  let last: Atom | undefined;
  let i = 0;
  while (i < pattern.length) {
    const char = pattern[i]!;
    if (char === '\\') {
      const next = pattern[i + 1] ?? '';
      if (/[1-9]/.test(next) || next === 'k') return refuse('uses a backreference, which is not allowed');
      i += escapeLength(pattern, i);
      last = { kind: 'atom' };
      continue;
    }
    if (char === '[') {
      i = endOfClass(pattern, i);
      last = { kind: 'atom' };
      continue;
    }
    if (char === '(') {
      const prefix = groupPrefixLength(pattern, i);
      const lookaround = /^\(\?<?[=!]/.test(pattern.slice(i, i + prefix));
      lookarounds.push(lookaround);
      if (lookaround) scopes.push({ ranges: [], lookaroundCost: 0 });
      i += prefix;
      stack.push({ variable: false, alternation: false });
      last = undefined;
      continue;
    }
    if (char === ')') {
      if (lookarounds.pop()) {
        const scope = scopes.pop()!;
        scopes[scopes.length - 1]!.lookaroundCost += scopeCost(scope, maxValueLength);
      }
      const frame = stack.pop()!;
      const parent = stack[stack.length - 1]!;
      parent.variable ||= frame.variable;
      parent.alternation ||= frame.alternation;
      last = { kind: 'group', frame };
      i += 1;
      continue;
    }
    if (char === '|') {
      stack[stack.length - 1]!.alternation = true;
      last = undefined;
      i += 1;
      continue;
    }
    const quantifier = readQuantifier(pattern, i);
    if (quantifier) {
      const { min, max, length } = quantifier;
      if (last?.kind === 'group' && max > 1) {
        if (last.frame.alternation) return refuse('repeats a group that contains |; repeat each alternative separately or use a character class');
        if (last.frame.variable) return refuse('repeats a group that itself contains ?, *, + or {n,m} (nested repetition)');
      }
      if (min !== max) {
        stack[stack.length - 1]!.variable = true;
        scopes[scopes.length - 1]!.ranges.push(max - min);
      }
      last = undefined;
      i += length;
      continue;
    }
    last = { kind: 'atom' };
    i += 1;
  }

  const whole = scopes[0]!;
  if (scopeCost(whole, maxValueLength) > MAX_BACKTRACK_STEPS) {
    let fits = maxValueLength;
    while (fits > 1 && scopeCost(whole, fits) > MAX_BACKTRACK_STEPS) fits = Math.floor(fits * 0.9);
    return {
      ok: false,
      reason: `has too many open-ended repeats for values of up to ${maxValueLength} characters; set a max_length of at most ${fits} or simplify the pattern`,
      maxLengthThatFits: fits,
    };
  }
  return { ok: true };
}

/** The scope's own splits, each followed (at worst) by running its lookarounds. */
function scopeCost(scope: Scope, valueLength: number): number {
  return backtrackEstimate(scope.ranges, valueLength) * (1 + scope.lookaroundCost);
}

/** n^k / k! with each repeat's reach capped at the value length. */
function backtrackEstimate(ranges: number[], valueLength: number): number {
  let estimate = 1;
  ranges.forEach((range, index) => {
    estimate *= Math.min(range, valueLength) + 1;
    estimate /= index + 1;
  });
  return estimate;
}

function refuse(reason: string): PatternVerdict {
  return { ok: false, reason };
}

function escapeLength(pattern: string, at: number): number {
  const rest = pattern.slice(at);
  const match = /^\\(?:u\{[0-9a-fA-F]+\}|u[0-9a-fA-F]{4}|x[0-9a-fA-F]{2}|[pP]\{[^}]*\}|c[A-Za-z]|.)/su.exec(rest);
  return match ? match[0].length : 1;
}

/** Index just past the `]` closing the class that opens at `at`. */
function endOfClass(pattern: string, at: number): number {
  let i = at + 1;
  while (i < pattern.length) {
    if (pattern[i] === '\\') i += escapeLength(pattern, i);
    else if (pattern[i] === ']') return i + 1;
    else i += 1;
  }
  return i;
}

function groupPrefixLength(pattern: string, at: number): number {
  if (pattern[at + 1] !== '?') return 1;
  const rest = pattern.slice(at);
  const match = /^\(\?(?::|=|!|<=|<!|<[^>]*>)/.exec(rest);
  return match ? match[0].length : 1;
}

function readQuantifier(pattern: string, at: number): { min: number; max: number; length: number } | undefined {
  const match = /^(?:([*+?])|\{(\d+)(,(\d*))?\})\??/.exec(pattern.slice(at));
  if (!match) return undefined;
  const length = match[0].length;
  switch (match[1]) {
    case '*':
      return { min: 0, max: Infinity, length };
    case '+':
      return { min: 1, max: Infinity, length };
    case '?':
      return { min: 0, max: 1, length };
  }
  const min = Number(match[2]);
  const max = match[3] === undefined ? min : match[4] === '' ? Infinity : Number(match[4]);
  return { min, max, length };
}
