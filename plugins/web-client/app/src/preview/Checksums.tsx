import { useState } from 'react';
import { checksumOf, type ChecksumAlgo } from '../file-actions';
import { t } from '../strings';

const ALGOS: { algo: ChecksumAlgo; label: string }[] = [
  { algo: 'sha256', label: 'SHA-256' },
  { algo: 'md5', label: 'MD5' },
];

/** The SHA-256 and MD5 of a file, each computed by the server when asked (it reads the whole file). */
export function Checksums({ path }: { path: string }) {
  const [sums, setSums] = useState<Partial<Record<ChecksumAlgo, string>>>({});
  const [busy, setBusy] = useState<ChecksumAlgo | null>(null);
  const [error, setError] = useState('');
  const compute = async (algo: ChecksumAlgo) => {
    setBusy(algo);
    const r = await checksumOf(path, algo);
    setBusy(null);
    if ('error' in r) setError(r.error);
    else {
      setError('');
      setSums((s) => ({ ...s, [algo]: r.checksum }));
    }
  };
  return (
    <section className="checksums" aria-label={t.checksums}>
      <h3>{t.checksums}</h3>
      <dl>
        {ALGOS.map(({ algo, label }) => (
          <div key={algo}>
            <dt>{label}</dt>
            <dd>
              {sums[algo] ? (
                <code data-algo={algo}>{sums[algo]}</code>
              ) : (
                <button type="button" disabled={busy !== null} onClick={() => void compute(algo)}>
                  {busy === algo ? t.computing : t.showChecksum(label)}
                </button>
              )}
            </dd>
          </div>
        ))}
      </dl>
      {error && (
        <p className="error" role="alert">
          {t.actionFailed(error)}
        </p>
      )}
    </section>
  );
}
