/**
 * The executor of Go's text/template (exec.go), over the value model of
 * values.ts. Longer than 500 lines: it is Go's one `state` type,
 * whose walk/eval methods call each other throughout, kept in one class so it
 * reads against exec.go method by method (the builtins are in funcs.ts and
 * compare.ts, formatting in format.ts and sprintf.ts).
 */
import { stringerOf } from './format.js';
import { sprint } from './sprintf.js';
import { builtins, helpers, truth, type GoFunc, type ParamType } from './funcs.js';
import {
  errorContext,
  nodeString,
  type BranchNode,
  type ChainNode,
  type CommandNode,
  type FieldNode,
  type IdentifierNode,
  type ListNode,
  type Node,
  type NumberNode,
  type PipeNode,
  type TemplateNode,
  type VariableNode,
} from './nodes.js';
import { timeMethod } from './time.js';
import { GoComplex, GoFloat, GoInterface, GoNamedInt, kindOf, mapGet, sortedEntries, toGoTime, typeName } from './values.js';

/** An execution error; the message is Go's full text. */
export class ExecError extends Error {}

/** The function table templates can call. */
export const funcs: Record<string, GoFunc> = { ...builtins, ...helpers };

export function hasFunction(name: string): boolean {
  return Object.prototype.hasOwnProperty.call(funcs, name);
}

/** Go's missingVal: "no final pipeline value to pass on". */
const MISSING = Symbol('missing');
type Final = unknown;

const BREAK = Symbol('break');
const CONTINUE = Symbol('continue');

/** Go's maxExecDepth (its value for 64-bit platforms). */
const MAX_EXEC_DEPTH = 100000;

interface Variable {
  name: string;
  value: unknown;
  /** The value's static type is interface{} (a map or slice element); only changes error wording. */
  iface: boolean;
}

/** A value plus whether it is statically an interface{} (Go names "interface {}" in some errors). */
type Typed = [unknown, boolean];

export class State {
  node: Node | null = null;
  vars: Variable[];
  depth = 0;
  out: string[] = [];

  constructor(
    public tmplName: string,
    readonly trees: Map<string, ListNode>,
    data: unknown,
  ) {
    this.vars = [{ name: '$', value: data, iface: false }];
  }

  // --- variables ---

  mark(): number {
    return this.vars.length;
  }

  pop(mark: number): void {
    this.vars.length = mark;
  }

  push(name: string, value: unknown, iface = false): void {
    this.vars.push({ name, value, iface });
  }

  setVar(name: string, value: unknown, iface = false): void {
    for (let i = this.vars.length - 1; i >= 0; i--) {
      if (this.vars[i]!.name === name) {
        this.vars[i]!.value = value;
        this.vars[i]!.iface = iface;
        return;
      }
    }
    this.errorf(`undefined variable: ${name}`);
  }

  setTopVar(n: number, value: unknown, iface: boolean): void {
    const v = this.vars[this.vars.length - n]!;
    v.value = value;
    v.iface = iface;
  }

  varValue(name: string): Typed {
    for (let i = this.vars.length - 1; i >= 0; i--) {
      const v = this.vars[i]!;
      if (v.name === name) return [v.value, v.iface];
    }
    return this.errorf(`undefined variable: ${name}`);
  }

  // --- errors ---

  at(node: Node): void {
    this.node = node;
  }

  errorf(msg: string): never {
    const name = this.tmplName;
    if (!this.node) throw new ExecError(`template: ${name}: ${msg}`);
    const [location, context] = errorContext(this.node);
    throw new ExecError(`template: ${location}: executing ${JSON.stringify(name)} at <${context}>: ${msg}`);
  }

  // --- walk ---

  walk(dot: unknown, dotI: boolean, node: Node): void {
    this.at(node);
    switch (node.type) {
      case 'action': {
        const val = this.evalPipeline(dot, dotI, node.pipe);
        if (node.pipe.decl.length === 0) this.printValue(node, val);
        return;
      }
      case 'break':
        throw BREAK;
      case 'continue':
        throw CONTINUE;
      case 'comment':
        return;
      case 'if':
      case 'with':
        return this.walkIfOrWith(node, dot, dotI);
      case 'list':
        for (const n of node.nodes) this.walk(dot, dotI, n);
        return;
      case 'range':
        return this.walkRange(dot, dotI, node);
      case 'template':
        return this.walkTemplate(dot, dotI, node);
      case 'text':
        this.out.push(node.text);
        return;
      default:
        this.errorf(`unknown node: ${nodeString(node)}`);
    }
  }

  walkIfOrWith(node: BranchNode, dot: unknown, dotI: boolean): void {
    const mark = this.mark();
    try {
      const val = this.evalPipeline(dot, dotI, node.pipe);
      if (truth(val)) {
        if (node.type === 'with') this.walk(val, false, node.list);
        else this.walk(dot, dotI, node.list);
      } else if (node.elseList) {
        this.walk(dot, dotI, node.elseList);
      }
    } finally {
      this.pop(mark);
    }
  }

  walkRange(dot: unknown, dotI: boolean, r: BranchNode): void {
    this.at(r);
    const outer = this.mark();
    try {
      const val = this.evalPipeline(dot, dotI, r.pipe);
      const mark = this.mark();
      const decl = r.pipe.decl;
      const oneIteration = (index: unknown, elem: unknown, elemI: boolean): boolean => {
        if (decl.length > 0) {
          if (r.pipe.isAssign) this.setVar(decl[decl.length > 1 ? 1 : 0]!.ident[0]!, elem, elemI);
          else this.setTopVar(1, elem, elemI);
        }
        if (decl.length > 1) {
          if (r.pipe.isAssign) this.setVar(decl[0]!.ident[0]!, index);
          else this.setTopVar(2, index, false);
        }
        try {
          this.walk(elem, elemI, r.list);
        } catch (e) {
          if (e === BREAK) return false;
          if (e !== CONTINUE) throw e;
        } finally {
          this.pop(mark);
        }
        return true;
      };
      switch (kindOf(val)) {
        case 'slice':
        case 'bytes': {
          const arr = val as ArrayLike<unknown>;
          if (arr.length === 0) break;
          const iface = Array.isArray(arr);
          for (let i = 0; i < arr.length; i++) {
            const e = arr[i];
            if (!oneIteration(i, iface && e === undefined ? null : e, iface)) break;
          }
          return;
        }
        case 'map': {
          const entries = sortedEntries(val as object);
          if (entries.length === 0) break;
          for (const [k, v] of entries) if (!oneIteration(k, v, true)) break;
          return;
        }
        case 'int': {
          if (decl.length > 1) this.errorf(`can't use ${sprint([val])} to iterate over more than one variable`);
          const n = Number(val);
          if (n <= 0) break;
          for (let i = 0; i < n; i++) if (!oneIteration(undefined, i, false)) break;
          return;
        }
        case 'invalid':
          break;
        default:
          this.errorf(`range can't iterate over ${sprint([val])}`);
      }
      if (r.elseList) this.walk(dot, dotI, r.elseList);
    } finally {
      this.pop(outer);
    }
  }

  walkTemplate(dot: unknown, dotI: boolean, t: TemplateNode): void {
    this.at(t);
    const tree = this.trees.get(t.name);
    if (!tree) this.errorf(`template ${JSON.stringify(t.name)} not defined`);
    if (this.depth === MAX_EXEC_DEPTH) this.errorf(`exceeded maximum template depth (${MAX_EXEC_DEPTH})`);
    const newDot = this.evalPipeline(dot, dotI, t.pipe);
    const saved = { vars: this.vars, name: this.tmplName, depth: this.depth };
    this.vars = [{ name: '$', value: newDot, iface: false }];
    this.tmplName = t.name;
    this.depth++;
    try {
      this.walk(newDot, false, tree);
    } catch (e) {
      // JS runs out of stack long before Go's depth limit: report it the same way.
      if (e instanceof RangeError) {
        this.at(t);
        this.errorf(`exceeded maximum template depth (${MAX_EXEC_DEPTH})`);
      }
      throw e;
    } finally {
      this.vars = saved.vars;
      this.tmplName = saved.name;
      this.depth = saved.depth;
    }
  }

  // --- evaluation ---

  evalPipeline(dot: unknown, dotI: boolean, pipe: PipeNode | null): unknown {
    if (!pipe) return undefined;
    this.at(pipe);
    let value: unknown = MISSING;
    for (const cmd of pipe.cmds) {
      value = this.evalCommand(dot, dotI, cmd, value);
      // An interface value is unwrapped to the thing inside: a nil interface becomes no value.
      if (value === null) value = undefined;
    }
    for (const v of pipe.decl) {
      if (pipe.isAssign) this.setVar(v.ident[0]!, value);
      else this.push(v.ident[0]!, value);
    }
    return value;
  }

  notAFunction(args: Node[] | null, final: Final): void {
    if (args && (args.length > 1 || final !== MISSING)) {
      this.errorf(`can't give argument to non-function ${nodeString(args[0]!)}`);
    }
  }

  evalCommand(dot: unknown, dotI: boolean, cmd: CommandNode, final: Final): unknown {
    const first = cmd.args[0]!;
    switch (first.type) {
      case 'field':
        return this.evalFieldNode(dot, dotI, first, cmd.args, final)[0];
      case 'chain':
        return this.evalChainNode(dot, dotI, first, cmd.args, final)[0];
      case 'identifier':
        return this.evalFunction(dot, dotI, first, cmd, cmd.args, final);
      case 'pipe':
        this.notAFunction(cmd.args, final);
        return this.evalPipeline(dot, dotI, first);
      case 'variable':
        return this.evalVariableNode(dot, dotI, first, cmd.args, final)[0];
    }
    this.at(first);
    this.notAFunction(cmd.args, final);
    switch (first.type) {
      case 'bool':
        return first.value;
      case 'dot':
        return dot;
      case 'nil':
        this.errorf('nil is not a command');
        break;
      case 'number':
        return this.idealConstant(first);
      case 'string':
        return first.text;
    }
    this.errorf(`can't evaluate command ${JSON.stringify(nodeString(first))}`);
  }

  idealConstant(c: NumberNode): unknown {
    this.at(c);
    if (c.isComplex) return new GoComplex(c.complex[0], c.complex[1]);
    const isHexInt = /^0[xX]/.test(c.text) && !/[pP]/.test(c.text);
    if (c.isFloat && !isHexInt && c.text[0] !== "'" && /[.eEpP]/.test(c.text)) {
      return Number.isInteger(c.float) ? new GoFloat(c.float) : c.float;
    }
    if (c.isInt) {
      const n = Number(c.int);
      return Number.isSafeInteger(n) ? n : c.int;
    }
    if (c.isUint) this.errorf(`${c.text} overflows int`);
    return undefined;
  }

  evalFieldNode(dot: unknown, dotI: boolean, field: FieldNode, args: Node[] | null, final: Final): Typed {
    this.at(field);
    return this.evalFieldChain(dot, dotI, dot, dotI, field, field.ident, args, final);
  }

  evalChainNode(dot: unknown, dotI: boolean, chain: ChainNode, args: Node[] | null, final: Final): Typed {
    this.at(chain);
    if (chain.field.length === 0) this.errorf('internal error: no fields in evalChainNode');
    if (chain.node.type === 'nil') this.errorf(`indirection through explicit nil in ${nodeString(chain)}`);
    const pipe = this.evalArg(dot, dotI, null, chain.node);
    return this.evalFieldChain(dot, dotI, pipe, false, chain, chain.field, args, final);
  }

  evalVariableNode(dot: unknown, dotI: boolean, variable: VariableNode, args: Node[] | null, final: Final): Typed {
    this.at(variable);
    const [value, iface] = this.varValue(variable.ident[0]!);
    if (variable.ident.length === 1) {
      this.notAFunction(args, final);
      return [value, iface];
    }
    return this.evalFieldChain(dot, dotI, value, iface, variable, variable.ident.slice(1), args, final);
  }

  evalFieldChain(dot: unknown, dotI: boolean, receiver: unknown, recvI: boolean, node: Node, ident: string[], args: Node[] | null, final: Final): Typed {
    const n = ident.length;
    let r: Typed = [receiver, recvI];
    for (let i = 0; i < n - 1; i++) r = this.evalField(dot, dotI, ident[i]!, node, null, MISSING, r[0], r[1]);
    return this.evalField(dot, dotI, ident[n - 1]!, node, args, final, r[0], r[1]);
  }

  evalFunction(dot: unknown, dotI: boolean, node: IdentifierNode, cmd: Node, args: Node[] | null, final: Final): unknown {
    this.at(node);
    const name = node.ident;
    const fn = funcs[name];
    if (!fn || !hasFunction(name)) this.errorf(`${JSON.stringify(name)} is not a defined function`);
    return this.evalCall(dot, dotI, fn, true, cmd, name, args, final);
  }

  evalField(dot: unknown, dotI: boolean, fieldName: string, node: Node, args: Node[] | null, final: Final, receiver: unknown, recvI: boolean): Typed {
    if (receiver === undefined) return [undefined, false];
    const typ = recvI ? 'interface {}' : typeName(receiver);
    if (receiver === null) this.errorf(`nil pointer evaluating ${typ}.${fieldName}`);
    const method = methodOf(receiver, fieldName);
    if (method) return [this.evalCall(dot, dotI, method, false, node, fieldName, args, final), false];
    const hasArgs = (args !== null && args.length > 1) || final !== MISSING;
    const kind = kindOf(receiver);
    if (kind === 'map') {
      if (hasArgs) this.errorf(`${fieldName} is not a method but has arguments`);
      return [mapGet(receiver as object, fieldName), true];
    }
    if (kind === 'struct' && Object.prototype.hasOwnProperty.call(receiver, fieldName)) {
      if (hasArgs) this.errorf(`${fieldName} has arguments but cannot be invoked as function`);
      const v = (receiver as Record<string, unknown>)[fieldName];
      return [v === undefined ? null : v, true];
    }
    this.errorf(`can't evaluate field ${fieldName} in type ${typ}`);
  }

  evalCall(dot: unknown, dotI: boolean, fn: GoFunc, isBuiltin: boolean, node: Node, name: string, args: Node[] | null, final: Final): unknown {
    const callArgs = args ? args.slice(1) : [];
    const numIn = callArgs.length + (final !== MISSING ? 1 : 0);
    let numFixed = callArgs.length;
    if (fn.variadic) {
      numFixed = fn.params.length;
      if (numIn < numFixed) {
        this.errorf(`wrong number of args for ${name}: want at least ${fn.params.length} got ${callArgs.length}`);
      }
    } else if (numIn !== fn.params.length) {
      this.errorf(`wrong number of args for ${name}: want ${fn.params.length} got ${numIn}`);
    }

    // and/or short-circuit and return the deciding value.
    if (isBuiltin && (name === 'and' || name === 'or')) {
      let v: unknown = undefined;
      for (const arg of callArgs) {
        v = this.evalArg(dot, dotI, 'value', arg);
        if (truth(v) === (name === 'or')) return v;
      }
      if (final !== MISSING) v = this.validateType(final, 'value');
      return v;
    }

    const argv: unknown[] = [];
    let i = 0;
    const arg = (typ: ParamType, n: Node) => (fn.staticTypes && typ === 'value' ? this.evalValueArg(dot, dotI, n) : this.evalArg(dot, dotI, typ, n));
    for (; i < numFixed && i < callArgs.length; i++) argv.push(arg(fn.params[i]!, callArgs[i]!));
    if (fn.variadic) for (; i < callArgs.length; i++) argv.push(arg(fn.variadic, callArgs[i]!));
    if (final !== MISSING) {
      let t: ParamType = fn.params[fn.params.length - 1]!;
      if (fn.variadic) t = numIn - 1 < numFixed ? fn.params[numIn - 1]! : fn.variadic;
      argv.push(this.validateType(final, t));
    }
    let result: unknown;
    try {
      result = fn.fn(...argv);
    } catch (e) {
      if (e instanceof ExecError) throw e;
      this.at(node);
      const msg = e instanceof Error ? e.message : String(e);
      this.errorf(`error calling ${name}: ${msg}`);
    }
    return result;
  }

  /** Go's validateType: is the value assignable to the parameter type? */
  validateType(value: unknown, typ: ParamType | null): unknown {
    if (value === undefined) {
      switch (typ) {
        case null:
        case 'value':
          return undefined;
        case 'any':
          return null;
        case '[]string':
        case '[]interface {}':
          return [];
        default:
          this.errorf(`invalid value; expected ${typ}`);
      }
    }
    if (typ === null || typ === 'value' || typ === 'any') return value;
    const k = kindOf(value);
    let ok: boolean;
    switch (typ) {
      case 'string':
        ok = k === 'string';
        break;
      case 'int':
      case 'int64':
        ok = k === 'int';
        break;
      case 'bool':
        ok = k === 'bool';
        break;
      case '[]string':
        ok = k === 'slice' && (value as unknown[]).every((x) => typeof x === 'string');
        break;
      case '[]interface {}':
        ok = k === 'slice';
        break;
    }
    if (!ok) this.errorf(`wrong type for value; expected ${typ}; got ${value === null ? 'interface {}' : typeName(value)}`);
    return value;
  }

  evalArg(dot: unknown, dotI: boolean, typ: ParamType | null, n: Node): unknown {
    this.at(n);
    switch (n.type) {
      case 'dot':
        return this.validateType(dot, typ);
      case 'nil':
        switch (typ) {
          case 'value':
            return undefined;
          case 'any':
          case null:
            return null;
          case '[]string':
          case '[]interface {}':
            return [];
          default:
            this.errorf(`cannot assign nil to ${typ}`);
        }
        break;
      case 'field':
        return this.validateType(this.evalFieldNode(dot, dotI, n, [n], MISSING)[0], typ);
      case 'variable':
        return this.validateType(this.evalVariableNode(dot, dotI, n, null, MISSING)[0], typ);
      case 'pipe':
        return this.validateType(this.evalPipeline(dot, dotI, n), typ);
      case 'identifier':
        return this.validateType(this.evalFunction(dot, dotI, n, n, null, MISSING), typ);
      case 'chain':
        return this.validateType(this.evalChainNode(dot, dotI, n, null, MISSING)[0], typ);
    }
    switch (typ) {
      case 'bool':
        this.at(n);
        if (n.type === 'bool') return n.value;
        this.errorf(`expected bool; found ${nodeString(n)}`);
        break;
      case 'int':
      case 'int64':
        this.at(n);
        if (n.type === 'number' && n.isInt) return Number.isSafeInteger(Number(n.int)) ? Number(n.int) : n.int;
        this.errorf(`expected integer; found ${nodeString(n)}`);
        break;
      case 'string':
        this.at(n);
        if (n.type === 'string') return n.text;
        this.errorf(`expected string; found ${nodeString(n)}`);
        break;
      case 'any':
      case 'value':
      case null:
        return this.evalEmptyInterface(dot, dotI, n);
    }
    this.errorf(`can't handle ${nodeString(n)} for arg of type ${typ}`);
  }

  /**
   * A reflect.Value argument as Go passes it to a function that sees static
   * types (GoFunc.staticTypes): a field, variable or dot whose static type is
   * `interface {}` stays an interface value (GoInterface); a pipeline's value
   * is unwrapped (evalPipeline), constants are concrete.
   */
  evalValueArg(dot: unknown, dotI: boolean, n: Node): unknown {
    let typed: Typed;
    switch (n.type) {
      case 'dot':
        typed = [dot, dotI];
        break;
      case 'field':
        typed = this.evalFieldNode(dot, dotI, n, [n], MISSING);
        break;
      case 'variable':
        typed = this.evalVariableNode(dot, dotI, n, null, MISSING);
        break;
      case 'chain':
        typed = this.evalChainNode(dot, dotI, n, null, MISSING);
        break;
      default:
        return this.evalArg(dot, dotI, 'value', n);
    }
    return typed[1] ? new GoInterface(typed[0]) : this.validateType(typed[0], 'value');
  }

  evalEmptyInterface(dot: unknown, dotI: boolean, n: Node): unknown {
    this.at(n);
    switch (n.type) {
      case 'bool':
        return n.value;
      case 'dot':
        return dot;
      case 'field':
        return this.evalFieldNode(dot, dotI, n, null, MISSING)[0];
      case 'identifier':
        return this.evalFunction(dot, dotI, n, n, null, MISSING);
      case 'nil':
        this.errorf("evalEmptyInterface: nil (can't happen)");
        break;
      case 'number':
        return this.idealConstant(n);
      case 'string':
        return n.text;
      case 'variable':
        return this.evalVariableNode(dot, dotI, n, null, MISSING)[0];
      case 'pipe':
        return this.evalPipeline(dot, dotI, n);
    }
    this.errorf(`can't handle assignment of ${nodeString(n)} to empty interface argument`);
  }

  printValue(n: Node, v: unknown): void {
    this.at(n);
    if (v === undefined || v === null) {
      this.out.push('<no value>');
      return;
    }
    if (kindOf(v) === 'func' && !stringerOf(v)) {
      this.errorf(`can't print ${nodeString(n)} of type ${typeName(v)}`);
    }
    this.out.push(sprint([v]));
  }
}

/** A Go method of the value: time.Time methods, prototype methods of class instances. */
function methodOf(receiver: unknown, name: string): GoFunc | undefined {
  const k = kindOf(receiver);
  if (k === 'time') {
    const m = timeMethod(toGoTime(receiver), name);
    if (!m) return undefined;
    return { params: name === 'Format' ? ['string'] : [], fn: m };
  }
  if (receiver instanceof GoNamedInt) {
    if (name === 'String') return { params: [], fn: () => receiver.String() };
    return undefined;
  }
  if (k !== 'struct') return undefined;
  const obj = receiver as Record<string, unknown>;
  if (Object.prototype.hasOwnProperty.call(obj, name)) return undefined;
  let proto = Object.getPrototypeOf(obj) as object | null;
  while (proto && proto !== Object.prototype) {
    const desc = Object.getOwnPropertyDescriptor(proto, name);
    if (desc) {
      if (typeof desc.value !== 'function' || name === 'constructor') return undefined;
      const f = desc.value as (...a: unknown[]) => unknown;
      const params: ParamType[] = Array.from({ length: f.length }, () => 'any');
      return f.length === 0 ? { params: [], variadic: 'any', fn: (...a) => f.apply(obj, a) } : { params, fn: (...a) => f.apply(obj, a) };
    }
    proto = Object.getPrototypeOf(proto) as object | null;
  }
  return undefined;
}
