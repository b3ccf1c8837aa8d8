/**
 * The lexer of Go's text/template (parse/lex.go), run eagerly into an item
 * list. Positions are UTF-16 offsets into the source; error locations are
 * converted to Go's byte columns where they are printed.
 * Longer than 500 lines: it mirrors lex.go's state functions one for one.
 */

export const enum T {
  Error,
  Bool,
  Char,
  CharConstant,
  Comment,
  Complex,
  Assign,
  Declare,
  EOF,
  Field,
  Identifier,
  LeftDelim,
  LeftParen,
  Number,
  Pipe,
  RawString,
  RightDelim,
  RightParen,
  Space,
  String,
  Text,
  Variable,
  // keywords
  Keyword,
  Block,
  Break,
  Continue,
  Dot,
  Define,
  Else,
  End,
  If,
  Nil,
  Range,
  Template,
  With,
}

export interface Item {
  typ: T;
  pos: number;
  val: string;
  line: number;
}

const keywords: Record<string, T> = {
  '.': T.Dot,
  block: T.Block,
  break: T.Break,
  continue: T.Continue,
  define: T.Define,
  else: T.Else,
  end: T.End,
  if: T.If,
  range: T.Range,
  nil: T.Nil,
  template: T.Template,
  with: T.With,
};

/** Go's item.String(), used in "unexpected ..." parse errors. */
export function itemString(i: Item): string {
  if (i.typ === T.EOF) return 'EOF';
  if (i.typ === T.Error) return i.val;
  if (i.typ > T.Keyword) return `<${i.val}>`;
  if (new TextEncoder().encode(i.val).length > 10) return goQuotePrefix(i.val, 10) + '...';
  return goQuote(i.val);
}

// Local quoting (avoids a cycle with strconv.ts in this low-level module).
function goQuote(s: string): string {
  return JSON.stringify(s)
    .replace(/\\u007f/g, '\\x7f')
    .replace(/\\u00([01][0-9a-f])/g, '\\x$1');
}

/** %.10q: quote the first n runes. */
function goQuotePrefix(s: string, n: number): string {
  return goQuote([...s].slice(0, n).join(''));
}

const EOF = -1;
const leftDelim = '{{';
const rightDelim = '}}';
const leftComment = '/*';
const rightComment = '*/';

function isSpace(r: number): boolean {
  return r === 0x20 || r === 0x09 || r === 0x0d || r === 0x0a;
}

const alnum = /^[_\p{L}\p{Nd}]$/u;
function isAlphaNumeric(r: number): boolean {
  if (r < 0) return false;
  if (r < 0x80) {
    return r === 0x5f || (r >= 0x30 && r <= 0x39) || (r >= 0x41 && r <= 0x5a) || (r >= 0x61 && r <= 0x7a);
  }
  return alnum.test(String.fromCodePoint(r));
}

function hasLeftTrimMarker(s: string, i: number): boolean {
  return s.length - i >= 2 && s[i] === '-' && isSpace(s.charCodeAt(i + 1));
}

function hasRightTrimMarker(s: string, i: number): boolean {
  return s.length - i >= 2 && isSpace(s.charCodeAt(i)) && s[i + 1] === '-';
}

function trimRightLength(s: string): number {
  let i = s.length;
  while (i > 0 && isSpace(s.charCodeAt(i - 1))) i--;
  return s.length - i;
}

function countNewlines(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) === 10) n++;
  return n;
}

function formatU(r: number): string {
  // %#U: U+0041 'A'
  const hex = r.toString(16).toUpperCase().padStart(4, '0');
  if (r >= 0x20 && r !== 0x7f && !(r >= 0x80 && r < 0xa0)) return `U+${hex} '${String.fromCodePoint(r)}'`;
  return `U+${hex}`;
}

type StateFn = ((l: Lexer) => StateFn) | null;

export class Lexer {
  pos = 0;
  start = 0;
  atEOF = false;
  parenDepth = 0;
  line = 1;
  startLine = 1;
  readonly items: Item[] = [];

  constructor(
    readonly input: string,
    readonly breakOK = true,
    readonly continueOK = true,
  ) {}

  run(): Item[] {
    let state: StateFn = lexText;
    while (state) state = state(this);
    return this.items;
  }

  next(): number {
    if (this.pos >= this.input.length) {
      this.atEOF = true;
      return EOF;
    }
    const r = this.input.codePointAt(this.pos)!;
    this.pos += r > 0xffff ? 2 : 1;
    if (r === 10) this.line++;
    return r;
  }

  peek(): number {
    const r = this.next();
    this.backup();
    return r;
  }

  backup(): void {
    if (!this.atEOF && this.pos > 0) {
      const c = this.input.charCodeAt(this.pos - 1);
      this.pos -= c >= 0xdc00 && c <= 0xdfff && this.pos >= 2 ? 2 : 1;
      if (c === 10) this.line--;
    }
  }

  emit(t: T): void {
    this.items.push({ typ: t, pos: this.start, val: this.input.slice(this.start, this.pos), line: this.startLine });
    this.start = this.pos;
    this.startLine = this.line;
  }

  ignore(): void {
    this.line += countNewlines(this.input.slice(this.start, this.pos));
    this.start = this.pos;
    this.startLine = this.line;
  }

  accept(valid: string): boolean {
    const r = this.next();
    if (r !== EOF && valid.includes(String.fromCodePoint(r))) return true;
    this.backup();
    return false;
  }

  acceptRun(valid: string): void {
    for (;;) {
      const r = this.next();
      if (r === EOF || !valid.includes(String.fromCodePoint(r))) break;
    }
    this.backup();
  }

  errorf(msg: string): StateFn {
    this.items.push({ typ: T.Error, pos: this.start, val: msg, line: this.startLine });
    return null;
  }

  atRightDelim(): [boolean, boolean] {
    if (hasRightTrimMarker(this.input, this.pos) && this.input.startsWith(rightDelim, this.pos + 2)) {
      return [true, true];
    }
    if (this.input.startsWith(rightDelim, this.pos)) return [true, false];
    return [false, false];
  }

  atTerminator(): boolean {
    const r = this.peek();
    if (isSpace(r)) return true;
    switch (r) {
      case EOF:
      case 0x2e: // .
      case 0x2c: // ,
      case 0x7c: // |
      case 0x3a: // :
      case 0x29: // )
      case 0x28: // (
        return true;
    }
    return this.input.startsWith(rightDelim, this.pos);
  }

  scanNumber(): boolean {
    this.accept('+-');
    let digits = '0123456789_';
    if (this.accept('0')) {
      if (this.accept('xX')) digits = '0123456789abcdefABCDEF_';
      else if (this.accept('oO')) digits = '01234567_';
      else if (this.accept('bB')) digits = '01_';
    }
    this.acceptRun(digits);
    if (this.accept('.')) this.acceptRun(digits);
    if (digits.length === 11 && this.accept('eE')) {
      this.accept('+-');
      this.acceptRun('0123456789_');
    }
    if (digits.length === 23 && this.accept('pP')) {
      this.accept('+-');
      this.acceptRun('0123456789_');
    }
    this.accept('i');
    if (isAlphaNumeric(this.peek())) {
      this.next();
      return false;
    }
    return true;
  }
}

function lexText(l: Lexer): StateFn {
  const x = l.input.indexOf(leftDelim, l.pos);
  if (x >= 0) {
    l.pos = x;
    let trimLength = 0;
    if (hasLeftTrimMarker(l.input, l.pos + leftDelim.length)) {
      trimLength = trimRightLength(l.input.slice(l.start, l.pos));
    }
    l.pos -= trimLength;
    if (l.pos > l.start) {
      l.line += countNewlines(l.input.slice(l.start, l.pos));
      l.emit(T.Text);
    }
    l.pos += trimLength;
    l.ignore();
    return lexLeftDelim;
  }
  l.pos = l.input.length;
  if (l.pos > l.start) {
    l.line += countNewlines(l.input.slice(l.start, l.pos));
    l.emit(T.Text);
  }
  l.emit(T.EOF);
  return null;
}

function lexLeftDelim(l: Lexer): StateFn {
  l.pos += leftDelim.length;
  const trimSpace = hasLeftTrimMarker(l.input, l.pos);
  const afterMarker = trimSpace ? 2 : 0;
  if (l.input.startsWith(leftComment, l.pos + afterMarker)) {
    l.pos += afterMarker;
    l.ignore();
    return lexComment;
  }
  l.emit(T.LeftDelim);
  l.pos += afterMarker;
  l.ignore();
  l.parenDepth = 0;
  return lexInsideAction;
}

function lexComment(l: Lexer): StateFn {
  l.pos += leftComment.length;
  const i = l.input.indexOf(rightComment, l.pos);
  if (i < 0) return l.errorf('unclosed comment');
  l.pos = i + rightComment.length;
  const [delim, trimSpace] = l.atRightDelim();
  if (!delim) return l.errorf('comment ends before closing delimiter');
  if (trimSpace) l.pos += 2;
  l.pos += rightDelim.length;
  if (trimSpace) l.pos += leftTrimLength(l.input, l.pos);
  l.ignore();
  return lexText;
}

function leftTrimLength(s: string, i: number): number {
  let j = i;
  while (j < s.length && isSpace(s.charCodeAt(j))) j++;
  return j - i;
}

function lexRightDelim(l: Lexer): StateFn {
  const trimSpace = hasRightTrimMarker(l.input, l.pos);
  if (trimSpace) {
    l.pos += 2;
    l.ignore();
  }
  l.pos += rightDelim.length;
  l.emit(T.RightDelim);
  if (trimSpace) {
    l.pos += leftTrimLength(l.input, l.pos);
    l.ignore();
  }
  return lexText;
}

function lexInsideAction(l: Lexer): StateFn {
  const [delim] = l.atRightDelim();
  if (delim) {
    if (l.parenDepth === 0) return lexRightDelim;
    return l.errorf('unclosed left paren');
  }
  const r = l.next();
  if (r === EOF) return l.errorf('unclosed action');
  if (isSpace(r)) {
    l.backup();
    return lexSpace;
  }
  switch (r) {
    case 0x3d: // =
      l.emit(T.Assign);
      return lexInsideAction;
    case 0x3a: // :
      if (l.next() !== 0x3d) return l.errorf('expected :=');
      l.emit(T.Declare);
      return lexInsideAction;
    case 0x7c: // |
      l.emit(T.Pipe);
      return lexInsideAction;
    case 0x22: // "
      return lexQuote;
    case 0x60: // `
      return lexRawQuote;
    case 0x24: // $
      return lexVariable;
    case 0x27: // '
      return lexChar;
    case 0x2e: // .
      if (l.pos < l.input.length) {
        const c = l.input.charCodeAt(l.pos);
        if (c < 0x30 || c > 0x39) return lexField;
      }
      l.backup();
      return lexNumber;
    case 0x28: // (
      l.emit(T.LeftParen);
      l.parenDepth++;
      return lexInsideAction;
    case 0x29: // )
      // Go 1.20+ reports the stray paren before emitting it.
      l.parenDepth--;
      if (l.parenDepth < 0) return l.errorf('unexpected right paren');
      l.emit(T.RightParen);
      return lexInsideAction;
  }
  if (r === 0x2b || r === 0x2d || (r >= 0x30 && r <= 0x39)) {
    l.backup();
    return lexNumber;
  }
  if (isAlphaNumeric(r)) {
    l.backup();
    return lexIdentifier;
  }
  if (r <= 0x7f && r >= 0x20 && r !== 0x7f) {
    l.emit(T.Char);
    return lexInsideAction;
  }
  return l.errorf(`unrecognized character in action: ${formatU(r)}`);
}

function lexSpace(l: Lexer): StateFn {
  let numSpaces = 0;
  for (;;) {
    const r = l.peek();
    if (!isSpace(r)) break;
    l.next();
    numSpaces++;
  }
  if (hasRightTrimMarker(l.input, l.pos - 1) && l.input.startsWith(rightDelim, l.pos - 1 + 2)) {
    l.backup();
    if (numSpaces === 1) return lexRightDelim;
  }
  l.emit(T.Space);
  return lexInsideAction;
}

function lexIdentifier(l: Lexer): StateFn {
  for (;;) {
    const r = l.next();
    if (isAlphaNumeric(r)) continue;
    l.backup();
    const word = l.input.slice(l.start, l.pos);
    if (!l.atTerminator()) return l.errorf(`bad character ${formatU(r)}`);
    const kw = keywords[word];
    if (kw !== undefined && kw > T.Keyword) {
      if ((kw === T.Break && !l.breakOK) || (kw === T.Continue && !l.continueOK)) l.emit(T.Identifier);
      else l.emit(kw);
    } else if (word[0] === '.') l.emit(T.Field);
    else if (word === 'true' || word === 'false') l.emit(T.Bool);
    else l.emit(T.Identifier);
    return lexInsideAction;
  }
}

function lexField(l: Lexer): StateFn {
  return lexFieldOrVariable(l, T.Field);
}

function lexVariable(l: Lexer): StateFn {
  if (l.atTerminator()) {
    l.emit(T.Variable);
    return lexInsideAction;
  }
  return lexFieldOrVariable(l, T.Variable);
}

function lexFieldOrVariable(l: Lexer, typ: T): StateFn {
  if (l.atTerminator()) {
    l.emit(typ === T.Variable ? T.Variable : T.Dot);
    return lexInsideAction;
  }
  let r: number;
  for (;;) {
    r = l.next();
    if (!isAlphaNumeric(r)) {
      l.backup();
      break;
    }
  }
  if (!l.atTerminator()) return l.errorf(`bad character ${formatU(r)}`);
  l.emit(typ);
  return lexInsideAction;
}

function lexChar(l: Lexer): StateFn {
  for (;;) {
    let r = l.next();
    if (r === 0x5c) {
      r = l.next();
      if (r !== EOF && r !== 10) continue;
      return l.errorf('unterminated character constant');
    }
    if (r === EOF || r === 10) return l.errorf('unterminated character constant');
    if (r === 0x27) break;
  }
  l.emit(T.CharConstant);
  return lexInsideAction;
}

function lexNumber(l: Lexer): StateFn {
  if (!l.scanNumber()) return l.errorf(`bad number syntax: ${goQuote(l.input.slice(l.start, l.pos))}`);
  const sign = l.peek();
  if (sign === 0x2b || sign === 0x2d) {
    if (!l.scanNumber() || l.input[l.pos - 1] !== 'i') {
      return l.errorf(`bad number syntax: ${goQuote(l.input.slice(l.start, l.pos))}`);
    }
    l.emit(T.Complex);
  } else l.emit(T.Number);
  return lexInsideAction;
}

function lexQuote(l: Lexer): StateFn {
  for (;;) {
    let r = l.next();
    if (r === 0x5c) {
      r = l.next();
      if (r !== EOF && r !== 10) continue;
      return l.errorf('unterminated quoted string');
    }
    if (r === EOF || r === 10) return l.errorf('unterminated quoted string');
    if (r === 0x22) break;
  }
  l.emit(T.String);
  return lexInsideAction;
}

function lexRawQuote(l: Lexer): StateFn {
  for (;;) {
    const r = l.next();
    if (r === EOF) return l.errorf('unterminated raw quoted string');
    if (r === 0x60) break;
  }
  l.emit(T.RawString);
  return lexInsideAction;
}
