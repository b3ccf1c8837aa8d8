/**
 * Ferry against a reference server (Apache, vsftpd, OpenSSH...) with the same client in the same
 * run: each round runs `fn(server)` for every server in order, the reference first; the best seconds
 * of each are kept, with Ferry's peak resident memory over its runs (VmHWM, reset before each).
 */
import { cpuSecondsOf, resetPeakRss, rssOf } from './common.mjs';

/**
 * `servers`: the reference, any further baselines, and Ferry (the one named `ferry`, with its
 * process as `proc`). Resolves to `{ <reference>_s, ferry_s, ratio: reference / Ferry,
 * ferry_peak_rss_mb }`, plus `<baseline>_s` and `ratio_<baseline>` (baseline / Ferry) for each
 * further baseline (a bare Node.js server doing the same work, say). A server whose work is all
 * in its own process (`cpu: true` and its `proc`) also gets `<name>_cpu_s`, the least CPU seconds a
 * round took it: a figure the load of a shared machine moves far less than the wall times.
 */
export async function sideBySide({ label, servers, rounds, fn, after = async () => {}, beforeEach = () => {}, log = console.log }) {
  const best = Object.fromEntries(servers.map((s) => [s.name, Infinity]));
  const cpu = Object.fromEntries(servers.filter((s) => s.cpu && s.proc).map((s) => [s.name, Infinity]));
  let peak = 0;
  for (let i = 0; i < rounds; i++) {
    for (const s of servers) {
      beforeEach();
      if (s.name === 'ferry') resetPeakRss(s.proc.pid);
      const cpu0 = s.name in cpu ? cpuSecondsOf(s.proc.pid) : 0;
      const secs = await fn(s);
      if (s.name in cpu) cpu[s.name] = Math.min(cpu[s.name], cpuSecondsOf(s.proc.pid) - cpu0);
      if (s.name === 'ferry') peak = Math.max(peak, rssOf(s.proc.pid, 'VmHWM'));
      best[s.name] = Math.min(best[s.name], secs);
      await after(s);
      log(`${label} ${s.name} round ${i + 1}: ${secs.toFixed(2)} s`);
    }
  }
  const [ref, ...others] = servers.filter((s) => s.name !== 'ferry').map((s) => s.name);
  const result = { [`${ref}_s`]: best[ref], ferry_s: best.ferry, ratio: best[ref] / best.ferry, ferry_peak_rss_mb: peak };
  for (const o of others) Object.assign(result, { [`${o}_s`]: best[o], [`ratio_${o}`]: best[o] / best.ferry });
  for (const [name, secs] of Object.entries(cpu)) result[`${name}_cpu_s`] = secs;
  return result;
}

/**
 * The figure line of a side-by-side result, with its aim (and Ferry's memory aim when given); a
 * further baseline of the result (`baseline`, with its own aim) is shown after it.
 */
export function reportSideBySide(label, r, { reference, aim, rssAim, baseline, baselineAim, width = 28 }) {
  const further =
    baseline && r[`${baseline}_s`] !== undefined
      ? `   ${baseline} ${r[`${baseline}_s`].toFixed(2)} s, ferry ${r[`ratio_${baseline}`].toFixed(2)}x of it${baselineAim ? ` (aim >= ${baselineAim.toFixed(2)}x)` : ''}`
      : '';
  const cpus = Object.keys(r)
    .filter((k) => k.endsWith('_cpu_s'))
    .map((k) => `${k.slice(0, -'_cpu_s'.length)} ${r[k].toFixed(2)}`);
  const cpuNote = cpus.length ? `   CPU s: ${cpus.join(', ')}` : '';
  console.log(
    `  ${label.padEnd(width)} ${reference} ${r[`${reference}_s`].toFixed(2)} s   ferry ${r.ferry_s.toFixed(2)} s   ${r.ratio.toFixed(2)}x (aim >= ${aim.toFixed(2)}x)   Ferry peak RSS ${r.ferry_peak_rss_mb.toFixed(0)} MB${rssAim ? ` (aim < ${rssAim})` : ''}${further}${cpuNote}`,
  );
}
