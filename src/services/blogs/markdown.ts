import MarkdownIt from 'markdown-it';

/** Words a reader gets through per minute; Ghost's figure for its reading time. */
export const WORDS_PER_MINUTE = 275;

/**
 * CommonMark with raw HTML switched off: `<script>` or `<img onerror=…>` written in a
 * post comes out as visible text, never as markup. markdown-it's own link check drops
 * `javascript:`, `vbscript:`, `file:` and `data:` URLs (except data: images of plain
 * raster types), so links and images can only point somewhere harmless.
 */
const markdown = new MarkdownIt({ html: false, linkify: true, typographer: false });

const renderLinkOpen = markdown.renderer.rules.link_open ?? ((tokens, index, options, _env, self) => self.renderToken(tokens, index, options));
markdown.renderer.rules.link_open = (tokens, index, options, env, self) => {
  // Links in posts neither pass authority to nor get a handle on the pages they open (Medium's practice).
  tokens[index]!.attrSet('rel', 'noopener noreferrer nofollow');
  return renderLinkOpen(tokens, index, options, env, self);
};

export function renderMarkdown(content: string): string {
  return content.trim() === '' ? '' : markdown.render(content);
}

/** Minutes to read the rendered text at WORDS_PER_MINUTE, rounded up: 0 for no content, else at least 1. */
export function readingTimeMinutes(html: string): number {
  if (html === '') return 0;
  const text = html.replace(/<[^>]*>/g, ' ');
  const words = text.split(/\s+/).filter((word) => /[\p{L}\p{N}]/u.test(word)).length;
  return Math.max(1, Math.ceil(words / WORDS_PER_MINUTE));
}
