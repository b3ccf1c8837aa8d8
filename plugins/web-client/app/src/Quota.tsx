import { formatSize } from './format';
import type { Quota } from './capabilities';
import { t } from './strings';

/**
 * The storage the current folder counts against: size used of the limit (a meter) and files. Without
 * any limit, only that: the stored usage then counts only what came through Ferry (files put in the
 * home by other means wait for a quota scan), so a figure such as "0 bytes used" could be wrong.
 */
export function QuotaUsage({ quota }: { quota: Quota | null }) {
  if (!quota) return null;
  const { size, files } = quota;
  if (size.limit <= 0 && files.limit <= 0) {
    return (
      <section className="quota" aria-label={t.quota}>
        <span className="quota-label">{t.quota}:</span> <span className="quota-size">{t.noQuota}</span>
      </section>
    );
  }
  const text = size.limit > 0 ? t.quotaUsage(formatSize(size.used), formatSize(size.limit)) : t.quotaUsed(formatSize(size.used));
  return (
    <section className="quota" aria-label={t.quota}>
      <span className="quota-label">{t.quota}:</span> <span className="quota-size">{text}</span>
      {size.limit > 0 && <meter min={0} max={size.limit} value={Math.min(size.used, size.limit)} high={size.limit * 0.9} aria-label={text} />}
      <span className="muted quota-files">{t.quotaFiles(files.used, files.limit)}</span>
    </section>
  );
}
