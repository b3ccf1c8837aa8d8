import type { Test } from 'tap';
import type { Fs, FsCapabilities } from '@ferry/core';
import { basicCases } from './cases/basics.js';
import { ioCases } from './cases/io.js';
import { treeCases } from './cases/tree.js';
import { abortCases } from './cases/abort.js';
import { writeAtCasesGroups } from './cases/write-at.js';

export interface FsConformanceOptions {
  name: string;
  /** Returns a fresh, empty Fs (new root / key prefix) each call. */
  create(): Promise<Fs>;
  /** Size of the "large file" case (default 32 MiB); remote backends may pass less. */
  largeFileSize?: number;
}

export type CapabilityName = keyof FsCapabilities;

/** What every case group receives. */
export interface SuiteContext {
  readonly name: string;
  readonly caps: FsCapabilities;
  readonly largeFileSize: number;
  /** A fresh, empty Fs closed when `t` ends. */
  fresh(t: Test): Promise<Fs>;
  /** Subtest options that skip, with a printed reason, unless the backend declares `cap`. */
  requires(...caps: CapabilityName[]): { skip: string | false };
}

/** One `t.test` group of the suite. */
export interface CaseGroup {
  name: string;
  /** Capabilities without which the whole group is skipped. */
  requires?: CapabilityName[];
  run(t: Test, ctx: SuiteContext): Promise<void>;
}

const CAPABILITY_NAMES: CapabilityName[] = ['rangeRead', 'atomicRename', 'serverSideCopy', 'realDirectories', 'settableMtime', 'atomicUpload'];
/** Capabilities a backend may leave out (read as false): writes at an offset and truncation (cases/write-at.ts). */
const OPTIONAL_CAPABILITY_NAMES: CapabilityName[] = ['writeAtOffset', 'truncate'];

export const DEFAULT_LARGE_FILE_SIZE = 32 * 1024 * 1024;

/**
 * The filesystem conformance suite every fs plugin runs (see the README of
 * `@ferry/testkit` for the behaviour it pins down where the contract leaves a
 * choice, e.g. reads starting past the end of a file).
 *
 * Everything runs as `t.test` subtests under one `fsConformance: <name>`
 * test. Each group gets its own Fs from `create()` (closed at the end of the
 * group). Checks that need a capability the backend declares unsupported are
 * skipped with the reason printed; nothing is skipped silently.
 */
export async function fsConformance(t: Test, opts: FsConformanceOptions): Promise<void> {
  const largeFileSize = opts.largeFileSize ?? DEFAULT_LARGE_FILE_SIZE;
  await t.test(`fsConformance: ${opts.name}`, async (t) => {
    const probe = await opts.create();
    const caps = { ...probe.capabilities };
    await probe.close();

    await t.test('capabilities are declared', async (t) => {
      for (const c of CAPABILITY_NAMES) t.type(caps[c], 'boolean', `capabilities.${c} is a boolean`);
      for (const c of OPTIONAL_CAPABILITY_NAMES) t.ok(caps[c] === undefined || typeof caps[c] === 'boolean', `capabilities.${c} is a boolean or left out`);
      t.comment(`capabilities: ${[...CAPABILITY_NAMES, ...OPTIONAL_CAPABILITY_NAMES].map((c) => `${c}=${String(caps[c] ?? false)}`).join(' ')}`);
    });

    const ctx: SuiteContext = {
      name: opts.name,
      caps,
      largeFileSize,
      async fresh(t) {
        const fs = await opts.create();
        t.teardown(() => fs.close());
        return fs;
      },
      requires(...need) {
        const missing = need.filter((c) => !caps[c]);
        return {
          skip: missing.length ? `${opts.name} declares ${missing.map((c) => `capabilities.${c} = false`).join(', ')}` : false,
        };
      },
    };

    for (const group of [...basicCases, ...ioCases, ...treeCases, ...abortCases, ...writeAtCasesGroups]) {
      await t.test(group.name, ctx.requires(...(group.requires ?? [])), (t) => group.run(t, ctx));
    }
  });
}
