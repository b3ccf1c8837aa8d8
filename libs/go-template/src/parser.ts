/**
 * The parser of Go's text/template (parse/parse.go), with Go's error
 * messages. Longer than 500 lines: it is Go's one `Tree` type,
 * whose recursive-descent methods call each other, kept in one class so it
 * reads against parse.go (number literals are read in numlit.ts).
 */
import { itemString, Lexer, T, type Item } from './lexer.js';
import type {
  ActionNode,
  BranchNode,
  ChainNode,
  CommandNode,
  ElseNode,
  EndNode,
  ListNode,
  Node,
  NumberNode,
  PipeNode,
  Source,
  TemplateNode,
  VariableNode,
} from './nodes.js';
import { nodeString } from './nodes.js';
import { MalformedCharError, unquote, unquoteChar } from './strconv.js';
import { parseFloat64, parseInt64, parseUint64, scanComplex } from './numlit.js';

/** A parse error; the message is Go's full text ("template: NAME:LINE: ..."). */
export class ParseError extends Error {}

/** The named trees a template source defines ({{define}} and {{block}} add more than the main one). */
export type TreeSet = Map<string, ListNode>;

export function parse(text: string, name: string, hasFunction: (name: string) => boolean): TreeSet {
  const src: Source = { text, parseName: name };
  const items = new Lexer(text, !hasFunction('break'), !hasFunction('continue')).run();
  const treeSet: TreeSet = new Map();
  const stream = new Stream(items);
  const t = new Tree(name, src, stream, treeSet, hasFunction);
  t.parse();
  t.add();
  return treeSet;
}

/** The lexer's items with the parser's three-token lookahead. */
class Stream {
  private i = 0;
  token: Item[] = [];
  peekCount = 0;

  constructor(private readonly items: Item[]) {}

  nextItem(): Item {
    const it = this.items[this.i]!;
    if (this.i < this.items.length - 1) this.i++;
    return it;
  }
}

function isEmptyTree(n: Node | null): boolean {
  if (!n) return true;
  switch (n.type) {
    case 'comment':
      return true;
    case 'list':
      return n.nodes.every(isEmptyTree);
    case 'text':
      return n.text.trim() === '' && !/[^\t\n\v\f\r \u0085\u00a0]/.test(n.text);
    default:
      return false;
  }
}

class Tree {
  root: ListNode | null = null;
  vars: string[] = ['$'];
  rangeDepth = 0;
  actionLine = 0;

  constructor(
    public name: string,
    readonly src: Source,
    readonly s: Stream,
    readonly treeSet: TreeSet,
    readonly hasFunction: (name: string) => boolean,
  ) {}

  // --- token stream ---

  next(): Item {
    if (this.s.peekCount > 0) this.s.peekCount--;
    else this.s.token[0] = this.s.nextItem();
    return this.s.token[this.s.peekCount]!;
  }

  backup(): void {
    this.s.peekCount++;
  }

  backup2(t1: Item): void {
    this.s.token[1] = t1;
    this.s.peekCount = 2;
  }

  backup3(t2: Item, t1: Item): void {
    this.s.token[1] = t1;
    this.s.token[2] = t2;
    this.s.peekCount = 3;
  }

  peek(): Item {
    if (this.s.peekCount > 0) return this.s.token[this.s.peekCount - 1]!;
    this.s.peekCount = 1;
    this.s.token[0] = this.s.nextItem();
    return this.s.token[0];
  }

  nextNonSpace(): Item {
    let token: Item;
    do token = this.next();
    while (token.typ === T.Space);
    return token;
  }

  peekNonSpace(): Item {
    const token = this.nextNonSpace();
    this.backup();
    return token;
  }

  // --- errors ---

  errorf(msg: string): never {
    this.root = null;
    throw new ParseError(`template: ${this.src.parseName}:${this.s.token[0]!.line}: ${msg}`);
  }

  expect(expected: T, context: string): Item {
    const token = this.nextNonSpace();
    if (token.typ !== expected) this.unexpected(token, context);
    return token;
  }

  expectOneOf(e1: T, e2: T, context: string): Item {
    const token = this.nextNonSpace();
    if (token.typ !== e1 && token.typ !== e2) this.unexpected(token, context);
    return token;
  }

  unexpected(token: Item, context: string): never {
    if (token.typ === T.Error) {
      let extra = '';
      if (this.actionLine !== 0 && this.actionLine !== token.line) {
        extra = ` in action started at ${this.src.parseName}:${this.actionLine}`;
        if (token.val.endsWith(' action')) extra = extra.slice(' in action'.length);
      }
      this.errorf(`${itemString(token)}${extra}`);
    }
    this.errorf(`unexpected ${itemString(token)} in ${context}`);
  }

  // --- node constructors ---

  newList(pos: number): ListNode {
    return { type: 'list', pos, src: this.src, nodes: [] };
  }

  newPipeline(pos: number, line: number): PipeNode {
    return { type: 'pipe', pos, src: this.src, line, isAssign: false, decl: [], cmds: [] };
  }

  newVariable(pos: number, ident: string): VariableNode {
    return { type: 'variable', pos, src: this.src, ident: ident.split('.') };
  }

  // --- grammar ---

  add(): void {
    const tree = this.treeSet.get(this.name);
    if (!tree || isEmptyTree(tree)) {
      this.treeSet.set(this.name, this.root!);
      return;
    }
    if (!isEmptyTree(this.root)) this.errorf(`template: multiple definition of template ${JSON.stringify(this.name)}`);
  }

  /** A tree for a {{define}} or {{block}} body sharing this parse's stream. */
  child(name: string): Tree {
    return new Tree(name, this.src, this.s, this.treeSet, this.hasFunction);
  }

  parse(): void {
    this.root = this.newList(this.peek().pos);
    while (this.peek().typ !== T.EOF) {
      if (this.peek().typ === T.LeftDelim) {
        const delim = this.next();
        if (this.nextNonSpace().typ === T.Define) {
          const newT = this.child('definition');
          newT.parseDefinition();
          continue;
        }
        this.backup2(delim);
      }
      const n = this.textOrAction();
      if (n.type === 'end' || n.type === 'else') this.errorf(`unexpected ${nodeString(n)}`);
      else this.root.nodes.push(n);
    }
  }

  parseDefinition(): void {
    const context = 'define clause';
    const name = this.expectOneOf(T.String, T.RawString, context);
    this.name = this.unquoteOrFail(name.val);
    this.expect(T.RightDelim, context);
    const [list, end] = this.itemList();
    this.root = list;
    if (end.type !== 'end') this.errorf(`unexpected ${nodeString(end)} in ${context}`);
    this.add();
  }

  unquoteOrFail(s: string): string {
    try {
      return unquote(s);
    } catch {
      return this.errorf('invalid syntax');
    }
  }

  itemList(): [ListNode, EndNode | ElseNode] {
    const list = this.newList(this.peekNonSpace().pos);
    while (this.peekNonSpace().typ !== T.EOF) {
      const n = this.textOrAction();
      if (n.type === 'end' || n.type === 'else') return [list, n];
      list.nodes.push(n);
    }
    this.errorf('unexpected EOF');
  }

  textOrAction(): Node {
    const token = this.nextNonSpace();
    switch (token.typ) {
      case T.Text:
        return { type: 'text', pos: token.pos, src: this.src, text: token.val };
      case T.LeftDelim:
        this.actionLine = token.line;
        try {
          return this.action();
        } finally {
          this.actionLine = 0;
        }
      case T.Comment:
        return { type: 'comment', pos: token.pos, src: this.src, text: token.val };
      default:
        this.unexpected(token, 'input');
    }
  }

  action(): Node {
    const token = this.nextNonSpace();
    switch (token.typ) {
      case T.Block:
        return this.blockControl();
      case T.Break:
        return this.breakControl(token.pos, token.line);
      case T.Continue:
        return this.continueControl(token.pos, token.line);
      case T.Else:
        return this.elseControl();
      case T.End:
        return this.endControl();
      case T.If:
        return this.branchControl('if');
      case T.Range:
        return this.branchControl('range');
      case T.Template:
        return this.templateControl();
      case T.With:
        return this.branchControl('with');
    }
    this.backup();
    const tok = this.peek();
    const node: ActionNode = {
      type: 'action',
      pos: tok.pos,
      src: this.src,
      line: tok.line,
      pipe: this.pipeline('command', T.RightDelim),
    };
    return node;
  }

  breakControl(pos: number, line: number): Node {
    const token = this.nextNonSpace();
    if (token.typ !== T.RightDelim) this.unexpected(token, '{{break}}');
    if (this.rangeDepth === 0) this.errorf('{{break}} outside {{range}}');
    return { type: 'break', pos, src: this.src, line };
  }

  continueControl(pos: number, line: number): Node {
    const token = this.nextNonSpace();
    if (token.typ !== T.RightDelim) this.unexpected(token, '{{continue}}');
    if (this.rangeDepth === 0) this.errorf('{{continue}} outside {{range}}');
    return { type: 'continue', pos, src: this.src, line };
  }

  pipeline(context: string, end: T): PipeNode {
    const token = this.peekNonSpace();
    const pipe = this.newPipeline(token.pos, token.line);
    decls: for (;;) {
      const v = this.peekNonSpace();
      if (v.typ !== T.Variable) break;
      this.next();
      const tokenAfterVariable = this.peek();
      const next = this.peekNonSpace();
      if (next.typ === T.Assign || next.typ === T.Declare) {
        pipe.isAssign = next.typ === T.Assign;
        this.nextNonSpace();
        pipe.decl.push(this.newVariable(v.pos, v.val));
        this.vars.push(v.val);
      } else if (next.typ === T.Char && next.val === ',') {
        this.nextNonSpace();
        pipe.decl.push(this.newVariable(v.pos, v.val));
        this.vars.push(v.val);
        if (context === 'range' && pipe.decl.length < 2) {
          const p = this.peekNonSpace().typ;
          if (p === T.Variable || p === T.RightDelim || p === T.RightParen) continue decls;
          this.errorf('range can only initialize variables');
        }
        this.errorf(`too many declarations in ${context}`);
      } else if (tokenAfterVariable.typ === T.Space) {
        this.backup3(v, tokenAfterVariable);
      } else {
        this.backup2(v);
      }
      break;
    }
    for (;;) {
      const token = this.nextNonSpace();
      switch (token.typ) {
        case end:
          this.checkPipeline(pipe, context);
          return pipe;
        case T.Bool:
        case T.CharConstant:
        case T.Complex:
        case T.Dot:
        case T.Field:
        case T.Identifier:
        case T.Number:
        case T.Nil:
        case T.RawString:
        case T.String:
        case T.Variable:
        case T.LeftParen:
          this.backup();
          pipe.cmds.push(this.command());
          break;
        default:
          this.unexpected(token, context);
      }
    }
  }

  checkPipeline(pipe: PipeNode, context: string): void {
    if (pipe.cmds.length === 0) this.errorf(`missing value for ${context}`);
    pipe.cmds.slice(1).forEach((c, i) => {
      const t = c.args[0]!.type;
      if (t === 'bool' || t === 'dot' || t === 'nil' || t === 'number' || t === 'string') {
        this.errorf(`non executable command in pipeline stage ${i + 2}`);
      }
    });
  }

  branchControl(context: 'if' | 'range' | 'with'): BranchNode {
    const varsLen = this.vars.length;
    try {
      const pipe = this.pipeline(context, T.RightDelim);
      if (context === 'range') this.rangeDepth++;
      const [list, first] = this.itemList();
      let next = first;
      if (context === 'range') this.rangeDepth--;
      let elseList: ListNode | null = null;
      if (next.type === 'else') {
        // "else if" and "else with" (Go 1.23) chain without an extra {{end}}.
        if ((context === 'if' && this.peek().typ === T.If) || (context === 'with' && this.peek().typ === T.With)) {
          this.next();
          elseList = this.newList(next.pos);
          elseList.nodes.push(this.branchControl(context));
        } else {
          [elseList, next] = this.itemList();
          if (next.type !== 'end') this.errorf(`expected end; found ${nodeString(next)}`);
        }
      }
      return { type: context, pos: pipe.pos, src: this.src, line: pipe.line, pipe, list, elseList };
    } finally {
      this.vars.length = varsLen;
    }
  }

  endControl(): EndNode {
    return { type: 'end', pos: this.expect(T.RightDelim, 'end').pos, src: this.src };
  }

  elseControl(): ElseNode {
    const peek = this.peekNonSpace();
    if (peek.typ === T.If || peek.typ === T.With) return { type: 'else', pos: peek.pos, src: this.src, line: peek.line };
    const token = this.expect(T.RightDelim, 'else');
    return { type: 'else', pos: token.pos, src: this.src, line: token.line };
  }

  blockControl(): TemplateNode {
    const context = 'block clause';
    const token = this.nextNonSpace();
    const name = this.parseTemplateName(token, context);
    const pipe = this.pipeline(context, T.RightDelim);
    const block = this.child(name);
    const [list, end] = block.itemList();
    block.root = list;
    if (end.type !== 'end') this.errorf(`unexpected ${nodeString(end)} in ${context}`);
    block.add();
    return { type: 'template', pos: token.pos, src: this.src, line: token.line, name, pipe };
  }

  templateControl(): TemplateNode {
    const context = 'template clause';
    const token = this.nextNonSpace();
    const name = this.parseTemplateName(token, context);
    let pipe: PipeNode | null = null;
    if (this.nextNonSpace().typ !== T.RightDelim) {
      this.backup();
      pipe = this.pipeline(context, T.RightDelim);
    }
    return { type: 'template', pos: token.pos, src: this.src, line: token.line, name, pipe };
  }

  parseTemplateName(token: Item, context: string): string {
    if (token.typ === T.String || token.typ === T.RawString) return this.unquoteOrFail(token.val);
    this.unexpected(token, context);
  }

  command(): CommandNode {
    const cmd: CommandNode = { type: 'command', pos: this.peekNonSpace().pos, src: this.src, args: [] };
    for (;;) {
      this.peekNonSpace();
      const operand = this.operand();
      if (operand) cmd.args.push(operand);
      const token = this.next();
      if (token.typ === T.Space) continue;
      if (token.typ === T.RightDelim || token.typ === T.RightParen) this.backup();
      else if (token.typ !== T.Pipe) this.unexpected(token, 'operand');
      break;
    }
    if (cmd.args.length === 0) this.errorf('empty command');
    return cmd;
  }

  operand(): Node | null {
    let node = this.term();
    if (!node) return null;
    if (this.peek().typ === T.Field) {
      const chain: ChainNode = { type: 'chain', pos: this.peek().pos, src: this.src, node, field: [] };
      while (this.peek().typ === T.Field) {
        const val = this.next().val;
        chain.field.push(val.slice(1));
      }
      switch (node.type) {
        case 'field':
          node = { type: 'field', pos: chain.pos, src: this.src, ident: nodeString(chain).split('.').slice(1) };
          break;
        case 'variable':
          node = this.newVariable(chain.pos, nodeString(chain));
          break;
        case 'bool':
        case 'string':
        case 'number':
        case 'nil':
        case 'dot':
          this.errorf(`unexpected . after term ${JSON.stringify(nodeString(node))}`);
          break;
        default:
          node = chain;
      }
    }
    return node;
  }

  term(): Node | null {
    const token = this.nextNonSpace();
    switch (token.typ) {
      case T.Identifier:
        if (!this.hasFunction(token.val)) this.errorf(`function ${JSON.stringify(token.val)} not defined`);
        return { type: 'identifier', pos: token.pos, src: this.src, ident: token.val };
      case T.Dot:
        return { type: 'dot', pos: token.pos, src: this.src };
      case T.Nil:
        return { type: 'nil', pos: token.pos, src: this.src };
      case T.Variable:
        return this.useVar(token.pos, token.val);
      case T.Field:
        return { type: 'field', pos: token.pos, src: this.src, ident: token.val.split('.').slice(1) };
      case T.Bool:
        return { type: 'bool', pos: token.pos, src: this.src, value: token.val === 'true' };
      case T.CharConstant:
      case T.Complex:
      case T.Number:
        return this.newNumber(token);
      case T.LeftParen:
        return this.pipeline('parenthesized pipeline', T.RightParen);
      case T.String:
      case T.RawString:
        return { type: 'string', pos: token.pos, src: this.src, quoted: token.val, text: this.unquoteOrFail(token.val) };
    }
    this.backup();
    return null;
  }

  useVar(pos: number, name: string): VariableNode {
    const v = this.newVariable(pos, name);
    if (this.vars.includes(v.ident[0]!)) return v;
    this.errorf(`undefined variable ${JSON.stringify(v.ident[0])}`);
  }

  newNumber(token: Item): NumberNode {
    const text = token.val;
    const n: NumberNode = {
      type: 'number',
      pos: token.pos,
      src: this.src,
      isInt: false,
      isUint: false,
      isFloat: false,
      isComplex: false,
      int: 0n,
      float: 0,
      complex: [0, 0],
      text,
    };
    if (token.typ === T.CharConstant) {
      let r: number;
      try {
        r = unquoteChar(text);
      } catch (e) {
        this.errorf(e instanceof MalformedCharError ? e.message : 'invalid syntax');
      }
      n.int = BigInt(r);
      n.float = r;
      n.isInt = n.isUint = n.isFloat = true;
      return n;
    }
    if (token.typ === T.Complex) {
      // Go lets fmt.Sscan read the pair, and reports its error.
      const c = scanComplex(text);
      if (typeof c === 'string') this.errorf(c);
      n.isComplex = true;
      n.complex = c;
      return simplifyComplex(n);
    }
    // Imaginary constants can only be complex unless they are zero.
    if (text.endsWith('i')) {
      const f = parseFloat64(text.slice(0, -1));
      if (f !== null) {
        n.isComplex = true;
        n.complex = [0, f];
        return simplifyComplex(n);
      }
    }
    // Go's order: unsigned, then signed, then float (which then must hold a '.', 'e' or 'p').
    const u = parseUint64(text);
    if (u !== null) {
      n.isUint = true;
      n.int = u;
    }
    const i = parseInt64(text);
    if (i !== null) {
      n.isInt = true;
      n.int = i;
      if (i === 0n) n.isUint = true; // -0
    }
    if (n.isInt || n.isUint) {
      n.isFloat = true;
      n.float = Number(n.int);
    } else {
      const f = parseFloat64(text);
      if (f !== null) {
        if (!/[.eEpP]/.test(text)) this.errorf(`integer overflow: ${JSON.stringify(text)}`);
        n.isFloat = true;
        n.float = f;
        setIntegral(n, f);
      }
    }
    if (!n.isInt && !n.isUint && !n.isFloat) this.errorf(`illegal number syntax: ${JSON.stringify(text)}`);
    return n;
  }
}

/** The int and uint readings of an integral float, as Go's conversions give them. */
function setIntegral(n: NumberNode, f: number): void {
  if (Number.isInteger(f) && f >= -(2 ** 63) && f < 2 ** 63) {
    n.isInt = true;
    n.int = BigInt(f);
  }
  if (Number.isInteger(f) && f >= 0 && f < 2 ** 64) {
    n.isUint = true;
    if (!n.isInt) n.int = BigInt(f);
  }
}

/** Go's simplifyComplex: a complex constant with no imaginary part also reads as a float (and an int). */
function simplifyComplex(n: NumberNode): NumberNode {
  n.isFloat = n.complex[1] === 0;
  if (n.isFloat) {
    n.float = n.complex[0];
    setIntegral(n, n.float);
  }
  return n;
}
