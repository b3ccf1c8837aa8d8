/** The header bar's navigation between the signed-in screens (one list: a screen adds its item in App.tsx). */
import { routePath, type Route } from './routes';
import { t } from './strings';

export interface NavItem {
  route: Route;
  label: string;
}

export function Nav({ items, current, onGo }: { items: readonly NavItem[]; current: Route; onGo: (r: Route) => void }) {
  return (
    <nav aria-label={t.mainNav} className="main-nav">
      <ul>
        {items.map((it) => (
          <li key={it.route.kind}>
            <a
              href={routePath(it.route)}
              aria-current={it.route.kind === current.kind ? 'page' : undefined}
              onClick={(e) => {
                if (e.ctrlKey || e.metaKey || e.shiftKey || e.button !== 0) return;
                e.preventDefault();
                onGo(it.route);
              }}
            >
              {it.label}
            </a>
          </li>
        ))}
      </ul>
    </nav>
  );
}
