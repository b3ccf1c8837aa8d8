import { compileTemplate } from '@ferry/go-template';
import { setBounded } from '../util/bounded-map.js';

interface Compiled {
  execute(data: unknown): string;
}

const cache = new Map<string, Compiled>();

/** Compiles a Go text/template (cached by source); throws the engine's TemplateError. */
export function compileCached(src: string, name = 'template'): Compiled {
  const hit = cache.get(src);
  if (hit) return hit;
  return setBounded(cache, src, compileTemplate(src, name) as Compiled, 1000);
}

/** Parse check done when an action is saved: the error message, or null when the template is valid. */
export function templateError(src: string, name: string): string | null {
  try {
    compileTemplate(src, name);
    return null;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}

/** Renders a template against the context; a failure throws. */
export function render(src: string, data: unknown, name = 'template'): string {
  if (!src.includes('{{')) return src;
  return compileCached(src, name).execute(data);
}
