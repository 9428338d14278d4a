// Preloaded into the server (`--import`) by bench/forms-export.ts when BENCH_DEBUG_MEMORY=1:
// prints the process's memory and V8 heap spaces to stderr every 500 ms. Plain JavaScript, so
// it loads into the compiled server without a TypeScript loader.
import v8 from 'node:v8';

const MB = 1024 * 1024;
const f = (bytes) => (bytes / MB).toFixed(0);
setInterval(() => {
  const memory = process.memoryUsage();
  const spaces = v8
    .getHeapSpaceStatistics()
    .map((space) => `${space.space_name.replace('_space', '')} ${f(space.space_used_size)}`)
    .join(' ');
  process.stderr.write(`mem rss ${f(memory.rss)} heapUsed ${f(memory.heapUsed)} external ${f(memory.external)} | ${spaces}\n`);
}, 500).unref();
