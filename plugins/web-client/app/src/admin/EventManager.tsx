/** The event manager's pages (actions, rules): loaded when opened, with the Go-template library of their previews. */
import { EventActionForm, EventActions } from './EventActions';
import { EventRuleForm, EventRules } from './EventRules';
import type { AdminRoute } from './routes';

export default function EventManager({ page, route, go }: { page: 'event-actions' | 'event-rules'; route: AdminRoute; go: (to: AdminRoute) => void }) {
  if (page === 'event-actions') {
    return route.kind === 'event-action' ? (
      <EventActionForm
        key={route.name ?? ''}
        name={route.name}
        onDone={() => go({ kind: 'event-actions' })}
        onSaved={(n) => go({ kind: 'event-action', name: n })}
      />
    ) : (
      <EventActions onOpen={(n) => go({ kind: 'event-action', name: n })} />
    );
  }
  return route.kind === 'event-rule' ? (
    <EventRuleForm key={route.name ?? ''} name={route.name} onDone={() => go({ kind: 'event-rules' })} onSaved={(n) => go({ kind: 'event-rule', name: n })} />
  ) : (
    <EventRules onOpen={(n) => go({ kind: 'event-rule', name: n })} />
  );
}
