/** Parse tree nodes of Go's text/template (parse/node.go) and their String() forms. */
import { quote } from './strconv.js';

/** What every node of one parse shares: the source text and the top-level template name. */
export interface Source {
  readonly text: string;
  readonly parseName: string;
}

interface Base {
  pos: number;
  src: Source;
}

export interface ListNode extends Base {
  type: 'list';
  nodes: Node[];
}
export interface TextNode extends Base {
  type: 'text';
  text: string;
}
export interface CommentNode extends Base {
  type: 'comment';
  text: string;
}
export interface PipeNode extends Base {
  type: 'pipe';
  line: number;
  isAssign: boolean;
  decl: VariableNode[];
  cmds: CommandNode[];
}
export interface ActionNode extends Base {
  type: 'action';
  line: number;
  pipe: PipeNode;
}
export interface CommandNode extends Base {
  type: 'command';
  args: Node[];
}
export interface IdentifierNode extends Base {
  type: 'identifier';
  ident: string;
}
export interface VariableNode extends Base {
  type: 'variable';
  ident: string[];
}
export interface DotNode extends Base {
  type: 'dot';
}
export interface NilNode extends Base {
  type: 'nil';
}
export interface FieldNode extends Base {
  type: 'field';
  ident: string[];
}
export interface ChainNode extends Base {
  type: 'chain';
  node: Node;
  field: string[];
}
export interface BoolNode extends Base {
  type: 'bool';
  value: boolean;
}
export interface NumberNode extends Base {
  type: 'number';
  isInt: boolean;
  isUint: boolean;
  isFloat: boolean;
  isComplex: boolean;
  int: bigint;
  float: number;
  /** Real and imaginary parts when isComplex. */
  complex: [number, number];
  text: string;
}
export interface StringNode extends Base {
  type: 'string';
  quoted: string;
  text: string;
}
export interface EndNode extends Base {
  type: 'end';
}
export interface ElseNode extends Base {
  type: 'else';
  line: number;
}
export interface BranchNode extends Base {
  type: 'if' | 'range' | 'with';
  line: number;
  pipe: PipeNode;
  list: ListNode;
  elseList: ListNode | null;
}
export interface TemplateNode extends Base {
  type: 'template';
  line: number;
  name: string;
  pipe: PipeNode | null;
}
export interface BreakNode extends Base {
  type: 'break';
  line: number;
}
export interface ContinueNode extends Base {
  type: 'continue';
  line: number;
}

export type Node =
  | ListNode
  | TextNode
  | CommentNode
  | PipeNode
  | ActionNode
  | CommandNode
  | IdentifierNode
  | VariableNode
  | DotNode
  | NilNode
  | FieldNode
  | ChainNode
  | BoolNode
  | NumberNode
  | StringNode
  | EndNode
  | ElseNode
  | BranchNode
  | TemplateNode
  | BreakNode
  | ContinueNode;

/** Go's Node.String(). */
export function nodeString(n: Node): string {
  switch (n.type) {
    case 'list':
      return n.nodes.map(nodeString).join('');
    case 'text':
      return n.text;
    case 'comment':
      return '{{' + n.text + '}}';
    case 'pipe': {
      let s = '';
      if (n.decl.length > 0) s = n.decl.map(nodeString).join(', ') + ' := ';
      return s + n.cmds.map(nodeString).join(' | ');
    }
    case 'action':
      return '{{' + nodeString(n.pipe) + '}}';
    case 'command':
      return n.args.map((a) => (a.type === 'pipe' ? '(' + nodeString(a) + ')' : nodeString(a))).join(' ');
    case 'identifier':
      return n.ident;
    case 'variable':
      return n.ident.join('.');
    case 'dot':
      return '.';
    case 'nil':
      return 'nil';
    case 'field':
      return n.ident.map((id) => '.' + id).join('');
    case 'chain': {
      const head = n.node.type === 'pipe' ? '(' + nodeString(n.node) + ')' : nodeString(n.node);
      return head + n.field.map((f) => '.' + f).join('');
    }
    case 'bool':
      return n.value ? 'true' : 'false';
    case 'number':
      return n.text;
    case 'string':
      return n.quoted;
    case 'end':
      return '{{end}}';
    case 'else':
      return '{{else}}';
    case 'if':
    case 'range':
    case 'with': {
      let s = '{{' + n.type + ' ' + nodeString(n.pipe) + '}}' + nodeString(n.list);
      if (n.elseList) s += '{{else}}' + nodeString(n.elseList);
      return s + '{{end}}';
    }
    case 'template':
      return '{{template ' + quote(n.name) + (n.pipe ? ' ' + nodeString(n.pipe) : '') + '}}';
    case 'break':
      return '{{break}}';
    case 'continue':
      return '{{continue}}';
  }
}

/** UTF-8 byte length of a string (Go positions are byte offsets). */
function bytes(s: string): number {
  return new TextEncoder().encode(s).length;
}

/** Go's Tree.ErrorContext: "NAME:LINE:COL" (COL in bytes, as Go counts) and the node's text. */
export function errorContext(n: Node): [string, string] {
  const text = n.src.text.slice(0, n.pos);
  const nl = text.lastIndexOf('\n');
  const col = nl === -1 ? bytes(text) : bytes(text.slice(nl + 1));
  let line = 1;
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) line++;
  return [`${n.src.parseName}:${line}:${col}`, nodeString(n)];
}
