import { SaxesParser, type SaxesTagNS } from 'saxes';

export const DAV_NS = 'DAV:';

/** An element of a parsed request body: namespace URI and local name resolved. */
export interface XmlElement {
  ns: string;
  name: string;
  attrs: { ns: string; name: string; value: string }[];
  children: XmlNode[];
}
export type XmlNode = XmlElement | string;

/** A request body that is not acceptable XML (answered 400, its message shown). */
export class XmlError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'XmlError';
  }
}

/**
 * Parses a request body with saxes (namespaces resolved). Refuses a DOCTYPE
 * (so no DTD and no entity of its own can be declared: only the five XML
 * entities and character references exist) and nesting deeper than
 * `maxDepth`. Throws XmlError.
 */
export function parseXml(text: string, maxDepth: number): XmlElement {
  const parser = new SaxesParser({ xmlns: true, position: false });
  const stack: XmlElement[] = [];
  let root: XmlElement | null = null;
  let failure: string | null = null;
  parser.on('error', (err) => {
    failure ??= err.message;
  });
  parser.on('doctype', () => {
    failure ??= 'DOCTYPE declarations are not accepted';
  });
  parser.on('opentag', (tag: SaxesTagNS) => {
    if (failure) return;
    if (stack.length >= maxDepth) {
      failure = `XML nested deeper than ${maxDepth} elements`;
      return;
    }
    const el: XmlElement = {
      ns: tag.uri,
      name: tag.local,
      attrs: Object.values(tag.attributes)
        .filter((a) => a.prefix !== 'xmlns' && a.name !== 'xmlns')
        .map((a) => ({ ns: a.uri, name: a.local, value: a.value })),
      children: [],
    };
    const parent = stack[stack.length - 1];
    if (parent) parent.children.push(el);
    else root = el;
    stack.push(el);
  });
  parser.on('closetag', () => {
    if (!failure) stack.pop();
  });
  parser.on('text', (text) => {
    const parent = stack[stack.length - 1];
    if (!failure && parent) parent.children.push(text);
  });
  parser.on('cdata', (text) => {
    const parent = stack[stack.length - 1];
    if (!failure && parent) parent.children.push(text);
  });
  // saxes throws on the first error after calling the handler
  try {
    parser.write(text).close();
  } catch {
    failure ??= 'malformed XML';
  }
  if (failure) throw new XmlError(`malformed XML body: ${firstLine(failure)}`);
  if (!root) throw new XmlError('malformed XML body: no root element');
  return root;
}

const firstLine = (s: string) => s.split('\n')[0]!.slice(0, 200);

/** The element children of an element. */
export const elements = (el: XmlElement): XmlElement[] => el.children.filter((c): c is XmlElement => typeof c !== 'string');

/** The first child element in DAV: named `name`. */
export const davChild = (el: XmlElement, name: string): XmlElement | undefined => elements(el).find((c) => c.ns === DAV_NS && c.name === name);

/** The text of an element and its descendants. */
export const textOf = (el: XmlElement): string => el.children.map((c) => (typeof c === 'string' ? c : textOf(c))).join('');

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' };
const NEEDS_ESCAPE = /[&<>"'\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/;
/** Escapes text or an attribute value. Characters XML 1.0 cannot carry are dropped. */
export function esc(s: string): string {
  // most names and values have nothing to escape: no new string then
  if (!NEEDS_ESCAPE.test(s)) return s;
  return s.replace(/[&<>"']/g, (c) => ESCAPES[c]!).replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g, '');
}

/**
 * Writes a property element back as XML, every namespace declared where it
 * is used (`xmlns:pN`), so the fragment stands alone in any response.
 */
export function serialize(el: XmlElement): string {
  const prefixes = new Map<string, string>();
  let counter = 0;
  const decls: string[] = [];
  const qname = (ns: string, name: string): string => {
    if (ns === '') return name;
    let p = prefixes.get(ns);
    if (!p) {
      p = `p${counter++}`;
      prefixes.set(ns, p);
      decls.push(` xmlns:${p}="${esc(ns)}"`);
    }
    return `${p}:${name}`;
  };
  const write = (e: XmlElement, top: boolean): string => {
    const start = decls.length;
    const tag = qname(e.ns, e.name);
    const attrs = e.attrs.map((a) => ` ${qname(a.ns, a.name)}="${esc(a.value)}"`).join('');
    const inner = e.children.map((c) => (typeof c === 'string' ? esc(c) : write(c, false))).join('');
    // the declarations this element (and its descendants) introduced go on the element itself
    const own = top ? decls.join('') : decls.splice(start).join('');
    if (!top) for (const [ns, p] of [...prefixes]) if (own.includes(` xmlns:${p}=`)) prefixes.delete(ns);
    return `<${tag}${own}${attrs}>${inner}</${tag}>`;
  };
  return write(el, true);
}
