/**
 * robots.txt as RFC 9309 reads it: groups of one or more `User-agent` lines followed by
 * `Allow` / `Disallow` rules; the group naming our product token applies, else the `*`
 * group; the longest matching rule wins and `Allow` wins a tie; `*` matches any run of
 * characters and a final `$` anchors the end. No matching rule allows.
 */

interface Rule {
  allow: boolean;
  pattern: string;
  regex: RegExp;
}

export interface Robots {
  isAllowed(pathAndQuery: string): boolean;
}

export const ALLOW_ALL: Robots = { isAllowed: () => true };
export const DISALLOW_ALL: Robots = { isAllowed: () => false };

/** robots.txt files larger than this are read up to it (RFC 9309 asks for at least 500 KiB). */
export const MAX_ROBOTS_BYTES = 512 * 1024;

export function parseRobots(text: string, productToken: string): Robots {
  const token = productToken.toLowerCase();
  const groups: { agents: string[]; rules: Rule[] }[] = [];
  let current: { agents: string[]; rules: Rule[] } | undefined;
  let lastWasAgent = false;
  for (const rawLine of text.slice(0, MAX_ROBOTS_BYTES).split(/\r\n|\r|\n/)) {
    const line = rawLine.replace(/#.*$/, '').trim();
    const colon = line.indexOf(':');
    if (colon === -1) continue;
    const field = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    if (field === 'user-agent') {
      if (!current || !lastWasAgent) {
        current = { agents: [], rules: [] };
        groups.push(current);
      }
      current.agents.push(value.toLowerCase());
      lastWasAgent = true;
      continue;
    }
    lastWasAgent = false;
    if (!current || (field !== 'allow' && field !== 'disallow')) continue;
    if (field === 'disallow' && value === '') continue; // an empty Disallow allows everything
    current.rules.push({ allow: field === 'allow', pattern: value, regex: toRegex(value) });
  }
  const named = groups.filter((group) => group.agents.some((agent) => agent !== '*' && token.startsWith(agent.split('/')[0]!)));
  const chosen = named.length > 0 ? named : groups.filter((group) => group.agents.includes('*'));
  const rules = chosen.flatMap((group) => group.rules);
  return {
    isAllowed(pathAndQuery: string) {
      const path = normalizePath(pathAndQuery);
      if (path === '/robots.txt') return true;
      let best: Rule | undefined;
      for (const rule of rules) {
        if (!rule.regex.test(path)) continue;
        if (!best || rule.pattern.length > best.pattern.length || (rule.pattern.length === best.pattern.length && rule.allow && !best.allow)) best = rule;
      }
      return best ? best.allow : true;
    },
  };
}

/** Percent-encodes what the rules compare in encoded form, and decodes unreserved characters, so `/a%7Eb` and `/a~b` match alike. */
function normalizePath(path: string): string {
  return path.replace(/%([0-9a-fA-F]{2})/g, (whole, hex: string) => {
    const char = String.fromCharCode(parseInt(hex, 16));
    return /[A-Za-z0-9\-._~]/.test(char) ? char : `%${hex.toUpperCase()}`;
  });
}

function toRegex(pattern: string): RegExp {
  const anchored = pattern.endsWith('$');
  const body = normalizePath(anchored ? pattern.slice(0, -1) : pattern)
    .split('*')
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
    .join('.*');
  return new RegExp(`^${body}${anchored ? '$' : ''}`);
}
