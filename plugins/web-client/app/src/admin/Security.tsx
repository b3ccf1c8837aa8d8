import { DefenderHosts } from './DefenderHosts';
import { IpLists } from './IpLists';
import { can, type AdminSession } from './session';
import { t } from './strings';

/** The security page: the defender's hosts (server-wide: not for admins with a role) and the IP lists, each shown with its permission. */
export default function Security({ session }: { session: AdminSession }) {
  return (
    <>
      <h1>{t.security}</h1>
      {can(session, 'view_defender') && !session.role && <DefenderHosts canManage={can(session, 'manage_defender')} />}
      {can(session, 'manage_ip_lists') && <IpLists />}
    </>
  );
}
